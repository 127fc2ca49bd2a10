"""`python -m brain recall`: one question, or a FORMAT.md §3 batch (one JSON line per
question on stdout, the embedder loaded once)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from brain.errors import BadLine, BrainError
from brain.format import parse_now


def _now(value: str | None) -> datetime | None:
    return parse_now(value) if value else None


def _member(value: str | None) -> str | None:
    return value or None   # "" (or no --as) is a caller with no person


def cmd_recall(args: argparse.Namespace) -> int:
    from brain.db import default_store
    from brain.embed import get_embedder
    from brain.read import PRESETS, recall

    config = PRESETS[args.mode]
    store = default_store()
    embedder = get_embedder()
    store.check_embedder(embedder.id, embedder.dim)
    if args.batch:
        return _batch(args, store, embedder, config)
    if not args.question:
        raise BrainError("give a question, or --batch FILE")
    if not args.workspace:
        raise BrainError("--workspace is required (see `python -m brain stats`)")
    result = recall(" ".join(args.question), workspace=args.workspace, member=_member(args.as_),
                    now=_now(args.now), budget=args.budget, config=config, store=store, embedder=embedder)
    if args.json:
        print(result.to_json())
    else:
        print(result.context)
        print(f"-- {result.tokens} tokens, {result.ms:.1f} ms (embedding {result.trace.embed_ms:.1f} ms)",
              file=sys.stderr)
    return 0


def _batch(args: argparse.Namespace, store: Any, embedder: Any, config: Any) -> int:
    from brain.read import recall

    path = Path(args.batch)
    if not path.exists():
        raise BrainError(f"no such file: {path}")
    failed = 0
    with path.open(encoding="utf-8") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
                if not isinstance(item, dict):
                    raise BadLine("a question line must be a JSON object")
                for key in ("id", "workspace", "question"):
                    if not isinstance(item.get(key), str) or not item[key].strip():
                        raise BadLine(f"missing field '{key}'")
                now = _now(item.get("now"))
                t0 = time.perf_counter()
                result = recall(item["question"], workspace=item["workspace"], member=_member(item.get("as")),
                                now=now, budget=args.budget, config=config, store=store, embedder=embedder)
                ms = (time.perf_counter() - t0) * 1000
                out = {"id": item["id"], "context": result.context, "tokens": result.tokens, "ms": round(ms, 2)}
            except (BrainError, json.JSONDecodeError) as exc:
                failed += 1
                reason = exc.reason if isinstance(exc, BadLine) else str(exc)
                print(f"{path}:{number}: skipped: {reason}", file=sys.stderr)
                continue
            print(json.dumps(out, ensure_ascii=False), flush=True)
    return 1 if failed else 0


def add_recall_commands(sub: Any) -> None:
    p = sub.add_parser("recall", help="answer a question from the store (no language model)")
    p.add_argument("question", nargs="*")
    p.add_argument("--workspace")
    p.add_argument("--as", dest="as_", default=None, help="member id to ask as; omit or '' for no person")
    p.add_argument("--now", help="the moment of the question (ISO date), default now")
    p.add_argument("--budget", type=int, default=None, help="token budget of the context (default 1000)")
    p.add_argument("--mode", choices=["hybrid", "vector", "keyword"], default="hybrid",
                   help="hybrid: the real read path; vector/keyword: plain top-10 baselines")
    p.add_argument("--json", action="store_true", help="the whole recall with its trace, as JSON")
    p.add_argument("--batch", help="FORMAT.md question file: one JSON line per question on stdout")
    p.set_defaults(func=cmd_recall)

