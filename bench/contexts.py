"""What the read path answers, written down so that two versions can be compared:
`python -m bench contexts OUT.jsonl [--against OLD.jsonl]`.

A change meant only to make recall faster must leave every answer as it was: the
context, and the ranked facts in their order with their scores and earlier marks. Dump
them before the change, dump them after with `--against` the first file, and the
command lists the questions whose answer moved (exit 1 if any did). Scores are compared
as the trace rounds them (5 decimals), so a float summed in another order is not a
difference.

One line per question: its key (workspace, asker, moment, text), the context, and the
ranked facts as [memory id, earlier, newer id, score]. Business questions are asked with
the read path's own settings, LoCoMo's with the settings its benchmark uses.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return (str(row["workspace"]), str(row.get("as")), str(row.get("now")), str(row["question"]))


def answers(store: Any, embedder: Any, asked: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Each question of `asked` (rows as bench.compare.questions gives them) answered."""
    from bench.locomo import configs
    from brain.format import parse_now
    from brain.read import HYBRID, recall

    locomo = configs()["hybrid"]
    for q in asked:
        now = parse_now(q["now"]) if q.get("now") else None
        r = recall(q["question"], workspace=q["workspace"], member=q.get("as"), now=now, store=store,
                   embedder=embedder, config=locomo if q.get("locomo") else HYBRID)
        yield {"workspace": q["workspace"], "as": q.get("as"), "now": q.get("now"), "question": q["question"],
               "context": r.context,
               "facts": [[f.memory_id, f.earlier, f.newer_id, f.score] for f in r.trace.rank.facts]}


def write(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    n = 0
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def differences(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> dict[str, list[tuple[str, ...]]]:
    """Questions whose context or ranked facts differ, and those only one side asked."""
    before = {key(r): r for r in old}
    after = {key(r): r for r in new}
    out: dict[str, list[tuple[str, ...]]] = {"context": [], "facts": [], "only_before": [], "only_after": []}
    for k, r in after.items():
        o = before.get(k)
        if o is None:
            out["only_after"].append(k)
            continue
        if o["context"] != r["context"]:
            out["context"].append(k)
        if o["facts"] != r["facts"]:
            out["facts"].append(k)
    out["only_before"] = [k for k in before if k not in after]
    return out


def report(diff: dict[str, list[tuple[str, ...]]], n: int) -> str:
    lines = [f"{n} questions: {len(diff['context'])} contexts differ, {len(diff['facts'])} fact orders differ"
             + (f", {len(diff['only_before'])} asked only before, {len(diff['only_after'])} only after"
                if diff["only_before"] or diff["only_after"] else "")]
    for what in ("context", "facts"):
        for k in diff[what][:10]:
            lines.append(f"  {what}: [{k[0]} as {k[1]}] {k[3]}")
    return "\n".join(lines)
