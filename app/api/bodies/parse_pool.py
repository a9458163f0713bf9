"""Large request bodies are parsed in a separate process: the event loop never waits.

pydantic-core (like every JSON parser for Python) holds the GIL while it builds the
objects of a body: a 60 MiB predict took 1.6-5.5 s, and a worker *thread* did not
help, since ``/health/live`` and every other request waited for the GIL as long. A
:class:`ParsePool` runs the parse of a body of COSTWISE_PARSE_OFFLOAD_BYTES or more in
a worker process (``spawn``, COSTWISE_PARSE_WORKERS of them, started at the first such
body; 0 workers: in a thread, as before): the bytes go there (a pipe write), and what comes back is small or made of numpy
arrays (rows as a float64 matrix, per-row costs as an ``(n, 4)`` array), which cross
the pipe as one buffer each, in the executor's own thread. Smaller bodies are parsed on
the event loop as before (~6 ms per MiB).

A body on its way to a worker is not joined nor pickled in the server process (each a
memcpy of the whole body: 30-80 ms for 60 MiB, the first one on the event loop, the
second holding the GIL): :meth:`ParsePool.run_on_body` writes its chunks to a temporary
file in a thread (``write`` releases the GIL), the worker reads the file, and the server
removes it when the parse is done.

A worker parses with the garbage collector off (the parse makes no cycles; with it on, a
large body was several times slower) and hands freed memory back to the system after
each body (glibc ``malloc_trim``). Errors come back as data: a pydantic validation error
as its list of errors (:class:`BodyInvalid`), a service error (e.g. 413 over a limit)
rebuilt as the same class. A worker that dies (killed, out of memory) makes that request
a 503 and the pool is started afresh for the next one. A worker whose server process is
gone (killed, or stopped before the pool was shut down) exits within
``PARENT_CHECK_SECONDS``: idle workers would otherwise wait for work forever, one set
left behind per server process stopped.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import multiprocessing
import os
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from app.api.guards import release_free_memory
from app.errors import ServiceError, Unavailable

log = logging.getLogger(__name__)
T = TypeVar("T")
PARENT_CHECK_SECONDS = 1.0


class BodyInvalid(Exception):
    """The body failed validation in a worker; ``errors`` as pydantic lists them."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(errors)
        self.errors = errors


def _outcome(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``fn(*args)``; every outcome as picklable data."""
    try:
        return ("ok", fn(*args))
    except ValidationError as exc:
        errors = [{"loc": e["loc"], "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        return ("invalid", errors)
    except ServiceError as exc:
        return ("error", type(exc), exc.detail, exc.field, exc.extra)


def _in_worker(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, ...]:
    """:func:`_outcome` in a worker process: no garbage collection during the parse,
    freed memory handed back after it."""
    gc.disable()
    try:
        return _outcome(fn, args)
    finally:
        gc.enable()
        if release_free_memory is not None:
            release_free_memory()


def _exit_with_parent(parent: int) -> None:
    """In each worker (the pool's initializer): a daemon thread that ends the process
    once the server process that started it is gone (it is then adopted by another)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="costwise-parent-watch", daemon=True).start()


def _spill(chunks: list[bytes]) -> str:
    """Write ``chunks`` to a new temporary file (in a thread: ``write`` releases the GIL)."""
    fd, path = tempfile.mkstemp(prefix="costwise-body-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.writelines(chunks)
    except BaseException:
        os.unlink(path)
        raise
    return path


def _parse_spilled(fn: Callable[..., Any], path: str, args: tuple[Any, ...]) -> Any:
    """In the worker: the body from its temporary file, then ``fn(body, *args, True)``."""
    with open(path, "rb") as f:
        body = f.read()
    return fn(body, *args, True)


class ParsePool:
    """Parses bodies of ``offload_bytes`` or more in ``workers`` processes (0: a thread)."""

    def __init__(self, workers: int, offload_bytes: int) -> None:
        self.workers = workers
        self.offload_bytes = offload_bytes
        self._pool: ProcessPoolExecutor | None = None

    def offloads(self, size: int) -> bool:
        return size >= self.offload_bytes

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_exit_with_parent,
                initargs=(os.getpid(),),
            )
        return self._pool

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker process (``fn`` importable by name, ``args`` picklable).

        Raises :class:`BodyInvalid` for a validation error, the service error ``fn``
        raised, or :class:`app.errors.Unavailable` when the worker died.
        """
        if self.workers == 0:  # in a thread: the GIL still stalls the loop while it parses
            outcome = await run_in_threadpool(_outcome, fn, args)
            return self._result(outcome)
        pool = self._executor()
        loop = asyncio.get_running_loop()
        try:
            outcome = await loop.run_in_executor(pool, _in_worker, fn, args)
        except BrokenProcessPool:
            if self._pool is pool:
                self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            log.warning("a body-parsing worker process died; starting a new pool")
            raise Unavailable(
                "the process parsing the request body stopped (out of memory?); retry",
                field="body",
            ) from None
        return self._result(outcome)

    async def run_on_body(self, fn: Callable[..., T], chunks: list[bytes], *args: Any) -> T:
        """``fn(body, *args, True)`` in a worker, ``body`` the joined ``chunks`` of a large
        request body (sent through a temporary file; joined in a thread with 0 workers).
        Empties ``chunks``: the server process keeps no copy of the body while it waits."""
        if self.workers == 0:
            body = await run_in_threadpool(b"".join, chunks)  # join drops the GIL (>= 1 MiB)
            chunks.clear()
            return await self.run(fn, body, *args, True)
        path = await run_in_threadpool(_spill, chunks)
        chunks.clear()
        try:
            return await self.run(_parse_spilled, fn, path, args)
        finally:
            os.unlink(path)

    @staticmethod
    def _result(outcome: tuple[Any, ...]) -> Any:
        if outcome[0] == "ok":
            return outcome[1]
        if outcome[0] == "invalid":
            raise BodyInvalid(outcome[1])
        _, cls, detail, field, extra = outcome
        raise cls(detail, field=field, **extra)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
