"""The trace's steps as tables: one small function per step, reading the typed objects
as they are (no re-ranking, no re-scoring), so what the page shows is what recall did."""

from __future__ import annotations

from typing import Any

import pandas as pd

from brain.read.trace import Recall


def anchors(result: Recall, *, near: bool = False) -> pd.DataFrame:
    step = result.trace.anchors
    rows = step.near_misses if near else step.anchors
    return pd.DataFrame([{"entity": a.node.name, "kind": a.node.kind, "key": a.node.key, "how": a.how,
                          "matched": a.matched, "score": round(a.score, 3)} for a in rows],
                        columns=["entity", "kind", "key", "how", "matched", "score"])


def fused(result: Recall) -> pd.DataFrame:
    shown = _in_context(result)
    rows = [{"fused rank": i, "memory": h.memory_id, "in context": h.memory_id in shown,
             "text rank": h.text_rank, "vector rank": h.vector_rank,
             "text score": _r(h.text_score), "vector distance": _r(h.vector_distance),
             "fused score ×1000": _r(h.fused * 1000, 2), "text": h.text}
            for i, h in enumerate(result.trace.recall.fused, start=1)]
    return pd.DataFrame(rows, columns=["fused rank", "memory", "in context", "text rank", "vector rank",
                                       "text score", "vector distance", "fused score ×1000", "text"])


def levels(result: Recall) -> pd.DataFrame:
    nodes = result.trace.paths.nodes
    rows = []
    for lv in result.trace.paths.levels:
        skipped = "; ".join(f"{_name(nodes, n)} —{rel}→ {c} neighbours" for n, rel, c in lv.skipped_fanouts)
        rows.append({"hop": lv.hop, "walked on from": lv.frontier, "newly reached": lv.reached,
                     "cut by the beam": len(lv.pruned), "fan-outs not followed": skipped})
    return pd.DataFrame(rows, columns=["hop", "walked on from", "newly reached", "cut by the beam",
                                       "fan-outs not followed"])


def paths(result: Recall) -> pd.DataFrame:
    nodes = result.trace.paths.nodes
    rows = []
    for i, p in enumerate(result.trace.paths.paths, start=1):
        walk = _name(nodes, p.nodes[0]) if p.nodes else ""
        for h in p.hops:
            nxt = h.dst if h.forward else h.src
            arrow = f" —{h.rel}→ " if h.forward else f" ←{h.rel}— "
            walk += arrow + _name(nodes, nxt)
        rows.append({"path": i, "answer path": i == 1, "score": _r(p.score), "covers": ", ".join(p.covers),
                     "ends at what is asked": p.ends_asked, "hops": len(p.hops), "walk": walk,
                     "evidence memories": ", ".join(str(h.memory_id) for h in p.hops)})
    return pd.DataFrame(rows, columns=["path", "answer path", "score", "covers", "ends at what is asked", "hops",
                                       "walk", "evidence memories"])


def facts(result: Recall) -> pd.DataFrame:
    shown = _in_context(result)
    part_names: list[str] = []
    for f in result.trace.rank.facts:
        for k in f.parts:
            if k not in part_names:
                part_names.append(k)
    rows = []
    for i, f in enumerate(result.trace.rank.facts, start=1):
        mark = f"earlier → newer [{f.newer_id}]" if f.earlier else ("newer" if _has_earlier(result, f.memory_id) else "")
        row: dict[str, Any] = {"rank": i, "memory": f.memory_id, "in context": f.memory_id in shown,
                               "mark": mark, "score": _r(f.score)}
        row.update({(k if k not in row else f"part {k}"): _r(f.parts.get(k)) for k in part_names})
        row.update({"why": ", ".join(f.why), "kind": f.kind, "module": f.module,
                    "date": f.occurred_at.date().isoformat(), "source": f.source, "text": f.text})
        rows.append(row)
    return pd.DataFrame(rows)


def dropped(result: Recall) -> pd.DataFrame:
    texts = {f.memory_id: f.text for f in result.trace.rank.facts}
    return pd.DataFrame([{"memory": m, "score": _r(s), "text": texts.get(m, "")}
                         for m, s in result.trace.compact.dropped], columns=["memory", "score", "text"])


def context_lines(result: Recall) -> pd.DataFrame:
    return pd.DataFrame([{"section": ln.section, "memory": ln.memory_id, "tokens": ln.tokens, "line": ln.text}
                         for ln in result.trace.compact.lines], columns=["section", "memory", "tokens", "line"])


def timings(result: Recall) -> pd.DataFrame:
    tr = result.trace
    steps = [("embed question", tr.embed_ms), ("visibility", tr.visibility.ms), ("1 anchors", tr.anchors.ms),
             ("2 recall", tr.recall.ms), ("3 paths", tr.paths.ms), ("4 rank", tr.rank.ms),
             ("6 compact", tr.compact.ms)]
    other = max(result.ms - sum(ms for _, ms in steps), 0.0)
    steps.append(("other (transaction, glue)", other))
    return pd.DataFrame([{"step": s, "ms": round(ms, 2)} for s, ms in steps])


def versions(rows: list[Any]) -> pd.DataFrame:
    """A record's versions (brain.read.graph.Version), newest first, as the pages show them."""
    return pd.DataFrame([{"memory": v.memory_id, "date": v.occurred_at.date().isoformat(),
                          "current": v.is_current,
                          "valid until": v.valid_to.date().isoformat() if v.valid_to else "",
                          "text": v.text} for v in rows])


def _in_context(result: Recall) -> set[int]:
    return {ln.memory_id for ln in result.trace.compact.lines if ln.memory_id is not None}


def _has_earlier(result: Recall, memory_id: int) -> bool:
    return any(f.newer_id == memory_id for f in result.trace.rank.facts)


def _name(nodes: dict[int, Any], eid: int) -> str:
    node = nodes.get(eid)
    return node.label if node is not None else f"#{eid}"


def _r(value: float | None, digits: int = 3) -> float | None:
    """A number as a page shows it: three decimals at most, so that no score below 1000
    shows four digits in a row (a page is read for leaks as the context is, FORMAT.md: a
    door code "7391" turns up in "0.73914" sooner or later)."""
    return None if value is None else round(float(value), digits)
