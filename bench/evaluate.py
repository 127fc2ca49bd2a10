"""Scoring recall against FORMAT.md question files: answered, leaks, tokens, latency.

Shared by the benchmarks, the tests and the explorer's Benchmarks page. A question is
answered when one of its answer strings is in the context (case-insensitive, Turkish
casing); a question with no answers (a permission or expiry check) is answered when
nothing forbidden came back. A leak is a forbidden string anywhere in what is returned.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from brain import text as tx


def contains(haystack: str, needle: str) -> bool:
    return tx.tr_lower(needle) in tx.tr_lower(haystack)


@dataclass(frozen=True)
class Outcome:
    id: str
    type: str
    lang: str
    split: str
    answered: bool
    leaks: tuple[str, ...]
    tokens: int
    ms: float
    embed_ms: float
    latest_first: bool | None   # for latest_* questions with an `earlier` value


@dataclass
class Summary:
    name: str
    outcomes: list[Outcome] = field(default_factory=list)

    def rate(self, pred: Callable[[Outcome], bool] = lambda o: True) -> float:
        sel = [o for o in self.outcomes if pred(o)]
        return 100.0 * sum(o.answered for o in sel) / len(sel) if sel else float("nan")

    def by(self, key: str) -> dict[str, tuple[float, int]]:
        groups: dict[str, list[Outcome]] = {}
        for o in self.outcomes:
            groups.setdefault(getattr(o, key), []).append(o)
        return {k: (100.0 * sum(o.answered for o in v) / len(v), len(v)) for k, v in sorted(groups.items())}

    @property
    def leaks(self) -> list[tuple[str, str]]:
        return [(o.id, s) for o in self.outcomes for s in o.leaks]

    def pct(self, attr: str, p: float) -> float:
        values = sorted(getattr(o, attr) for o in self.outcomes)
        if not values:
            return float("nan")
        k = min(len(values) - 1, max(0, int(round(p / 100 * (len(values) - 1)))))
        return float(values[k])

    def median(self, attr: str) -> float:
        values = [getattr(o, attr) for o in self.outcomes]
        return float(statistics.median(values)) if values else float("nan")


def score(question: dict[str, Any], context: str, everything: str, tokens: int, ms: float,
          embed_ms: float) -> Outcome:
    answers = question.get("answers") or []
    forbidden = question.get("forbidden") or []
    leaks = tuple(s for s in forbidden if s and contains(everything, s))
    answered = any(contains(context, a) for a in answers) if answers else not leaks
    latest_first = None
    earlier = question.get("earlier")
    if answers and earlier and question.get("type", "").startswith("latest"):
        low = tx.tr_lower(context)
        pos_new = min((low.find(tx.tr_lower(a)) for a in answers if tx.tr_lower(a) in low), default=-1)
        olds = earlier if isinstance(earlier, list) else [earlier]
        pos_old = min((low.find(tx.tr_lower(e)) for e in olds if tx.tr_lower(e) in low), default=-1)
        latest_first = pos_new >= 0 and (pos_old < 0 or pos_new < pos_old)
    return Outcome(str(question["id"]), str(question.get("type", "")), str(question.get("lang", "")),
                   str(question.get("split", "")), answered, leaks, tokens, ms, embed_ms, latest_first)


def run_questions(questions: Iterable[dict[str, Any]], *, name: str, config: Any, store: Any,
                  embedder: Any, budget: int | None = None, progress: bool = False) -> Summary:
    """Ask every question through brain.recall and score it (trace included in leak checks)."""
    from brain.format import parse_now
    from brain.read import recall

    summary = Summary(name)
    items = list(questions)
    # A service answers from warm connections: one recall per workspace first, with a
    # text no question asks, so the timings below are not the pool's first statement
    # preparations and the server's first dictionary loads (~300 ms on the first recall).
    for ws in dict.fromkeys(q["workspace"] for q in items):
        recall("warm up", workspace=ws, member=None, config=config, store=store, embedder=embedder)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(items), desc=name, unit="q", dynamic_ncols=True)
    for q in items:
        now = parse_now(q["now"]) if q.get("now") else None
        t0 = time.perf_counter()
        r = recall(q["question"], workspace=q["workspace"], member=q.get("as"), now=now, budget=budget,
                   config=config, store=store, embedder=embedder)
        ms = (time.perf_counter() - t0) * 1000
        summary.outcomes.append(score(q, r.context, r.context + "\n" + r.to_json(), r.tokens, ms,
                                      r.trace.embed_ms))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return summary
