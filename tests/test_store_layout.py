"""How the store lays its rows out for the read path (sql/012-014), on the real demo store:
the visibility rule reads the asker's binding once per statement and still judges every
row exactly as the original per-row rule did; full-text indexes have no pending list;
a typical memory's row keeps its text vector inline."""

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


def test_rule_reads_the_binding_once_per_statement(demo_store: Store) -> None:
    with demo_store.bound(WS, member=None, now=NOW, readonly=True) as (conn, _):
        plan = json.dumps(conn.execute("EXPLAIN (FORMAT JSON, VERBOSE) SELECT memory_id FROM visible_memories"
                                       " WHERE workspace_id = %s", (WS,)).fetchone()[0])
    # the settings are read in init plans, not in the row filter
    assert "InitPlan" in plan
    assert "brain.modules" not in plan.split('"Filter"', 1)[-1].split('"Plans"', 1)[0]


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
