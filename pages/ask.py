"""Ask (home): impersonate a member, ask a question, and watch every read-path step as
the trace records it: anchors, the two recall legs and their fusion, the walked paths,
the ranked facts, the context an LLM would get, the time per step, and "Why not?"."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from brain.format import parse_date
from brain.read.trace import Recall
from explorer import examples as ex
from explorer import graph as eg
from explorer import resources, sidebar, tables
from explorer.sidebar import View
from explorer.state import StateKeys as K, ensure_router

ensure_router()

VERDICTS = {
    "in_context": ("success", "It is in the context."),
    "never_anchored": ("warning", "Never anchored: no entity of it matched the question."),
    "outside_recall": ("warning", "Outside the recall legs' top k."),
    "not_reached": ("warning", "Not reached by the path walk."),
    "below_budget": ("warning", "Ranked below the budget cut."),
    "marked_earlier": ("info", "Marked earlier: a newer value replaced it."),
    "not_found": ("info", "Nothing this member may see holds it."),
}

view = sidebar.require_view()
example_list = ex.examples(view.workspace, view.member)


def _use_example() -> None:
    i = st.session_state.get(K.W_EXAMPLE)
    if i is None or i >= len(example_list):
        return
    chosen = example_list[i]
    sidebar.set_view(K.QUESTION, K.W_QUESTION, chosen.question)
    if chosen.now:  # period words and expiry read from the moment it was written for
        sidebar.set_view(K.NOW, K.W_NOW, parse_date(chosen.now).date())
    st.session_state[K.W_EXAMPLE] = None


st.title("Ask")
st.caption(f"As **{view.member_label()}** in **{view.workspace}**, at **{view.now.date().isoformat()}**, "
           f"with a budget of {view.budget} tokens. Change any of these in the sidebar.")

if K.W_QUESTION not in st.session_state:
    st.session_state[K.W_QUESTION] = st.session_state.get(K.QUESTION, "")
left, right = st.columns([3, 2])
question = left.text_input("Question", key=K.W_QUESTION, placeholder="Ağaoğlu Yapı'nın vergi numarası nedir?",
                           help="Turkish or English. Press Enter to ask.").strip()
right.selectbox("…or pick an example", list(range(len(example_list))), index=None, key=K.W_EXAMPLE,
                format_func=lambda i: example_list[i].label, on_change=_use_example,
                placeholder=f"{len(example_list)} example questions (Turkish and English)")
st.session_state[K.QUESTION] = question
sidebar.sync_url(view)

if not question:
    st.info("Type a question, or pick an example, to see how the brain recalls it for this member.", icon=":material/forum:")
    st.stop()

with resources.shown_errors("recall"):
    result = resources.recall(question, workspace=view.workspace, member=view.member, now=view.now,
                              budget=view.budget)
tr = result.trace


def summary(r: Recall, v: View) -> None:
    c = st.columns(5)
    c[0].metric("Facts in the context", len(r.facts))
    c[1].metric("Tokens", f"{r.tokens} / {tr.compact.budget}")
    c[2].metric("Paths walked", len(tr.paths.paths))
    c[3].metric("Recall time", f"{r.ms:.0f} ms")
    c[4].metric("…of which query embedding", f"{tr.embed_ms:.0f} ms")
    a, b = st.columns([1, 3])
    name = f"trace-{v.workspace}-{v.member or 'no-person'}-{v.now.date().isoformat()}.json"
    a.download_button("Download the trace (JSON)", data=r.to_json(indent=2), file_name=name,
                      mime="application/json", key="ask_download", icon=":material/download:",
                      on_click="ignore")
    params = {"workspace": v.workspace, "as": v.member_param, "now": v.now.date().isoformat(), "q": r.question}
    b.markdown(f"[:material/link: Link to this view](?{urlencode(params)}) — it reproduces the sidebar and "
               "reruns the question; copy it into a ticket.")


summary(result, view)

# -- the question and who asks ------------------------------------------------------
st.subheader("The question as read")
q = tr.question
bits = [f"**words** {', '.join(q.words) or '—'}", f"**stems** {', '.join(q.stems) or '—'}"]
if q.codes:
    bits.append(f"**codes** {', '.join(q.codes)}")
if tr.anchors.kinds:
    bits.append("**asks for** " + ", ".join(f"{k} (“{w}”)" for w, k in tr.anchors.kinds))
# a kind word inside a name the question was anchored by ("Ege Diş Klinikleri") asks nothing
inside = [f"{k} (“{w}”)" for w, k in q.kinds if (w, k) not in tr.anchors.kinds]
if inside:
    bits.append("**inside a name, not asked** " + ", ".join(inside))
if q.expansions:
    bits.append(f"**other-language words** {', '.join(q.expansions)}")
if q.period:
    bits.append(f"**period** “{q.period[0]}” = {q.period[1][:10]} … {q.period[2][:10]}")
st.markdown(" · ".join(bits))

# -- step 1 -------------------------------------------------------------------------
st.subheader("1 · Anchors: the entities the question names")
st.caption("How each matched: code, amount or date (a record stating an amount or a day the question "
           "gives), exact, newest (the newest record of a kind a question naming nothing asks for), "
           "suffix-stripped, contains, trigram (fuzzy), by meaning, or said "
           "(named in a recalled turn from or about another anchor, when the question asks what was said); "
           f"score 1.0 is certain. {tr.anchors.ms:.1f} ms.")
if tr.anchors.anchors:
    st.dataframe(tables.anchors(result), hide_index=True, width="stretch")
else:
    st.markdown("_No entity of the question matched: the walk has nowhere to start, recall carries it._")
if tr.anchors.near_misses:
    with st.expander(f"Near misses ({len(tr.anchors.near_misses)}): fuzzy candidates under the threshold"):
        st.dataframe(tables.anchors(result, near=True), hide_index=True, width="stretch")

# -- step 2 -------------------------------------------------------------------------
st.subheader("2 · Recall: full-text and vector legs, fused")
common = (f" Too common in the modules this member reads, left to the vector leg: "
          f"{', '.join(tr.recall.common)}." if tr.recall.common else "")
st.caption(f"Mode {tr.recall.mode}. Full-text leg: {tr.recall.text_hits} hits (top {tr.recall.k_text} kept) "
           f"for `{tr.recall.tsquery or '—'}`, each word weighed by its rarity.{common} Vector leg: "
           f"{tr.recall.vector_hits} hits (top {tr.recall.k_vector} kept). Fused by reciprocal rank; "
           f"{tr.recall.ms:.1f} ms.")
st.dataframe(tables.fused(result), hide_index=True, width="stretch", height=320,
             column_config={"text": st.column_config.TextColumn(width="large")})

# -- step 3 -------------------------------------------------------------------------
st.subheader("3 · Paths: the walk from the anchors")
named = (f" Kinds walked to: {', '.join(tr.paths.kinds_asked)}." if tr.paths.kinds_asked else "")
named += f" Paths holding {tr.paths.focus}, where the question's chain of kinds ends, lead." if tr.paths.focus else ""
named += (f" Relations the question names, walked to: {', '.join(tr.paths.relations_asked)}."
          if tr.paths.relations_asked else "")
st.caption(f"{len(tr.paths.paths)} paths, {tr.paths.visited} nodes visited, stopped: {tr.paths.stopped}; "
           f"{tr.paths.ms:.1f} ms.{named}")
html, counts = eg.trace_graph(result)
if html:
    st.iframe(html, height=eg.HEIGHT + 20)
    st.caption("★ anchor · orange: the answer path (the best-scoring one) · colour: entity kind · "
               "hover an edge for the memory that states it, a node for how it was reached · drag to move, "
               "scroll to zoom.")
    if tr.paths.paths:
        st.dataframe(tables.paths(result), hide_index=True, width="stretch",
                     column_config={"walk": st.column_config.TextColumn(width="large")})
    with st.expander("The walk level by level (beam and fan-out limits)"):
        st.dataframe(tables.levels(result), hide_index=True, width="stretch")
else:
    st.markdown("_No anchor, so no walk: the answer rests on recall alone._")

# -- step 4 -------------------------------------------------------------------------
st.subheader("4 · Ranked facts")
st.caption("Every candidate scored, best first; the columns between the score and 'why' are its parts. "
           "'earlier' marks an older value stated again later, placed after its newer one; 'later' "
           f"(−1) a fact stated after the question's moment. {tr.rank.ms:.1f} ms.")
st.dataframe(tables.facts(result), hide_index=True, width="stretch", height=360,
             column_config={"text": st.column_config.TextColumn(width="large"),
                            "mark": st.column_config.TextColumn(width="medium")})

# -- step 5 -------------------------------------------------------------------------
st.subheader("5 · Visibility")
vis = tr.visibility
mods = ", ".join(vis.modules) if vis.modules else "none (fail closed)"
st.markdown(f"Applied inside every statement of steps 1–4, bound to **{view.member_label()}**: "
            f"modules **{mods}**, moment {vis.now[:10]}.")
st.caption(f"The rule: {vis.rule}.")

# -- step 6 -------------------------------------------------------------------------
st.subheader("6 · The context, exactly as an LLM gets it")
st.caption(f"{result.tokens} tokens (cl100k_base) of a {tr.compact.budget}-token budget; "
           f"{len(tr.compact.dropped)} ranked facts left out by the budget; {tr.compact.ms:.1f} ms.")
st.code(result.context or "(empty: nothing this member may see matched)", language=None, wrap_lines=True)
with st.expander("Context line by line, and what the budget left out"):
    st.dataframe(tables.context_lines(result), hide_index=True, width="stretch",
                 column_config={"line": st.column_config.TextColumn(width="large")})
    if tr.compact.dropped:
        st.dataframe(tables.dropped(result), hide_index=True, width="stretch")


# -- why not? -----------------------------------------------------------------------
def why_not_box(r: Recall, v: View) -> None:
    from brain.read.whynot import search_visible, why_not

    st.markdown("#### :material/help: Why not?")
    st.caption("Name what you expected, as a string or picked from what this member may see, and see "
               "where it fell out. Facts this member may not see read as not found here: the Hidden "
               "page (operators only) says whether they exist.")
    c1, c2 = st.columns(2)
    text = c1.text_input("Expected answer (a string)", key=K.W_WHYNOT_TEXT, placeholder="an amount, a date, a name, a code…")
    search = c2.text_input("…or search facts and entities this member may see", key=K.W_WHYNOT_SEARCH)
    picks: list[tuple[str, int, str]] = []
    if search.strip():
        with resources.shown_errors("search"):
            picks = search_visible(search, workspace=v.workspace, member=v.member, now=v.now, store=v.store,
                                   limit=20)
        if not picks:
            c2.caption("Nothing this member may see matches.")
    pick = None
    if picks:
        pick = c2.selectbox("Pick one", list(range(len(picks))), key=K.W_WHYNOT_PICK,
                            format_func=lambda i: f"{picks[i][0]} [{picks[i][1]}] {picks[i][2]}")
    # The answer is kept for reruns, but only for the view and question it was asked in.
    slot = (v.workspace, v.member, v.now.isoformat(), r.question, v.budget)
    if st.button("Why not?", key=K.W_WHYNOT_GO, type="primary"):
        expected: str | int | None = None
        if text.strip():
            expected = text.strip()
        elif pick is not None:
            kind, ident, label = picks[pick]
            if kind == "fact":
                expected = ident
            else:  # an entity: look for its name (or key) in the facts
                expected = label[label.find("(") + 1:-1] if label.endswith(")") else label.split(" ", 1)[-1]
        if expected is None:
            st.warning("Type an expected string or pick a fact or entity first.")
        else:
            with resources.shown_errors("why not"):
                st.session_state[K.WHYNOT_RESULT] = (slot, why_not(r, expected, store=v.store,
                                                                    embedder=v.embedder))
            st.session_state[K.EXPECTED] = str(expected) if isinstance(expected, str) else ""
    kept = st.session_state.get(K.WHYNOT_RESULT)
    if not kept or kept[0] != slot:
        return
    answer = kept[1]
    kind, title = VERDICTS.get(answer.verdict, ("info", answer.verdict))
    getattr(st, kind)(f"**{answer.expected}** — {title} {answer.detail}")
    if answer.stages:
        st.dataframe([{"step": s, "what happened": d} for s, d in answer.stages], hide_index=True,
                     width="stretch")
    if answer.memory_ids:
        st.caption("Facts holding it: " + ", ".join(f"[{m}]" for m in answer.memory_ids))
    if answer.verdict == "not_found":
        st.page_link("pages/hidden.py", label="Ask the Hidden page whether it exists (operators only)",
                     icon=":material/visibility_off:")


with st.container(border=True):
    why_not_box(result, view)

# -- time ---------------------------------------------------------------------------
st.subheader("Time per step")
t = tables.timings(result)
st.bar_chart(t, x="step", y="ms", horizontal=True, sort=False, height=280, y_label="", x_label="ms")
st.caption(f"Total {result.ms:.1f} ms. Steps 1–4 run in one read-only transaction; the visibility rule "
           "is part of their statements.")
