"""Database engines, sessions, schema revisions and database-error translation.

Nothing here reads settings: every function takes the database URL (or an engine) that
the caller got from :mod:`app.settings`.

SQLite transactions
-------------------
Python's ``sqlite3`` (before 3.12's ``autocommit``) opens transactions lazily with a
*deferred* ``BEGIN`` right before the first write. Two sessions that both read and then
write can deadlock: the second one to upgrade its read lock gets "database is locked"
(``SQLITE_BUSY_SNAPSHOT`` in WAL mode) immediately, without waiting for
``busy_timeout``. We therefore take over ``BEGIN`` (SQLAlchemy's documented recipe:
``isolation_level = None`` on connect, our own ``BEGIN`` in the ``begin`` event) and
emit ``BEGIN IMMEDIATE`` by default, so a transaction takes the write lock up front and
concurrent writers queue on ``busy_timeout`` instead of failing. Read-only work (e.g.
resolving a version on the prediction path) should use
``make_session_factory(engine, readonly=True)``: its transactions use a deferred
``BEGIN``, which in WAL mode never blocks and is never blocked by writers.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, exc
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from app.errors import SchemaOutOfDate, Unavailable

__all__ = [
    "alembic_config",
    "database_errors",
    "downgrade",
    "ensure_schema_at_head",
    "make_engine",
    "make_session_factory",
    "normalize_url",
    "schema_revision",
    "upgrade_to_head",
]

logger = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_MS = 5000
POSTGRES_CONNECT_TIMEOUT_S = 10
_BEGIN_OPTION = "costwise_sqlite_begin"


def normalize_url(url: str) -> str:
    """Return ``url`` with ``postgres://``/``postgresql://`` mapped to psycopg 3."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def make_engine(url: str, **kwargs: Any) -> Engine:
    """Create an engine for ``url`` (SQLite file/memory or PostgreSQL through psycopg 3).

    SQLite connections get ``foreign_keys=ON``, ``journal_mode=WAL``, a 5 s
    ``busy_timeout``, may be shared across threads, and begin their transactions
    with ``BEGIN IMMEDIATE`` (see the module docstring). PostgreSQL engines use
    ``pool_pre_ping`` and a connect timeout. Extra ``kwargs`` go to
    :func:`sqlalchemy.create_engine`.
    """
    sa_url = make_url(normalize_url(url))
    if sa_url.get_backend_name() == "sqlite":
        connect_args = {"check_same_thread": False, **kwargs.pop("connect_args", {})}
        if sa_url.database in (None, "", ":memory:"):
            kwargs.setdefault("poolclass", StaticPool)
        engine = create_engine(sa_url, connect_args=connect_args, **kwargs)
        _install_sqlite_hooks(engine)
        return engine
    if sa_url.get_backend_name() == "postgresql" and "connect_timeout" not in sa_url.query:
        connect_args = {"connect_timeout": POSTGRES_CONNECT_TIMEOUT_S}
        kwargs["connect_args"] = {**connect_args, **kwargs.get("connect_args", {})}
    kwargs.setdefault("pool_pre_ping", True)
    return create_engine(sa_url, **kwargs)


def _install_sqlite_hooks(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(_BEGIN_OPTION, "IMMEDIATE")
        conn.exec_driver_sql(f"BEGIN {mode}")


def make_session_factory(engine: Engine, *, readonly: bool = False) -> sessionmaker[Session]:
    """Return a session factory (``expire_on_commit=False``).

    With ``readonly=True`` SQLite transactions start with a deferred ``BEGIN`` so that
    readers never wait for writers; use it only for sessions that do not write.
    (No effect on PostgreSQL.)
    """
    bind = engine.execution_options(**{_BEGIN_OPTION: "DEFERRED"}) if readonly else engine
    return sessionmaker(bind=bind, expire_on_commit=False)


@contextmanager
def database_errors() -> Iterator[None]:
    """Translate connection-level database errors into :class:`app.errors.Unavailable`.

    Messages never contain the URL, credentials or SQL.
    """
    try:
        yield
    except (exc.OperationalError, exc.InterfaceError) as error:
        raise Unavailable(_describe(error)) from error


def _describe(error: exc.DBAPIError) -> str:
    text = str(error.orig).lower()
    if "database is locked" in text or "database is busy" in text:
        return "the database is busy (locked by another writer); retry the request"
    if "no such table" in text:
        return "the database has no registry tables; run `costwise db upgrade`"
    if "unable to open database file" in text:
        return "the database file cannot be opened; check the path and its permissions"
    kind = type(error.orig).__name__
    return f"the database is unavailable ({kind}); check that it is running and reachable"


# --------------------------------------------------------------------------- migrations


def _script_location() -> str:
    import migrations  # the package shipped next to app/ (works from a wheel too)

    return str(Path(migrations.__file__).resolve().parent)


def alembic_config(url: str) -> Config:
    """Alembic configuration for ``url``; script_location is the installed migrations dir."""
    config = Config()
    config.set_main_option("script_location", _script_location())
    config.set_main_option("sqlalchemy.url", normalize_url(url).replace("%", "%%"))
    return config


@functools.cache
def _script_directory() -> ScriptDirectory:
    config = Config()
    config.set_main_option("script_location", _script_location())
    return ScriptDirectory.from_config(config)


def _head_revision() -> str:
    heads = _script_directory().get_heads()
    if len(heads) != 1:
        raise RuntimeError(f"migrations must have exactly one head, found {sorted(heads)}")
    return heads[0]


def upgrade_to_head(url: str) -> None:
    """Apply every pending migration to the database at ``url``."""
    with database_errors():
        command.upgrade(alembic_config(url), "head")


def downgrade(url: str, revision: str) -> None:
    """Downgrade the database at ``url`` to ``revision`` (``"base"`` drops everything)."""
    with database_errors():
        command.downgrade(alembic_config(url), revision)


def schema_revision(engine: Engine) -> tuple[str | None, str]:
    """Return ``(current, head)``; ``current`` is None for a database never migrated."""
    with database_errors(), engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    return current, _head_revision()


def ensure_schema_at_head(engine: Engine) -> None:
    """Raise :class:`SchemaOutOfDate` unless the database schema is at the head revision."""
    current, head = schema_revision(engine)
    if current is not None and not _is_known(current):
        raise SchemaOutOfDate(
            f"database schema is at revision {current}, which this version of costwise does "
            f"not know (it needs revision {head}); was the database migrated by a newer "
            "costwise? Upgrade costwise, or restore a database at a known revision",
            current=current,
            head=head,
        )
    if current != head:
        shown = current if current is not None else "none (empty database)"
        raise SchemaOutOfDate(
            f"database schema is at revision {shown} but this version of costwise needs "
            f"revision {head}; run `costwise db upgrade` to migrate it",
            current=current,
            head=head,
        )


def _is_known(revision: str) -> bool:
    try:
        return _script_directory().get_revision(revision) is not None
    except Exception:  # alembic raises ResolutionError/CommandError for unknown ids
        return False
