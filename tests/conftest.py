"""Database fixtures shared by the registry, migration and API tests.

``database_url`` is parametrised over ``sqlite`` (a file in the test's tmp dir) and
``postgres`` (a fresh database ``costwise_t_<hex>`` created on the server named by
``COSTWISE_TEST_DATABASE_URL`` and dropped afterwards; skipped when the variable is
unset). Every test that uses it therefore runs once per database, on a schema that is
migrated to head. ``empty_database_url`` is the same without migrations. ``redis_url`` is the Redis of
the job-worker tests: ``COSTWISE_TEST_REDIS_URL`` (the test FAILS if it is set and Redis
does not answer), else redis://127.0.0.1:6379/0 when it answers, else skipped. ``root``
is an empty data root (a directory under the test's tmp dir) for datasets by reference.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from app.db import make_engine, make_session_factory, normalize_url, upgrade_to_head

TEST_DATABASE_ENV = "COSTWISE_TEST_DATABASE_URL"
REDIS_ENV = "COSTWISE_TEST_REDIS_URL"

DATABASE_KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def _postgres_server_url() -> str:
    url = os.environ.get(TEST_DATABASE_ENV)
    if not url:
        pytest.skip(f"{TEST_DATABASE_ENV} is not set: PostgreSQL variant skipped")
    return normalize_url(url)


@contextmanager
def fresh_database(kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a new, empty database of ``kind`` (sqlite | postgres), dropped afterwards."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'registry.db'}"
        return
    server_url = _postgres_server_url()
    name = f"costwise_t_{uuid.uuid4().hex}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    except Exception as error:  # pragma: no cover - depends on the environment
        admin.dispose()
        pytest.fail(f"{TEST_DATABASE_ENV} is set but a test database cannot be created: {error}")
    try:
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=DATABASE_KINDS)
def empty_database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """URL of a fresh, empty database (no tables, not migrated)."""
    with fresh_database(request.param, tmp_path_factory) as url:
        yield url


@pytest.fixture
def database_url(empty_database_url: str) -> str:
    """URL of a fresh database migrated to head (param: sqlite | postgres)."""
    upgrade_to_head(empty_database_url)
    return empty_database_url


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """Engine on :func:`database_url`, disposed after the test."""
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def session_factory(engine: Engine) -> sessionmaker[Session]:
    """Session factory (read-write) on :func:`engine`."""
    return make_session_factory(engine)


@pytest.fixture(scope="module")
def redis_url() -> str:
    """URL of a Redis server for queue tests (see the module docstring)."""
    import redis

    url = os.environ.get(REDIS_ENV)
    try:
        redis.Redis.from_url(url or "redis://127.0.0.1:6379/0", socket_timeout=2).ping()
    except redis.RedisError as error:
        if url:
            pytest.fail(f"{REDIS_ENV}={url} is set but Redis does not answer: {error}")
        pytest.skip(f"no Redis on 127.0.0.1:6379 and {REDIS_ENV} is not set")
    return url or "redis://127.0.0.1:6379/0"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty data root, ``<tmp_path>/data`` (what ``data_roots`` names in the tests)."""
    data = tmp_path / "data"
    data.mkdir()
    return data
