"""The scale set: the fixture business at ~100,000 graph rows, loaded through the writer.

`ensure_scale` generates `fixtures.business.generate(seed, scale)`, loads it line by line
through `brain.load.load_lines` (the product's own writer: validation, embedding in
chunks, one transaction per line) into its own store, and keeps the load report beside
the data so a later run reuses the store instead of loading again.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCALE = 210          # ~100,000 graph rows (entities + edges + memories), loaded through the writer
SEED = 7
REPORT_NAME = "bench-load.json"


def open_store(data_dir: str | Path) -> tuple[Any, Any]:
    """The store in `data_dir` (embedded PostgreSQL) and the configured embedder."""
    os.environ["BRAIN_DATA_DIR"] = str(data_dir)
    from brain.db import default_store
    from brain.embed import get_embedder

    store = default_store()
    embedder = get_embedder()
    store.check_embedder(embedder.id, embedder.dim)
    return store, embedder


def graph_rows(store: Any) -> dict[str, int]:
    """Entities, edges and memories summed over the workspaces (the 'graph rows')."""
    totals = {"entities": 0, "edges": 0, "memories": 0, "memory_entities": 0, "record_versions": 0}
    for row in store.stats():
        for key in totals:
            totals[key] += int(row.get(key) or 0)
    totals["graph_rows"] = totals["entities"] + totals["edges"] + totals["memories"]
    return totals


class _Stop(Exception):
    pass


class _TimedEmbedder:
    """The embedder, with the passage-embedding time added up (across resumed sessions)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.seconds, self.count = inner, 0.0, 0
        self.id, self.dim = inner.id, inner.dim

    def embed_passages(self, texts: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return self.inner.embed_passages(texts, **kw)
        finally:
            self.seconds += time.perf_counter() - t0
            self.count += len(texts)

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(text)


def load_state(data_dir: str | Path) -> dict[str, Any]:
    path = Path(data_dir) / REPORT_NAME
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def ensure_scale(data_dir: str | Path, *, scale: int = SCALE, seed: int = SEED,
                 log: Any = sys.stderr, load: bool = True) -> dict[str, Any]:
    """Load the scale set into `data_dir` through the writer, resuming a partial load.

    The load goes line by line in delivery order; the number of lines fully written is
    saved after every chunk of 64, so a load stopped early (create `STOP` in the data
    folder, or kill it) leaves a usable prefix of the business and resumes later from
    there (the writer is idempotent: a line written twice is a no-op). With load=False
    nothing is loaded: the figures of the prefix already there are returned.
    """
    data_dir = Path(data_dir)
    report_path = data_dir / REPORT_NAME
    store, embedder = open_store(data_dir)
    state = load_state(data_dir)
    if state and (state.get("scale"), state.get("seed")) != (scale, seed):
        raise SystemExit(f"{data_dir} holds scale {state.get('scale')} seed {state.get('seed')}, not "
                         f"scale {scale} seed {seed}: use another folder or delete it (after "
                         f"`BRAIN_DATA_DIR={data_dir} python -m brain stop`)")
    if not state and not store.is_empty():
        raise SystemExit(f"{data_dir} holds a store that is not a bench scale load")
    from brain.load import load_lines
    from brain.write import Writer
    from fixtures.business import generate

    t0 = time.perf_counter()
    lines = generate(seed=seed, scale=scale)
    gen_s = time.perf_counter() - t0
    total = len(lines)
    state = {"scale": scale, "seed": seed, "total_lines": total, "lines": 0, "seconds": 0.0,
             "embed_seconds": 0.0, "embedded": 0, "outcomes": {}, "rejected": 0,
             "generate_seconds": round(gen_s, 2), "sessions": 0, **state}
    done0 = int(state["lines"])
    if load and done0 < total:
        (data_dir / "STOP").unlink(missing_ok=True)
        timed = _TimedEmbedder(embedder)
        writer = Writer(store, timed)  # type: ignore[arg-type]
        base = {k: state[k] for k in ("seconds", "embed_seconds", "embedded")}
        started = time.perf_counter()
        last = [started]

        def save(done: int) -> None:
            state.update(lines=done0 + done, seconds=round(base["seconds"] + time.perf_counter() - started, 2),
                         embed_seconds=round(base["embed_seconds"] + timed.seconds, 2),
                         embedded=base["embedded"] + timed.count)
            report_path.write_text(json.dumps(state, indent=1, ensure_ascii=False), encoding="utf-8")

        def progress(done: int, of: int) -> None:
            save(done)
            now = time.perf_counter()
            if now - last[0] >= 30 or done == of:
                last[0] = now
                print(f"{time.strftime('%H:%M:%S')} load {done0 + done}/{total} lines "
                      f"({done / max(1e-9, now - started):.1f} lines/s, embedding "
                      f"{100 * timed.seconds / max(1e-9, now - started):.0f}%)", file=log, flush=True)
            if (data_dir / "STOP").exists():
                raise _Stop

        state["sessions"] = int(state["sessions"]) + 1
        report = None
        try:
            report = load_lines(writer, ((n, lines[n - 1]) for n in range(done0 + 1, total + 1)),
                                total=total - done0, on_progress=progress)
        except _Stop:
            print(f"{time.strftime('%H:%M:%S')} load stopped at {state['lines']}/{total} lines",
                  file=log, flush=True)
        if report is not None:
            outcomes = dict(state["outcomes"])
            for k, v in report.outcomes.items():
                outcomes[k] = outcomes.get(k, 0) + v
            state.update(outcomes=outcomes, rejected=int(state["rejected"]) + len(report.rejected))
            save(report.lines)
            print(f"load done: {report.summary()}", file=log, flush=True)
    rows = graph_rows(store)
    secs = float(state["seconds"]) or 1e-9
    state.update(rows, complete=int(state["lines"]) >= total, embedder=embedder.id,
                 rows_per_s=round(rows["graph_rows"] / secs, 1),
                 lines_per_s=round(int(state["lines"]) / secs, 2),
                 memories_per_s=round(rows["memories"] / secs, 2),
                 passages_per_s=round(int(state["embedded"]) / max(1e-9, float(state["embed_seconds"])), 2),
                 embed_share=round(float(state["embed_seconds"]) / secs, 3))
    report_path.write_text(json.dumps(state, indent=1, ensure_ascii=False), encoding="utf-8")
    return {**state, "reused": done0 > 0}


def loaded_lines(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The prefix of the scale business that is in the store."""
    from fixtures.business import generate

    return generate(seed=int(state["seed"]), scale=int(state["scale"]))[: int(state["lines"])]


# ----------------------------------------------------------------------------- multi-hop
def _shows_record(facts: Any, kind: str, ident: str) -> bool:
    """Is the memory of record `kind ident` among the facts shown? (A record's memory text
    starts with 'kind id', as the writer renders it.)"""
    import re

    head = re.compile(rf"^{re.escape(kind)} {re.escape(ident)}(?![\w-])")
    return any(f.origin == "record" and head.match(f.text) for f in facts)


def path_shown(r: Any, evidence: list[list[str]]) -> bool:
    """The real path's own claim: some walked path goes through every entity of the
    question's chain, and every hop of it has its stating memory among the context lines."""
    if len(evidence) < 2:
        return True
    nodes = r.trace.paths.nodes
    want = {(k, i) for k, i in evidence}
    shown = {line.memory_id for line in r.trace.compact.lines if line.memory_id is not None}
    for p in r.trace.paths.paths:
        keys = {(nodes[n].kind, nodes[n].key) for n in p.nodes if n in nodes}
        if want <= keys and all(h.memory_id in shown for h in p.hops):
            return True
    return False


def _best_path_shown(r: Any) -> bool:
    """The top-scored walked path has every hop's stating memory among the context lines."""
    paths = r.trace.paths.paths
    if not paths:
        return False
    shown = {line.memory_id for line in r.trace.compact.lines if line.memory_id is not None}
    return all(h.memory_id in shown for h in paths[0].hops)


def score_multi_hop(q: dict[str, Any], r: Any, ms: float) -> dict[str, Any]:
    """Answered (an answer string in the context) and, stricter, evidence (answered, and
    the record stating every hop of the question's path and the answer is a shown fact)."""
    from bench.evaluate import contains

    answered = any(contains(r.context, a) for a in q["answers"])
    ev = [(k, i, _shows_record(r.facts, k, i)) for k, i in q["evidence"]]
    return {"id": q["id"], "type": q["type"], "lang": q["lang"], "answered": answered,
            "evidence": answered and all(s for _, _, s in ev),
            "missing_evidence": [f"{k} {i}" for k, i, s in ev if not s],
            "path_shown": answered and path_shown(r, q["evidence"]) if r.config == "hybrid" else None,
            "best_path_shown": _best_path_shown(r) if r.config == "hybrid" else None,
            "tokens": r.tokens, "ms": round(ms, 2), "embed_ms": round(r.trace.embed_ms, 2)}


def run_multi_hop(questions: list[dict[str, Any]], *, store: Any, embedder: Any,
                  configs: list[Any]) -> dict[str, list[dict[str, Any]]]:
    from brain.format import parse_now
    from brain.read import recall

    out: dict[str, list[dict[str, Any]]] = {}
    for cfg in configs:
        rows = []
        t0 = time.perf_counter()
        for n, q in enumerate(questions, start=1):
            t = time.perf_counter()
            r = recall(q["question"], workspace=q["workspace"], member=q.get("as"),
                       now=parse_now(q["now"]), config=cfg, store=store, embedder=embedder)
            rows.append(score_multi_hop(q, r, (time.perf_counter() - t) * 1000))
            if n % 25 == 0 or n == len(questions):
                print(f"  multi-hop {cfg.name}: {n}/{len(questions)} ({time.perf_counter() - t0:.0f} s)",
                      file=sys.stderr, flush=True)
        out[cfg.name] = rows
    return out


def summarise_multi_hop(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def rate(sel: list[dict[str, Any]], key: str) -> float:
        return round(100.0 * sum(bool(x[key]) for x in sel) / len(sel), 1) if sel else float("nan")

    types = sorted({x["type"] for x in rows})
    out: dict[str, Any] = {"n": len(rows), "answered": rate(rows, "answered"), "evidence": rate(rows, "evidence"),
                           "by_type": {t: {"n": len([x for x in rows if x["type"] == t]),
                                           "answered": rate([x for x in rows if x["type"] == t], "answered"),
                                           "evidence": rate([x for x in rows if x["type"] == t], "evidence")}
                                       for t in types}}
    if rows and rows[0].get("path_shown") is not None:
        out["path_shown"] = rate(rows, "path_shown")
        out["best_path_shown"] = rate(rows, "best_path_shown")
        for t in types:
            out["by_type"][t]["path_shown"] = rate([x for x in rows if x["type"] == t], "path_shown")
            out["by_type"][t]["best_path_shown"] = rate([x for x in rows if x["type"] == t], "best_path_shown")
    return out
