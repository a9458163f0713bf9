"""A blocking upkeep function run now and then every few seconds, in a worker thread."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import anyio.to_thread


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
