"""One side of `python -m bench compare`: python compare_worker.py CHECKOUT QUESTIONS.json.

Imports brain/ (and, for LoCoMo questions, bench.locomo's recall configuration) from
CHECKOUT, first on the path; opens the store named by the environment (BRAIN_DATA_DIR or
DATABASE_URL); reads the questions `bench compare` prepared (question, workspace, as,
now, locomo); prints "ready"; then for each line on stdin asks every question once and
prints one JSON line: per question the recall's wall time, the embedding's time inside
it, the read path (recall minus embedding) and the previous question's embedding timed
on its own just before.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime
from pathlib import Path


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
    print("ready", flush=True)
    for _ in sys.stdin:
        out: dict[str, list[float]] = {"total": [], "embed": [], "read": [], "solo_embed": []}
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


if __name__ == "__main__":
    sys.exit(main())
