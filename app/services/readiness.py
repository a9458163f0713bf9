"""Readiness of the service: does the database answer, and is its schema at head?

The health route asks this service; it never runs a query itself.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from app.db import schema_revision


class Readiness:
    """Built once in ``create_app`` on the application's engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def check(self) -> tuple[bool, dict[str, Any]]:
        """``(ok, checks)``: see :func:`database_readiness`."""
        return database_readiness(self._engine)


def database_readiness(engine: Engine) -> tuple[bool, dict[str, Any]]:
    """``(ok, checks)``: the database answers ``SELECT 1`` and its schema is at head.

    ``checks`` is ``{"database": "ok", "schema": {"current", "head"}}``, or
    ``{"database": "unreachable"}`` when the database does not answer.
    """
    checks: dict[str, Any] = {}
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        checks["database"] = "ok"
        current, head = schema_revision(engine)
        checks["schema"] = {"current": current, "head": head}
        return current == head, checks
    except SQLAlchemyError:
        checks["database"] = "unreachable"
        return False, checks
