"""Names are facts: an entity's name reaches an asker only through a fact that asker may
read (sql/036), whatever links to the entity and in whichever order the lines arrive;
and nothing of a rejected line survives its rollback, the writer's caches included."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import psycopg
import pytest

from brain import corrections
from brain.embed import get_embedder
from brain.errors import BadLine
from brain.format import parse_line
from brain.load import load_lines
from brain.read import recall
from brain.read.hidden import explain_hidden
from brain.write import Writer, rederive_carried_names, uncarried_link

NOW = datetime(2026, 11, 20, tzinfo=timezone.utc)
HASH = "hash:384"
SECRET = "Zorbey Gizlitan"
WS = "w"

SETUP = [
    {"type": "workspace", "id": WS, "org": "o", "name": "W"},
    {"type": "role", "workspace": WS, "id": "sales", "modules": ["sales"]},
    {"type": "role", "workspace": WS, "id": "hr", "modules": ["hr", "sales"]},
    {"type": "role", "workspace": WS, "id": "crm", "modules": ["crm", "sales"]},
    {"type": "role", "workspace": WS, "id": "owner", "modules": ["*"]},
    {"type": "member", "workspace": WS, "id": "u-sales", "name": "Satış", "roles": ["sales"]},
    {"type": "member", "workspace": WS, "id": "u-other", "name": "Başka", "roles": ["sales"]},
    {"type": "member", "workspace": WS, "id": "u-hr", "name": "İK", "roles": ["hr"]},
    {"type": "member", "workspace": WS, "id": "u-crm", "name": "CRM", "roles": ["crm"]},
    {"type": "member", "workspace": WS, "id": "u-boss", "name": "Patron", "roles": ["owner"]},
]
ORDER = {"type": "record", "workspace": WS, "app": "erp", "module": "sales", "kind": "order", "id": "SO-9",
         "date": "2026-10-01", "fields": {"tutar": "12.000 TL"},
         "links": [{"rel": "contact", "kind": "person", "id": "E-9"}]}


def _person(**over: Any) -> dict[str, Any]:
    line = {"type": "record", "workspace": WS, "app": "hr", "module": "hr", "kind": "person", "id": "E-9",
            "date": "2026-09-01", "name": SECRET, "privacy": "private", "owner": "u-hr",
            "fields": {"unvan": "uzman"}}
    line.update(over)
    return {k: v for k, v in line.items() if v is not None}


# How the name-giving line arrives, and who may read it besides the linking order's readers.
SCENARIOS = {
    "target first": [_person(), ORDER],
    "linker first": [ORDER, _person()],
    # the private line is rejected (its owner is unknown) in the same chunk as the order
    "target rejected": [_person(owner="u-nobody"), ORDER],
    "target in another module": [_person(module="crm", privacy=None, owner=None), ORDER],
    "private to another member": [_person(module="sales", owner="u-other"), ORDER],
}
# who may read the name in each scenario (besides nobody)
READERS = {
    "target first": {"u-hr"},
    "linker first": {"u-hr"},
    "target rejected": set(),
    "target in another module": {"u-crm", "u-boss", None},
    "private to another member": {"u-other"},
}
ASKERS = ["u-sales", "u-other", "u-hr", "u-crm", "u-boss", None]
QUESTIONS = ["SO-9 siparişinin irtibat kişisi kim?", "Who is the contact person of order SO-9?",
             "E-9 kimdir?", f"{SECRET} kimdir?"]


@pytest.fixture(scope="module")
def stores(server_uri: str, template_db: str):  # type: ignore[no-untyped-def]
    """One store per scenario, each loaded through the loader in one chunk."""
    from tests.conftest import drop_database, open_copy

    emb = get_embedder(HASH)
    made = {}
    for name, lines in SCENARIOS.items():
        store, db = open_copy(server_uri, template_db)
        store.check_embedder(emb.id, emb.dim)
        report = load_lines(Writer(store, emb), enumerate([*SETUP, *lines], start=1))
        made[name] = (store, db, report)
    yield made, emb
    for store, db, _ in made.values():
        store.close()
        drop_database(server_uri, db)


def _admin_rows(store: Any, sql: str) -> list[Any]:
    from pgvector.psycopg import register_vector

    with psycopg.connect(store.admin_uri) as conn:
        register_vector(conn)
        return conn.execute(sql).fetchall()


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_stored_texts_carry_no_name_the_linker_may_not(stores, scenario: str) -> None:  # type: ignore[no-untyped-def]
    made, _ = stores
    store, _, report = made[scenario]
    assert [r.line for r in report.rejected] == ([len(SETUP) + 1] if scenario == "target rejected" else [])
    texts = _admin_rows(store, "SELECT text, search_text, attrs::text FROM memories WHERE kind = 'order'")
    assert texts and all("zorbey" not in " ".join(t).lower() for t in texts)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("asker", ASKERS)
def test_a_name_reaches_only_its_readers(stores, scenario: str, asker: str | None) -> None:  # type: ignore[no-untyped-def]
    made, emb = stores
    store, _, _ = made[scenario]
    may = asker in READERS[scenario]
    for question in QUESTIONS:
        r = recall(question, workspace=WS, member=asker, now=NOW, store=store, embedder=emb)
        dump = r.to_json().replace(question, "")   # (the question itself may say the name)
        if not may:
            assert "Zorbey" not in dump and "Gizlitan" not in dump, (scenario, asker, question)
        if question.startswith("SO-9") and may and asker in ("u-hr", "u-crm", "u-other", "u-boss"):
            # a reader of the name who reads the order gets the contact by name
            assert SECRET in r.context, (scenario, asker, r.context)


def test_the_name_is_joined_at_read_time_for_its_readers(stores) -> None:  # type: ignore[no-untyped-def]
    made, emb = stores
    store, _, _ = made["target in another module"]
    crm = recall("SO-9 siparişinin irtibat kişisi kim?", workspace=WS, member="u-crm", now=NOW, store=store,
                 embedder=emb)
    sales = recall("SO-9 siparişinin irtibat kişisi kim?", workspace=WS, member="u-sales", now=NOW,
                   store=store, embedder=emb)
    # the order's own line names its contact for the reader of the person's record only
    assert any(f"contact → person E-9 ({SECRET})" in f.text for f in crm.facts)
    assert any(f.text.endswith("contact → person E-9") for f in sales.facts)
    assert "Path: SO-9 -contact-> E-9" in sales.context or "E-9" in sales.context


def test_a_hidden_name_is_no_anchor(stores) -> None:  # type: ignore[no-untyped-def]
    made, emb = stores
    store, _, _ = made["target first"]
    for asker, anchored in [("u-sales", False), ("u-hr", True)]:
        r = recall(f"{SECRET} hangi siparişin irtibat kişisi?", workspace=WS, member=asker, now=NOW,
                   store=store, embedder=emb)
        keys = {a.node.key for a in r.trace.anchors.anchors}
        assert ("E-9" in keys) is anchored, (asker, keys)


@pytest.mark.parametrize("member, entity_reason, name_reason", [
    ("u-sales", None, "named_only_by_hidden"), ("u-hr", None, None), ("u-boss", None, "named_only_by_hidden")])
def test_the_rule_says_why_a_name_is_hidden(stores, member: str, entity_reason: str | None,
                                            name_reason: str | None) -> None:  # type: ignore[no-untyped-def]
    made, _ = stores
    store, _, _ = made["target first"]
    with store.bound(WS, member=member, now=NOW, readonly=True) as (conn, _):
        got = conn.execute("SELECT hidden_reason, name_hidden_reason FROM entity_visibility WHERE key = 'E-9'").fetchone()
        named = conn.execute("SELECT name FROM visible_entities WHERE key = 'E-9'").fetchone()
    assert got == (entity_reason, name_reason)
    assert named == (("E-9",) if name_reason else (SECRET,))


def test_a_mention_by_a_hidden_name_tells_nothing(server_uri: str, template_db: str) -> None:
    """A shared turn saying the name: the link the writer made from the hidden name is no
    anchor and no reference for an asker who may not read it."""
    from tests.conftest import drop_database, open_copy

    emb = get_embedder(HASH)
    store, db = open_copy(server_uri, template_db)
    try:
        store.check_embedder(emb.id, emb.dim)
        writer = Writer(store, emb)
        msg = {"type": "message", "workspace": WS, "module": "sales", "channel": "whatsapp", "id": "wa-1",
               "date": "2026-10-02T10:00:00+03:00", "from": {"kind": "person", "id": "P-1"},
               "text": f"{SECRET} bugün aradı, teklif istiyor."}
        for line in [*SETUP, _person(), msg]:
            writer.write(parse_line(line))
        with store.bound(WS, member="u-sales", now=NOW, readonly=True) as (conn, _):
            assert conn.execute("SELECT count(*) FROM visible_entities WHERE key = 'E-9'").fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM visible_memory_entities me JOIN entities e"
                                " USING (workspace_id, entity_id) WHERE e.key = 'E-9'").fetchone() == (0,)
        with store.bound(WS, member="u-hr", now=NOW, readonly=True) as (conn, _):
            assert conn.execute("SELECT count(*) FROM visible_memory_entities me JOIN entities e"
                                " USING (workspace_id, entity_id) WHERE e.key = 'E-9'").fetchone() == (2,)
        r = recall("Kim aradı, teklif istiyor?", workspace=WS, member="u-sales", now=NOW, store=store, embedder=emb)
        assert "E-9" not in r.to_json()
    finally:
        store.close()
        drop_database(server_uri, db)


def test_hidden_page_names_the_name_as_hidden(stores) -> None:  # type: ignore[no-untyped-def]
    made, emb = stores
    store, _, _ = made["target in another module"]
    report = explain_hidden("SO-9 siparişinin irtibat kişisi kim?", workspace=WS, member="u-sales",
                            operator="u-boss", now=NOW, store=store, embedder=emb)
    assert any(i.what == "name" and i.reason == "named_only_by_hidden" and SECRET in i.label for i in report.items)


# -- nothing of a rejected line survives its rollback ----------------------------------------
def test_a_rejected_turn_leaves_nothing_in_the_mention_cache(fresh_store, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    emb = get_embedder(HASH)
    fresh_store.check_embedder(emb.id, emb.dim)
    writer = Writer(fresh_store, emb)
    for line in SETUP:
        writer.write(parse_line(line))
    real = corrections.record

    def failing(conn: Any, ws: str, written: list[int]) -> None:
        text = conn.execute("SELECT text FROM memories WHERE memory_id = %s", (written[0],)).fetchone()[0]
        if "ilk" in text:
            raise BadLine("a failure after the turn's entities were made")
        real(conn, ws, written)

    monkeypatch.setattr(corrections, "record", failing)
    first = {"type": "message", "workspace": WS, "module": "sales", "channel": "email", "id": "e-1",
             "date": "2026-10-01", "from": {"kind": "person", "id": "P-NEW", "name": "Yeni Kişioğlu"},
             "text": "ilk mesaj"}
    second = {"type": "message", "workspace": WS, "module": "sales", "channel": "email", "id": "e-2",
              "date": "2026-10-02", "from": {"kind": "person", "id": "P-2"},
              "text": "Yeni Kişioğlu ile görüştüm."}
    report = load_lines(writer, enumerate([first, second], start=1))
    assert [r.line for r in report.rejected] == [1]
    assert report.outcomes.get("written") == 1
    with fresh_store.bound(WS, member="u-boss", now=NOW, readonly=True) as (conn, _):
        assert conn.execute("SELECT count(*) FROM entities WHERE key = 'P-NEW'").fetchone() == (0,)


def test_a_rejected_record_names_nothing_in_later_lines(fresh_store) -> None:  # type: ignore[no-untyped-def]
    """The private line's name was predicted for the order in the same chunk; the order is
    written from what committed."""
    emb = get_embedder(HASH)
    fresh_store.check_embedder(emb.id, emb.dim)
    writer = Writer(fresh_store, emb)
    person = _person(module="sales", privacy=None, owner=None, fields={"x": "\u0000"})
    report = load_lines(writer, enumerate([*SETUP, person, ORDER], start=1))
    assert [r.line for r in report.rejected] == [len(SETUP) + 1]
    rows = _admin_rows(fresh_store, "SELECT text, embedding FROM memories WHERE kind = 'order'")
    assert rows[0][0].endswith("contact → person E-9")
    assert (rows[0][1] == emb.embed_passages([rows[0][0]])[0]).all()   # embedded as stored


# -- a store written before: its texts re-derived ------------------------------------------
def test_uncarried_link_takes_out_the_name_of_one_link_part() -> None:
    text = "order SO-9 | tutar: 5 | contact → person E-9 (Ali (Veli)) | bills → company C-1 (Acme)"
    assert uncarried_link(text, "person E-9") == "order SO-9 | tutar: 5 | contact → person E-9 | bills → company C-1 (Acme)"
    assert uncarried_link(text, "company C-1") == "order SO-9 | tutar: 5 | contact → person E-9 (Ali (Veli)) | bills → company C-1"
    assert uncarried_link(text, "person E-99") == text


def test_rederive_takes_hidden_names_out_of_an_old_store(stores) -> None:  # type: ignore[no-untyped-def]
    made, emb = stores
    store, _, _ = made["target first"]
    # as a writer before sql/036 stored it: the name carried whoever gave it
    from pgvector.psycopg import register_vector

    with psycopg.connect(store.admin_uri) as conn:
        register_vector(conn)
        conn.execute(f"UPDATE memories SET text = text || ' ({SECRET})', search_text = search_text || ' zorbey'"
                     " WHERE kind = 'order'")
        assert rederive_carried_names(conn, emb) == 1
        text, search, vec = conn.execute("SELECT text, search_text, embedding FROM memories WHERE kind = 'order'"
                                         ).fetchone()
        assert "zorbey" not in f"{text} {search}".lower()
        assert (vec == emb.embed_passages([text])[0]).all()
        assert rederive_carried_names(conn, emb) == 0   # nothing left to do
        conn.rollback()
