"""Browsing the graph as one member sees it: entity search, a neighbourhood of typed
edges with the memory behind each, and a record's version history. Every statement is
bound to the member, so only visible entities, edges and facts come back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pgvector import SparseVector

from brain import text as tx
from brain.db import Store, default_store
from brain.read.trace import Node


@dataclass(frozen=True)
class EdgeView:
    src: int
    rel: str
    dst: int
    module: str
    memory_id: int
    evidence: str
    valid_from: datetime


@dataclass(frozen=True)
class Neighbourhood:
    center: Node
    nodes: dict[int, Node]
    edges: tuple[EdgeView, ...]
    depth: int


@dataclass(frozen=True)
class Version:
    memory_id: int
    occurred_at: datetime
    text: str
    is_current: bool
    valid_to: datetime | None


SEARCH_SQL = """
SELECT DISTINCT ON (e.entity_id) e.entity_id, e.kind, e.key, e.name,
       CASE WHEN n.name_key = %(folded)s OR upper(e.key) = upper(%(raw)s) THEN 0
            WHEN strpos(n.name_key, %(folded)s) = 1 THEN 1 ELSE 2 END AS quality
  FROM visible_entity_names n JOIN visible_entities e USING (workspace_id, entity_id)
 WHERE n.workspace_id = %(ws)s AND (strpos(n.name_key, %(folded)s) > 0 OR upper(e.key) = upper(%(raw)s))
 LIMIT 200"""

FUZZY_SQL = """
SELECT e.entity_id, e.kind, e.key, e.name, t.dist
  FROM (SELECT n.entity_id, n.trigrams <=> %(vec)s AS dist FROM visible_entity_names n
         WHERE n.workspace_id = %(ws)s ORDER BY n.trigrams <=> %(vec)s LIMIT %(limit)s) t
  JOIN visible_entities e ON e.workspace_id = %(ws)s AND e.entity_id = t.entity_id
 WHERE t.dist < 0.6"""

NODE_SQL = "SELECT entity_id, kind, key, name FROM visible_entities WHERE workspace_id = %(ws)s AND entity_id = %(id)s"

EDGES_SQL = """
SELECT e.src_id, e.rel, e.dst_id, e.module, e.memory_id, m.text, e.valid_from,
       s.kind, s.key, s.name, d.kind, d.key, d.name
  FROM visible_edges e
  JOIN visible_memories m ON m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id
  JOIN named_entities s ON s.workspace_id = e.workspace_id AND s.entity_id = e.src_id
  JOIN named_entities d ON d.workspace_id = e.workspace_id AND d.entity_id = e.dst_id
 WHERE e.workspace_id = %(ws)s AND (e.src_id = ANY(%(ids)s) OR e.dst_id = ANY(%(ids)s))
 ORDER BY e.valid_from DESC
 LIMIT %(limit)s"""

HISTORY_SQL = """
SELECT m.memory_id, m.occurred_at, m.text, m.valid_to IS NULL AS is_current, m.valid_to
  FROM memory_entities me JOIN visible_memories m USING (workspace_id, memory_id)
 WHERE me.workspace_id = %(ws)s AND me.entity_id = %(id)s AND me.role = 'subject'
 ORDER BY m.occurred_at DESC, m.memory_id DESC"""


def _node(row: Any) -> Node:
    return Node(int(row[0]), str(row[1]), str(row[2]), str(row[3]))


def search_entities(query: str, *, workspace: str, member: str | None, now: datetime | None = None,
                    store: Store | None = None, limit: int = 20) -> list[Node]:
    """Visible entities whose name, alias or key matches `query` (then fuzzy by trigrams)."""
    store = store or default_store()
    folded = tx.fold(query)
    if not folded:
        return []
    with store.bound(workspace, member=member, now=now, readonly=True) as (conn, _):
        rows = conn.execute(SEARCH_SQL, {"ws": workspace, "folded": folded, "raw": query.strip()}).fetchall()
        rows.sort(key=lambda r: (r[4], len(r[3])))
        found = [_node(r) for r in rows[:limit]]
        if len(found) < limit:
            seen = {n.entity_id for n in found}
            vec = SparseVector(tx.trigrams(query), tx.TRIGRAM_DIM)
            for r in conn.execute(FUZZY_SQL, {"ws": workspace, "vec": vec, "limit": limit}):
                if int(r[0]) not in seen:
                    found.append(_node(r))
                    seen.add(int(r[0]))
    return found[:limit]


def neighbourhood(entity_id: int, *, workspace: str, member: str | None, depth: int = 1,
                  kinds: list[str] | None = None, modules: list[str] | None = None, now: datetime | None = None,
                  store: Store | None = None, max_edges: int = 400) -> Neighbourhood | None:
    """Typed edges around an entity, up to `depth` hops, as the member sees them."""
    store = store or default_store()
    with store.bound(workspace, member=member, now=now, readonly=True) as (conn, _):
        row = conn.execute(NODE_SQL, {"ws": workspace, "id": entity_id}).fetchone()
        if row is None:
            return None
        center = _node(row)
        nodes = {center.entity_id: center}
        edges: dict[tuple[int, str, int, int], EdgeView] = {}
        frontier = [center.entity_id]
        for _ in range(max(1, min(depth, 3))):
            rows = conn.execute(EDGES_SQL, {"ws": workspace, "ids": frontier, "limit": max_edges}).fetchall()
            nxt: list[int] = []
            for r in rows:
                src = Node(int(r[0]), r[7], r[8], r[9])
                dst = Node(int(r[2]), r[10], r[11], r[12])
                if modules and r[3] not in modules:
                    continue
                other = dst if src.entity_id in frontier else src
                if kinds and other.kind not in kinds:
                    continue
                edges.setdefault((src.entity_id, r[1], dst.entity_id, int(r[4])),
                                 EdgeView(src.entity_id, r[1], dst.entity_id, r[3], int(r[4]), r[5], r[6]))
                for n in (src, dst):
                    if n.entity_id not in nodes:
                        nodes[n.entity_id] = n
                        nxt.append(n.entity_id)
            if not nxt or len(edges) >= max_edges:
                break
            frontier = nxt
    return Neighbourhood(center, nodes, tuple(edges.values()), depth)


def record_history(entity_id: int, *, workspace: str, member: str | None, now: datetime | None = None,
                   store: Store | None = None) -> list[Version]:
    """Every visible version of the record defining an entity, newest first."""
    store = store or default_store()
    with store.bound(workspace, member=member, now=now, readonly=True) as (conn, _):
        rows = conn.execute(HISTORY_SQL, {"ws": workspace, "id": entity_id}).fetchall()
    return [Version(int(r[0]), r[1], r[2], bool(r[3]), r[4]) for r in rows]
