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
against 9.1 and 13.0 ms beyond the embedding, `bench questions`). So by default a `Chooser` decides as it runs: it times
read transactions both ways (one in sixteen the way it does not take, at random) and
shares only while sharing is clearly faster (its recent median lower by a tenth): a
choice flipped on noise costs the overlap, and a short run (a benchmark's 59 questions)
spent a fair part of itself on the slower way.

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
    shorter, not sharing unless sharing is clearly faster. Until both ways have `least`
    timings it alternates; then it takes the way it prefers and the other one time in
    `explore`, so that a change of the host's phase is seen. The two ways' medians are
    taken over the same stretch of time (the other way's last `window` timings, and the
    preferred way's since the first of those), and the preference changes only for a
    median lower by `margin`. Thread-safe."""

    def __init__(self, *, window: int = 24, least: int = 3, explore: int = 16, margin: float = 0.1,
                 seed: int | None = None) -> None:
        keep = window * explore * 2
        self.ms: dict[bool, deque[tuple[int, float]]] = {True: deque(maxlen=keep), False: deque(maxlen=keep)}
        self.window, self.least, self.explore, self.margin = window, least, explore, margin
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._turn = False
        self._seq = 0
        self._shares = False   # the way it prefers: not sharing, until sharing is clearly faster
        self._checked = -_RECHECK   # the timing count when the medians were last taken

    def choose(self) -> bool:
        forced = _setting()
        if forced is not None:
            return forced
        with self._lock:
            if min(len(self.ms[True]), len(self.ms[False])) < self.least:
                self._turn = not self._turn
                return self._turn
            preferred = self._prefer()
            return (not preferred) if self._random.random() < 1 / self.explore else preferred

    def medians(self) -> dict[bool, float] | None:
        """Each way's median over the same recent stretch (see the class), None until
        both ways have been timed."""
        if not self.ms[True] or not self.ms[False]:
            return None
        start = min(self.ms[way][-min(self.window, len(self.ms[way]))][0] for way in (True, False))
        return {way: statistics.median(ms for seq, ms in self.ms[way] if seq >= start) for way in (True, False)}

    def _prefer(self, *, now: bool = False) -> bool:
        # The medians run over some hundreds of timings (~40 us a read, on the read path):
        # they are taken again after every `_RECHECK` new timings, which cannot move them far.
        if now or self._seq - self._checked >= _RECHECK:
            self._checked = self._seq
            medians = self.medians()
            if medians is not None and medians[not self._shares] < medians[self._shares] * (1 - self.margin):
                self._shares = not self._shares
        return self._shares

    def preferred(self) -> bool:
        """The way it takes now (not sharing when nothing is known)."""
        with self._lock:
            return self._prefer(now=True)

    def record(self, shared: bool, ms: float) -> None:
        if _setting() is None:
            with self._lock:
                self._seq += 1
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
