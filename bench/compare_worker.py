"""One side of `python -m bench compare`: python compare_worker.py CHECKOUT [options].

Imports brain/ and bench/ from CHECKOUT (first on the path), opens the store named by
the environment (BRAIN_DATA_DIR or DATABASE_URL), prints "ready", then for each line on
stdin asks every question once and prints one JSON line: per question the recall's wall
time, the embedding's time inside it, the read path (recall minus embedding) and a
different text's embedding timed on its own just before.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any


def _questions(args: argparse.Namespace) -> list[tuple[str, str, str | None, datetime | None, Any]]:
    if args.locomo:
        from bench.locomo import READER, configs, read_file

        convs = read_file(Path(args.locomo), args.conversations.split(",") if args.conversations else None)
        cfg = configs()["hybrid"]
        out = [(q["question"], c.workspace, READER, c.last + timedelta(days=1), cfg)
               for c in convs for q in c.questions]
    else:
        rows = [json.loads(line) for line in Path(args.questions).read_text(encoding="utf-8").splitlines()
                if line.strip()]
        out = [(q["question"], q["workspace"], q.get("as"),
                datetime.fromisoformat(q["now"]) if q.get("now") else None, None)
               for q in rows if args.split == "all" or q.get("split", "holdout") == args.split]
    return out[:: args.every][: args.limit or None]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("checkout")
    p.add_argument("--questions")
    p.add_argument("--split", default="holdout")
    p.add_argument("--locomo")
    p.add_argument("--conversations")
    p.add_argument("--every", type=int, default=1)
    p.add_argument("--limit", type=int, default=0)
    args = p.parse_args()
    # the checkout under test in place of this script's folder (bench/, whose module
    # names would shadow others)
    sys.path[0] = str(Path(args.checkout).resolve())
    from brain.db import default_store
    from brain.embed import get_embedder
    from brain.read import recall

    qs = _questions(args)
    store, embedder = default_store(), get_embedder()
    inner = getattr(embedder, "inner", embedder)
    text, ws, who, now, cfg = qs[0]
    recall(text + " (warm-up)", workspace=ws, member=who, now=now, store=store, embedder=inner,
           **({"config": cfg} if cfg else {}))
    print("ready", flush=True)
    for _ in sys.stdin:
        out: dict[str, list[float]] = {"total": [], "embed": [], "read": [], "solo_embed": []}
        for i, (text, ws, who, now, cfg) in enumerate(qs):
            t0 = time.perf_counter()
            # the previous question (the embedder here keeps no cache): a text of the
            # same kind, timed alone, not the one the recall then embeds
            inner.embed_query(qs[i - 1][0])
            out["solo_embed"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            r = recall(text, workspace=ws, member=who, now=now, store=store, embedder=inner,
                       **({"config": cfg} if cfg else {}))
            out["total"].append((time.perf_counter() - t0) * 1000)
            out["embed"].append(r.trace.embed_ms)
            out["read"].append(r.ms - r.trace.embed_ms)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
