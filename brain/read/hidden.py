"""The privileged side of visibility: what the rule hid from a member, and why.

Only an operator who may read the whole workspace (an owner, '*' grant) may ask, and
what is shown of hidden content follows that operator's own rights: candidates come from
the operator's own recall, and the member's verdict on each comes from the one rule in
SQL (memory_visibility / entity_visibility / edge_visibility, bound to the member).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from brain import text as tx
from brain.db import Store, default_store
from brain.embed import Embedder
from brain.errors import NotAnOperator
from brain.read.config import HYBRID
from brain.read.run import recall
from brain.read.trace import Fact, Node
from brain.read.visibility import REASONS


@dataclass(frozen=True)
class HiddenItem:
    what: str                      # fact | entity | edge
    id: int
    label: str
    reason: str
    detail: str
    entity_ids: tuple[int, ...]


@dataclass(frozen=True)
class HiddenEdge:
    src: int
    rel: str
    dst: int
    reason: str


@dataclass(frozen=True)
class HiddenReport:
    question: str
    workspace: str
    member: str | None
    operator: str
    operator_modules: tuple[str, ...]
    items: tuple[HiddenItem, ...]
    counts: dict[str, int]
    nodes: dict[int, Node]         # the operator's view of the graph around the question
    edges: tuple[HiddenEdge, ...]  # relations on the operator's paths (reason '' if visible)
    visible_nodes: tuple[int, ...]  # nodes the member may see
    ms: float


@dataclass(frozen=True)
class Comparison:
    question: str
    member_a: str | None
    member_b: str | None
    only_a: tuple[Fact, ...]
    only_b: tuple[Fact, ...]
    both: int
    reasons: dict[int, str]        # memory id → why the other member does not get it


@dataclass(frozen=True)
class ExpectedHit:
    memory_id: int
    text: str
    visible_to_member: bool
    reason: str | None


MEMORY_REASONS_SQL = """
SELECT memory_id, hidden_reason FROM memory_visibility
 WHERE workspace_id = %(ws)s AND memory_id = ANY(%(ids)s)"""

ENTITY_REASONS_SQL = """
SELECT entity_id, hidden_reason, hidden_reasons, name_hidden_reason FROM entity_visibility
 WHERE workspace_id = %(ws)s AND entity_id = ANY(%(ids)s)"""

EDGE_REASONS_SQL = """
SELECT src_id, rel, dst_id, memory_id, hidden_reason FROM edge_visibility
 WHERE workspace_id = %(ws)s AND memory_id = ANY(%(ids)s)"""

FIND_TEXT_SQL = """
SELECT memory_id, text FROM visible_memories
 WHERE workspace_id = %(ws)s AND strpos(search_text, %(needle)s) > 0
 ORDER BY occurred_at DESC LIMIT %(limit)s"""


def search_needle(expected: str) -> str:
    """The form of a string as it stands in memories.search_text (Turkish-lowered)."""
    return " ".join(re.sub(r"['’‘`´]", " ", tx.tr_lower(expected)).split())


def require_operator(store: Store, workspace: str, operator: str, now: datetime | None) -> tuple[str, ...]:
    with store.bound(workspace, member=operator, now=now, readonly=True) as (_, binding):
        if "*" not in binding.modules:
            raise NotAnOperator(
                f"{operator!r} may not read the whole workspace {workspace!r}: pick an operator whose "
                "roles grant every module ('*', usually the owner) to open the support views.")
        return binding.modules


def reasons_for(store: Store, workspace: str, member: str | None, now: datetime | None,
                memory_ids: list[int]) -> dict[int, str | None]:
    """The rule's verdict on some facts for one member: None = visible."""
    if not memory_ids:
        return {}
    with store.bound(workspace, member=member, now=now, readonly=True) as (conn, _):
        return {int(m): r for m, r in conn.execute(MEMORY_REASONS_SQL, {"ws": workspace, "ids": memory_ids})}


def explain_hidden(question: str, *, workspace: str, member: str | None, operator: str,
                   now: datetime | None = None, store: Store | None = None,
                   embedder: Embedder | None = None) -> HiddenReport:
    """Which facts, entities and relations around this question the rule hid from `member`."""
    t0 = time.perf_counter()
    store = store or default_store()
    now = now or datetime.now(timezone.utc)
    op_modules = require_operator(store, workspace, operator, now)
    seen = recall(question, workspace=workspace, member=operator, now=now, store=store, embedder=embedder,
                  config=HYBRID)
    tr = seen.trace
    facts = {f.memory_id: f for f in tr.rank.facts}
    nodes = dict(tr.paths.nodes)
    for a in tr.anchors.anchors:
        nodes.setdefault(a.node.entity_id, a.node)
    hop_ids = sorted({h.memory_id for p in tr.paths.paths for h in p.hops})
    items: list[HiddenItem] = []
    edges: list[HiddenEdge] = []
    with store.bound(workspace, member=member, now=now, readonly=True) as (conn, _):
        params: dict[str, Any] = {"ws": workspace, "ids": list(facts)}
        for mid, reason in conn.execute(MEMORY_REASONS_SQL, params):
            if reason:
                f = facts[int(mid)]
                items.append(HiddenItem("fact", int(mid), f.text, reason,
                                        f"{REASONS.get(reason, reason)} (module {f.module})", ()))
        visible_nodes = []
        for eid, reason, reasons, name_reason in conn.execute(ENTITY_REASONS_SQL,
                                                               {"ws": workspace, "ids": list(nodes)}):
            node = nodes[int(eid)]
            if reason:
                detail = "facts naming it are hidden: " + ", ".join(REASONS.get(r, r) for r in (reasons or []))
                items.append(HiddenItem("entity", int(eid), node.label, reason, detail, (int(eid),)))
                continue
            visible_nodes.append(int(eid))
            if name_reason:
                # the entity exists for the member (a fact they read refers to it), its name
                # does not: the fact that gave it is hidden from them
                items.append(HiddenItem("name", int(eid), node.label, name_reason,
                                        f"seen as {node.kind} {node.key}: the fact that names it is hidden",
                                        (int(eid),)))
        on_paths = {(h.src, h.rel, h.dst) for p in tr.paths.paths for h in p.hops}
        for src, rel, dst, mid, reason in conn.execute(EDGE_REASONS_SQL, {"ws": workspace, "ids": hop_ids}):
            if (int(src), rel, int(dst)) not in on_paths:
                continue
            edges.append(HiddenEdge(int(src), rel, int(dst), reason or ""))
            if reason:
                label = f"{nodes[int(src)].label if int(src) in nodes else src} -{rel}-> " \
                        f"{nodes[int(dst)].label if int(dst) in nodes else dst}"
                items.append(HiddenItem("edge", int(mid), label, reason, REASONS.get(reason, reason),
                                        (int(src), int(dst))))
    counts: dict[str, int] = {}
    for it in items:
        counts[it.reason] = counts.get(it.reason, 0) + 1
    return HiddenReport(question, workspace, member, operator, op_modules, tuple(items), counts, nodes,
                        tuple(edges), tuple(visible_nodes), (time.perf_counter() - t0) * 1000)


def compare_members(question: str, *, workspace: str, member_a: str | None, member_b: str | None,
                    operator: str, now: datetime | None = None, store: Store | None = None,
                    embedder: Embedder | None = None) -> Comparison:
    """What A's context holds that B's does not (and the reverse), and why."""
    store = store or default_store()
    now = now or datetime.now(timezone.utc)
    require_operator(store, workspace, operator, now)
    ra = recall(question, workspace=workspace, member=member_a, now=now, store=store, embedder=embedder)
    rb = recall(question, workspace=workspace, member=member_b, now=now, store=store, embedder=embedder)
    ids_a = {f.memory_id: f for f in ra.facts}
    ids_b = {f.memory_id: f for f in rb.facts}
    only_a = [f for m, f in ids_a.items() if m not in ids_b]
    only_b = [f for m, f in ids_b.items() if m not in ids_a]
    op_sees = reasons_for(store, workspace, operator, now, [f.memory_id for f in only_a + only_b])
    for_b = reasons_for(store, workspace, member_b, now, [f.memory_id for f in only_a])
    for_a = reasons_for(store, workspace, member_a, now, [f.memory_id for f in only_b])
    reasons = {m: (r or "visible, but ranked below the other's budget cut") for m, r in {**for_b, **for_a}.items()}

    def shown(f: Fact) -> Fact:  # what the operator may not read stays unread
        if op_sees.get(f.memory_id) is None:
            return f
        return Fact(**{**f.__dict__, "text": "[not readable by the operator]", "source": "", "sender": None})

    return Comparison(question, member_a, member_b, tuple(shown(f) for f in only_a),
                      tuple(shown(f) for f in only_b), len(set(ids_a) & set(ids_b)), reasons)


def explain_expected(expected: str, *, workspace: str, member: str | None, operator: str,
                     now: datetime | None = None, store: Store | None = None, limit: int = 20) -> list[ExpectedHit]:
    """Facts holding `expected` that the operator can read, each with the member's verdict."""
    store = store or default_store()
    now = now or datetime.now(timezone.utc)
    require_operator(store, workspace, operator, now)
    needle = search_needle(expected)
    with store.bound(workspace, member=operator, now=now, readonly=True) as (conn, _):
        rows = conn.execute(FIND_TEXT_SQL, {"ws": workspace, "needle": needle, "limit": limit}).fetchall()
    verdict = reasons_for(store, workspace, member, now, [int(r[0]) for r in rows])
    return [ExpectedHit(int(m), t, verdict.get(int(m)) is None, verdict.get(int(m))) for m, t in rows]
