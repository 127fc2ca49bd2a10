"""Every session-state key the explorer uses, with its default, in one place.

Pages read and write state only through these names, so a key is never misspelt and a
reader sees at a glance what a session remembers.
"""

from __future__ import annotations

from typing import Any

import streamlit as st


class StateKeys:
    # The view every page shares (persisted, never widget keys: a widget's key is
    # dropped when a page that does not draw it runs, these survive page switches).
    WORKSPACE = "view_workspace"
    MEMBER = "view_member"          # member id, "" = a caller with no person
    NOW = "view_now"                # datetime.date
    BUDGET = "view_budget"          # context token budget
    QUESTION = "view_question"
    OPERATOR = "view_operator"      # the owner who opens the Hidden page
    EXPECTED = "view_expected"      # what the analyst expected under "Why not?"
    URL_READ = "url_read"           # query parameters applied once per session
    URL_ERROR = "url_error"         # why the link could not be reproduced as given
    ROUTED = "routed"               # app.py has run in this session
    WHYNOT_RESULT = "whynot_result"  # (the view and question it answers, the WhyNot)
    DATA_REPORT = "data_report"     # (file name, LoadReport) of the last upload
    DATA_SYNCED = "data_synced"     # the last record synced from the form

    # Widget keys (tests drive widgets by these).
    W_WORKSPACE = "sb_workspace"
    W_MEMBER = "sb_member"
    W_NOW = "sb_now"
    W_BUDGET = "sb_budget"
    W_OPERATOR = "sb_operator"
    W_QUESTION = "ask_question"
    W_EXAMPLE = "ask_example"
    W_WHYNOT_TEXT = "whynot_text"
    W_WHYNOT_SEARCH = "whynot_search"
    W_WHYNOT_PICK = "whynot_pick"
    W_WHYNOT_GO = "whynot_go"
    W_HIDDEN_QUESTION = "hidden_question"
    W_HIDDEN_EXPECTED = "hidden_expected"
    W_CMP_A = "cmp_a"
    W_CMP_B = "cmp_b"
    W_GRAPH_SEARCH = "graph_search"
    W_GRAPH_PICK = "graph_pick"
    W_GRAPH_DEPTH = "graph_depth"
    W_GRAPH_KINDS = "graph_kinds"
    W_GRAPH_MODULES = "graph_modules"
    W_UPLOAD = "data_upload"
    W_LOAD = "data_load"
    W_SYNC_FORM = "data_sync"
    W_SYNC_ID = "sync_id"
    W_SYNC_DATE = "sync_date"
    W_SYNC_FIELDS = "sync_fields"


DEFAULTS: dict[str, Any] = {
    StateKeys.WORKSPACE: None,
    StateKeys.MEMBER: None,
    StateKeys.NOW: None,
    StateKeys.BUDGET: None,
    StateKeys.QUESTION: "",
    StateKeys.OPERATOR: None,
    StateKeys.EXPECTED: "",
    StateKeys.URL_READ: False,
    StateKeys.URL_ERROR: None,
}


def init_state() -> None:
    """Fill in the defaults a session has not set yet (called by the router each run)."""
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    st.session_state[StateKeys.ROUTED] = True


def ensure_router() -> None:
    """Make sure a session's first run goes through app.py's navigation.

    Streamlit still knows the old "pages/ folder" mode: until some run in the process
    has called st.navigation, a link straight to a page (say /hidden, as the server's
    first request) runs that file alone, without the router's page config and
    defaults. Turn that mode off and rerun, so the router runs first. (Only before the
    router ever ran in this session: a rerun would drop a button's click.)
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory and not st.session_state.get(StateKeys.ROUTED):
        PagesManager.uses_pages_directory = False
        st.rerun()
