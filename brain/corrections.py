"""Which conversation turns a later turn restates: decided when a turn is written, read by rank.

A later turn about the same things, saying nearly the same, corrects an earlier one (a
message sent again with the count fixed, a note rewritten): a recall shows the newer
first and marks the older as an earlier value. In one thread nearly the same meaning is
enough. Across threads, something both name (who sent them is not enough: one person's
turns are not all about one thing) and most of the words of both said again: small talk
("thanks, Mel!") embeds close to other small talk without restating anything, and a
short reply's few words fit inside many a longer turn that says something else.

Whether one turn restates another depends only on the two turns (their time, thread,
the entities they name, their words and their vectors), so it is decided once, when the
second of the two is written, and kept as a pair in `corrections`. A recall then reads,
for each candidate turn, the correctors among its own candidates (rank's candidates
statement), instead of fetching every candidate's vector and comparing them: 0.5 ms of
LoCoMo's candidates statement and 1.2 ms of rank's Python a recall. Who may see either
turn is the read path's business: a pair is used only when the asker sees both.

A turn is compared with the turns nearest it in time, in its thread and among those naming
what it names (`WINDOW` on each side), not with every one: a company named in thousands of
turns would make every write about it slower than the last.

Records are not compared: a re-synced record's older version is marked by its ref key.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from brain import text as tx
from brain.db import vectors_from_wire

SIMILAR = 0.88     # cosine similarity (e5 vectors are unit length) of a restatement
RESTATED = 0.5     # share of the longer turn's word stems two turns in different threads must share
_MARGIN = 1e-3     # the store's own inner product only preselects: numpy decides (see below)


@dataclass(frozen=True)
class Turn:
    memory_id: int
    occurred_at: datetime
    thread: str | None
    names: frozenset[int]       # entities it names in any role but sender
    stems: frozenset[str]       # tx.stems of its text


def restates(older: Turn, newer: Turn, similarity: float) -> bool:
    """Whether `newer` corrects `older`, given their vectors' similarity."""
    if not newer.occurred_at > older.occurred_at or similarity < SIMILAR:
        return False
    if older.thread is not None and older.thread == newer.thread:
        return True
    if not older.names & newer.names:
        return False
    return len(older.stems & newer.stems) >= max(3, RESTATED * max(len(older.stems), len(newer.stems)))


def similarities(one: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Each row of `others` against `one`, row by row (no matrix product: it would hand the
    work to BLAS threads, which spin for ~100 ms after and take a core from the next
    embedding). float32 throughout, as the vectors are stored."""
    return np.einsum("ij,ij->i", np.repeat(one[None, :], len(others), axis=0), others)


# A turn and the turns it could restate or be restated by: the `window` turns nearest it
# in time on each side in its thread, and as many among the turns about or mentioning
# each thing it names; at a different time; of nearly the same meaning (by the store's
# inner product, with a margin: the decision is numpy's, on the same float32 vectors, so
# it does not hang on two implementations' rounding); `restates` decides among them.
# The windows bound a write's cost: a company customers write to every day is named in
# thousands of turns, and reading every one cost 21 ms a turn at 4,000 and grew with
# them (sql/025). The same pairs as without windows on the demo (10) and on LoCoMo's
# conversations (28 held out, 64 tuning) with windows of 500, 200, 100, 50 and 20. A
# backfill passes `below`, the turn's own id, so that each pair is looked at once.
WINDOW = 200

_NEIGHBOURS_SQL = """
WITH me AS (
    SELECT m.memory_id, m.occurred_at, m.thread, m.embedding
      FROM memories m
     WHERE m.workspace_id = %(ws)s AND m.memory_id = %(id)s AND m.origin <> 'record'
), near AS (
    -- (the thread column and a value: its index serves under row-level security, see
    -- sql/022, where a join or attrs->>'thread' read every memory of the workspace)
    -- (each window is read in index order from the turn outwards, per outer row: joined
    -- to `me` directly, the planner sorted the whole thread first)
    SELECT x.memory_id
      FROM me CROSS JOIN LATERAL (
          (SELECT t.memory_id FROM memories t
            WHERE t.workspace_id = %(ws)s AND t.thread = me.thread
              AND (t.occurred_at, t.memory_id) < (me.occurred_at, me.memory_id)
            ORDER BY t.occurred_at DESC, t.memory_id DESC LIMIT {window})
          UNION ALL
          (SELECT t.memory_id FROM memories t
            WHERE t.workspace_id = %(ws)s AND t.thread = me.thread
              AND (t.occurred_at, t.memory_id) > (me.occurred_at, me.memory_id)
            ORDER BY t.occurred_at, t.memory_id LIMIT {window})) x
    UNION ALL
    -- (what it names in any role but sender, which alone says too little, among the
    -- turns about or mentioning it: entity_turns' index of them by time, sql/025)
    SELECT x.memory_id
      FROM me CROSS JOIN memory_entities a CROSS JOIN LATERAL (
          (SELECT b.memory_id FROM entity_turns b
            WHERE b.workspace_id = %(ws)s AND b.entity_id = a.entity_id AND NOT b.sent
              AND (b.occurred_at, b.memory_id) < (me.occurred_at, me.memory_id)
            ORDER BY b.occurred_at DESC, b.memory_id DESC LIMIT {window})
          UNION ALL
          (SELECT b.memory_id FROM entity_turns b
            WHERE b.workspace_id = %(ws)s AND b.entity_id = a.entity_id AND NOT b.sent
              AND (b.occurred_at, b.memory_id) > (me.occurred_at, me.memory_id)
            ORDER BY b.occurred_at, b.memory_id LIMIT {window})) x
     WHERE a.workspace_id = %(ws)s AND a.memory_id = %(id)s AND a.role <> 'from'
)
SELECT x.memory_id, x.occurred_at, x.thread, x.text, vector_send(x.embedding),
       ARRAY(SELECT e.entity_id FROM memory_entities e
              WHERE e.workspace_id = x.workspace_id AND e.memory_id = x.memory_id AND e.role <> 'from')
  FROM me JOIN memories x ON x.workspace_id = %(ws)s
 WHERE x.memory_id IN (SELECT memory_id FROM near UNION ALL SELECT me.memory_id)
   AND x.origin <> 'record'
   AND (x.memory_id = me.memory_id
        OR (x.memory_id < %(below)s::bigint AND x.occurred_at <> me.occurred_at
            AND (x.embedding <#> me.embedding) <= %(bound)s))
 ORDER BY x.memory_id = me.memory_id DESC, x.memory_id"""


_EVERY = 2**62


@functools.lru_cache(maxsize=8)
def _neighbours_sql(window: int) -> str:
    # (the window written into the text: under generic plans a LIMIT it cannot see is
    # planned as if it kept most rows)
    return _NEIGHBOURS_SQL.format(window=int(window))


def find(conn: psycopg.Connection[Any], workspace: str, memory_id: int,
         below: int = _EVERY, window: int = WINDOW) -> list[tuple[int, int, datetime]]:
    """The pairs (older id, newer id, newer's time) between turn `memory_id` and the other
    turns this transaction sees (those with ids below `below`) among the `window` nearest
    it in time on each side, in its thread and per thing it names."""
    rows = conn.execute(_neighbours_sql(window), {"ws": workspace, "id": memory_id, "below": below,
                                          "bound": -(SIMILAR - _MARGIN)}, binary=True).fetchall()
    if len(rows) < 2 or rows[0][0] != memory_id:
        return []   # a record, or nothing near it
    vectors = vectors_from_wire([r[4] for r in rows])
    sims = similarities(vectors[0], vectors[1:])
    me = _turn(rows[0])
    pairs = []
    for row, sim in zip(rows[1:], sims.tolist()):
        if sim < SIMILAR:   # (the store's preselection has a margin)
            continue
        other = _turn(row)
        older, newer = (other, me) if other.occurred_at < me.occurred_at else (me, other)
        if restates(older, newer, sim):
            pairs.append((older.memory_id, newer.memory_id, newer.occurred_at))
    return pairs


def _turn(row: Any) -> Turn:
    return Turn(int(row[0]), row[1], row[2], frozenset(row[5] or ()), tx.stem_set(row[3]))


def _store(conn: psycopg.Connection[Any], workspace: str, pairs: Sequence[tuple[int, int, datetime]]) -> None:
    if pairs:
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO corrections (workspace_id, older_id, newer_id, newer_at)"
                            " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                            [(workspace, o, n, at) for o, n, at in pairs])


def record(conn: psycopg.Connection[Any], workspace: str, memory_ids: Iterable[int]) -> None:
    """Find and keep the pairs of turns just written (in this transaction, links included)
    with every other turn. Writers to one workspace take turns here until they commit, so
    two turns written at once still meet: the one that comes second sees the first, whose
    id may be higher or lower than its own."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{workspace}|corrections",))
    for mid in memory_ids:
        _store(conn, workspace, find(conn, workspace, mid))


def backfill(conn: psycopg.Connection[Any]) -> int:
    """Every workspace's pairs, as if each turn had been written in id order (the data step
    of migration 019, for stores written before it). Returns the pairs found."""
    n = 0
    turns = conn.execute("SELECT workspace_id, memory_id FROM memories WHERE origin <> 'record'"
                         " ORDER BY workspace_id, memory_id").fetchall()
    if len(turns) > 2000:   # 4.5 ms a turn on LoCoMo's tuning store: say why the store is slow to open
        print(f"brain: finding restated turns among {len(turns):,} conversation turns "
              "(a one-time step of migration 019)...", file=sys.stderr, flush=True)
    for ws, mid in turns:
        pairs = find(conn, ws, int(mid), below=int(mid))
        _store(conn, ws, pairs)
        n += len(pairs)
    return n
