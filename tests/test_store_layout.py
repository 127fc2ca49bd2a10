"""How the store lays its rows out for the read path (sql/012-015), on the real demo store:
the visibility rule reads the asker's binding once per statement and still judges every
row exactly as the original per-row rule did; an edge's ends are judged edge by edge, as
the original rule judged them; full-text indexes have no pending list; a typical memory's
row keeps its text vector inline."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import psycopg
import pytest

from brain.db import Store

WS = "acme-tr"
NOW = datetime(2026, 11, 20, tzinfo=timezone.utc)

# The rule as sql/002 first wrote it, reading the settings row by row: the oracle the
# rewritten rule must agree with.
ORIGINAL_RULE = """
CASE
    WHEN NOT (m.module = ANY (brain_modules()) OR '*' = ANY (brain_modules())) THEN 'module_not_granted'
    WHEN m.privacy <> 'shared' AND (brain_member() IS NULL OR m.owner_id IS DISTINCT FROM brain_member())
         THEN 'private_other'
    WHEN m.superseded_by IS NOT NULL THEN 'superseded'
    WHEN m.expires_at IS NOT NULL AND m.expires_at <= brain_now() THEN 'expired'
END"""


def _askers(demo_lines: list[dict]) -> list[str | None]:  # type: ignore[type-arg]
    members = [ln["id"] for ln in demo_lines if ln["type"] == "member" and ln["workspace"] == WS]
    owners = {ln.get("owner") for ln in demo_lines if ln.get("workspace") == WS and ln.get("owner")}
    # no person, every member (owners of private facts among them), and an unknown id
    return [None, *members, *sorted(o for o in owners if o not in members), "nobody-here"]


@pytest.mark.parametrize("moment", [NOW, datetime(2025, 1, 1, tzinfo=timezone.utc)])
def test_rule_judges_every_row_as_the_original(demo_store: Store, demo_lines, moment: datetime) -> None:  # type: ignore[no-untyped-def]
    for member in _askers(demo_lines):
        with demo_store.bound(WS, member=member, now=moment, readonly=True) as (conn, _):
            rows = conn.execute(f"SELECT m.memory_id, m.hidden_reason, {ORIGINAL_RULE} FROM memory_visibility m"
                                ).fetchall()
            visible = {r[0] for r in conn.execute("SELECT memory_id FROM visible_memories")}
        assert rows, "the demo workspace has memories"
        differ = [(mid, new, old) for mid, new, old in rows if new != old]
        assert not differ, (member, differ[:5])
        assert visible == {mid for mid, _, old in rows if old is None}, member


@pytest.mark.parametrize("moment", [NOW, datetime(2025, 1, 1, tzinfo=timezone.utc)])
def test_an_entitys_visible_turns_are_its_visible_turns(demo_store: Store, demo_lines, moment: datetime) -> None:  # type: ignore[no-untyped-def]
    # rank counts and ranks an anchor's turns from their narrow copies (sql/021): for every
    # asker and moment, the copies the rule lets through are exactly the turns it lets through
    seen = []
    for member in _askers(demo_lines):
        with demo_store.bound(WS, member=member, now=moment, readonly=True) as (conn, _):
            copied = set(conn.execute("SELECT entity_id, memory_id FROM visible_entity_turns").fetchall())
            joined = set(conn.execute(
                "SELECT me.entity_id, me.memory_id FROM memory_entities me JOIN visible_memories m"
                " USING (workspace_id, memory_id)"
                " WHERE me.role IN ('about', 'from', 'mention') AND m.origin <> 'record'").fetchall())
            everything = conn.execute("SELECT count(*) FROM entity_turns").fetchone()[0]
        assert copied == joined, (member, sorted(copied ^ joined)[:5])
        seen.append(len(joined))
    # the askers see different parts, some none and none all: the comparison has teeth
    assert len(set(seen)) > 2 and min(seen) < max(seen) < everything, seen


def test_an_entitys_turns_follow_their_memory(demo_store: Store) -> None:
    # the copies follow a change to the memory (a supersede, a new expiry) and go with it
    with psycopg.connect(demo_store.admin_uri) as conn:
        mid = conn.execute("SELECT memory_id FROM entity_turns WHERE workspace_id = %s AND superseded_by IS NULL"
                           " ORDER BY memory_id LIMIT 1", (WS,)).fetchone()[0]
        other = conn.execute("SELECT max(memory_id) FROM memories WHERE workspace_id = %s", (WS,)).fetchone()[0]
        conn.execute("UPDATE memories SET superseded_by = %s, expires_at = %s WHERE workspace_id = %s"
                     " AND memory_id = %s", (other, NOW, WS, mid))
        assert set(conn.execute("SELECT superseded_by, expires_at FROM entity_turns WHERE workspace_id = %s"
                                " AND memory_id = %s", (WS, mid)).fetchall()) == {(other, NOW)}
        conn.execute("DELETE FROM memory_entities WHERE workspace_id = %s AND memory_id = %s", (WS, mid))
        assert conn.execute("SELECT count(*) FROM entity_turns WHERE workspace_id = %s AND memory_id = %s",
                            (WS, mid)).fetchone() == (0,)
        conn.rollback()


def test_an_entitys_turns_say_which_it_only_sent(demo_store: Store) -> None:
    # the writer reads a thing's turns about or mentioning it by time (sql/025): `sent`
    # marks the copies of turns it only sent, written so and kept so when a role changes
    with psycopg.connect(demo_store.admin_uri) as conn:
        flags = conn.execute("SELECT t.sent, me.role = 'from' FROM entity_turns t JOIN memory_entities me"
                             " USING (workspace_id, memory_id, entity_id)").fetchall()
        assert {s for s, _ in flags} == {True, False}, "the demo has both kinds"
        assert all(s == sender for s, sender in flags)
        ws, mid, eid = conn.execute("SELECT workspace_id, memory_id, entity_id FROM entity_turns WHERE sent"
                                    " ORDER BY memory_id LIMIT 1").fetchone()
        conn.execute("UPDATE memory_entities SET role = 'mention' WHERE workspace_id = %s AND memory_id = %s"
                     " AND entity_id = %s", (ws, mid, eid))
        assert conn.execute("SELECT sent FROM entity_turns WHERE workspace_id = %s AND memory_id = %s"
                            " AND entity_id = %s", (ws, mid, eid)).fetchone() == (False,)
        conn.rollback()


def test_rule_reads_the_binding_once_per_statement(demo_store: Store) -> None:
    with demo_store.bound(WS, member=None, now=NOW, readonly=True) as (conn, _):
        plan = json.dumps(conn.execute("EXPLAIN (FORMAT JSON, VERBOSE) SELECT memory_id FROM visible_memories"
                                       " WHERE workspace_id = %s", (WS,)).fetchone()[0])
    # the settings are read in init plans, not in the row filter
    assert "InitPlan" in plan
    assert "brain.modules" not in plan.split('"Filter"', 1)[-1].split('"Plans"', 1)[0]


# An edge's verdict as sql/002 and 012 wrote it: its ends judged with NOT EXISTS.
ORIGINAL_EDGE_RULE = """
CASE
    WHEN mv.hidden_reason IS NOT NULL THEN mv.hidden_reason
    WHEN NOT (ed.module = ANY (brain_modules()) OR '*' = ANY (brain_modules())) THEN 'module_not_granted'
    WHEN ed.valid_to IS NOT NULL AND ed.valid_to <= brain_now() THEN 'ended'
    WHEN NOT EXISTS (SELECT 1 FROM visible_entities v WHERE v.workspace_id = ed.workspace_id AND v.entity_id = ed.src_id)
      OR NOT EXISTS (SELECT 1 FROM visible_entities v WHERE v.workspace_id = ed.workspace_id AND v.entity_id = ed.dst_id)
        THEN 'endpoint_hidden'
END"""


def _edge_verdicts(store: Store, workspace: str, member: str | None, moment: datetime) -> list[tuple]:  # type: ignore[type-arg]
    """(edge_id, rel, verdict now, verdict of the original rule) for every edge."""
    with store.bound(workspace, member=member, now=moment, readonly=True) as (conn, _):
        return conn.execute(
            f"SELECT ed.edge_id, ed.rel, ev.hidden_reason, {ORIGINAL_EDGE_RULE}"
            "  FROM edges ed JOIN memory_visibility mv USING (workspace_id, memory_id)"
            "  JOIN edge_visibility ev USING (workspace_id, edge_id) ORDER BY ed.edge_id").fetchall()


@pytest.mark.parametrize("moment", [NOW, datetime(2025, 1, 1, tzinfo=timezone.utc)])
def test_edges_are_judged_as_the_original_rule_judged_them(demo_store: Store, demo_lines, moment: datetime) -> None:  # type: ignore[no-untyped-def]
    for member in _askers(demo_lines):
        rows = _edge_verdicts(demo_store, WS, member, moment)
        assert rows, "the demo workspace has edges"
        differ = [r for r in rows if r[2] != r[3]]
        assert not differ, (member, differ[:5])


def test_an_edge_to_an_entity_only_hidden_facts_name_is_hidden(fresh_store: Store) -> None:
    """The case sql/015 rewrote, which the demo never reaches (an edge's own fact names
    both its ends there, so a hidden end always comes with a hidden fact): the fact
    stating the edge is shared, but one end is named only by another member's private
    note. Written directly, as the writer would not produce it."""
    ws = "w-ends"
    with psycopg.connect(fresh_store.admin_uri, autocommit=True) as admin:
        admin.execute("INSERT INTO workspaces (workspace_id, org, name) VALUES (%s, 'o', 'Ends')", (ws,))
        admin.execute("INSERT INTO roles VALUES (%s, 'all', '{*}')", (ws,))
        admin.execute("INSERT INTO members (workspace_id, member_id, name, roles)"
                      " VALUES (%s, 'owner', 'Owner', '{all}'), (%s, 'other', 'Other', '{all}')", (ws, ws))
        ids = {}
        for key in ("acme", "hidden-person", "shared-person"):
            ids[key] = admin.execute(
                "INSERT INTO entities (workspace_id, kind, key, name, name_key) VALUES (%s, 'x', %s, %s, %s)"
                " RETURNING entity_id", (ws, key, key, key)).fetchone()[0]

        def memory(text: str, privacy: str, owner: str | None, names: list[str]) -> int:
            mid = admin.execute(
                "INSERT INTO memories (workspace_id, origin, kind, ref_key, module, privacy, owner_id, source,"
                " text, search_text, content_hash, occurred_at)"
                " VALUES (%s, 'note', 'note', %s, 'crm', %s, %s, 'test', %s, %s, %s, %s) RETURNING memory_id",
                (ws, f"note:{text}", privacy, owner, text, text, text, NOW)).fetchone()[0]
            for i, key in enumerate(names):
                admin.execute("INSERT INTO memory_entities VALUES (%s, %s, %s, %s)",
                              (ws, mid, ids[key], "subject" if i == 0 else "mention"))
            return mid

        stating = memory("acme employs two people", "shared", None, ["acme"])
        memory("a note on the hidden person", "private", "owner", ["hidden-person"])
        memory("a note on the shared person", "shared", None, ["shared-person"])
        for rel, dst in (("employs_hidden", "hidden-person"), ("employs_shared", "shared-person")):
            admin.execute("INSERT INTO edges (workspace_id, rel, src_id, dst_id, module, memory_id, valid_from)"
                          " VALUES (%s, %s, %s, %s, 'crm', %s, %s)", (ws, rel, ids["acme"], ids[dst], stating, NOW))
    verdicts = {member: [(rel, now, old) for _, rel, now, old in _edge_verdicts(fresh_store, ws, member, NOW)]
                for member in ("owner", "other")}
    assert verdicts == {
        "owner": [("employs_hidden", None, None), ("employs_shared", None, None)],
        "other": [("employs_hidden", "endpoint_hidden", "endpoint_hidden"), ("employs_shared", None, None)],
    }


def test_a_walk_step_judges_edge_ends_edge_by_edge(demo_store: Store) -> None:
    """The generic plan of a walk step looks each edge's ends up by key: no hashed check
    that first builds every visible entity of the workspace (sql/015)."""
    from brain.read.paths import EDGES_SQL

    sql = EDGES_SQL.replace("%(ws)s", "$1::text").replace("%(ids)s", "$2::bigint[]")
    with demo_store.bound(WS, member=None, now=NOW, readonly=True) as (conn, _):
        # (not prepared: the $n are the generic plan's, no values are bound)
        plan = json.dumps(conn.execute(f"EXPLAIN (FORMAT JSON, GENERIC_PLAN) {sql}", prepare=False).fetchone()[0])
    assert "SubPlan" in plan            # the ends are still checked ...
    assert "hashed SubPlan" not in plan  # ... one edge at a time


def test_full_text_indexes_have_no_pending_list(demo_store: Store) -> None:
    with psycopg.connect(demo_store.admin_uri, autocommit=True) as admin:
        opts = dict(admin.execute("SELECT relname, reloptions FROM pg_class WHERE relname IN "
                                  "('memories_fts', 'entity_names_words')").fetchall())
    assert opts == {"memories_fts": ["fastupdate=off"], "entity_names_words": ["fastupdate=off"]}


def test_a_typical_memory_keeps_its_text_vector_inline(demo_store: Store) -> None:
    with psycopg.connect(demo_store.admin_uri, autocommit=True) as admin:
        # rows under 2 kB never needed it; the ones between 2 and 4 kB are the point
        n, toasted = admin.execute(
            "SELECT count(*), count(*) FILTER (WHERE pg_column_toast_chunk_id(fts) IS NOT NULL) FROM memories "
            "WHERE pg_column_size(memories.*) BETWEEN 2100 AND 3900").fetchone()
    assert n > 0
    assert toasted == 0, (toasted, n)


def _nodes(plan: dict) -> list[dict]:  # type: ignore[type-arg]
    """Every node of an EXPLAIN (FORMAT JSON) plan tree."""
    return [plan] + [n for child in plan.get("Plans", ()) for n in _nodes(child)]


def test_the_fuzzy_name_probe_checks_each_name_found_on_its_own(demo_store: Store) -> None:
    """The trigram probe's generic plan looks each found name's entity up by key: no scan of
    the workspace's memory links to hash every visible entity first (anchors.TRIGRAM_SQL)."""
    from brain.read.anchors import TRIGRAM_SQL

    sql = TRIGRAM_SQL.replace("%(ws)s", "$1::text").replace("%(vecs)s", "$2::sparsevec[]")
    with psycopg.connect(demo_store.admin_uri, autocommit=True) as admin:
        # (a loaded store's statistics, under which the view's join was hashed)
        admin.execute("ANALYZE memories, memory_entities, entities, entity_names")
    with demo_store.bound(WS, member=None, now=NOW, readonly=True) as (conn, _):
        plan = conn.execute(f"EXPLAIN (FORMAT JSON, GENERIC_PLAN) {sql}", prepare=False).fetchone()[0][0]["Plan"]
    links = [n for n in _nodes(plan) if n.get("Relation Name") == "memory_entities"]
    assert links   # the entity rule is still applied ...
    for n in links:   # ... one entity at a time
        assert n["Node Type"] in ("Index Scan", "Index Only Scan"), n["Node Type"]
        assert "entity_id" in n.get("Index Cond", ""), n
