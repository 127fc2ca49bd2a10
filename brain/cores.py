"""One core for a read transaction and the database backend that answers it.

A recall is a short conversation with PostgreSQL: a dozen statements, each sent when the
previous answer has been worked on. When this thread and its backend sit on different
cores, every hand-off wakes an idle core. On a small virtual machine (this project's
2-vCPU host), in its slow phases, that cost 0.25-0.6 ms, since the hypervisor must
reschedule a halted vCPU: `SELECT 1` sent after 2 ms of client work, against 0.14 ms
with both on one core and 0.06 ms back to back. On one core a hand-off is a plain
context switch. Over whole recalls in such a phase the read path went 27.5 -> 17.0 ms
(same process, questions alternating between the two ways).

So for the length of a read transaction on the embedded server, the backend may be
moved to the core this thread is running on and the thread held there; both get their
own CPU sets back afterwards. Nothing else changes: what runs, in which order, on which
snapshot. The embedding, which wants every core, runs before the transaction.

Whether that pays depends on the host, and the host changes: in another phase of the
same machine a hand-off across cores took 0.07 ms, and sharing a core made the read
path 2-6 % slower (it loses the overlap of client and server work, which the read path
has since made more of: in December 2026, never against always sharing, 7.3 and 10.8
against 9.1 and 13.0 ms beyond the embedding, `bench questions`). So by default a `Chooser` decides as it runs: it does
not share, tries sharing now and then (less often while trials come out clearly slower:
each costs the read it times and the next one), and shares only while sharing is clearly
faster (its recent median lower by a tenth): a choice flipped on noise costs the overlap.

Only where the backend is a process of this machine that we may reschedule: the embedded
server (it runs as this user, or as the `pgserver` user when this is root). Set
BRAIN_SHARE_CORE=0 to never share, or 1 to always share, also with a DATABASE_URL server
that is local. Only a process this machine names `postgres` is moved (a server in a
container reports pids that here may name anything). Any refusal of the system (no
permission, not Linux) turns it off for the process, silently: it is a speed-up, never
a condition.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import statistics
import threading
from collections import deque
from collections.abc import Iterator

_enabled: bool | None = None   # None: not decided yet; False after the system refused


def _current_cpu() -> int | None:
    """The core this thread is running on now (glibc sched_getcpu), None if unknown."""
    try:
        cpu = int(_libc().sched_getcpu())
    except (AttributeError, OSError):
        return None
    return cpu if cpu >= 0 else None


_LIBC: ctypes.CDLL | None = None


def _libc() -> ctypes.CDLL:
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


def _setting() -> bool | None:
    """BRAIN_SHARE_CORE: True always, False never, None (unset) let a Chooser decide."""
    setting = os.environ.get("BRAIN_SHARE_CORE", "").strip().lower()
    if setting in ("0", "false", "no", "off"):
        return False
    if setting in ("1", "true", "yes", "on"):
        return True
    return None


def wanted(embedded: bool) -> bool:
    """Whether read transactions may share a core with their backend at all."""
    setting = _setting()
    if setting is False or _enabled is False or not hasattr(os, "sched_setaffinity"):
        return False
    return embedded or setting is True


_RECHECK = 4


class Chooser:
    """Shares a core or not, whichever has lately made a store's read transactions
    shorter, not sharing unless sharing is clearly faster.

    It starts by not sharing and now and then tries the other way (at random, one read in
    `explore` at first), so that a change of the host's phase is seen. A trial costs: in
    December 2026's phase a shared read took ~2 ms longer and the read after it ~1 ms
    longer, and the first 59 reads of a run, with the old chooser's opening alternation
    (three reads each way) and one trial in 16, had a p50 beyond the embedding of 5.19 ms
    against 4.75 ms never sharing (passes like `python -m bench questions`' over the
    business holdout, 8 each, ad-hoc `/tmp/s16/arm.py`). So a trial that comes out
    clearly slower than the way taken (by `margin`) makes the next one half as likely,
    down to one read in `explore_max`; a trial that does not resets it to one in
    `explore`, so a way that has become faster is timed often enough to be taken. The
    preference changes only when the other way's median over its recent trials (those of
    the last `window` × `explore` reads, at least `least` of them) is lower by `margin`
    than the way taken over the same stretch (its timings since the first of those
    trials, at most its last `window` × 4). Thread-safe."""

    def __init__(self, *, window: int = 24, least: int = 3, explore: int = 16, explore_max: int = 128,
                 margin: float = 0.1, seed: int | None = None) -> None:
        keep = window * 4   # each way's last timings: the way taken is judged by these
        self.ms: dict[bool, deque[tuple[int, float]]] = {True: deque(maxlen=keep), False: deque(maxlen=keep)}
        self.window, self.least, self.explore, self.margin = window, least, explore, margin
        self.explore_max = max(explore, explore_max)
        self.horizon = window * explore   # reads: how far back the other way's trials count
        self.interval = explore   # the other way is tried one read in `interval`
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._seq = 0
        self._shares = False   # the way it prefers: not sharing, until sharing is clearly faster
        self._checked = -_RECHECK   # the timing count when the medians were last taken

    def choose(self) -> bool:
        forced = _setting()
        if forced is not None:
            return forced
        with self._lock:
            preferred = self._prefer()
            return (not preferred) if self._random.random() < 1 / self.interval else preferred

    def medians(self) -> dict[bool, float] | None:
        """The other way's median over its trials of the last `horizon` reads and the
        preferred way's over the same stretch (as far back as its kept timings go); None
        while the other way has fewer than `least` such trials (nothing to compare)."""
        way = self._shares
        recent = [(seq, ms) for seq, ms in self.ms[not way] if seq > self._seq - self.horizon]
        if len(recent) < self.least:
            return None
        start = recent[0][0]
        taken = [ms for seq, ms in self.ms[way] if seq >= start]
        if not taken:
            return None
        return {not way: statistics.median(ms for _, ms in recent), way: statistics.median(taken)}

    def _prefer(self, *, now: bool = False) -> bool:
        # The medians run over some dozens of timings (~40 us a read, on the read path):
        # they are taken again after every `_RECHECK` new timings, which cannot move them far.
        if now or self._seq - self._checked >= _RECHECK:
            self._checked = self._seq
            medians = self.medians()
            if medians is not None and medians[not self._shares] < medians[self._shares] * (1 - self.margin):
                self._shares = not self._shares
                self.interval = self.explore
        return self._shares

    def preferred(self) -> bool:
        """The way it takes now (not sharing when nothing is known)."""
        with self._lock:
            return self._prefer(now=True)

    def record(self, shared: bool, ms: float) -> None:
        if _setting() is not None:
            return
        with self._lock:
            self._seq += 1
            if shared != self._shares:   # a trial: judged against the way taken lately
                taken = [t for _, t in list(self.ms[self._shares])[-self.window:]]
                if taken and ms > statistics.median(taken) * (1 + self.margin):
                    self.interval = min(self.interval * 2, self.explore_max)
                else:
                    self.interval = self.explore
            self.ms[shared].append((self._seq, ms))


_backends: dict[int, bool] = {}   # pid -> is a PostgreSQL process of this machine


def _is_postgres(pid: int) -> bool:
    """Whether `pid` here is a PostgreSQL process. A server in another PID namespace (a
    container) reports pids of its own, which here may name anything: never move those."""
    known = _backends.get(pid)
    if known is None:
        try:
            with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as f:
                known = f.read().strip() == "postgres"
        except OSError:
            known = False
        if len(_backends) > 1024:   # pids are reused: forget old ones now and then
            _backends.clear()
        _backends[pid] = known
    return known


@contextlib.contextmanager
def shared_core(backend_pid: int) -> Iterator[int | None]:
    """Hold this thread and `backend_pid` on this thread's current core; yields the core
    (None when it could not be done, and the block runs as it would have)."""
    global _enabled
    cpu = _current_cpu()
    if cpu is None or not _is_postgres(backend_pid):
        yield None
        return
    try:
        mine = os.sched_getaffinity(0)
        theirs = os.sched_getaffinity(backend_pid)
        os.sched_setaffinity(backend_pid, {cpu})
    except OSError:
        _enabled = False   # not ours to move (permission), or gone
        yield None
        return
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        _enabled = False
        _restore(backend_pid, theirs)
        yield None
        return
    try:
        yield cpu
    finally:
        _restore(0, mine)
        _restore(backend_pid, theirs)


def _restore(pid: int, cpus: set[int]) -> None:
    with contextlib.suppress(OSError):   # a backend that has gone needs nothing back
        os.sched_setaffinity(pid, cpus)
