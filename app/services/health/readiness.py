"""Readiness of the service: does the database answer, is its schema at head, and have
the start-up checks passed?

The health route asks this service; it never runs a query itself. A process may start
while the database is away (:class:`StartupChecks` are then retried until it answers).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from app.db import (
    DatabaseHealth,
    database_errors,
    ensure_schema_at_head,
    schema_revision,
    upgrade_to_head,
)
from app.errors import ServiceError, Unavailable
from app.services.access.keys import check_auth_configuration
from app.settings import Settings

log = logging.getLogger(__name__)


class StartupChecks:
    """The start-up checks that need the database, run again until it answers.

    A process may start while the database is away: ``/health/live`` answers, and
    ``/health/ready`` stays 503 (naming the database) until these checks have passed.
    A database that answers but fails them (schema not at head, unsafe auth
    configuration) still refuses the start, as before.
    """

    def __init__(self, settings: Settings, engine: Any, sessions: Any) -> None:
        self.settings = settings
        self.engine = engine
        self.sessions = sessions
        self.passed = False
        self.error: str | None = None  # why the last deferred attempt failed
        self._lock = threading.Lock()

    def run(self) -> None:
        """Run the checks; raise what they raise (Unavailable: the database is away)."""
        with self._lock:
            if self.passed:
                return
            if self.settings.auto_migrate:
                upgrade_to_head(self.settings.database_url)
            ensure_schema_at_head(self.engine)
            with database_errors():
                check_auth_configuration(self.settings, self.sessions)
            self.passed = True
            self.error = None

    def retry(self) -> bool:
        """Run the checks again after a deferred start; True once they passed."""
        try:
            self.run()
        except Unavailable as error:
            self.error = error.detail
        except Exception as error:  # schema or configuration: logged, ready stays 503
            self.error = str(error)
            log.error("start-up check failed now that the database answers: %s", error)
        return self.passed


class Readiness:
    """Built once in ``create_app`` on the application's engine."""

    def __init__(self, engine: Engine, health: DatabaseHealth, startup: StartupChecks) -> None:
        self._engine = engine
        self._health = health
        self._startup = startup

    def check(self) -> tuple[bool, dict[str, Any]]:
        """``(ok, checks)``: the database answers ``SELECT 1``, its schema is at head and the
        start-up checks have passed (run again here after a start without the database).

        ``checks["database"]`` is ``ok`` or ``unreachable`` (``checks["database_down_since"]``
        while calls are failing); blocking, bounded by the database timeouts: call it off the
        event loop.
        """
        checks: dict[str, Any] = {}
        try:
            with self._engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            checks["database"] = "ok"
            current, head = schema_revision(self._engine)
            checks["schema"] = {"current": current, "head": head}
            ok = current == head
            if ok and not self._startup.passed:  # started while the database was away
                ok = self._startup.retry()
                if not ok:
                    checks["startup"] = self._startup.error
        except (SQLAlchemyError, ServiceError):
            checks["database"] = "unreachable"
            ok = False
        since = self._health.down_since
        if since is not None:
            checks["database_down_since"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(since))
        return ok, checks
