"""A non-blocking bound on work running at once (synchronous trainings, large requests)."""

from __future__ import annotations

__all__ = ["Slots"]


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
