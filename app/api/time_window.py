"""The one check of the times a request gives (``since``, ``until``), used by every route.

A time is read as ISO 8601 by pydantic; without a zone it is taken as UTC. It must then
exist in UTC: ``0001-01-01T00:00:00+14:00`` is in year 0 in UTC and
``9999-12-31T23:59:59-14:00`` in year 10000, outside what Python's datetime (and so the
database driver) can represent. Such a time is a 422 ``INVALID_ARGUMENT`` naming the
field, here, before any query -- not an ``OverflowError`` while a statement is bound (a
500 on both databases). Used by ``GET /v1/models/{name}/monitoring``,
``GET``/``POST /v1/models/{name}/priors``, ``POST .../recalibrate`` (``from_outcomes``)
and the command line's ``--since``/``--until``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from app.errors import InvalidArgument
from app.registry.log_window import LogWindow

__all__ = ["LogWindow", "utc_instant", "utc_window"]


def utc_instant(t: datetime | None, field: str) -> datetime | None:
    """``t`` in UTC (a time without a zone is taken as UTC); InvalidArgument naming
    ``field`` when it has no UTC equivalent (before year 1 or after year 9999)."""
    if t is None:
        return None
    if t.tzinfo is None:
        return t.replace(tzinfo=UTC)
    try:
        return t.astimezone(UTC)
    except OverflowError:
        raise InvalidArgument(
            f"{field}: {t.isoformat()} is out of range in UTC (expected a time between "
            "0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z)",
            field=field,
        ) from None


def utc_window(since: datetime | None, until: datetime | None, prefix: str = "") -> LogWindow:
    """``[since, until)`` in UTC as a :class:`LogWindow` (the value the services take),
    each end checked by :func:`utc_instant`; ``since`` must be
    before ``until`` when both are given. Errors name ``{prefix}since`` / ``{prefix}until``."""
    start = utc_instant(since, f"{prefix}since")
    end = utc_instant(until, f"{prefix}until")
    if start is not None and end is not None and start >= end:
        raise InvalidArgument(
            f"{prefix}since: {start.isoformat()} is not before {prefix}until ({end.isoformat()})",
            field=f"{prefix}since",
        )
    return LogWindow(start, end)
