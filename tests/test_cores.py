"""A read transaction and its backend share one core for its length, and only then
(brain.cores); writes and BRAIN_SHARE_CORE=0 leave scheduling alone."""

from __future__ import annotations

import os

import pytest

from brain import cores
from brain.db import Store

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux scheduling only")


def _backend(store: Store) -> tuple[int, set[int]]:
    """The pool's idle connection's backend and its CPU set (a fresh store has one)."""
    with store.connection() as conn:
        pid = conn.info.backend_pid
    return pid, os.sched_getaffinity(pid)


def test_a_read_holds_itself_and_its_backend_on_one_core(fresh_store: Store,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_SHARE_CORE", "1")   # the test server is local, not the embedded one
    mine = os.sched_getaffinity(0)
    pid, theirs = _backend(fresh_store)
    with fresh_store.bound("nowhere", readonly=True) as (conn, _):
        assert conn.info.backend_pid == pid
        inside_mine, inside_theirs = os.sched_getaffinity(0), os.sched_getaffinity(pid)
        conn.execute("SELECT 1").fetchone()
    assert len(inside_mine) == 1 and inside_theirs == inside_mine
    assert os.sched_getaffinity(0) == mine   # both given back
    assert os.sched_getaffinity(pid) == theirs


def test_writes_and_the_switch_leave_scheduling_alone(fresh_store: Store,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    mine = os.sched_getaffinity(0)
    pid, theirs = _backend(fresh_store)
    monkeypatch.setenv("BRAIN_SHARE_CORE", "1")
    with fresh_store.bound("nowhere") as (conn, _):   # a write transaction
        assert os.sched_getaffinity(0) == mine and os.sched_getaffinity(pid) == theirs
    monkeypatch.setenv("BRAIN_SHARE_CORE", "0")
    with fresh_store.bound("nowhere", readonly=True) as (conn, _):
        assert os.sched_getaffinity(0) == mine and os.sched_getaffinity(pid) == theirs


def test_a_pid_it_may_not_move_turns_it_off_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRAIN_SHARE_CORE", raising=False)
    monkeypatch.setattr(cores, "_enabled", None)
    monkeypatch.setattr(cores, "_is_postgres", lambda pid: True)   # past that check
    with cores.shared_core(2**22 + 12345) as cpu:   # no such process: the system refuses
        assert cpu is None
    assert cores.wanted(embedded=True) is False   # decided for the process
    monkeypatch.setattr(cores, "_enabled", None)
    assert cores.wanted(embedded=True) is True
    assert cores.wanted(embedded=False) is False   # another server: only when asked for


def test_only_a_postgres_process_is_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    # a server in a container reports its own pids, which here may name anything
    monkeypatch.setattr(cores, "_enabled", None)
    mine = os.sched_getaffinity(0)
    with cores.shared_core(os.getpid()) as cpu:   # this Python process is no backend
        assert cpu is None and os.sched_getaffinity(0) == mine
    assert cores.wanted(embedded=True) is True   # refused for that pid only


def test_an_error_inside_a_read_gives_both_cores_back(fresh_store: Store,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_SHARE_CORE", "1")
    mine = os.sched_getaffinity(0)
    pid, theirs = _backend(fresh_store)
    with pytest.raises(ZeroDivisionError):
        with fresh_store.bound("nowhere", readonly=True):
            1 / 0
    assert os.sched_getaffinity(0) == mine and os.sched_getaffinity(pid) == theirs


def test_reads_in_threads_each_hold_and_give_back(fresh_store: Store,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    monkeypatch.setenv("BRAIN_SHARE_CORE", "1")
    seen: list[tuple[set[int], set[int], set[int]]] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            before = os.sched_getaffinity(0)
            for _ in range(20):
                with fresh_store.bound("nowhere", readonly=True) as (conn, _):
                    conn.execute("SELECT pg_sleep(0.001)").fetchone()
                    inside = os.sched_getaffinity(0)
                    assert os.sched_getaffinity(conn.info.backend_pid) == inside
            seen.append((before, inside, os.sched_getaffinity(0)))
        except BaseException as exc:   # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(seen) == 3
    for before, inside, after in seen:
        assert len(inside) == 1 and after == before


@pytest.mark.parametrize("shared_ms, alone_ms, prefers", [(5.0, 9.0, True), (9.0, 5.0, False)])
def test_the_chooser_takes_the_faster_way_and_keeps_trying_the_other(
        shared_ms: float, alone_ms: float, prefers: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRAIN_SHARE_CORE", raising=False)
    chooser = cores.Chooser(seed=7)
    picks = []
    for i in range(400):
        shared = chooser.choose()
        picks.append(shared)
        noise = (i % 5) * 0.3   # the timings of different reads vary
        chooser.record(shared, (shared_ms if shared else alone_ms) + noise)
    later = picks[100:]
    assert chooser.preferred() is prefers
    assert later.count(prefers) / len(later) > 0.95   # mostly the faster way ...
    # ... and the other now and then, rarely while it keeps coming out slower
    assert 1 <= later.count(not prefers) <= len(later) // 32


def test_trials_of_the_slower_way_back_off_and_come_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trial costs a slower read (and the next): trials that come out clearly slower make
    the next one half as likely, down to one read in explore_max; one that does not makes
    them one in `explore` again. (Fails for a chooser that tries the other way at a fixed
    rate, or never comes back to trying it often.)"""
    monkeypatch.delenv("BRAIN_SHARE_CORE", raising=False)
    chooser = cores.Chooser(seed=11, explore=16, explore_max=128)

    def run(reads: int, shared_ms: float) -> list[bool]:
        picks = []
        for i in range(reads):
            shared = chooser.choose()
            picks.append(shared)
            chooser.record(shared, (shared_ms if shared else 5.0) + (i % 5) * 0.1)
        return picks

    picks = run(2000, 9.0)
    assert chooser.preferred() is False
    assert chooser.interval == 128
    assert picks[1000:].count(True) <= 1000 // 64
    # the host changes: sharing is as fast; the next trial brings the rate back up
    picks = run(400, 5.0)
    assert chooser.interval == 16
    assert picks[200:].count(True) >= 200 // 64


def test_the_chooser_shares_only_when_sharing_is_clearly_faster(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not sharing keeps the overlap of this process's and the server's work: with nothing
    timed, or sharing faster by a few per cent only (noise, a drift of the host), the
    chooser does not share. (Fails for a chooser that takes whichever median is lower,
    or shares by default.)"""
    monkeypatch.delenv("BRAIN_SHARE_CORE", raising=False)
    chooser = cores.Chooser(seed=5)
    assert chooser.preferred() is False
    picks = []
    for i in range(400):
        shared = chooser.choose()
        picks.append(shared)
        chooser.record(shared, (5.0 if shared else 5.2) + (i % 5) * 0.3)
    assert chooser.preferred() is False
    assert picks[100:].count(False) / 300 > 0.8


def test_the_chooser_follows_a_change_of_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRAIN_SHARE_CORE", raising=False)
    chooser = cores.Chooser(seed=3)
    for fast_shared in (True, False):
        for _ in range(600):
            shared = chooser.choose()
            chooser.record(shared, 5.0 if shared == fast_shared else 9.0)
        assert chooser.preferred() is fast_shared


def test_the_switch_overrides_the_chooser(monkeypatch: pytest.MonkeyPatch) -> None:
    chooser = cores.Chooser(seed=1)
    for setting, expected in (("1", True), ("0", False)):
        monkeypatch.setenv("BRAIN_SHARE_CORE", setting)
        assert {chooser.choose() for _ in range(50)} == {expected}
        chooser.record(expected, 1.0)   # forced reads are not timed for the choice
        assert not chooser.ms[expected]
