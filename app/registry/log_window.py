"""A window of the prediction log: the predictions made in ``[since, until)`` (UTC).

:class:`LogWindow` is the one value that the reads of the log (:mod:`app.registry.prediction_log`,
:mod:`app.registry.shadow_log`, :mod:`app.registry.prior_estimates`) and the use cases over
them (monitoring, prior estimates, recalibration from outcomes, comparisons, promotions)
pass around, instead of a ``since``/``until`` pair each. Either end may be open (None). The
API checks the times a request gives before it builds one
(:func:`app.api.time_window.utc_window`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.errors import InvalidArgument

__all__ = ["EVERYTHING", "LogWindow", "utc_iso"]


def utc_iso(t: datetime | None, timespec: str = "seconds") -> str | None:
    """``t`` in UTC as ISO 8601 with a ``Z`` (None for None)."""
    # isoformat, not strftime: glibc's %Y does not pad years before 1000 ("1-01-01")
    return None if t is None else t.astimezone(UTC).isoformat(timespec=timespec)[:-6] + "Z"


@dataclass(frozen=True)
class LogWindow:
    """Predictions made at or after ``since`` and before ``until`` (None: open)."""

    since: datetime | None = None
    until: datetime | None = None

    def where(self, query: Any, created_at: Any) -> Any:
        """``query`` restricted to the rows whose ``created_at`` column is in the window."""
        if self.since is not None:
            query = query.where(created_at >= self.since)
        if self.until is not None:
            query = query.where(created_at < self.until)
        return query

    def check_order(self) -> None:
        """InvalidArgument naming ``since`` when both ends are given and ``since`` is not
        before ``until``."""
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise InvalidArgument(
                f"since: {utc_iso(self.since)} is not before until ({utc_iso(self.until)})",
                field="since",
            )

    def iso(self, timespec: str = "seconds") -> dict[str, str | None]:
        """``{"since": ..., "until": ...}`` as ISO 8601 in UTC (None for an open end)."""
        return {"since": utc_iso(self.since, timespec), "until": utc_iso(self.until, timespec)}

    def between(self) -> str:
        """The window in words: ``between <since> and <until>`` (``the start``, ``now``)."""
        since, until = utc_iso(self.since, "microseconds"), utc_iso(self.until, "microseconds")
        return f"between {since or 'the start'} and {until or 'now'}"


#: The whole log.
EVERYTHING = LogWindow()
