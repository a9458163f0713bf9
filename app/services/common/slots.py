"""A non-blocking bound on work running at once (synchronous trainings, large requests,
monitoring reports and comparisons), and the bounds every report over the prediction log
shares (:class:`LogReports`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session, sessionmaker

from app.errors import PayloadTooLarge, Unavailable

__all__ = ["LogReports", "ReportSlots", "Slots"]


class Slots:
    """At most ``limit`` holders at once; :meth:`try_acquire` never waits.

    Not thread-safe on purpose: it is only used from the event loop (one thread).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def try_acquire(self) -> bool:
        if self.used >= self.limit:
            return False
        self.used += 1
        return True

    def release(self) -> None:
        self.used -= 1


class ReportSlots:
    """At most ``limit`` reports computed at once in this process, from any thread
    (setting COSTWISE_MONITORING_MAX_CONCURRENT); one more is a 503 naming ``what``."""

    def __init__(self, limit: int, what: str, retry_after: int) -> None:
        self.limit = limit
        self._what = what
        self._retry_after = retry_after
        self._free = threading.BoundedSemaphore(limit)

    @contextmanager
    def held(self) -> Iterator[None]:
        if not self._free.acquire(blocking=False):
            raise Unavailable(
                f"{self.limit} {self._what} are being computed in this process "
                f"(setting COSTWISE_MONITORING_MAX_CONCURRENT); retry in {self._retry_after} s",
                limit=self.limit,
                retry_after=self._retry_after,
            )
        try:
            yield
        finally:
            self._free.release()


class LogReports:
    """Base of the services that compute reports over the prediction log (monitoring,
    comparisons): read-only sessions, at most ``max_rows`` rows read by one report
    (setting COSTWISE_MONITORING_MAX_ROWS) and at most ``max_concurrent`` reports at once
    in this process (:class:`ReportSlots`)."""

    #: what the reports are called when one too many is refused
    reports = "reports"
    #: seconds a refused report is told to wait: about one report over a large window
    retry_after = 2

    def __init__(
        self,
        read_sessions: sessionmaker[Session],
        max_rows: int = 1_000_000,
        max_concurrent: int = 2,
    ) -> None:
        self._read = read_sessions
        self.max_rows = max_rows
        self.max_concurrent = max_concurrent
        self._slots = ReportSlots(max_concurrent, self.reports, self.retry_after)

    def _bound(self, n: int, rows: str, narrow: str = "narrow it") -> None:
        """PayloadTooLarge naming ``since`` when a report would read ``n`` ``rows``, more
        than ``max_rows``; ``narrow`` says how to ask for fewer."""
        if n > self.max_rows:
            raise PayloadTooLarge(
                f"since/until: more than {self.max_rows} {rows} in this window "
                f"(setting COSTWISE_MONITORING_MAX_ROWS); {narrow}",
                field="since",
                limit=self.max_rows,
            )
