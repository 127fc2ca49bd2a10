"""Which turn restates an earlier one (brain/corrections.py): the rule as a table, the
pairs the writer keeps against the rule applied to every pair of turns, in any write
order, and the migration's backfill giving the same pairs."""

from __future__ import annotations

from datetime import datetime, timezone
from itertools import combinations

import numpy as np
import psycopg
import pytest

from brain import corrections
from brain import text as tx
from brain.corrections import Turn, restates
from brain.db import Store, vectors_from_wire
from brain.embed import get_embedder
from brain.format import parse_line
from brain.write import Writer


def _turn(mid: int, day: int, text: str, thread: str | None = None, names: set[int] | None = None) -> Turn:
    return Turn(mid, datetime(2026, 11, day, tzinfo=timezone.utc), thread, frozenset(names or ()),
                frozenset(tx.stems(text)))


KILN = "The kiln fires at noon on Friday, bring the glazed bowls."


@pytest.mark.parametrize(("older", "newer", "similarity", "expected"), [
    # one thread: nearly the same meaning is enough
    (_turn(1, 1, "ok", "s1"), _turn(2, 2, "fine", "s1"), 0.9, True),
    (_turn(1, 1, "ok", "s1"), _turn(2, 2, "fine", "s1"), 0.87, False),
    # only a later turn restates
    (_turn(1, 2, KILN, "s1"), _turn(2, 1, KILN, "s1"), 1.0, False),
    (_turn(1, 1, KILN, "s1"), _turn(2, 1, KILN, "s1"), 1.0, False),
    # across threads: something both name, and the words said again
    (_turn(1, 1, KILN, "s1", {1, 2}), _turn(2, 5, KILN, "s2", {2, 3}), 0.95, True),
    (_turn(1, 1, KILN, "s1", {1, 2}), _turn(2, 5, KILN, "s2", {3}), 0.95, False),
    (_turn(1, 1, KILN, "s1"), _turn(2, 5, KILN, "s2", {3}), 0.95, False),
    (_turn(1, 1, KILN, None, {5}), _turn(2, 5, KILN, None, {5}), 0.95, True),
    # a short reply's words inside a longer turn that says something else: not a restatement
    (_turn(1, 1, "Glad you have people to lean on, Mel. It helps in tough times.", "s1", {7}),
     _turn(2, 9, "Thanks Mel, tough times were easier with people to lean on; it helps me help others now, "
                 "at the youth center, every single week, with new friends.", "s2", {7}), 1.0, False),
    (_turn(1, 1, "Glad you have people to lean on, Mel. It helps in tough times.", "s1", {7}),
     _turn(2, 9, "Glad you have people to lean on, Mel. It really helps in tough times.", "s2", {7}), 1.0, True),
])
def test_the_rule(older: Turn, newer: Turn, similarity: float, expected: bool) -> None:
    assert restates(older, newer, similarity) is expected


def test_comparing_turns_leaves_no_worker_threads_spinning() -> None:
    # A matrix product over a hundred turns went to multithreaded BLAS, whose workers then
    # spun for ~100 ms after, taking a core from the next embedding.
    from bench.profile import background_after_recall

    rng = np.random.default_rng(7)
    others = rng.normal(size=(100, 384)).astype(np.float32)
    others /= np.linalg.norm(others, axis=1)[:, None]
    sims = corrections.similarities(others[99], others)
    assert sims.dtype == np.float32 and abs(float(sims[99]) - 1.0) < 1e-5 and float(sims[:99].max()) < 0.5
    burned = background_after_recall(lambda _: corrections.similarities(others[0], others), [{}] * 5)
    if burned is None:
        pytest.skip("no /proc here to read thread times from")
    assert burned < 30, f"other threads burned {burned:.0f} ms in the 100 ms after comparing"


def _rule_pairs(conn: psycopg.Connection, workspace: str) -> set[tuple[int, int]]:  # type: ignore[type-arg]
    """The rule applied to every pair of the workspace's turns, by brute force."""
    rows = conn.execute(
        "SELECT m.memory_id, m.occurred_at, m.attrs->>'thread', m.text, vector_send(m.embedding),"
        " ARRAY(SELECT e.entity_id FROM memory_entities e WHERE e.workspace_id = m.workspace_id"
        "        AND e.memory_id = m.memory_id AND e.role <> 'from')"
        " FROM memories m WHERE m.workspace_id = %s AND m.origin <> 'record' ORDER BY m.memory_id",
        (workspace,), binary=True).fetchall()
    vectors = vectors_from_wire([r[4] for r in rows])
    turns = [Turn(r[0], r[1], r[2], frozenset(r[5]), frozenset(tx.stems(r[3]))) for r in rows]
    pairs = set()
    for i, j in combinations(range(len(turns)), 2):
        a, b = turns[i], turns[j]
        sim = float(corrections.similarities(vectors[i], vectors[j][None, :])[0])
        for older, newer in ((a, b), (b, a)):
            if restates(older, newer, sim):
                pairs.add((older.memory_id, newer.memory_id))
    return pairs


def test_the_writer_keeps_exactly_the_rules_pairs(demo_store: Store) -> None:
    with psycopg.connect(demo_store.admin_uri) as conn:
        workspaces = [w for (w,) in conn.execute("SELECT workspace_id FROM workspaces ORDER BY 1")]
        found = 0
        for ws in workspaces:
            kept = set(conn.execute("SELECT older_id, newer_id FROM corrections WHERE workspace_id = %s",
                                    (ws,)).fetchall())
            assert kept == _rule_pairs(conn, ws), ws
            found += len(kept)
        assert found > 0, "the demo business has corrected messages: some pairs must be found"
        # the migration's backfill, for stores written before it, finds the same pairs
        kept = set(conn.execute("SELECT workspace_id, older_id, newer_id, newer_at FROM corrections").fetchall())
        conn.execute("DELETE FROM corrections")
        assert corrections.backfill(conn) == len(kept)
        assert set(conn.execute("SELECT workspace_id, older_id, newer_id, newer_at FROM corrections")) == kept
        conn.rollback()


def test_a_turn_written_before_the_turn_it_restates_still_pairs(fresh_store: Store) -> None:
    emb = get_embedder("hash:384")
    fresh_store.check_embedder(emb.id, emb.dim)
    w = Writer(fresh_store, emb)
    for line in ({"type": "workspace", "id": "a", "org": "o", "name": "A"},
                 {"type": "role", "workspace": "a", "id": "sales", "modules": ["sales"]}):
        w.write(parse_line(line))
    base = {"type": "message", "workspace": "a", "module": "sales", "channel": "whatsapp", "thread": "t1",
            "from": "Mehmet Kaya", "text": "Teslimat 12 Ekim'de, 40 koli."}
    later = w.write(parse_line({**base, "id": "wa-2", "date": "2026-09-07"}))   # delivered first
    earlier = w.write(parse_line({**base, "id": "wa-1", "date": "2026-09-06"}))
    other = w.write(parse_line({**base, "id": "wa-3", "date": "2026-09-08", "thread": "t2",
                                "text": "Fatura kesildi mi?"}))
    with fresh_store.bound("a") as (conn, _):
        pairs = conn.execute("SELECT older_id, newer_id, newer_at FROM corrections").fetchall()
        later_at = conn.execute("SELECT occurred_at FROM memories WHERE memory_id = %s",
                                (later.memory_id,)).fetchone()
    # the same words in one thread: the later-dated turn restates the earlier, whichever came first
    assert [(o, n) for o, n, _ in pairs] == [(earlier.memory_id, later.memory_id)]
    assert (pairs[0][2],) == later_at
    assert other.memory_id not in {p[1] for p in pairs}


def test_a_message_has_one_sender(demo_store: Store) -> None:
    # rank joins a turn to its sender directly (sql/020): a second sender is refused
    # (in a transaction rolled back: the demo store is shared)
    with psycopg.connect(demo_store.admin_uri) as conn:
        mid, sender = conn.execute("SELECT memory_id, entity_id FROM memory_entities WHERE role = 'from'"
                                   " ORDER BY memory_id LIMIT 1").fetchone()
        other = conn.execute("SELECT entity_id FROM entities WHERE entity_id <> %s ORDER BY entity_id LIMIT 1",
                             (sender,)).fetchone()[0]
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("INSERT INTO memory_entities SELECT workspace_id, memory_id, %s, 'from'"
                         " FROM memory_entities WHERE memory_id = %s AND role = 'from'", (other, mid))


def test_a_turn_is_compared_with_the_turns_nearest_it_in_time(fresh_store: Store) -> None:
    # Seven turns saying the same about one company, each in a thread of its own, written
    # out of time order: with a window of two, the middle turn pairs with the two nearest
    # it in time on each side (by the company, never by id or by thread), and the rest
    # are not read; with the store's window, with all six.
    emb = get_embedder("hash:384")
    fresh_store.check_embedder(emb.id, emb.dim)
    w = Writer(fresh_store, emb)
    for line in ({"type": "workspace", "id": "a", "org": "o", "name": "A"},
                 {"type": "role", "workspace": "a", "id": "sales", "modules": ["sales"]},
                 {"type": "record", "workspace": "a", "module": "sales", "kind": "company", "id": "C-1",
                  "date": "2026-01-01", "fields": {"name": "Kuzey Lojistik"}, "source": "crm"}):
        w.write(parse_line(line))
    day_of: dict[int, int] = {}
    for day in (4, 1, 7, 2, 6, 3, 5):
        turn = w.write(parse_line({
            "type": "message", "workspace": "a", "module": "sales", "channel": "whatsapp", "id": f"wa-{day}",
            "thread": f"t{day}", "date": f"2026-09-0{day}", "from": "Mehmet Kaya",
            "about": [{"kind": "company", "id": "C-1"}], "text": "Kuzey Lojistik teslimatı 12 Ekim'de, 40 koli."}))
        day_of[turn.memory_id] = day
    middle = next(m for m, d in day_of.items() if d == 4)
    with fresh_store.bound("a") as (conn, _):
        def partners(window: int) -> set[int]:
            return {day_of[o if n == middle else n]
                    for o, n, _ in corrections.find(conn, "a", middle, window=window)}
        assert partners(2) == {2, 3, 5, 6}
        assert partners(corrections.WINDOW) == {1, 2, 3, 5, 6, 7}
