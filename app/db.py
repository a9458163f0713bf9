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

Stalls (PostgreSQL)
-------------------
An engine made with :class:`Timeouts` bounds every database call: the server cancels a
statement after ``statement_timeout`` or a lock wait after ``lock_timeout``; opening a
connection gives up after ``connect_timeout``, waiting for a pooled one after the same
time. A server that stops answering altogether (a network path that stalls: the socket
stays open but nothing comes back) is bounded on the client: a :class:`Watchdog` thread
shuts down the socket of any call (execute, commit, rollback, ping) still running a grace
period after the statement timeout, so the call fails (the connection is discarded)
instead of waiting for TCP. A :class:`DatabaseHealth` records whether the last calls
failed that way; callers use it to fail fast (or serve from memory) while the database
is down, letting one call through every ``probe_interval`` to notice its return.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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
    "DatabaseHealth",
    "Timeouts",
    "Watchdog",
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


@dataclass(frozen=True)
class Timeouts:
    """Bounds of every database call of a serving engine, in seconds.

    ``grace`` is how long after ``statement`` the client gives up on a server that
    does not even answer the cancellation (see :class:`Watchdog`).
    """

    statement: float = 2.0
    lock: float = 1.0
    connect: float = 2.0
    sqlite_busy: float = SQLITE_BUSY_TIMEOUT_MS / 1000
    grace: float = 0.5

    @property
    def deadline(self) -> float:
        """Longest any one call may take before the client closes its connection."""
        return self.statement + self.grace


class DatabaseHealth:
    """Whether the database answered lately: fail fast while it does not.

    :meth:`failed` is called when a call could not reach the database or was cut by a
    timeout, :meth:`ok` when one succeeded. While down, :meth:`allow` lets one call
    through every ``probe_interval`` seconds (a probe) and refuses the others, so that
    requests get their 503 (or their answer from memory) at once instead of each
    waiting for a timeout, and the first successful probe ends the outage.

    A statement the server cancelled at its statement timeout is reported with
    :meth:`timed_out`: it is an outage only if no other statement succeeded while it
    ran. The server answered (with the cancellation), and others were served, so it
    was one heavy statement (e.g. a monitoring report over a large log), and marking
    the database down would fail every other request for it.
    """

    def __init__(
        self, *, probe_interval: float = 0.5, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.probe_interval = probe_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._down_since: float | None = None  # wall-clock time (time.time())
        self._last_probe = float("-inf")
        self._last_ok = float("-inf")  # clock time of the last successful statement
        self._failed_at = float("-inf")  # clock() of the latest failure
        self.failures = 0
        self.slow_statements = 0  # timed out while others succeeded: not failures

    @property
    def down_since(self) -> float | None:
        """Epoch seconds of the first failure of the current outage (None: up)."""
        return self._down_since

    def allow(self) -> bool:
        """True when a database call may be made now (always while up)."""
        if self._down_since is None:
            return True
        with self._lock:
            now = self._clock()
            if now - self._last_probe >= self.probe_interval:
                self._last_probe = now
                return True
            return False

    def check(self) -> None:
        """Raise :class:`Unavailable` at once when the database is down (see :meth:`allow`)."""
        if not self.allow():
            raise Unavailable(self.describe())

    def describe(self) -> str:
        since = self._down_since
        when = "" if since is None else " since " + _iso(since)
        return f"the database is not answering{when}; the request was not attempted, retry later"

    def failed_within(self, seconds: float) -> bool:
        """True while down and a call failed less than ``seconds`` ago (a call that
        succeeded since, :meth:`ok`, ends it)."""
        return self._down_since is not None and self._clock() - self._failed_at < seconds

    def failed(self) -> None:
        with self._lock:
            self.failures += 1
            self._failed_at = self._clock()
            if self._down_since is None:
                self._down_since = time.time()
                self._last_probe = self._clock()
                logger.warning("database calls are failing or timing out: failing fast")

    def started(self) -> float:
        """The clock time to pass to :meth:`timed_out` for a statement starting now."""
        return self._clock()

    def timed_out(self, started: float) -> None:
        """A statement that began at ``started`` (see :meth:`started`) was cancelled by
        the server's statement timeout: :meth:`failed` unless another statement
        succeeded since it began (then the database is up and this one was heavy)."""
        if self._last_ok > started:
            with self._lock:
                self.slow_statements += 1
            logger.info("a statement hit the statement timeout while others succeeded")
            return
        self.failed()

    def ok(self) -> None:
        self._last_ok = self._clock()
        if self._down_since is not None:
            with self._lock:
                if self._down_since is not None:
                    logger.warning("database answering again after %s", _iso(self._down_since))
                    self._down_since = None


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


class Watchdog:
    """Shuts down the socket of a database call that outlived its deadline.

    A statement timeout is enforced by the server; when the server (or the network
    path to it) stops answering, nothing would ever wake the waiting thread up. Calls
    register their connection's socket with a deadline (:meth:`guard`); one daemon
    thread shuts the socket down when the deadline passes, which makes the driver
    raise at once (the pool then discards the connection).
    """

    def __init__(self, tick: float = 0.05) -> None:
        self.tick = tick
        self._lock = threading.Lock()
        self._armed: dict[int, tuple[int, float, list[bool]]] = {}  # token -> fd, deadline
        self._next = 0
        self._thread: threading.Thread | None = None
        self.fired = 0

    @contextmanager
    def guard(self, dbapi_connection: Any, seconds: float) -> Iterator[list[bool]]:
        """Watch the block; the yielded list holds True once the watchdog fired for it."""
        fired: list[bool] = []
        try:
            fd = int(dbapi_connection.fileno())
        except Exception:  # closed or not a socket: nothing to watch
            yield fired
            return
        with self._lock:
            self._next += 1
            token = self._next
            self._armed[token] = (fd, time.monotonic() + seconds, fired)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="costwise-db-watchdog", daemon=True
                )
                self._thread.start()
        try:
            yield fired
        finally:
            with self._lock:
                self._armed.pop(token, None)

    def _run(self) -> None:
        while True:
            time.sleep(self.tick)
            now = time.monotonic()
            with self._lock:  # held while shutting down: a guarded fd is never reused
                for token, (fd, deadline, fired) in list(self._armed.items()):
                    if now >= deadline:
                        del self._armed[token]
                        self.fired += 1
                        fired.append(True)
                        _shutdown(fd)


def _shutdown(fd: int) -> None:
    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
        logger.warning("database call outlived its deadline: connection shut down")
    except OSError:
        pass
    finally:
        sock.close()


def make_engine(
    url: str,
    *,
    timeouts: Timeouts | None = None,
    health: DatabaseHealth | None = None,
    **kwargs: Any,
) -> Engine:
    """Create an engine for ``url`` (SQLite file/memory or PostgreSQL through psycopg 3).

    SQLite connections get ``foreign_keys=ON``, ``journal_mode=WAL``, a
    ``busy_timeout`` (5 s, or ``timeouts.sqlite_busy``), may be shared across threads,
    and begin their transactions with ``BEGIN IMMEDIATE`` (see the module docstring).
    PostgreSQL engines use ``pool_pre_ping`` and a connect timeout; with ``timeouts``
    (a serving engine) also statement and lock timeouts, a pool wait bound and the
    client-side :class:`Watchdog`, and ``health`` records failures (see the module
    docstring). Without ``timeouts`` (migrations, CLI) statements are not bounded.
    Extra ``kwargs`` go to :func:`sqlalchemy.create_engine`.
    """
    sa_url = make_url(normalize_url(url))
    if sa_url.get_backend_name() == "sqlite":
        sqlite_args = {"check_same_thread": False, **kwargs.pop("connect_args", {})}
        if sa_url.database in (None, "", ":memory:"):
            kwargs.setdefault("poolclass", StaticPool)
        engine = create_engine(sa_url, connect_args=sqlite_args, **kwargs)
        busy = SQLITE_BUSY_TIMEOUT_MS if timeouts is None else int(timeouts.sqlite_busy * 1000)
        _install_sqlite_hooks(engine, busy)
        return engine
    if sa_url.get_backend_name() == "postgresql":
        connect_args: dict[str, Any] = {}
        if "connect_timeout" not in sa_url.query:
            seconds = POSTGRES_CONNECT_TIMEOUT_S if timeouts is None else timeouts.connect
            connect_args["connect_timeout"] = max(1, round(seconds))
        if timeouts is not None:
            options = (
                f"-c statement_timeout={int(timeouts.statement * 1000)} "
                f"-c lock_timeout={int(timeouts.lock * 1000)}"
            )
            existing = sa_url.query.get("options")  # the URL's own options are kept
            if isinstance(existing, str) and existing:
                options = f"{existing} {options}"
            connect_args["options"] = options
            # a dead peer (not only a stalled one) is noticed by the kernel as well
            connect_args.update(keepalives=1, keepalives_idle=10, keepalives_interval=5)
            connect_args.update(keepalives_count=3)
            kwargs.setdefault("pool_timeout", timeouts.connect)
        kwargs["connect_args"] = {**connect_args, **kwargs.get("connect_args", {})}
    kwargs.setdefault("pool_pre_ping", True)
    engine = create_engine(sa_url, **kwargs)
    if timeouts is not None and sa_url.get_backend_name() == "postgresql":
        _guard_dialect(engine, Watchdog(), timeouts, health)
    return engine


def _guard_dialect(
    engine: Engine, watchdog: Watchdog, timeouts: Timeouts, health: DatabaseHealth | None
) -> None:
    """Wrap the dialect's calls that wait on the server with the watchdog and ``health``.

    These are the dialect methods through which SQLAlchemy reaches the driver: every
    statement (``do_execute*``), commit, rollback (also the pool's reset on return) and
    the pool's pre-ping. Opening a connection is bounded by ``connect_timeout``.

    A new connection or a pre-ping is not even tried within ``health.probe_interval`` of
    a failed call (it fails at once, and does not count as a failure): requests that had
    passed the health check before the database went down and then waited for a pooled
    connection would otherwise spend a second bound (a connect timeout or a cut ping) on
    top of that wait; 32 clients saw 4.0 s where the bound is 2.5 s.
    """
    dialect = engine.dialect
    errors = (dialect.loaded_dbapi.OperationalError, dialect.loaded_dbapi.InterfaceError)
    seconds = timeouts.deadline
    stalled = threading.local()  # when this thread's last pre-ping was cut by the watchdog

    def fail_fast() -> None:
        if health is not None and health.failed_within(health.probe_interval):
            raise dialect.loaded_dbapi.OperationalError(
                "a database call failed less than a probe interval ago: not tried"
            )

    def guarded(
        method: Callable[..., Any],
        conn_of: Callable[..., Any],
        *,
        statement: bool,
        ping: bool = False,
    ) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(*args: Any, **kw: Any) -> Any:
            started = 0.0 if health is None else health.started()
            if ping:
                fail_fast()
            with watchdog.guard(conn_of(*args), seconds) as fired:
                try:
                    result = method(*args, **kw)
                except errors as error:
                    if fired and not statement:
                        stalled.at = time.monotonic()
                    if health is not None and not fired and _cancelled_by_timeout(error):
                        health.timed_out(started)  # the server answered: maybe one slow query
                    elif health is not None:
                        health.failed()
                    raise
            if health is not None and statement:  # a ping or a rollback may succeed while
                health.ok()  # statements wait on a lock: only statements prove health
            return result

        return call

    def connect(*args: Any, **kw: Any) -> Any:
        if time.monotonic() - getattr(stalled, "at", float("-inf")) < 0.2:
            # the pool reconnects at once when its pre-ping fails; after a ping the
            # watchdog had to cut, do not spend a connect timeout on top of it
            stalled.at = float("-inf")
            raise dialect.loaded_dbapi.OperationalError(
                "the database did not answer a ping within its deadline (stalled)"
            )
        fail_fast()
        try:
            return original_connect(*args, **kw)
        except errors:
            if health is not None:
                health.failed()
            raise

    for name in ("do_execute", "do_execute_no_params", "do_executemany"):
        method = getattr(dialect, name)
        setattr(dialect, name, guarded(method, lambda cur, *_: cur.connection, statement=True))
    for name in ("do_commit", "do_rollback", "do_ping"):
        method = getattr(dialect, name)
        wrapped = guarded(method, lambda conn, *_: conn, statement=False, ping=name == "do_ping")
        setattr(dialect, name, wrapped)
    original_connect = dialect.connect
    dialect.connect = connect  # type: ignore[method-assign]


#: SQLSTATE of a statement cancelled by the server (statement_timeout, or a cancel request)
QUERY_CANCELED = "57014"


def _cancelled_by_timeout(error: BaseException | None) -> bool:
    """Whether a driver error is the server cancelling the statement (SQLSTATE 57014);
    a lock timeout (55P03) is not: a held lock stalls every statement that needs it."""
    return getattr(error, "sqlstate", None) == QUERY_CANCELED


def _install_sqlite_hooks(engine: Engine, busy_timeout_ms: int) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
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
    except exc.TimeoutError as error:  # the pool's wait for a free connection
        raise Unavailable(
            "no database connection became free in time (all busy or stalled); retry"
        ) from error


def _describe(error: exc.DBAPIError) -> str:
    text = str(error.orig).lower()
    if "database is locked" in text or "database is busy" in text:
        return "the database is busy (locked by another writer); retry the request"
    if "no such table" in text:
        return "the database has no registry tables; run `costwise db upgrade`"
    if "unable to open database file" in text:
        return "the database file cannot be opened; check the path and its permissions"
    if _cancelled_by_timeout(error.orig):
        return (
            "a database statement ran longer than the statement timeout (COSTWISE_DB_TIMEOUT) "
            "and was cancelled; retry later, or ask for less (e.g. a narrower window)"
        )
    kind = type(error.orig).__name__
    return f"the database is unavailable ({kind}); check that it is running and reachable"


# --------------------------------------------------------------------------- migrations


def _script_location() -> str:
    """The folder of the ``migrations`` package shipped next to app/ (a wheel too).

    Found, not imported: alembic loads its ``env.py``, which imports the registry's
    tables (app imports no migration code; the revisions depend on app)."""
    spec = importlib.util.find_spec("migrations")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the migrations package is not installed next to app/")
    return str(Path(next(iter(spec.submodule_search_locations))).resolve())


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
