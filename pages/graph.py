"""Graph: browse an entity's neighbourhood exactly as the impersonated member sees it:
typed edges up to three hops, filters by kind and module, the memory behind each edge,
and the version history of the record (earlier values included)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from brain.read.graph import Neighbourhood, neighbourhood, record_history, search_entities
from explorer import graph as eg
from explorer import resources, sidebar, tables
from explorer.state import StateKeys as K, ensure_router

ensure_router()

view = sidebar.require_view()

st.title("Graph")
st.caption(f"As **{view.member_label()}** in **{view.workspace}** at **{view.now.date().isoformat()}**: only "
           "entities, relations and memories this member may see.")

search = st.text_input("Find an entity", key=K.W_GRAPH_SEARCH,
                       placeholder="a name, an alias or a key such as SO-1001").strip()
if not search:
    st.info("Search for a customer, a person, an order… to browse its neighbourhood.", icon=":material/search:")
    st.stop()

with resources.shown_errors("searching entities"):
    found = search_entities(search, workspace=view.workspace, member=view.member, now=view.now,
                            store=view.store, limit=20)
if not found:
    st.info("No entity this member may see matches.", icon=":material/search:")
    st.stop()

top = st.columns([3, 1])
pick = top[0].selectbox("Entity", list(range(len(found))), key=K.W_GRAPH_PICK,
                        format_func=lambda i: found[i].label if found[i].name != found[i].key else f"{found[i].label} ({found[i].kind})")
depth = top[1].slider("Hops", min_value=1, max_value=3, value=1, key=K.W_GRAPH_DEPTH)
center = found[pick if pick is not None and pick < len(found) else 0]

with resources.shown_errors("reading the neighbourhood"):
    everything = neighbourhood(center.entity_id, workspace=view.workspace, member=view.member, depth=depth,
                               now=view.now, store=view.store)
if everything is None:
    st.info("This entity is no longer visible to this member.")
    st.stop()

kinds_all = sorted({n.kind for n in everything.nodes.values()})
modules_all = sorted({e.module for e in everything.edges})
# A filter kept from another entity may name kinds or modules this one lacks.
for key, options in ((K.W_GRAPH_KINDS, kinds_all), (K.W_GRAPH_MODULES, modules_all)):
    if key in st.session_state:
        st.session_state[key] = [v for v in st.session_state[key] if v in options]
f1, f2 = st.columns(2)
kinds = f1.multiselect("Only neighbours of these kinds", kinds_all, key=K.W_GRAPH_KINDS)
modules = f2.multiselect("Only relations from these modules", modules_all, key=K.W_GRAPH_MODULES)
nb: Neighbourhood | None = everything
if kinds or modules:
    with resources.shown_errors("filtering the neighbourhood"):
        nb = neighbourhood(center.entity_id, workspace=view.workspace, member=view.member, depth=depth,
                           kinds=kinds or None, modules=modules or None, now=view.now, store=view.store)
if nb is None:
    st.stop()
assert nb is not None  # st.stop() ended the run above; this tells the type checker

c = st.columns(3)
c[0].metric("Entities", len(nb.nodes))
c[1].metric("Relations", len(nb.edges))
c[2].metric("Modules", len({e.module for e in nb.edges}))
if nb.edges:
    st.iframe(eg.neighbourhood_graph(nb), height=eg.HEIGHT + 20)
    st.caption("★ the entity you picked · colour: entity kind · hover an edge for the memory that states it.")
else:
    st.markdown("_No relation this member may see touches this entity (with these filters)._")

st.subheader("Relations and the memories behind them")


labels = {eid: node.label for eid, node in nb.nodes.items()}


def _name(eid: int) -> str:
    return labels.get(eid, f"#{eid}")


if nb.edges:
    st.dataframe(pd.DataFrame([{"from": _name(e.src), "relation": e.rel, "to": _name(e.dst), "module": e.module,
                                "since": e.valid_from.date().isoformat(), "memory": e.memory_id,
                                "evidence": e.evidence} for e in nb.edges]),
                 hide_index=True, width="stretch",
                 column_config={"evidence": st.column_config.TextColumn(width="large")})

st.subheader(f"Version history of {center.label}")
with resources.shown_errors("reading the history"):
    versions = record_history(center.entity_id, workspace=view.workspace, member=view.member, now=view.now,
                              store=view.store)
if versions:
    st.dataframe(tables.versions(versions),
                 hide_index=True, width="stretch",
                 column_config={"text": st.column_config.TextColumn(width="large")})
    if len(versions) > 1:
        st.caption("Older versions stay as earlier values: recall shows them after the current one, marked.")
else:
    st.caption("No synced record defines this entity (it is named by messages or notes, or its record is "
               "not visible to this member).")
