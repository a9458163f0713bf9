"""A non-blocking bound on work running at once (synchronous trainings, large requests,
monitoring reports and comparisons)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from app.errors import Unavailable

__all__ = ["ReportSlots", "Slots"]


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
