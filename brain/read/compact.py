"""Step 6, compact: a short, sourced, dated context under a token budget.

A first line gives today's date; then one line per fact, each with its source, its date
and when it was last confirmed; earlier values are marked as earlier. Anchors and answer
paths come next, a path only with the facts that state its hops. Token counts are exact
(cl100k_base).
"""

from __future__ import annotations

import re
import time
from datetime import datetime

from brain.read.trace import AnchorStep, CompactStep, ContextLine, Fact, Node, PathStep, RankStep
from brain.tokens import count_tokens, truncate_to_tokens

_ID_RE = re.compile(r"\[(\d+)\]")
MAX_LINE_SHARE = 0.35   # no single fact may take more than this share of the budget


def _day(dt: datetime) -> str:
    return dt.date().isoformat()


def today_line(now: datetime) -> str:
    """Said once, so each fact's age follows from its date without a stamp of its own."""
    return f"Today: {_day(now)}"


def fact_line(f: Fact, max_tokens: int | None = None) -> str:
    """`[id] (earlier value) text (source, date, confirmed)`; a long text is cut, never
    the stamp that says where and when it comes from."""
    mark = ""
    if f.earlier:
        mark = "(earlier value" + (f", replaced by [{f.newer_id}]" if f.newer_id else "") + ") "
    stamp = f"{f.source}, {_day(f.occurred_at)}"
    if _day(f.confirmed_at) != _day(f.occurred_at):
        stamp += f", confirmed {_day(f.confirmed_at)}"
    if f.expires_at is not None:
        stamp += f", expires {_day(f.expires_at)}"
    text = f.text
    if max_tokens is not None:
        room = max_tokens - count_tokens(f"[{f.memory_id}] {mark} ({stamp})") - 1
        if count_tokens(text) > room:
            text = truncate_to_tokens(text, max(8, room)) + "…"
    return f"[{f.memory_id}] {mark}{text} ({stamp})"


def _node_label(node: Node | None, eid: int) -> str:
    if node is None:
        return f"#{eid}"
    return node.label


def compact(*, anchors: AnchorStep, paths: PathStep, rank: RankStep, now: datetime, budget: int,
            top_k: int = 0) -> CompactStep:
    t0 = time.perf_counter()
    lines: list[ContextLine] = []
    used = 0

    def push(section: str, text: str, memory_id: int | None, n: int | None = None) -> bool:
        nonlocal used
        n = (count_tokens(text) if n is None else n) + (1 if lines else 0)   # + the joining newline
        if used + n > budget:
            return False
        lines.append(ContextLine(section, text, memory_id, n))
        used += n
        return True

    facts = list(rank.facts[:top_k] if top_k else rank.facts)
    push("today", today_line(now), None)
    if not top_k:
        if anchors.anchors:
            push("anchors", "Named: " + "; ".join(f"{a.node.label}" for a in anchors.anchors), None)
        shown = {f.memory_id for f in facts}
        for p in paths.paths[:3]:
            if not p.hops or not all(h.memory_id in shown for h in p.hops):
                continue
            parts = [_node_label(paths.nodes.get(p.nodes[0]), p.nodes[0])]
            for hop, nid in zip(p.hops, p.nodes[1:]):
                arrow = f" -{hop.rel}-> " if hop.forward else f" <-{hop.rel}- "
                parts.append(f"{arrow}{_node_label(paths.nodes.get(nid), nid)} [{hop.memory_id}]")
            push("paths", "Path: " + "".join(parts), None)
    dropped: list[tuple[int, float]] = []
    cap = max(24, int(budget * MAX_LINE_SHARE))
    for i, f in enumerate(facts):
        if not top_k and used >= budget - 12:  # full: the rest is dropped unrendered
            dropped.extend((g.memory_id, g.score) for g in facts[i:])
            break
        text = fact_line(f)
        n = count_tokens(text)
        if n > cap and not top_k:
            text = fact_line(f, max_tokens=cap)
            n = count_tokens(text)
        if top_k:   # a plain top-k baseline returns its k facts whole, whatever they cost
            lines.append(ContextLine("facts", text, f.memory_id, n))
            continue
        if not push("facts", text, f.memory_id, n):
            dropped.append((f.memory_id, f.score))
    # paths whose evidence did not fit are not evidence: drop their lines
    kept_ids = {ln.memory_id for ln in lines if ln.memory_id is not None}
    final = [ln for ln in lines if ln.section != "paths" or all(mid in kept_ids for mid in _ids_in(ln.text))]
    context = "\n".join(ln.text for ln in final)
    tokens = count_tokens(context)
    return CompactStep(tuple(final), tuple(dropped), budget, tokens, (time.perf_counter() - t0) * 1000)


def _ids_in(text: str) -> list[int]:
    return [int(x) for x in _ID_RE.findall(text)]
