"""Where a recall's time goes: `python -m bench profile`.

Asks a FORMAT.md question file against a store that is already loaded, twice: the first
pass warms the store, the plan caches and the embedding cache; the second is measured,
so the figures are the read path's own time without the query embedding (measured
apart, uncached, for the ratio the issues set). Prints the p50 of each of the six steps
and, for every SQL statement, its mean time and count per question, the slowest first.

For example, at 100,000 rows with generated multi-hop questions:
`python -m bench profile --data-dir .brain-scale --multi-hop 60`.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

STEPS = ("visibility", "anchors", "recall", "paths", "rank", "compact")


PIPELINE = "(a read's pipelined statements: their server CPU, together)"


@contextmanager
def statement_times() -> Iterator[tuple[dict[str, list[float]], dict[str, list[float]]]]:
    """Time every statement a connection runs, and the CPU its server process spent on it
    (neither psycopg nor brain.wire has a hook for it: their classes' methods are wrapped
    for the duration, and put back after). The read path's statements are pipelined
    (brain.wire.Reader): each counts the time to send it and the time its rows were waited
    for, and the server's CPU is counted for a read's pipelined statements together, under
    PIPELINE. Other statements (psycopg's) count their whole exchange and their own server
    CPU. Server CPU comes from Linux's /proc/<pid>/schedstat (the embedded server, or any
    on this machine), in ns."""
    import psycopg

    from brain import wire

    times: dict[str, list[float]] = defaultdict(list)
    server: dict[str, list[float]] = defaultdict(list)
    original = psycopg.Connection.execute
    send, wait = wire.Reader.execute, wire._Result._wait
    enter, leave = wire.Reader.__enter__, wire.Reader.__exit__
    labels: dict[int, str] = {}
    started: dict[int, float | None] = {}

    def timed(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        cpu0 = _server_cpu_ms(self.info.backend_pid)
        t0 = time.perf_counter()
        try:
            return original(self, query, params, **kw)
        finally:
            first = _label(query)
            times[first].append((time.perf_counter() - t0) * 1000)
            cpu1 = None if cpu0 is None else _server_cpu_ms(self.info.backend_pid)
            if cpu0 is not None and cpu1 is not None:
                server[first].append(cpu1 - cpu0)

    def sent(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        t0 = time.perf_counter()
        result = send(self, query, params, **kw)
        label = labels[id(result)] = _label(query)
        times[label].append((time.perf_counter() - t0) * 1000)
        return result

    def waited(self: Any) -> None:
        t0 = time.perf_counter()
        try:
            wait(self)
        finally:
            label = labels.pop(id(self), None)
            if label is not None:   # (its first wait: later ones find the rows read)
                times[label][-1] += (time.perf_counter() - t0) * 1000

    def entered(self: Any) -> Any:
        started[id(self)] = _server_cpu_ms(self.conn.info.backend_pid)
        return enter(self)

    def left(self: Any, *exc: Any) -> None:
        pid = self.conn.info.backend_pid
        leave(self, *exc)
        cpu0, cpu1 = started.pop(id(self), None), _server_cpu_ms(pid)
        if cpu0 is not None and cpu1 is not None:
            server[PIPELINE].append(cpu1 - cpu0)

    psycopg.Connection.execute = timed  # type: ignore[method-assign]
    wire.Reader.execute, wire._Result._wait = sent, waited  # type: ignore[method-assign]
    wire.Reader.__enter__, wire.Reader.__exit__ = entered, left  # type: ignore[method-assign]
    try:
        yield times, server
    finally:
        psycopg.Connection.execute = original  # type: ignore[method-assign]
        wire.Reader.execute, wire._Result._wait = send, wait  # type: ignore[method-assign]
        wire.Reader.__enter__, wire.Reader.__exit__ = enter, leave  # type: ignore[method-assign]


def _server_cpu_ms(pid: int) -> float | None:
    """CPU time so far of process `pid` (a backend on this machine), None where unknown."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e6
    except (OSError, ValueError, IndexError):
        return None


def _label(query: Any) -> str:
    """A statement's first words: values left out, so that one statement is one label, and
    a read's BEGIN shortened, so that the binding sent with it shows, its values as '?'
    (brain.db.Store._read sends it as bytes, its values quoted in)."""
    text = query.decode("utf-8", "replace") if isinstance(query, bytes) else str(query)
    words = " ".join(text.split())
    if words.startswith("BEGIN") and ";" in words:
        words = "BEGIN; " + words.split(";", 1)[1].strip()
        if "(" in words:
            words = words.split("(", 1)[0] + "(?)"
    return words[:72]


def questions_from(path: Path | None, *, split: str, multi_hop: int, scale: int) -> list[dict[str, Any]]:
    if multi_hop:
        from fixtures.business import generate
        from fixtures.questions import multi_hop_questions

        return multi_hop_questions(generate(seed=7, scale=scale), n=multi_hop, seed=7)[:multi_hop]
    from bench.__main__ import _read_jsonl

    assert path is not None
    return [q for q in _read_jsonl(path) if split == "all" or q.get("split", "holdout") == split]


def _other_threads_cpu_ms() -> float | None:
    """CPU time so far of this process's threads other than the calling one (Linux)."""
    import os
    import threading

    me = threading.get_native_id()
    total = 0
    try:
        for tid in os.listdir(f"/proc/{os.getpid()}/task"):
            if int(tid) == me:
                continue
            with open(f"/proc/{os.getpid()}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])   # utime + stime, in clock ticks
    except OSError:
        return None
    return total * 1000 / os.sysconf("SC_CLK_TCK")


def background_after_recall(ask: Any, questions: list[dict[str, Any]], pause: float = 0.1) -> float | None:
    """CPU that other threads burn in the `pause` after a recall, ms per recall. Worker
    threads left spinning (BLAS, OpenMP) take a core from the next recall's embedding
    and database work on a small machine; this should stay near 0."""
    burned = []
    for q in questions[:10]:
        ask(q)
        before = _other_threads_cpu_ms()
        time.sleep(pause)
        after = _other_threads_cpu_ms()
        if before is None or after is None:
            return None
        burned.append(after - before)
    return statistics.mean(burned) if burned else None


def profile(store: Any, embedder: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    from bench.__main__ import _embed_times
    from brain.format import parse_now
    from brain.read import recall

    def ask(q: dict[str, Any]) -> Any:
        now = parse_now(q["now"]) if q.get("now") else None
        return recall(q["question"], workspace=q["workspace"], member=q.get("as"), now=now,
                      store=store, embedder=embedder)

    for q in questions:   # warm: store pages, plan caches, the embedding cache
        ask(q)
    embed_ms = _embed_times(embedder, questions)
    total: list[float] = []
    slowest: list[tuple[float, str]] = []
    steps: dict[str, list[float]] = defaultdict(list)
    with statement_times() as (times, server):
        for q in questions:
            r = ask(q)
            total.append(r.ms - r.trace.embed_ms)
            slowest.append((total[-1], q["question"]))
            for name in STEPS:
                step = getattr(r.trace, name, None)
                if step is not None and hasattr(step, "ms"):
                    steps[name].append(step.ms)
    n = max(1, len(questions))

    def ask_anew(q: dict[str, Any]) -> Any:   # a text not asked before: the recall embeds it
        return ask({**q, "question": q["question"] + " ?"})

    return {
        "background_ms_after_recall": background_after_recall(ask_anew, questions),
        "questions": len(questions),
        "read_path_p50_ms": statistics.median(total) if total else float("nan"),
        "embed_p50_ms": statistics.median(embed_ms) if embed_ms else float("nan"),
        "steps_p50_ms": {k: statistics.median(v) for k, v in steps.items()},
        "statements": sorted(({"sql": k, "ms_per_question": sum(v) / n, "per_question": len(v) / n,
                               "max_ms": max(v),
                               "server_cpu_ms_per_question": sum(server[k]) / n if server.get(k) else None}
                              for k, v in times.items()),
                             key=lambda s: -s["ms_per_question"]),
        "pipeline_server_cpu_ms_per_question": sum(server[PIPELINE]) / n if server.get(PIPELINE) else None,
        "slowest": [{"ms": ms, "question": text} for ms, text in sorted(slowest, reverse=True)[:5]],
    }


def print_profile(p: dict[str, Any]) -> None:
    rp, em = p["read_path_p50_ms"], p["embed_p50_ms"]
    print(f"{p['questions']} questions: read path p50 {rp:.1f} ms without the embedding, "
          f"query embedding p50 {em:.1f} ms; recall / embedding = {(rp + em) / em:.2f}")
    bg = p["background_ms_after_recall"]
    if bg is not None:
        print(f"  other threads' CPU in the 100 ms after a recall: {bg:.1f} ms (spinning workers if well above 0)")
    for name, ms in p["steps_p50_ms"].items():
        print(f"  step {name:<11} p50 {ms:6.2f} ms")
    print("  statements (mean ms per question, statements per question, max ms, server CPU ms per question):")
    for s in p["statements"]:
        cpu = s["server_cpu_ms_per_question"]
        cpu_text = f"{cpu:7.2f}" if cpu is not None else "      -"
        print(f"  {s['ms_per_question']:7.2f} {s['per_question']:5.2f} {s['max_ms']:7.1f} {cpu_text}  {s['sql']}")
    if p.get("pipeline_server_cpu_ms_per_question") is not None:
        print(f"  {'':7} {'':5} {'':7} {p['pipeline_server_cpu_ms_per_question']:7.2f}  {PIPELINE}")
    print("  slowest questions:")
    for s in p["slowest"]:
        print(f"  {s['ms']:7.1f}  {s['question']}")
