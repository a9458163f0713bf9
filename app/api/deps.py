"""What routes get injected: the service objects built once by the app factory."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Path, Query, Request, Response
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.api.bodies.parse_pool import ParsePool
from app.api.schemas import MAX_INT
from app.api.server.middleware import Metrics
from app.api.time_window import LogWindow, utc_window
from app.db import DatabaseHealth
from app.services.access.keys import Keys
from app.services.batch.service import BatchService
from app.services.challenger.comparison import Comparison
from app.services.challenger.promotion import Promoter
from app.services.challenger.shadow import ShadowScorer
from app.services.challenger.split import TrafficSplits
from app.services.events.watch import EventWatch
from app.services.events.webhooks import Deliverer, Webhooks
from app.services.feedback.log_maintenance import LogMaintenance
from app.services.feedback.monitoring import Monitoring
from app.services.feedback.outcomes import Outcomes
from app.services.feedback.prediction_log import PredictionLogWriter
from app.services.feedback.priors import PriorEstimates
from app.services.feedback.recalibration import Recalibrator
from app.services.health.readiness import Readiness
from app.services.jobs.service import JobService
from app.services.model_registry.service import ModelRegistry
from app.services.plots.service import Plots
from app.services.prediction.predictor import Predictor
from app.services.training import Trainer
from app.settings import Settings

T = TypeVar("T")
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$"
ALIAS_PATTERN = r"^[A-Za-z][A-Za-z0-9_\-]{0,63}$"


@dataclass
class Services:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    registry: ModelRegistry
    predictor: Predictor
    trainer: Trainer
    keys: Keys
    metrics: Metrics
    jobs: JobService
    batches: BatchService  # batch decisions of a data set (jobs of kind "batch")
    plots: Plots
    health: DatabaseHealth
    readiness: Readiness
    stopping: threading.Event  # set on SIGTERM: synchronous trainings stop at their next round
    outcomes: Outcomes
    monitoring: Monitoring
    comparison: Comparison  # two versions' realised cost and calibration, from the log
    promoter: Promoter  # the promotion gate: moves an alias when the evidence holds
    shadow: ShadowScorer  # a model's shadow version decides its logged predicts again
    splits: TrafficSplits  # aliases' traffic splits (canaries)
    webhooks: Webhooks  # operators' webhooks and their deliveries
    deliverer: Deliverer  # posts due events to the webhooks (a thread per process)
    event_watch: EventWatch  # raises calibration, cost-band and challenger events (a thread)
    recalibrator: Recalibrator
    priors: PriorEstimates
    log_maintenance: LogMaintenance
    prediction_log: PredictionLogWriter | None  # None: COSTWISE_PREDICTION_LOG=false
    parsing: ParsePool  # large bodies are parsed in worker processes
    # predictions (each reads the database to resolve its version) run in these threads
    prediction_threads: PredictionThreads


async def in_prediction_thread(services: Services, fn: Callable[[], T]) -> T:
    """``fn()`` in a prediction thread, never on the event loop."""
    return await services.prediction_threads.run(fn)


def _resolve(fut: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if not fut.cancelled():
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)


class PredictionThreads:
    """At most ``max_threads`` threads that run predictions handed over by the event loop.

    What :class:`concurrent.futures.ThreadPoolExecutor` with ``loop.run_in_executor`` does
    for them, with less per hand-off (every single-row predict makes one): a
    ``SimpleQueue`` to the threads and ``call_soon_threadsafe`` back, no concurrent future
    chained to an asyncio one. Measured on one CPU (bench/serving/request_path.py):
    about a third of the executor's CPU time per round trip. A thread starts only when
    none is idle; work not started when its caller is cancelled is skipped, and
    :meth:`shutdown` cancels what has not started.
    """

    def __init__(self, max_threads: int, name: str) -> None:
        self.max_threads = max_threads
        self.name = name
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._closed = False

    async def run(self, fn: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[T] = loop.create_future()
        with self._lock:
            if self._closed:
                raise RuntimeError("prediction threads are shut down")
            self._queue.put((fn, fut, loop))
            if not self._idle.acquire(blocking=False) and len(self._threads) < self.max_threads:
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}_{len(self._threads)}", daemon=True
                )
                thread.start()
                self._threads.append(thread)
        return await fut

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fn, fut, loop = item
            del item
            if not fut.cancelled():
                try:
                    result = (True, fn())
                except BaseException as error:  # handed to the awaiting request
                    result = (False, error)
                with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits
                    loop.call_soon_threadsafe(_resolve, fut, *result)
                del result
            del fn, fut, loop
            self._idle.release()

    def shutdown(self) -> None:
        """Stop taking work, cancel what has not started; running work finishes."""
        with self._lock:
            self._closed = True
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    _, fut, loop = item
                    with contextlib.suppress(RuntimeError):
                        loop.call_soon_threadsafe(fut.cancel)
            for _ in self._threads:
                self._queue.put(None)


async def get_services(request: Request) -> Services:
    """Async on purpose: a sync dependency would cost a thread-pool hop per request."""
    services: Services = request.app.state.services
    return services


async def database_gate(request: Request) -> None:
    """Fail fast (503 UNAVAILABLE) while the database is known to be down or stalled.

    Routes that need the database run in worker threads bounded by the database
    timeouts; while :class:`app.db.DatabaseHealth` says it is down they are not even
    attempted (one request per probe interval still is, to notice its return).
    Predictions are not gated here: they may be answered from memory (see
    :mod:`app.services.prediction.predictor`).
    """
    services: Services = request.app.state.services
    services.health.check()


DATABASE_GATE = Depends(database_gate)


ServicesDep = Annotated[Services, Depends(get_services)]
ModelName = Annotated[
    str,
    Path(
        pattern=NAME_PATTERN,
        description="Registered model name: "
        "letters, digits, '_', '-', '.', at most 128 characters.",
    ),
]
AliasName = Annotated[
    str,
    Path(
        pattern=ALIAS_PATTERN,
        description="Alias, e.g. production: a letter, then letters, digits, '_' or '-' (<= 64).",
    ),
]


def _no_store(response: Response) -> None:
    """``Cache-Control: no-store`` on a successful answer: it shows a secret once (a new API
    key, a webhook's signing secret) that no cache may keep."""
    response.headers["Cache-Control"] = "no-store"


#: route dependency: the answer is never cached
NO_STORE = Depends(_no_store)

#: an optional ``version`` query parameter (a version number of the model)
VersionQuery = Annotated[int | None, Query(ge=1, le=MAX_INT)]


def _query_window(since: datetime | None = None, until: datetime | None = None) -> LogWindow:
    """The ``since`` and ``until`` query parameters of a report as one window, checked by
    :func:`app.api.time_window.utc_window` (ISO 8601; a time without a zone is UTC)."""
    return utc_window(since, until)


#: the window [since, until) a report reads, from the query string
QueryWindow = Annotated[LogWindow, Depends(_query_window)]
