"""What the pieces of the predict path that issue 17 added cost per request, in process.

Pinned to one CPU (as bench/serving/service.py pins the server), under uvloop:

- each pure-ASGI guard (LargeRequest, BodyLimit, AuthGate with authentication off) and
  the metrics middleware around an app that reads a 160-byte body and answers, minus
  the bare app (us per request);
- the round trip to a worker thread and back with a no-op: anyio's ``run_in_threadpool``,
  ``loop.run_in_executor`` on a ``ThreadPoolExecutor``, and
  :class:`app.api.deps.PredictionThreads` (what predictions use,
  :func:`app.api.deps.in_prediction_thread`).

    python -m bench serving.predict_path_parts

Medians of 3 repetitions, printed (the machine is shared: compare within one run).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import uvloop
from starlette.concurrency import run_in_threadpool

from app.api.deps import PredictionThreads
from app.api.guards import AuthGateMiddleware, LargeRequestMiddleware
from app.api.server.middleware import BodyLimitMiddleware, Metrics, MetricsMiddleware

SCOPE = {
    "type": "http",
    "method": "POST",
    "path": "/v1/models/magic/predict",
    "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                (b"content-length", b"160")],
}  # fmt: skip


async def leaf(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


async def receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"x" * 160, "more_body": False}


async def send(message: Any) -> None:
    pass


async def per_request(app: Any, n: int = 20_000) -> float:
    for _ in range(1_000):
        await app(dict(SCOPE), receive, send)
    t = time.perf_counter()
    for _ in range(n):
        await app(dict(SCOPE), receive, send)
    return (time.perf_counter() - t) / n * 1e6


async def hop_anyio(n: int = 3_000) -> float:
    t = time.perf_counter()
    for _ in range(n):
        await run_in_threadpool(lambda: None)
    return (time.perf_counter() - t) / n * 1e6


async def hop_executor(pool: ThreadPoolExecutor, n: int = 3_000) -> float:
    loop = asyncio.get_running_loop()
    t = time.perf_counter()
    for _ in range(n):
        await loop.run_in_executor(pool, lambda: None)
    return (time.perf_counter() - t) / n * 1e6


async def hop_prediction_threads(threads: PredictionThreads, n: int = 3_000) -> float:
    t = time.perf_counter()
    for _ in range(n):
        await threads.run(lambda: None)
    return (time.perf_counter() - t) / n * 1e6


class _AuthOff:
    enabled = False


async def main() -> None:
    pool = ThreadPoolExecutor(4)
    await hop_anyio(300)
    await hop_executor(pool, 300)
    threads = PredictionThreads(32, "bench")
    await hop_prediction_threads(threads, 300)
    out: dict[str, list[float]] = {}
    for _ in range(3):
        bare = await per_request(leaf)
        wrapped = {
            "LargeRequestMiddleware": LargeRequestMiddleware(leaf, 1 << 20, 4),
            "BodyLimitMiddleware": BodyLimitMiddleware(leaf, 64 << 20),
            "AuthGateMiddleware (auth off)": AuthGateMiddleware(leaf, _AuthOff(), False),  # type: ignore[arg-type]
            "MetricsMiddleware": MetricsMiddleware(leaf, Metrics(), str),
        }
        for name, app in wrapped.items():
            out.setdefault(name, []).append(await per_request(app) - bare)
        out.setdefault("thread round trip, anyio run_in_threadpool", []).append(await hop_anyio())
        out.setdefault("thread round trip, run_in_executor", []).append(await hop_executor(pool))
        out.setdefault("thread round trip, PredictionThreads", []).append(
            await hop_prediction_threads(threads)
        )
    for name, values in out.items():
        print(f"{name:45s} {statistics.median(values):7.1f} us  {[round(v, 1) for v in values]}")


if __name__ == "__main__":
    os.sched_setaffinity(0, {0})
    uvloop.run(main())
