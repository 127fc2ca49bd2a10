"""Command line: `python -m brain load|stats|members|recall|demo|stop`.

Every command opens the store named by DATABASE_URL or BRAIN_DATA_DIR (see README).
Errors a user can fix are printed as one line with what to do, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from brain.cli_recall import add_recall_commands
from brain.errors import BrainError

DEMO_FILE = Path(__file__).resolve().parent.parent / "fixtures" / "demo.jsonl"


def _store() -> Any:
    from brain.db import default_store

    return default_store()


def _writer() -> Any:
    from brain.embed import get_embedder
    from brain.write import Writer

    store = _store()
    embedder = get_embedder()
    store.check_embedder(embedder.id, embedder.dim)
    return Writer(store, embedder)


def cmd_load(args: argparse.Namespace) -> int:
    from brain.load import load_file

    report = load_file(_writer(), args.file, bar=not args.quiet)
    for rej in report.rejected:
        print(f"{args.file}:{rej.line}: rejected: {rej.reason}", file=sys.stderr)
    print(report.summary())
    return 0 if report.ok else 1


def cmd_demo(args: argparse.Namespace) -> int:
    """Load the demo fixtures, only if the store holds nothing yet (used by `make run`)."""
    from brain.load import load_file

    store = _store()
    if args.if_empty and not store.is_empty():
        print("store already holds data; demo not loaded")
        return 0
    report = load_file(_writer(), DEMO_FILE, bar=not args.quiet)
    print("demo: " + report.summary())
    return 0 if report.ok else 1


def cmd_stats(args: argparse.Namespace) -> int:
    rows = _store().stats()
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    if not rows:
        print("the store is empty: load data with `python -m brain load FILE.jsonl`")
        return 0
    cols = list(rows[0].keys())
    print("  ".join(f"{c:>14}" for c in cols))
    for row in rows:
        print("  ".join(f"{str(row[c]):>14}" for c in cols))
    return 0


def cmd_members(args: argparse.Namespace) -> int:
    store = _store()
    workspaces = [args.workspace] if args.workspace else [w["workspace_id"] for w in store.list_workspaces()]
    for ws in workspaces:
        for m in store.members(ws):
            mods = ",".join(m["modules"]) or "(none: grants do not resolve)"
            print(f"{ws}\t{m['member_id']}\t{m['name']}\troles={','.join(m['roles']) or '-'}\tmodules={mods}")
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    from brain.db import stop_embedded

    print("stopped" if stop_embedded() else "no embedded server was running")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """The benchmarks live in bench/ (not the library); this only hands over to them."""
    rest = list(args.rest)
    if rest and rest[0] == "locomo":
        from bench.locomo import main as locomo_main

        return int(locomo_main(rest[1:]))
    from bench.__main__ import main as bench_main

    return int(bench_main(rest))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m brain", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("load", help="load a FORMAT.md JSON Lines file")
    p.add_argument("file", type=Path)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_load)

    p = sub.add_parser("demo", help="load the demo fixtures")
    p.add_argument("--if-empty", action="store_true", help="only when the store holds nothing")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("stats", help="row counts per table and workspace")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("members", help="members, roles and the modules they may read")
    p.add_argument("--workspace")
    p.set_defaults(func=cmd_members)

    p = sub.add_parser("stop", help="stop the embedded PostgreSQL server")
    p.set_defaults(func=cmd_stop)

    add_recall_commands(sub)

    p = sub.add_parser("bench", help="benchmarks: `bench locomo PATH` (public), `bench business` (see bench/)")
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrainError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
