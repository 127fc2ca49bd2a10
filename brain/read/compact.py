"""Step 6, compact: a short, sourced, dated context under a token budget.

One line per fact, each with its source, its date, when it was last confirmed and its
age; earlier values are marked as earlier; a fact's [id] is shown where a line refers to
it. Anchors and answer paths come first, a path only with the facts that state its hops.
Token counts are exact (cl100k_base): a fact's line is summed from its parts, its text's
count kept per process (and often made while the read waited, see run.py), the context
from its lines.
"""

from __future__ import annotations

import re
import time
from datetime import datetime

from brain.read.trace import AnchorStep, CompactStep, ContextLine, Fact, Node, Path, PathStep, RankStep
from brain.tokens import count_lines, fact_line_bounds, fact_line_tokens, line_tokens, truncate_to_tokens

_ID_RE = re.compile(r"\[(\d+)\]")
MAX_LINE_SHARE = 0.35   # no single fact may take more than this share of the budget
PATHS_SHOWN = 3         # the best paths a context may show (each only with its hops' facts)


def _day(dt: datetime) -> str:
    return dt.date().isoformat()


def _age(now: datetime, then: datetime) -> str:
    """A fact's age, short (it is on every line): "today", "12d old", "5mo old", "2y old";
    "after now" for one stated after the question's moment (a replayed `now`)."""
    if then > now:
        return "after now"
    days = int((now - then).total_seconds() // 86400)
    if days <= 0:
        return "today"
    if days < 60:
        return f"{days}d old"
    if days < 730:
        return f"{days // 30}mo old"
    return f"{days // 365}y old"


_Parts = tuple[str, str | None, str, str]   # a fact line's head, sender, text and tail (brain.tokens)


def _changed(older: str, newer: str) -> str:
    """An earlier version of a record as what it said otherwise than the version after it:
    its head ("kind id (name)"), then its fields and relations the newer one does not
    state alike ("durum: açık" where the newer says "durum: ödendi"). A re-synced record
    repeats every field; shown whole, its earlier version took as much of the budget as
    the current one, and crowded out facts that answer."""
    old_segs, new_segs = older.split(" | "), newer.split(" | ")
    new_items = {item for seg in new_segs[1:] for item in seg.split("; ")}
    out = [old_segs[0]]
    for seg in old_segs[1:]:
        if "→" in seg:   # a relation, said whole
            if seg not in new_segs:
                out.append(seg)
            continue
        items = [item for item in seg.split("; ") if item not in new_items]
        if items:
            out.append("; ".join(items))
    return " | ".join(out)


def _fact_parts(f: Fact, now: datetime, max_tokens: int | None = None, *,
                with_id: bool = True, newer: Fact | None = None) -> tuple[str, int, _Parts | None]:
    """`[id] (earlier value) text (source, date, confirmed, age)`, a long text cut (never
    the stamp that says where and when it comes from), what the line costs in a context
    (its exact count with the joining newline, see brain.tokens.line_tokens), and the
    parts it is counted by (None for a cut line, counted whole)."""
    day = _day(f.occurred_at)
    # (a source that says its day already, "whatsapp export 2026-09-22", is not followed
    # by it again: ~6 tokens on most lines of a full context)
    stamp = f.source if f.source.endswith(day) else f"{f.source}, {day}"
    if _day(f.confirmed_at) != day:
        stamp += f", confirmed {_day(f.confirmed_at)}"
    stamp += f", {_age(now, f.confirmed_at)}"
    if f.expires_at is not None:
        stamp += f", expires {_day(f.expires_at)}"
    text = f.text
    if newer is not None and f.earlier and f.origin == "record" and newer.origin == "record":
        text = _changed(text, newer.text)
    head = _head(f, with_id)
    line = f"{head}{text} ({stamp})"
    # counted by its parts, the text's own count kept per process (brain.tokens): a
    # first-seen fact's text may already have been counted while the read waited
    said, body = _said(f) if text is f.text else (None, text)
    parts: _Parts = (head, said, body, f" ({stamp})")
    n = fact_line_tokens(*parts)
    if max_tokens is not None and n > max_tokens:
        # the frame (id, mark, stamp) stays whole: the text gives way
        frame = line_tokens(f"{head} ({stamp})")
        text = truncate_to_tokens(text, max(8, max_tokens - frame - 1)) + "…"
        line = f"{head}{text} ({stamp})"
        return line, line_tokens(line), None
    return line, n, parts


def _head(f: Fact, with_id: bool) -> str:
    mark = ""
    if f.earlier:
        mark = "(earlier value" + (f", replaced by [{f.newer_id}]" if f.newer_id else "") + ") "
    return f"[{f.memory_id}] {mark}" if with_id else mark


def _said(f: Fact) -> tuple[str | None, str]:
    """A fact's sender and its text after "sender: " (None and the whole text when none)."""
    said = f.sender
    if said and f.text.startswith(f"{said}: "):
        return said, f.text[len(said) + 2:]
    return None, f.text


# The most a line's stamp can hold besides its source, in UTF-8 bytes: " (", ", " and a
# day, ", confirmed " and a day, ", " and an age, ", expires " and a day, ")".
_STAMP_BYTES = 2 + 2 + 10 + 12 + 10 + 2 + 12 + 10 + 10 + 1


def _costs_at_least(f: Fact, with_id: bool, cap: int) -> int:
    """The fewest tokens `f`'s line can cost in a context, without rendering it (0 when
    that is not known): most facts a full context leaves out are dropped on this alone.
    Rendering them (their stamp, its count) was two thirds of this step: a context at
    its budget still tried the ~18 facts after the last that fit, one by one. Only a line
    known to be no longer than `cap` counts (a longer one is cut, and costs less)."""
    said, body = _said(f)
    bounds = fact_line_bounds(_head(f, with_id), said, body, len(f.source.encode()) + _STAMP_BYTES)
    if bounds is None or bounds[1] > cap:
        return 0
    return bounds[0]


def anchors_line(anchors: AnchorStep) -> str:
    """The context's first line: the things the question names."""
    return "Named: " + "; ".join(f"{a.node.label}" for a in anchors.anchors)


def path_line(p: Path, paths: PathStep) -> str:
    """An answer path as a context line, each hop with the [id] of the fact stating it."""
    steps = [_node_label(paths.nodes.get(p.nodes[0]), p.nodes[0])]
    for hop, nid in zip(p.hops, p.nodes[1:]):
        arrow = f" -{hop.rel}-> " if hop.forward else f" <-{hop.rel}- "
        steps.append(f"{arrow}{_node_label(paths.nodes.get(nid), nid)} [{hop.memory_id}]")
    return "Path: " + "".join(steps)


def _node_label(node: Node | None, eid: int) -> str:
    if node is None:
        return f"#{eid}"
    return node.label


def compact(*, anchors: AnchorStep, paths: PathStep, rank: RankStep, now: datetime, budget: int,
            top_k: int = 0) -> CompactStep:
    t0 = time.perf_counter()
    facts = list(rank.facts[:top_k] if top_k else rank.facts)
    shown = {f.memory_id for f in facts}
    tried = [] if top_k else [p for p in paths.paths[:PATHS_SHOWN]
                              if p.hops and all(h.memory_id in shown for h in p.hops)]
    # A path is shown only with the facts that state its hops; one whose facts did not fit
    # goes, and the facts are packed again without it: its line had taken the room of
    # facts that fit without it (a crew record, the answer, left out for two path lines
    # that went at the end, 216 tokens of the budget unused).
    while True:
        final, dropped, tokens = _pack(anchors, paths, tried, facts, now, budget, top_k)
        kept = {ln.text for ln in final if ln.section == "paths"}
        if len(kept) == len(tried):
            break
        tried = [p for p in tried if path_line(p, paths) in kept]
    return CompactStep(tuple(final), tuple(dropped), budget, tokens, (time.perf_counter() - t0) * 1000)


def _pack(anchors: AnchorStep, paths: PathStep, tried: list[Path], facts: list[Fact], now: datetime,
          budget: int, top_k: int) -> tuple[list[ContextLine], list[tuple[int, float]], int]:
    """The anchors' line, the lines of the paths `tried`, and the facts in their order, as
    many as the budget holds: the lines, the facts left out, and the exact count."""
    by_id = {f.memory_id: f for f in facts}
    lines: list[ContextLine] = []
    used = 0

    def push(section: str, text: str, memory_id: int | None, n: int | None = None) -> bool:
        nonlocal used
        n = line_tokens(text) if n is None else n   # with the newline that joins the next line
        if used + n > budget:
            return False
        lines.append(ContextLine(section, text, memory_id, n))
        used += n
        return True

    if not top_k:
        if anchors.anchors:
            push("anchors", anchors_line(anchors), None)
        for p in tried:
            push("paths", path_line(p, paths), None)
    dropped: list[tuple[int, float]] = []
    counted_by: dict[int, _Parts] = {}   # a fact's line -> the parts it was counted by
    cap = max(24, int(budget * MAX_LINE_SHARE))
    # A fact shows its [id] only when another line points at it (a path's hop, the newer
    # value an earlier one was replaced by): ids nobody refers to cost ~4 tokens a line.
    cited = {int(x) for ln in lines for x in _ids_in(ln.text)} | {f.newer_id for f in facts if f.newer_id}
    for i, f in enumerate(facts):
        if not top_k and used >= budget - 12:  # full: the rest is dropped unrendered
            dropped.extend((g.memory_id, g.score) for g in facts[i:])
            break
        with_id = f.memory_id in cited
        newer = by_id.get(f.newer_id) if f.earlier and f.newer_id is not None else None
        if not top_k and newer is None and used + _costs_at_least(f, with_id, cap) > budget:
            dropped.append((f.memory_id, f.score))   # (as push() would, rendered)
            continue
        text, n, parts = _fact_parts(f, now, with_id=with_id, newer=newer)
        if n > cap and not top_k:
            text, n, parts = _fact_parts(f, now, max_tokens=cap, with_id=with_id, newer=newer)
        if parts is not None:
            counted_by[f.memory_id] = parts
        if top_k:   # a plain top-k baseline returns its k facts whole, whatever they cost
            lines.append(ContextLine("facts", text, f.memory_id, n))
            continue
        if not push("facts", text, f.memory_id, n):
            dropped.append((f.memory_id, f.score))
    final = _evidenced(lines)
    tokens = _total(final, counted_by)
    # Each line was counted with a newline after it, which the last one does not have:
    # the whole never costs more. Should it still exceed the budget, the last facts go.
    score = {f.memory_id: f.score for f in facts}
    while tokens > budget and not top_k and any(ln.section == "facts" for ln in final):
        last = max(i for i, ln in enumerate(final) if ln.section == "facts")
        gone = final.pop(last).memory_id or 0
        dropped.append((gone, score.get(gone, 0.0)))
        final = _evidenced(final)
        tokens = _total(final, counted_by)
    return final, dropped, tokens


def _total(lines: list[ContextLine], counted_by: dict[int, _Parts]) -> int:
    """The context's exact count: its lines' own (each with the newline after it), the
    last one's without (from its parts when it is a fact's line)."""
    if not lines:
        return 0
    end = lines[-1]
    parts = counted_by.get(end.memory_id) if end.section == "facts" and end.memory_id is not None else None
    last = fact_line_tokens(*parts, newline=False) if parts is not None else None
    return count_lines([ln.text for ln in lines], [ln.tokens for ln in lines], last)


def _evidenced(lines: list[ContextLine]) -> list[ContextLine]:
    """Paths whose evidence did not fit are not evidence: their lines go too."""
    kept_ids = {ln.memory_id for ln in lines if ln.memory_id is not None}
    return [ln for ln in lines if ln.section != "paths" or all(mid in kept_ids for mid in _ids_in(ln.text))]


def _ids_in(text: str) -> list[int]:
    return [int(x) for x in _ID_RE.findall(text)]
