"""Loading JSON Lines files: parse, embed in batches, write each line in its own transaction.

A bad line (malformed JSON, a missing or wrongly typed field, an unknown workspace or
member, a bad date) is reported with its number and reason and skipped; the rest loads
and nothing is half-written, because every line commits or rolls back on its own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from brain.errors import BadLine, BrainError
from brain.format import Line, parse_line
from brain.write import Namings, Writer

CHUNK = 64  # lines embedded together: one model call per chunk
# A load refreshes the planner's statistics when it has written as many lines again as at
# its last refresh, from 100 lines on (at a chunk's end: 128, 256, 512, ...): a handful of
# ANALYZEs for any size of load (see Store.refresh_statistics).
STATS_FIRST = 100


@dataclass(frozen=True)
class Rejected:
    line: int
    reason: str


@dataclass
class LoadReport:
    """What a load did, for the CLI, the explorer's Data page and the benchmarks."""

    lines: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    rejected: list[Rejected] = field(default_factory=list)
    seconds: float = 0.0
    embed_seconds: float = 0.0
    embedded: int = 0

    @property
    def memories(self) -> int:
        return self.outcomes.get("written", 0) + self.outcomes.get("earlier", 0)

    @property
    def ok(self) -> bool:
        return not self.rejected

    def summary(self) -> str:
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        share = 100 * self.embed_seconds / self.seconds if self.seconds else 0.0
        rate = self.memories / self.seconds if self.seconds else 0.0
        return (f"{self.lines} lines in {self.seconds:.1f} s ({parts or 'nothing written'}; "
                f"rejected {len(self.rejected)}); {rate:.1f} memories/s, embedding "
                f"{self.embed_seconds:.1f} s = {share:.0f}% of the time")


def read_jsonl(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8") as fh:
        for number, raw in enumerate(fh, start=1):
            if raw.strip():
                yield number, raw


def _decode(raw: str | dict[str, Any]) -> Line:
    if isinstance(raw, dict):
        return parse_line(raw)
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BadLine(f"malformed JSON: {exc.msg} at column {exc.colno}") from None
    return parse_line(obj)


def load_lines(writer: Writer, numbered: Iterable[tuple[int, str | dict[str, Any]]], *,
               total: int | None = None, on_progress: Callable[[int, int], None] | None = None,
               bar: bool = False) -> LoadReport:
    """Load numbered raw lines (JSON text or decoded objects)."""
    report = LoadReport()
    started = time.perf_counter()
    tqdm_bar = None
    if bar:
        from tqdm import tqdm
        tqdm_bar = tqdm(total=total, unit="line", desc="load", dynamic_ncols=True)
    chunk: list[tuple[int, str | dict[str, Any]]] = []
    refreshed_at = 0

    def flush() -> None:
        nonlocal refreshed_at
        parsed: list[tuple[int, Line, str | None]] = []
        # what the chunk's records will name, for its later lines' predicted texts (each is
        # rendered again when written, from what has committed: Writer.render)
        pending: Namings = {}
        for number, raw in chunk:
            try:
                line = _decode(raw)
                parsed.append((number, line, writer.render(line, pending=pending)))
            except BadLine as exc:
                report.rejected.append(Rejected(number, exc.reason))
        texts = [t for _, _, t in parsed if t is not None]
        vectors: dict[int, Any] = {}
        if texts:
            t0 = time.perf_counter()
            matrix = writer.embedder.embed_passages(texts)
            report.embed_seconds += time.perf_counter() - t0
            report.embedded += len(texts)
            rows = iter(matrix)
            vectors = {n: next(rows) for n, _, t in parsed if t is not None}
        for number, line, text in parsed:
            try:
                result = writer.write(line, text=text, embedding=vectors.get(number))
                report.outcomes[result.outcome] = report.outcomes.get(result.outcome, 0) + 1
            except BadLine as exc:
                report.rejected.append(Rejected(number, exc.reason))
            except psycopg.Error as exc:  # a constraint the validator missed: the line rolled back
                diag = getattr(exc, "diag", None)
                msg = (diag.message_primary if diag and diag.message_primary else str(exc)).strip()
                report.rejected.append(Rejected(number, f"the database refused it: {msg}"))
        report.lines += len(chunk)
        if report.lines - refreshed_at >= max(STATS_FIRST, refreshed_at):
            writer.store.refresh_statistics()
            refreshed_at = report.lines
        if tqdm_bar is not None:
            tqdm_bar.update(len(chunk))
        if on_progress is not None:
            on_progress(report.lines, total or report.lines)
        chunk.clear()

    try:
        for item in numbered:
            chunk.append(item)
            if len(chunk) >= CHUNK:
                flush()
        if chunk:
            flush()
    finally:
        if tqdm_bar is not None:
            tqdm_bar.close()
    report.rejected.sort(key=lambda r: r.line)
    report.seconds = time.perf_counter() - started
    return report


def load_file(writer: Writer, path: Path | str, *, bar: bool = False,
              on_progress: Callable[[int, int], None] | None = None) -> LoadReport:
    path = Path(path)
    if not path.exists():
        raise BrainError(f"no such file: {path}")
    total = sum(1 for _ in read_jsonl(path))
    return load_lines(writer, read_jsonl(path), total=total, bar=bar, on_progress=on_progress)
