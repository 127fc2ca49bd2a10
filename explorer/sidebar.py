"""The sidebar every page shares: workspace, the member to impersonate, `now`, budget.

Its values live in session state under `StateKeys`, are read once per session from the
URL (`?workspace=…&as=…&now=…&q=…`, `as` empty for no person) and written back to it,
so a copied link reproduces the view. A member the link names but the workspace does
not know is refused, never replaced by someone who sees more.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import streamlit as st

from brain.db import Store
from brain.embed import Embedder
from brain.format import parse_date, parse_now
from brain.read.config import HYBRID
from explorer import resources
from explorer.state import StateKeys as K

NO_PERSON = ""


@dataclass(frozen=True)
class View:
    """What the page is asked to show: one workspace, one asker, one moment."""

    store: Store
    workspace: str
    member: str | None              # None: a caller with no person
    members: tuple[dict[str, Any], ...]
    modules: tuple[str, ...]         # what the asker's roles grant ('*' = all)
    now: datetime
    budget: int

    @property
    def embedder(self) -> Embedder:
        return resources.embedder()

    @property
    def member_param(self) -> str:
        return self.member or NO_PERSON

    def member_label(self) -> str:
        return describe_member(self.member, self.members)

    @property
    def operators(self) -> list[str]:
        """Members who may read the whole workspace (a '*' grant): the support operators."""
        return [m["member_id"] for m in self.members if "*" in (m["modules"] or [])]


def describe_member(member: str | None, members: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> str:
    if not member:
        return "no person (shared facts only)"
    row = next((m for m in members if m["member_id"] == member), None)
    if row is None:
        return f"{member} (unknown)"
    return f"{row['name']} · {member}"


def _modules_text(modules: tuple[str, ...] | list[str]) -> str:
    if "*" in modules:
        return "every module (owner)"
    return ", ".join(modules) if modules else "nothing: the roles do not resolve (fail closed)"


def _apply_url(workspaces: list[str]) -> None:
    """Copy the link's parameters into the view, once per session."""
    st.session_state[K.URL_READ] = True
    params = st.query_params
    ws = params.get("workspace")
    if ws:
        if ws not in workspaces:
            st.session_state[K.URL_ERROR] = f"The link names workspace {ws!r}, which this store does not hold."
            return
        st.session_state[K.WORKSPACE] = ws
    now = params.get("now")
    if now:
        try:
            st.session_state[K.NOW] = parse_date(now).date()
        except Exception:  # a bad date in a link: keep today's, say so
            st.session_state[K.URL_ERROR] = f"The link's date {now!r} is not an ISO date; using today."
    if "as" in params:
        member = params.get("as") or NO_PERSON
        workspace = st.session_state[K.WORKSPACE] or workspaces[0]
        known = {m["member_id"] for m in resources.members(workspace)}
        if member and member not in known:
            # Fail closed: never show someone else's view in place of the one linked.
            st.session_state[K.URL_ERROR] = (
                f"The link impersonates {member!r}, who is not a member of {workspace!r}: pick a "
                "member in the sidebar. The linked question was not run.")
            return
        st.session_state[K.MEMBER] = member
    q = params.get("q")
    if q:
        st.session_state[K.QUESTION] = q


def seed(widget_key: str, state_key: str, options: list[Any] | None = None) -> None:
    """Give a widget its persisted value when it has none (its key is dropped on page
    switches) or when its value is no longer among the options."""
    if widget_key in st.session_state:
        value = st.session_state[widget_key]
    else:
        value = st.session_state.get(state_key)
    if options is not None and value not in options:
        kept = st.session_state.get(state_key)
        value = kept if kept in options else (options[0] if options else None)
    st.session_state[widget_key] = value


def set_view(state_key: str, widget_key: str, value: Any) -> None:
    """Change a view value from code (a callback): the persisted value and its widget."""
    st.session_state[state_key] = value
    st.session_state[widget_key] = value


def render(*, asker: bool = True) -> View | None:
    """Draw the sidebar and return the view; None (after a message) when there is no data.

    With asker=False only the workspace is asked for (pages that do not read as a member).
    """
    with resources.shown_errors("opening the store"):
        store = resources.store()
        rows = store.list_workspaces()
    workspaces = [w["workspace_id"] for w in rows]
    names = {w["workspace_id"]: f"{w['name']} ({w['workspace_id']})" if w.get("name") else w["workspace_id"]
             for w in rows}
    if not st.session_state.get(K.URL_READ) and workspaces:
        _apply_url(workspaces)
    if st.session_state.get(K.URL_ERROR):
        # Said once, on the run that read the link; the next choice in the sidebar moves on.
        st.error(st.session_state.pop(K.URL_ERROR), icon=":material/link_off:")
    if not workspaces:
        return None

    sb = st.sidebar
    sb.markdown("### View")
    seed(K.W_WORKSPACE, K.WORKSPACE, workspaces)
    workspace = sb.selectbox("Workspace", workspaces, key=K.W_WORKSPACE, format_func=lambda w: names[w],
                             help="Nothing from one workspace ever reaches a reader in another.")
    st.session_state[K.WORKSPACE] = workspace
    members = tuple(resources.members(workspace))

    member: str | None = None
    modules: tuple[str, ...] = ()
    now = st.session_state.get(K.NOW) or date.today()
    budget = st.session_state.get(K.BUDGET) or HYBRID.budget
    if asker:
        ids = [m["member_id"] for m in members]
        options = ids + [NO_PERSON]
        if st.session_state.get(K.MEMBER) is None and ids:
            st.session_state[K.MEMBER] = ids[0]
        seed(K.W_MEMBER, K.MEMBER, options)
        chosen = sb.selectbox("Ask as", options, key=K.W_MEMBER,
                              format_func=lambda m: describe_member(m, members),
                              help="The member to impersonate: every step reads only what they may see.")
        st.session_state[K.MEMBER] = chosen
        member = chosen or None
        row = next((m for m in members if m["member_id"] == member), None)
        modules = tuple(row["modules"] or ()) if row else (("*",) if member is None else ())
        if member is None:
            sb.caption("Reads every module's **shared** facts, nothing private.")
        else:
            roles = ", ".join(row["roles"]) if row and row["roles"] else "none"
            sb.caption(f"Roles: {roles} → reads {_modules_text(modules)}")

        st.session_state[K.NOW] = now
        seed(K.W_NOW, K.NOW)
        now = sb.date_input("Now", key=K.W_NOW, format="YYYY-MM-DD",
                            help="The moment the question is asked: period words and expiry read from it.")
        st.session_state[K.NOW] = now
        st.session_state[K.BUDGET] = budget
        seed(K.W_BUDGET, K.BUDGET)
        budget = sb.number_input("Token budget", min_value=100, max_value=8000, step=100, key=K.W_BUDGET,
                                 help="The most cl100k tokens the context may hold.")
        st.session_state[K.BUDGET] = int(budget)

    view = View(store, workspace, member, members, modules, parse_now(now), int(budget))
    sync_url(view)
    return view


def sync_url(view: View, **extra: str) -> None:
    """Write the view into the address bar, so the link reproduces it."""
    params = {"workspace": view.workspace, "as": view.member_param,
              "now": view.now.date().isoformat()}
    question = st.session_state.get(K.QUESTION) or ""
    if question:
        params["q"] = question
    params.update(extra)
    if dict(st.query_params.to_dict()) != params:
        st.query_params.from_dict(params)


def require_view(*, asker: bool = True) -> View:
    """The view, or a message saying how to get data into an empty store (then stop)."""
    view = render(asker=asker)
    if view is None:
        st.info("The store is empty: there is nothing to ask yet. Load the demo business with "
                "`python -m brain demo` (or `make run`), or upload a JSONL file on the Data page.",
                icon=":material/inbox:")
        st.page_link("pages/data.py", label="Open the Data page", icon=":material/upload_file:")
        st.stop()
    return view
