"""Blocking work run every few seconds off the event loop.

:func:`every` runs an upkeep function in a worker thread within the application's
lifespan; :class:`Periodic` is a daemon thread of its own, for the background readers and
senders of the service (traffic splits reread, webhook deliveries): a step that raises
:class:`~app.errors.ServiceError` (the database is down) is retried at the next period,
with one warning per outage (and one when it works again), not one per period; any
other exception is logged with its trace and the thread goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable

import anyio.to_thread

from app.errors import ServiceError

log = logging.getLogger(__name__)

__all__ = ["Periodic", "every"]


@contextlib.asynccontextmanager
async def every(seconds: float, fn: Callable[[], object]) -> AsyncIterator[None]:
    """Run ``fn()`` now (in a worker thread, never on the event loop) and then every
    ``seconds`` until the block ends; the loop is cancelled at the end of the block."""

    async def loop() -> None:
        while True:
            await anyio.to_thread.run_sync(fn)
            await asyncio.sleep(seconds)

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class Periodic:
    """``step()`` every ``seconds`` in a thread named ``name`` (``what`` names it in logs)."""

    def __init__(self, name: str, what: str, seconds: float, step: Callable[[], object]) -> None:
        self.name, self.what, self.seconds, self.step = name, what, seconds, step
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def start(self, first: bool = False) -> None:
        """Start the thread (``first``: run one step here first, a failure only warned)."""
        if self._thread is not None:
            return
        self._stop.clear()
        if first:
            self._once(failing=False)
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join(timeout)

    def _once(self, failing: bool) -> bool:
        """One step; whether the database failed it."""
        try:
            self.step()
        except ServiceError as error:
            if not failing:
                log.warning("%s failed (retried every %g s): %s", self.what, self.seconds, error)
            return True
        except Exception:  # never let the thread die
            log.exception("%s", self.what)
            return failing
        if failing:
            log.warning("%s works again", self.what)
        return False

    def _run(self) -> None:
        failing = False
        while not self._stop.wait(self.seconds):
            failing = self._once(failing)
