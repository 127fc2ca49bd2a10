"""The read path's statements sent straight through libpq's pipeline, without psycopg's
cursors: a recall makes about ten short statements, and psycopg's layers around each
(a cursor, a transformer, dumper and loader lookups, the prepare manager, its pipeline
bookkeeping) cost this process 0.1-0.2 ms a statement on top of libpq's own work.

`Reader(conn)` is used for the length of one read transaction (brain.read.run). Its
`execute` sends a statement and returns at once; the rows are read when asked for, so
every statement is pipelined: the server runs it while this process works on earlier
rows. Each statement is prepared once per connection and ends with its own Sync; the
first statement that fails fails every later one too (they ran in the aborted
transaction), and the read with it, even if nobody asked for its rows. `end` sends the
transaction's COMMIT behind the last statement, so that it travels while their rows are
worked on. Parameters are
dumped and rows loaded by psycopg's own (C) adapters, configured on the connection
(brain.db._configure), so values look exactly as through psycopg.
"""

from __future__ import annotations

import itertools
import re
import select
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

import psycopg
from psycopg import pq
from psycopg.adapt import PyFormat, Transformer

__all__ = ["Executor", "Reader", "Rows", "StatementsLost"]

_OK = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)


class Rows(Protocol):
    """What the read-path steps ask of a statement's result (a psycopg cursor has it too)."""

    def fetchall(self) -> list[Any]: ...
    def fetchone(self) -> Any: ...
    def __iter__(self) -> Iterator[Any]: ...


class Executor(Protocol):
    """What the read-path steps ask of a connection: a psycopg connection, or a Reader."""

    def execute(self, query: Any, params: Any = ..., *, binary: bool = ...) -> Any: ...


# %(name)s and %s placeholders to $n, %% to % (psycopg's syntax, which the steps' SQL uses)
_PLACEHOLDER = re.compile(rb"%(?:\((\w+)\))?s|%%")


def _convert(query: str) -> tuple[bytes, tuple[str | int, ...]]:
    """A statement's text for the server and the order of its parameters (names or
    positions), cached: a read path has a few dozen distinct statements."""
    got = _converted.get(query)
    if got is None:
        order: list[str | int] = []
        seen: dict[str | int, int] = {}

        def sub(m: re.Match[bytes]) -> bytes:
            if m.group(0) == b"%%":
                return b"%"
            key: str | int = m.group(1).decode() if m.group(1) else len(order)
            if key not in seen:
                seen[key] = len(seen) + 1
                order.append(key)
            return b"$%d" % seen[key]

        got = _converted[query] = (_PLACEHOLDER.sub(sub, query.encode()), tuple(order))
    return got


_converted: dict[str, tuple[bytes, tuple[str | int, ...]]] = {}

# Prepared statements, per connection: (text, parameter types) -> name. psycopg drops
# every prepared statement of its connection (DEALLOCATE ALL) after a rollback or a DROP
# it runs there, ours included: a statement then fails as unknown, the names are
# forgotten, and the read says so (StatementsLost) so that its caller asks again.
_PREFIX = b"brain_"
_serial = itertools.count()
_prepared: weakref.WeakKeyDictionary[psycopg.Connection[Any], dict[tuple[bytes, tuple[int, ...]], bytes]] = (
    weakref.WeakKeyDictionary())
# One transformer per connection, kept across its reads: a transformer finds and makes a
# dumper for each Python type and a loader for each column type the first time it meets
# them, which a new one per read did again every recall (~0.1 ms of this process's CPU).
# A connection serves one read at a time (the pool's), and its adapters are set once.
# (psycopg's Transformer is its C or Python class, chosen at import: Any to the type checker)
_transformers: weakref.WeakKeyDictionary[psycopg.Connection[Any], Any] = weakref.WeakKeyDictionary()


class StatementsLost(Exception):
    """The connection's prepared statements were dropped since it last read (psycopg's
    DEALLOCATE ALL after a rollback): nothing was read; ask again and they are made anew."""


class _Result:
    """One statement's rows, read from the server when first asked for."""

    __slots__ = ("_reader", "_prepare", "_res", "_error", "_rows")

    def __init__(self, reader: Reader, prepare: tuple[bytes, tuple[int, ...]] | None) -> None:
        # prepare: the statement's key when it was prepared with this execution
        self._reader, self._prepare = reader, prepare
        self._res: pq.abc.PGresult | None = None
        self._error: BaseException | None = None
        self._rows: list[Any] | None = None

    def _wait(self) -> None:
        if self._res is None and self._error is None:
            self._reader._collect_until(self)
        if self._error is not None:
            raise self._error

    def fetchall(self) -> list[Any]:
        if self._rows is None:
            self._wait()
            res = self._res
            assert res is not None
            tx = self._reader._tx
            tx.set_pgresult(res)
            self._rows = tx.load_rows(0, res.ntuples, tuple) if res.ntuples else []
        return self._rows

    def fetchone(self) -> Any:
        rows = self.fetchall()
        return rows[0] if rows else None

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class Reader:
    """A connection's statements in libpq's pipeline mode for the length of a read (a
    context manager): `execute` sends, the rows come when asked for. Leaves the
    connection as it found it, idle in its transaction, with every result read."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self._pgconn = conn.pgconn
        self._fd = conn.pgconn.socket
        tx = _transformers.get(conn)
        if tx is None:
            tx = _transformers[conn] = Transformer(conn)
        self._tx = tx
        self._enc = conn.info.encoding
        self._pending: deque[_Result] = deque()
        self._idle: deque[Callable[[], object]] = deque()
        self._names = _prepared.setdefault(conn, {})
        self.failed: BaseException | None = None   # the first statement that failed
        self._ended = False   # (end(): the COMMIT is sent)

    def __enter__(self) -> Reader:
        self._pgconn.enter_pipeline_mode()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._idle.clear()   # (work for the read's waits: none are left)
        try:
            while self._pending:
                self._collect_one()
            self._pgconn.exit_pipeline_mode()
        except BaseException:
            # a connection left mid-pipeline is of no use to anyone: the pool replaces it
            self.conn.close()
            if exc[0] is None:
                raise
        if exc[0] is None and self.failed is not None:
            raise self.failed   # (a statement whose rows nobody asked for)

    def execute(self, query: str, params: Mapping[str, Any] | Sequence[Any] | None = None, *,
                binary: bool = False, prepare: bool = True) -> _Result:
        """Send one statement (psycopg's placeholder syntax); its rows come from the result.
        `prepare=False`: parsed anew each time (a statement without a plan, like BEGIN)."""
        if self._ended:
            # it would run outside the read's transaction, in none, without its binding
            raise psycopg.ProgrammingError("this read's transaction was ended (Reader.end): no statement may follow")
        text, order = _convert(query)
        values: list[Any] = ([params[k] for k in order] if isinstance(params, Mapping)  # type: ignore[index]
                             else list(params or ()))
        tx = self._tx
        dumped: list[Any] = []
        types: tuple[int, ...] = ()
        formats: list[pq.Format] | None = None
        if values:
            dumped = list(tx.dump_sequence(values, [PyFormat.AUTO] * len(values)))
            types, formats = tuple(tx.types or ()), list(tx.formats or ())
        pgc = self._pgconn
        made = None
        if not prepare:
            pgc.send_query_params(text, dumped, param_types=types, param_formats=formats,
                                  result_format=1 if binary else 0)
        else:
            key = (text, types)
            name = self._names.get(key)
            if name is None:
                made = key
                name = self._names[key] = _PREFIX + b"%d" % next(_serial)
                pgc.send_prepare(name, text, param_types=types)
            pgc.send_query_prepared(name, dumped, param_formats=formats, result_format=1 if binary else 0)
        pgc.pipeline_sync()
        self._flush()
        result = _Result(self, made)
        self._pending.append(result)
        return result

    def end(self) -> None:
        """Send the transaction's COMMIT now, behind the statements already sent: the read
        sends nothing after it. The server ends the transaction as soon as it has run them,
        and the answer waits in the socket while this process works on their rows; it is
        read when the reader closes, and the connection's own commit then finds nothing to
        end. Committed by an exchange of its own at the read's end, a read waited 0.25-0.4
        ms for it with nothing to do (this machine, the backend on the other core)."""
        self.execute("COMMIT", prepare=False)
        self._ended = True

    def when_idle(self, tasks: Iterable[Callable[[], object]]) -> None:
        """Work for this process while it waits for the server: each task runs where the
        reader would otherwise block for a result, one at a time, the socket read between
        them. For work whose result a later step would compute anyway (a cache to fill):
        what is not done by the end of the read is dropped, and a task's error is raised
        where it ran. Keep each task short: a result that arrives waits for it."""
        self._idle.extend(tasks)

    # -- reading results in the order they were sent ------------------------------------
    def _flush(self) -> None:
        pgc = self._pgconn
        while pgc.flush():   # (non-blocking: 1 while some of the message is unsent)
            select.select([self._fd], [self._fd], [])
            pgc.consume_input()

    def _next(self) -> pq.abc.PGresult | None:
        pgc = self._pgconn
        idle = self._idle
        while pgc.is_busy():
            if idle:
                pgc.consume_input()   # (what has arrived already: no task then)
                if pgc.is_busy():
                    idle.popleft()()
                continue
            select.select([self._fd], [], [])
            pgc.consume_input()
        return pgc.get_result()

    def _collect_until(self, target: _Result) -> None:
        while self._pending:
            if self._collect_one() is target:
                return

    def _collect_one(self) -> _Result:
        """Read the oldest pending statement's results, up to and with its Sync."""
        result = self._pending.popleft()
        error: BaseException | None = None
        if result._prepare:
            res = self._next()
            if res is not None and res.status == pq.ExecStatus.FATAL_ERROR:
                error = psycopg.errors.error_from_result(res, encoding=self._enc)
                # the name was never made: the next use prepares it again
                self._names.pop(result._prepare, None)
            self._next()   # (the end of the prepare's results)
        res = self._next()
        while True:   # the statement's results, up to its Sync
            if res is None:
                res = self._next()
                continue
            status = res.status
            if status == pq.ExecStatus.PIPELINE_SYNC:
                break
            if status in _OK:
                result._res = res
            elif error is None:
                error = (psycopg.errors.error_from_result(res, encoding=self._enc)
                         if status == pq.ExecStatus.FATAL_ERROR
                         else psycopg.OperationalError(f"unexpected result status {pq.ExecStatus(status).name}"))
            res = self._next()
        if error is not None:
            if getattr(error, "sqlstate", None) == "26000":   # invalid_sql_statement_name
                self._names.clear()
                error = StatementsLost(f"prepared statements of this connection were dropped ({error})")
            if self.failed is None:
                self.failed = error
        # The first error is every later statement's too, as the cause to show: in the
        # read's transaction they fail anyway, and one sent outside it (its BEGIN failed)
        # read nothing bound.
        result._error = self.failed
        return result
