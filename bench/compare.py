"""Two checkouts of the code, timed in turns: `python -m bench compare OLD_CHECKOUT`.

On a shared machine the speed of the same code drifts by a third within an hour, so two
benchmark runs minutes apart cannot show a 10 % change. Here two worker processes, one
importing the old checkout and one this one (or `--after`), answer the same questions
against the same store in alternating full passes, and the medians are compared over
all passes: drift hits both alike. Each recall embeds its question uncached, as in
`bench questions`; before each, the worker embeds a different text on its own, so the
embedding's own time is measured in the same conditions as the recall. After each timed
pass a worker asks the questions again with their embeddings known and reports the CPU
time of the read path, its own and its server process's (read from /proc on Linux when
the server runs here): CPU time leaves out the waits for a core on a busy host (it still
varies: 14.6 and 18.3 ms for the same code in two runs this session).

    python -m bench compare ../old-checkout --data-dir /tmp/demo
    python -m bench compare ../old-checkout --locomo ../shared/bench/locomo10-dev.json \\
        --conversations conv-42,conv-43 --data-dir .brain-locomo

Both checkouts must read the store as it is (a store migrated by the newer code is read
by the older one with the newer views). `bench/compare_worker.py` is run from this
checkout, with the checkout under test first on its import path.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).resolve().parent / "compare_worker.py"
MEASURES = ("total", "embed", "read", "solo_embed", "cpu_client", "cpu_server")


def summarise(passes: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    """p50 of each measure per side, and the two ratios the issues set."""
    out: dict[str, dict[str, float]] = {}
    for side, d in passes.items():
        m = {k: statistics.median(d[k]) for k in MEASURES if d.get(k)}
        m["n"] = len(d.get("total", []))
        if m.get("embed"):
            m["ratio_in_recall_embed"] = m["total"] / m["embed"]
        if m.get("solo_embed"):
            m["ratio_solo_embed"] = m["total"] / m["solo_embed"]
        out[side] = m
    return out


def questions(*, questions_file: Path | None = None, split: str = "holdout", locomo: Path | None = None,
              conversations: list[str] | None = None, every: int = 1, limit: int = 0) -> list[dict[str, Any]]:
    """The questions both sides ask, read here once, with this checkout's readers: a
    FORMAT.md question file (bench.profile.questions_from) or a LoCoMo file."""
    if locomo is not None:
        from datetime import timedelta

        from bench.locomo import READER, read_file

        rows = [{"question": q["question"], "workspace": c.workspace, "as": READER,
                 "now": (c.last + timedelta(days=1)).isoformat(), "locomo": True}
                for c in read_file(locomo, conversations) for q in c.questions]
    else:
        from bench.profile import questions_from

        assert questions_file is not None
        rows = [{"question": q["question"], "workspace": q["workspace"], "as": q.get("as"),
                 "now": q.get("now"), "locomo": False}
                for q in questions_from(questions_file, split=split, multi_hop=0, scale=0)]
    return rows[::every][: limit or None]


def _worker(code: Path, qfile: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, str(WORKER), str(code), str(qfile)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()
    if first != "ready":
        proc.kill()
        raise SystemExit(f"the worker for {code} did not start (said {first!r}); run "
                         f"`python {WORKER} {code} {qfile}` to see why")
    return proc


def compare(before: Path, after: Path, asked: list[dict[str, Any]], rounds: int,
            env: dict[str, str] | None = None) -> dict[str, dict[str, float]]:
    if not asked:
        raise SystemExit("no questions to ask: check --questions/--split or --locomo/--conversations")
    env = dict(env or os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        qfile = Path(tmp) / "questions.json"
        qfile.write_text(json.dumps(asked, ensure_ascii=False), encoding="utf-8")
        return _compare(before, after, qfile, rounds, env)


def _compare(before: Path, after: Path, qfile: Path, rounds: int, env: dict[str, str]) -> dict[str, dict[str, float]]:
    sides = {"before": _worker(before, qfile, env), "after": _worker(after, qfile, env)}
    passes: dict[str, dict[str, list[float]]] = {s: {k: [] for k in MEASURES} for s in sides}
    try:
        for r in range(rounds):
            for side in (("before", "after") if r % 2 == 0 else ("after", "before")):
                proc = sides[side]
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
                if not line:
                    raise SystemExit(f"the {side} worker stopped: see its error above")
                for k, v in json.loads(line).items():
                    passes[side][k] += v
                print(f"round {r + 1}/{rounds}: {side} done", file=sys.stderr)
    finally:
        for proc in sides.values():
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=60)
    return summarise(passes)


def print_comparison(s: dict[str, dict[str, float]]) -> None:
    for side in ("before", "after"):
        m = s[side]
        print(f"{side:6s}: recall p50 {m['total']:.1f} ms, read path p50 {m['read']:.1f} ms, "
              f"embedding p50 {m['embed']:.1f} ms in recall / {m['solo_embed']:.1f} ms on its own; "
              f"recall / embedding {m['ratio_in_recall_embed']:.2f} / {m['ratio_solo_embed']:.2f} (n {m['n']:.0f})")
    for side in ("before", "after"):
        m = s[side]
        if "cpu_client" in m:
            server = f" + server {m['cpu_server']:.2f}" if "cpu_server" in m else " (server's not readable here)"
            print(f"{side:6s}: read path CPU per recall (median of passes): this process {m['cpu_client']:.2f}{server} ms")
    b, a = s["before"]["read"], s["after"]["read"]
    print(f"compare: read path p50 {b:.1f} -> {a:.1f} ms ({100 * (a - b) / b:+.0f}%), "
          f"recall p50 {s['before']['total']:.1f} -> {s['after']['total']:.1f} ms")
    if "cpu_client" in s["before"] and "cpu_client" in s["after"]:
        cpu = {k: s[k]["cpu_client"] + s[k].get("cpu_server", 0.0) for k in ("before", "after")}
        print(f"compare: read path CPU {cpu['before']:.2f} -> {cpu['after']:.2f} ms "
              f"({100 * (cpu['after'] - cpu['before']) / cpu['before']:+.0f}%)")
