"""Hidden: the privileged support view of what the visibility rule kept from a member.

For the Ask page's question and member it lists the facts, entities and relations the
rule hid and why, draws them on the graph in a distinct style, says whether an expected
fact exists at all, and compares two members. It needs an owner as operator, and shows
hidden content only as far as that operator's own rights go.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from brain.read.hidden import explain_expected
from brain.read.visibility import REASONS
from explorer import graph as eg
from explorer import resources, sidebar
from explorer.sidebar import NO_PERSON, describe_member
from explorer.state import StateKeys as K, ensure_router

ensure_router()

view = sidebar.require_view()

st.title("Hidden: what the rule kept from this member")
st.warning(
    "**Privileged support view.** This page shows what the visibility rule hid from the member you "
    "impersonate: for debugging permission questions, not for the member's eyes. It needs an operator "
    "who may read the whole workspace (an owner), and shows hidden content only as far as that operator "
    "may read it.", icon=":material/shield:")

operators = view.operators
if not operators:
    st.error(f"No member of {view.workspace!r} may read the whole workspace (a role granting '*'), so "
             "nobody can open this view. Give an owner role to a support member and reload.", icon=":material/lock:")
    st.stop()
sidebar.seed(K.W_OPERATOR, K.OPERATOR, operators)
operator = st.sidebar.selectbox("Operator (an owner)", operators, key=K.W_OPERATOR,
                                format_func=lambda m: describe_member(m, view.members),
                                help="Whose rights this support view uses to show hidden content.")
st.session_state[K.OPERATOR] = operator

if K.W_HIDDEN_QUESTION not in st.session_state:
    st.session_state[K.W_HIDDEN_QUESTION] = st.session_state.get(K.QUESTION, "")
question = st.text_input("Question (shared with the Ask page)", key=K.W_HIDDEN_QUESTION).strip()
st.session_state[K.QUESTION] = question
sidebar.sync_url(view)
st.caption(f"Member: **{view.member_label()}** · operator: **{describe_member(operator, view.members)}** · "
           f"{view.workspace} at {view.now.date().isoformat()}")
if not question:
    st.info("Ask a question here or on the Ask page to see what the rule hid around it.", icon=":material/forum:")
    st.stop()

with resources.shown_errors("explaining what was hidden"):
    report = resources.explain_hidden(question, workspace=view.workspace, member=view.member,
                                      operator=operator, now=view.now)

# -- counts ---------------------------------------------------------------------------
st.subheader("What the rule hid, by reason")
if report.counts:
    cols = st.columns(min(len(report.counts), 5))
    for i, (reason, n) in enumerate(sorted(report.counts.items(), key=lambda kv: -kv[1])):
        cols[i % len(cols)].metric(reason.replace("_", " "), n, help=REASONS.get(reason, reason))
else:
    st.success("Nothing around this question is hidden from this member: they see what the operator sees.")
st.caption(f"The member sees {len(report.visible_nodes)} of the {len(report.nodes)} entities the operator's "
           f"own recall reached ({report.ms:.0f} ms).")

# -- graph ----------------------------------------------------------------------------
if report.nodes:
    st.subheader("On the graph")
    st.iframe(eg.hidden_graph(report, REASONS), height=eg.HEIGHT + 20)
    st.caption("Solid: visible to the member · dashed grey: hidden from them (hover for the reason) · "
               "an unlabelled node: not readable by the operator either.")

if report.items:
    st.subheader("Hidden facts, entities and relations")
    st.dataframe(pd.DataFrame([{"what": it.what, "id": it.id, "reason": it.reason, "label": it.label,
                                "why": it.detail} for it in report.items]),
                 hide_index=True, width="stretch",
                 column_config={"label": st.column_config.TextColumn(width="large")})

# -- expected ---------------------------------------------------------------------------
st.subheader("Does what they expected exist?")
st.caption("The Ask page's “Why not?” never says whether a fact the member may not see exists; this page "
           "does, among the facts the operator may read.")
if K.W_HIDDEN_EXPECTED not in st.session_state:
    st.session_state[K.W_HIDDEN_EXPECTED] = st.session_state.get(K.EXPECTED, "")
expected = st.text_input("Expected string", key=K.W_HIDDEN_EXPECTED).strip()
if expected:
    st.session_state[K.EXPECTED] = expected
    with resources.shown_errors("looking for the expected string"):
        hits = explain_expected(expected, workspace=view.workspace, member=view.member, operator=operator,
                                now=view.now, store=view.store)
    if not hits:
        st.info("No fact the operator may read holds it: it is not stored (or is someone else's private fact).")
    else:
        hidden = [h for h in hits if not h.visible_to_member]
        if hidden:
            st.warning(f"{len(hidden)} of {len(hits)} facts holding it are hidden from this member.")
        else:
            st.success("The member may see every fact holding it: use “Why not?” on the Ask page for where "
                       "it fell out.")
        st.dataframe(pd.DataFrame([{"memory": h.memory_id, "visible to the member": h.visible_to_member,
                                    "reason": REASONS.get(h.reason or "", h.reason or ""), "text": h.text}
                                   for h in hits]), hide_index=True, width="stretch",
                     column_config={"text": st.column_config.TextColumn(width="large")})

# -- two members ------------------------------------------------------------------------
st.subheader("Two members side by side")
choices = [m["member_id"] for m in view.members] + [NO_PERSON]
if K.W_CMP_A not in st.session_state or st.session_state[K.W_CMP_A] not in choices:
    st.session_state[K.W_CMP_A] = view.member_param
if K.W_CMP_B not in st.session_state or st.session_state[K.W_CMP_B] not in choices:
    st.session_state[K.W_CMP_B] = next((m for m in choices if m != view.member_param), NO_PERSON)
a_col, b_col = st.columns(2)
member_a = a_col.selectbox("Member A", choices, key=K.W_CMP_A, format_func=lambda m: describe_member(m, view.members))
member_b = b_col.selectbox("Member B", choices, key=K.W_CMP_B, format_func=lambda m: describe_member(m, view.members))
with resources.shown_errors("comparing members"):
    cmp = resources.compare_members(question, workspace=view.workspace, member_a=member_a or None,
                                    member_b=member_b or None, operator=operator, now=view.now)
st.caption(f"Each member's own context for this question; {cmp.both} fact(s) reach both. The reason says why "
           "the other member does not get a fact.")
for facts, who in ((cmp.only_a, member_a), (cmp.only_b, member_b)):
    st.markdown(f"**Only {describe_member(who or None, view.members)}** gets {len(facts)} fact(s)")
    if facts:
        st.dataframe(pd.DataFrame([{"memory": f.memory_id, "text": f.text,
                                    "why the other does not": REASONS.get(cmp.reasons.get(f.memory_id, ""),
                                                                          cmp.reasons.get(f.memory_id, ""))}
                                   for f in facts]), hide_index=True, width="stretch",
                     column_config={"text": st.column_config.TextColumn(width="large")})
