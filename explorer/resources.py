"""The explorer's long-lived resources (store, embedder, writer) and its cached reads.

Everything is opened through `open_store()`, which honours DATABASE_URL like the CLI
does, and cached with `st.cache_resource`. Cached results are keyed by the database,
workspace, member, moment and question, so one member's view is never served to another.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
import streamlit as st

import brain
from brain.db import Store, data_dir
from brain.embed import Embedder, get_embedder
from brain.errors import BrainError, DatabaseUnavailable, NotAnOperator
from brain.read.trace import Recall
from brain.write import Writer

WHAT_TO_DO = (
    "Start the embedded database and load the demo with `make run`, or set `DATABASE_URL` "
    "to a reachable PostgreSQL with the pgvector extension, then reload this page."
)


def db_key() -> str:
    """Which database this process talks to: part of every cache key."""
    url = os.environ.get("DATABASE_URL")
    return f"url:{url}" if url else f"embedded:{data_dir()}"


def open_store() -> Store:
    """Open the store named by the environment, as the CLI does (DATABASE_URL, else the
    embedded server). A URL whose user is the app role is checked, not migrated."""
    return Store.open()


@st.cache_resource(show_spinner="Opening the store…")
def _store_for(key: str) -> Store:
    return open_store()


def store() -> Store:
    return _store_for(db_key())


@st.cache_resource(show_spinner="Loading the embedder…")
def _embedder_for(spec: str) -> Embedder:
    return get_embedder(spec or None)


def embedder() -> Embedder:
    return _embedder_for(os.environ.get("BRAIN_EMBEDDER", ""))


@st.cache_resource(show_spinner=False)
def _writer_for(key: str, spec: str) -> Writer:
    s, e = _store_for(key), _embedder_for(spec)
    # Writing needs the store's embedder to be this one (vectors are compared later).
    s.check_embedder(e.id, e.dim)
    return Writer(s, e)


def writer() -> Writer:
    return _writer_for(db_key(), os.environ.get("BRAIN_EMBEDDER", ""))


@st.cache_data(ttl=600, max_entries=512, show_spinner="Recalling…")
def _recall(db: str, workspace: str, member: str | None, now_iso: str, question: str,
            budget: int) -> Recall:
    # Every argument is part of the key: the member above all (never serve one member's
    # recall to another), the database and the moment too.
    return brain.recall(question, workspace=workspace, member=member, now=datetime.fromisoformat(now_iso),
                        budget=budget, store=store(), embedder=embedder())


def recall(question: str, *, workspace: str, member: str | None, now: datetime, budget: int) -> Recall:
    """`brain.recall`, cached per database, workspace, member, moment, budget and question."""
    return _recall(db_key(), workspace, member, now.isoformat(), question, int(budget))


@st.cache_data(ttl=600, max_entries=128, show_spinner="Asking the rule what it hid…")
def _explain_hidden(db: str, workspace: str, member: str | None, operator: str, now_iso: str,
                    question: str) -> Any:
    from brain.read.hidden import explain_hidden

    return explain_hidden(question, workspace=workspace, member=member, operator=operator,
                          now=datetime.fromisoformat(now_iso), store=store(), embedder=embedder())


def explain_hidden(question: str, *, workspace: str, member: str | None, operator: str, now: datetime) -> Any:
    """`brain.read.hidden.explain_hidden`, cached per database, member, operator, moment, question."""
    return _explain_hidden(db_key(), workspace, member, operator, now.isoformat(), question)


@st.cache_data(ttl=600, max_entries=128, show_spinner="Comparing the two members…")
def _compare(db: str, workspace: str, member_a: str | None, member_b: str | None, operator: str,
             now_iso: str, question: str) -> Any:
    from brain.read.hidden import compare_members

    return compare_members(question, workspace=workspace, member_a=member_a, member_b=member_b,
                           operator=operator, now=datetime.fromisoformat(now_iso), store=store(),
                           embedder=embedder())


def compare_members(question: str, *, workspace: str, member_a: str | None, member_b: str | None,
                    operator: str, now: datetime) -> Any:
    """`brain.read.hidden.compare_members`, cached per database, both members, operator, moment."""
    return _compare(db_key(), workspace, member_a, member_b, operator, now.isoformat(), question)


def forget_results() -> None:
    """Drop cached reads after a write (the Data page)."""
    for cached in (_recall, _explain_hidden, _compare):
        cached.clear()


@contextmanager
def shown_errors(what: str = "") -> Iterator[None]:
    """Turn the library's errors into a message with what to do, then stop the page.

    A traceback helps nobody using the explorer; the message of a BrainError says what
    to do, and a database error the library did not name is shown in one line.
    """
    try:
        yield
    except DatabaseUnavailable as exc:
        st.error(f"The database cannot be reached. {exc}\n\n{WHAT_TO_DO}", icon=":material/power_off:")
        st.stop()
    except NotAnOperator as exc:
        st.error(str(exc), icon=":material/lock:")
        st.stop()
    except BrainError as exc:
        st.error(f"{what + ': ' if what else ''}{exc}", icon=":material/error:")
        st.stop()
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        st.error(f"{what + ': ' if what else ''}the database refused this ({first}). {WHAT_TO_DO}",
                 icon=":material/error:")
        st.stop()


def members(workspace: str) -> list[dict[str, Any]]:
    with shown_errors("reading the members"):
        return store().members(workspace)
