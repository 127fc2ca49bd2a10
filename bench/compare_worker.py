"""One side of `python -m bench compare`: python compare_worker.py CHECKOUT QUESTIONS.json.

Imports brain/ (and, for LoCoMo questions, bench.locomo's recall configuration) from
CHECKOUT, first on the path; opens the store named by the environment (BRAIN_DATA_DIR or
DATABASE_URL); reads the questions `bench compare` prepared (question, workspace, as,
now, locomo); prints "ready"; then for each line on stdin asks every question once and
prints one JSON line: per question the recall's wall time, the embedding's time inside
it, the read path (recall minus embedding) and the previous question's embedding timed
on its own just before; and, from a first pass with the embeddings already known, the
read path's CPU per recall in this thread and in the server process behind the pool.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any


def main() -> int:
    checkout, questions = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    # the checkout under test in place of this script's folder (bench/, whose module
    # names would shadow others)
    sys.path[0] = str(checkout)
    from brain.db import default_store
    from brain.embed import get_embedder
    from brain.read import recall

    rows = json.loads(questions.read_text(encoding="utf-8"))
    locomo = None
    if any(q["locomo"] for q in rows):
        from bench.locomo import configs

        locomo = configs()["hybrid"]
    qs = [(q["question"], q["workspace"], q["as"], datetime.fromisoformat(q["now"]) if q["now"] else None,
           {"config": locomo} if q["locomo"] else {}) for q in rows]
    store, embedder = default_store(), get_embedder()
    inner = getattr(embedder, "inner", embedder)
    text, ws, who, now, kw = qs[0]
    recall(text + " (warm-up)", workspace=ws, member=who, now=now, store=store, embedder=inner, **kw)
    known = _Known(inner, [q[0] for q in qs])
    print("ready", flush=True)
    for _ in sys.stdin:
        out: dict[str, list[float]] = {"total": [], "embed": [], "read": [], "solo_embed": []}
        # CPU, which leaves out the waits for a core on a busy host: the read path's own
        # (the embeddings known already) in this thread and in the server process that
        # answers it, averaged over the pass
        backend = _backend_cpu(store)
        c0, b0 = time.thread_time(), backend()
        for text, ws, who, now, kw in qs:
            recall(text, workspace=ws, member=who, now=now, store=store, embedder=known, **kw)
        c1, b1 = time.thread_time(), backend()
        out["cpu_client"] = [(c1 - c0) * 1000 / len(qs)]
        if b0 is not None and b1 is not None:
            out["cpu_server"] = [(b1 - b0) / len(qs)]
        for i, (text, ws, who, now, kw) in enumerate(qs):
            # the previous question (the embedder here keeps no cache): a text of the
            # same kind, timed alone, not the one the recall then embeds
            t0 = time.perf_counter()
            inner.embed_query(qs[i - 1][0])
            out["solo_embed"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            r = recall(text, workspace=ws, member=who, now=now, store=store, embedder=inner, **kw)
            out["total"].append((time.perf_counter() - t0) * 1000)
            out["embed"].append(r.trace.embed_ms)
            out["read"].append(r.ms - r.trace.embed_ms)
        print(json.dumps(out), flush=True)
    return 0


class _Known:
    """The questions' embeddings, computed once: a pass that measures CPU leaves the
    embedding (its own threads) out. recall asks an embedder for nothing else."""

    def __init__(self, inner: Any, texts: list[str]) -> None:
        self.vectors = {t: inner.embed_query(t) for t in dict.fromkeys(texts)}

    def embed_query(self, text: str) -> Any:
        return self.vectors[text]


def _backend_cpu(store: Any) -> Callable[[], float | None]:
    """The CPU ms so far of the server process behind the store's one pooled connection
    (Linux, a server on this machine); a reader giving None where that cannot be read."""
    with store.pool.connection() as conn:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        conn.rollback()
    tick = os.sysconf("SC_CLK_TCK")

    def read() -> float | None:
        if store.pool.get_stats().get("pool_size", 1) != 1:
            return None   # more than one connection: which one served is unknown
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) * 1000 / tick   # utime + stime

    return read


if __name__ == "__main__":
    sys.exit(main())
