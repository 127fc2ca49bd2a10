"""brain.wire: the read path's statements on libpq's pipeline, against the real server.

It must read exactly what psycopg reads, keep a read one bound, read-only snapshot, leave
its connection idle whatever happens, and survive psycopg dropping its prepared
statements."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest

from brain import wire
from brain.db import Store
from brain.read import recall
from brain.write import Writer
from fixtures.business import NOW as _NOW
from tests.test_store import count, record, writer  # noqa: F401 (writer: a fixture)

NOW = datetime.fromisoformat(_NOW).replace(tzinfo=timezone.utc)
QUESTIONS = ["SO-1010 siparişiyle ilgili müşteri ne bildirdi?", "Ağaoğlu Yapı'nın vergi numarası nedir?",
             "Has the invoice for the last order of Baysal Tekstil been paid?", "Eylülde hangi şikayetler açıldı?"]


@pytest.fixture
def store(demo_store: Store, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """The demo business through a pool of one connection: each read meets the
    statements the one before prepared (or lost)."""
    monkeypatch.setenv("BRAIN_POOL_SIZE", "1")
    one = Store(demo_store.admin_uri, demo_store.app_uri)
    yield one
    one.close()


def _idle(store: Store) -> None:
    with store.pool.connection() as conn:
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert conn.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF
        assert conn.autocommit is False
        assert conn.execute("SELECT current_setting('brain.workspace', true)").fetchone() in (("",), (None,))
        conn.commit()   # (not rollback(): psycopg's drops every prepared statement)


def test_placeholders_become_numbered_parameters() -> None:
    """psycopg's syntax, as the steps write it: a name used twice is one parameter, %% is
    a percent sign. (Fails if a repeated name is sent twice or %% reaches the server.)"""
    text, order = wire._convert("SELECT %(a)s, %(b)s, %(a)s, '5%%'")
    assert text == b"SELECT $1, $2, $1, '5%'" and order == ("a", "b")
    text, order = wire._convert("SELECT %s, %s")
    assert text == b"SELECT $1, $2" and order == (0, 1)


def test_the_wire_reads_what_psycopg_reads(store: Store, embedder: Any) -> None:
    """Every statement of real recalls, sent again through psycopg in a read bound the same
    way, gives the same rows, with the same Python types. (Fails if a parameter is dumped
    as another type or bound to another placeholder, or rows come back out of order.)"""
    sent: list[tuple[str, Any, bool]] = []
    original = wire.Reader.execute

    def capture(self: wire.Reader, query: str, params: Any = None, **kw: Any) -> Any:
        sent.append((query, params, kw.get("binary", False)))
        return original(self, query, params, **kw)

    wire.Reader.execute = capture  # type: ignore[method-assign]
    try:
        got = {q: recall(q, workspace="acme-tr", member="u-emre", now=NOW, store=store, embedder=embedder)
               for q in QUESTIONS}
    finally:
        wire.Reader.execute = original  # type: ignore[method-assign]
    assert all(r.context for r in got.values())
    statements = [s for s in sent if "brain_bind_read" not in s[0] and not s[0].startswith(("BEGIN", "COMMIT"))]
    assert len({s[0] for s in statements}) >= 8   # terms, lookups, fused, edges, node facts, candidates, ...
    for query, params, binary in statements:
        with store.pipelined_read("acme-tr", member="u-emre", now=NOW) as (reader, _):
            ours = reader.execute(query, params, binary=binary).fetchall()
        with store.bound("acme-tr", member="u-emre", now=NOW, readonly=True) as (conn, _):
            theirs = conn.execute(query, params, binary=binary).fetchall()
        assert ours == theirs, query
        assert [[type(v) for v in row] for row in ours] == [[type(v) for v in row] for row in theirs]


def test_a_pipelined_read_is_one_bound_read_only_snapshot(writer: Writer) -> None:
    """As Store.bound(readonly=True): the binding exactly as given (quotes, backslashes,
    non-ASCII, a time zone), read only, one snapshot while a writer commits, and the
    connection back idle. (Fails if BEGIN loses its options or the binding a value.)"""
    from brain.format import parse_line

    store = writer.store
    writer.write(parse_line(record("a", "SO-1", sync_id="s-a")))
    now = datetime(2026, 9, 1, 12, 30, 15, 123456, tzinfo=timezone(timedelta(hours=3)))
    for ws, member, when in (("a", "o'brien \\ ç", now), ("a", None, None)):
        with store.pipelined_read(ws, member=member, now=when) as (reader, bound):
            settings = reader.execute("SELECT current_setting('brain.workspace'), current_setting('brain.member'),"
                                      " current_setting('brain.now')::timestamptz, now()")
            first = reader.execute("SELECT count(*) FROM memories")
            assert bound().workspace == ws and bound().relations is True
            got = settings.fetchone()
            assert got[:2] == (ws, member or "") and got[2] == (when or got[3])
            assert reader.execute("SHOW transaction_isolation").fetchone() == ("repeatable read",)
            assert reader.execute("SHOW transaction_read_only").fetchone() == ("on",)
            n = first.fetchone()[0]
            writer.write(parse_line(record("a", f"SO-{n + 1}", sync_id=f"s-{n + 1}")))
            assert reader.execute("SELECT count(*) FROM memories").fetchone() == (n,)
        assert count(store, "a", "SELECT count(*) FROM memories") == n + 1
    _idle(store)


def test_a_failed_statement_fails_the_read_and_leaves_the_connection_idle(store: Store) -> None:
    """The server's error comes back as psycopg's class for it, at the statement's rows and
    at every later statement's (they ran in an aborted transaction, or outside one), also
    when nobody asked for the failing rows; an error of the caller's own ends the read
    with statements still pending. The pooled connection is then idle and usable.
    (Fails if an error is dropped, or the pipeline is left on.)"""
    with pytest.raises(psycopg.errors.DivisionByZero):
        with store.pipelined_read("acme-tr") as (reader, _):
            bad = reader.execute("SELECT 1 / %(zero)s", {"zero": 0})
            later = reader.execute("SELECT 1")
            with pytest.raises(psycopg.errors.DivisionByZero):
                later.fetchall()
            bad.fetchall()
    _idle(store)
    with pytest.raises(psycopg.errors.DivisionByZero):   # nobody read it: the read's end says so
        with store.pipelined_read("acme-tr") as (reader, _):
            reader.execute("SELECT 1 / 0")
    _idle(store)
    with pytest.raises(ZeroDivisionError):
        with store.pipelined_read("acme-tr") as (reader, _):
            reader.execute("SELECT pg_sleep(0.05)")
            reader.execute("SELECT count(*) FROM memories")
            raise ZeroDivisionError
    _idle(store)
    # the failed reads were rolled back without dropping the prepared statements (the
    # binding's, made by the first read above)
    with store.pool.connection() as conn:
        assert conn.execute("SELECT count(*) FROM pg_prepared_statements WHERE starts_with(name, 'brain_')"
                            " AND statement LIKE '%%brain_bind_read%%'").fetchone() == (1,)
        conn.commit()
    with store.pipelined_read("acme-tr") as (reader, _):
        assert reader.execute("SELECT count(*) FROM memories").fetchone()[0] > 0


def test_a_recall_survives_psycopg_dropping_its_prepared_statements(store: Store, embedder: Any) -> None:
    """psycopg runs DEALLOCATE ALL after a rollback on a connection where it prepared
    statements: the next recall finds the wire's statements gone, reads nothing, and is
    asked again with them made anew: the same answer. (Fails without the retry in
    brain.read.run, with "prepared statement does not exist".)"""
    question = QUESTIONS[0]
    before = recall(question, workspace="acme-tr", member="u-emre", now=NOW, store=store, embedder=embedder)
    with store.pool.connection() as conn:
        ours = "SELECT count(*) FROM pg_prepared_statements WHERE starts_with(name, 'brain_')"
        conn.execute("SELECT 1").fetchall()   # psycopg prepares it (prepare_threshold 0)
        assert conn.execute(ours).fetchone()[0] > 0   # type: ignore[index]
        conn.rollback()
        assert conn.execute(ours).fetchone() == (0,)
        conn.rollback()
    lost = []
    original = wire.Reader._collect_one

    def watch(self: wire.Reader) -> Any:
        result = original(self)
        if isinstance(result._error, wire.StatementsLost):
            lost.append(result._error)
        return result

    wire.Reader._collect_one = watch  # type: ignore[method-assign]
    try:
        after = recall(question, workspace="acme-tr", member="u-emre", now=NOW, store=store, embedder=embedder)
    finally:
        wire.Reader._collect_one = original  # type: ignore[method-assign]
    assert lost, "the statements were dropped: the first attempt must have found them gone"
    assert after.context == before.context
    _idle(store)


def test_work_given_for_the_waits_runs_while_a_result_is_awaited(store: Store) -> None:
    """`when_idle` tasks run, in order, where the reader would block for a result (here a
    statement that sleeps), not when the result is already there; what is left at the
    read's end is dropped; a task's error is raised where it ran, and the connection is
    left idle. (Fails if the tasks never run, run out of order, or outlive their read.)"""
    import time

    done: list[int] = []
    with store.pipelined_read("acme-tr") as (reader, _):
        slow = reader.execute("SELECT pg_sleep(0.2)")
        reader.when_idle(lambda i=i: done.append(i) for i in (1, 2))   # (taken when given)
        slow.fetchall()
        assert done == [1, 2]
        ready = reader.execute("SELECT 3")
        time.sleep(0.2)   # the row has come: nothing to wait for
        reader.when_idle([lambda: done.append(3)])
        assert ready.fetchone() == (3,) and done == [1, 2]
        reader.execute("SELECT pg_sleep(0.05)")   # nobody waits for it: the task is dropped
    assert done == [1, 2]
    with pytest.raises(ZeroDivisionError):
        with store.pipelined_read("acme-tr") as (reader, _):
            reader.when_idle([lambda: 1 / 0])
            reader.execute("SELECT pg_sleep(0.05)").fetchall()
    _idle(store)


def test_a_read_ended_early_commits_behind_its_statements_and_takes_no_more(writer: Writer) -> None:
    """`end()` sends the COMMIT behind the statements already sent: their rows are still
    read after it, the snapshot they saw is the transaction's, the connection's own commit
    then has nothing left to end (no exchange of its own), and a statement after it is
    refused rather than run outside the read's transaction and binding. A failure before
    the COMMIT still fails the read, and leaves the connection idle. (Fails if end()
    commits before the statements run, or lets a statement follow it.)"""
    from brain.format import parse_line

    store = writer.store
    writer.write(parse_line(record("a", "SO-1", sync_id="s-a")))
    exchanges: list[bytes] = []   # the reader's connection's own commands (psycopg's commit)
    real = psycopg.Connection._exec_command
    ours: list[Any] = []

    def own(self: Any, command: Any, *args: Any, **kw: Any) -> Any:
        if self in ours:
            exchanges.append(bytes(command) if isinstance(command, (bytes, bytearray)) else str(command).encode())
        return real(self, command, *args, **kw)

    psycopg.Connection._exec_command = own  # type: ignore[method-assign]
    try:
        with store.pipelined_read("a", member=None) as (reader, bound):
            ours.append(reader.conn)
            before = reader.execute("SELECT count(*) FROM memories")
            slow = reader.execute("SELECT pg_sleep(0.05), current_setting('brain.workspace')")
            reader.end()
            with pytest.raises(psycopg.ProgrammingError, match="ended"):
                reader.execute("SELECT 1")
            n = before.fetchone()[0]
            writer.write(parse_line(record("a", f"SO-{n + 1}", sync_id=f"s-{n + 1}")))
            assert slow.fetchone()[1] == "a"   # ran in the bound transaction, before its COMMIT
            assert bound().workspace == "a"
    finally:
        psycopg.Connection._exec_command = real  # type: ignore[method-assign]
    assert not any(c.startswith(b"COMMIT") for c in exchanges), exchanges   # (the reader's COMMIT ended it)
    assert n > 0 and count(store, "a", "SELECT count(*) FROM memories") == n + 1
    _idle(store)
    with pytest.raises(psycopg.errors.DivisionByZero):
        with store.pipelined_read("a") as (reader, _):
            reader.execute("SELECT 1 / 0")
            reader.end()
    _idle(store)


def test_a_recall_ends_its_transaction_before_reading_its_last_rows(store: Store, embedder: Any) -> None:
    """The read's COMMIT is sent right behind its last statement (rank's candidates), not
    after their rows are read: the server ends the read while rank and compact work.
    (Fails when the transaction is committed by an exchange of its own at the end.)"""
    seen: list[str] = []
    execute, collect = wire.Reader.execute, wire.Reader._collect_one

    def sending(self: wire.Reader, query: str, *args: Any, **kw: Any) -> Any:
        seen.append("COMMIT sent" if query == "COMMIT" else "candidates sent" if "cand AS (" in query else "sent")
        return execute(self, query, *args, **kw)

    def reading(self: wire.Reader) -> Any:
        result = collect(self)
        seen.append("read")
        return result

    wire.Reader.execute = sending  # type: ignore[method-assign]
    wire.Reader._collect_one = reading  # type: ignore[method-assign]
    try:
        for question in QUESTIONS:
            seen.clear()
            r = recall(question, workspace="acme-tr", member="u-emre", now=NOW, store=store, embedder=embedder)
            assert r.context
            assert seen.count("COMMIT sent") == 1 and seen.count("candidates sent") == 1, seen
            at = seen.index("candidates sent")
            assert seen[at + 1] == "COMMIT sent", seen   # (the candidates' rows not read before it)
            assert seen[-2:] == ["read", "read"] and "sent" not in seen[at + 2:], seen
    finally:
        wire.Reader.execute, wire.Reader._collect_one = execute, collect  # type: ignore[method-assign]
    _idle(store)


def test_a_pipelined_read_leaves_psycopg_s_autocommit_alone(store: Store, embedder: Any) -> None:
    """brain.wire begins and ends the read itself, past psycopg, so the connection is not
    switched to autocommit and back (each switch is psycopg's exchange with itself); the
    read is still one bound transaction, committed, and the connection idle after it.
    (Fails when the pipelined read switches autocommit.)"""
    switched: list[bool] = []
    real = psycopg.Connection._set_autocommit

    def switching(self: Any, value: bool) -> None:
        switched.append(value)
        real(self, value)

    psycopg.Connection._set_autocommit = switching  # type: ignore[method-assign]
    try:
        r = recall(QUESTIONS[0], workspace="acme-tr", member="u-emre", now=NOW, store=store, embedder=embedder)
        with store.pipelined_read("acme-tr") as (reader, bound):   # (ended by the store's commit)
            assert reader.execute("SELECT count(*) FROM memories").fetchone()[0] > 0
            assert bound().workspace == "acme-tr"
    finally:
        psycopg.Connection._set_autocommit = real  # type: ignore[method-assign]
    assert r.context and switched == []
    _idle(store)


def test_a_recall_sends_its_first_statements_before_reading_the_rest_of_the_question(
        store: Store, embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The name lookups need only the question's words and codes, the fused statement its
    keyword terms too (question.read_words): the lookups go out before the terms are read,
    the fused statement before the question's kinds and stems are, which is done while
    the server answers them. (Fails when the whole question, or all its terms, are read
    first.)"""
    from brain import text as tx

    seen: list[str] = []
    execute, kinds_in, expand_terms = wire.Reader.execute, tx.kinds_in, tx.expand_terms

    def sending(self: wire.Reader, query: str, *args: Any, **kw: Any) -> Any:
        seen.append("fused sent" if "text_leg AS (" in query else "names sent" if "n.name_key = ANY" in query
                    else "sent")
        return execute(self, query, *args, **kw)

    def reading_kinds(question: str) -> Any:
        seen.append("kinds read")
        return kinds_in(question)

    def reading_terms(question: str) -> Any:
        seen.append("terms read")
        return expand_terms(question)

    monkeypatch.setattr(wire.Reader, "execute", sending)
    monkeypatch.setattr(tx, "kinds_in", reading_kinds)
    monkeypatch.setattr(tx, "expand_terms", reading_terms)
    named = 0
    for question in QUESTIONS:
        seen.clear()
        assert recall(question, workspace="acme-tr", member="u-emre", now=NOW, store=store, embedder=embedder).context
        assert seen.count("kinds read") == seen.count("fused sent") == seen.count("terms read") == 1, seen
        # the keyword terms (the attribute words a question's concepts bring) are read for
        # the fused statement, after the name lookups, which need only the words, went out
        assert seen.index("terms read") < seen.index("fused sent") < seen.index("kinds read"), seen
        if "names sent" in seen:
            named += 1
            assert seen.index("names sent") < seen.index("terms read"), seen
    assert named   # (some question names something)
    _idle(store)
