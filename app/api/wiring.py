"""What the application factory wires, as two declared lists.

:data:`SERVICES`: the services, each built once by a small factory from what the ones
before it built (the database first, see :func:`database`); :data:`LIFESPAN`: what starts
with the application and stops with it, each part an async context manager entered in
order and left in reverse. :func:`app.api.main.create_app` iterates both; a new service is
one entry here and one field of :class:`app.api.deps.Services`.
"""

from __future__ import annotations

import gc
import logging
import signal
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import SimpleNamespace
from typing import Any

import anyio.to_thread

from app.api.bodies.parse_pool import ParsePool
from app.api.deps import PredictionThreads
from app.api.log_metrics import PredictionLogCollector, ShadowCollector
from app.api.server.middleware import Metrics
from app.db import DatabaseHealth, Timeouts, make_engine, make_session_factory
from app.errors import Unavailable
from app.services.access.keys import Keys
from app.services.batch.service import BatchService
from app.services.challenger.comparison import Comparison
from app.services.challenger.promotion import Promoter
from app.services.challenger.shadow import ShadowScorer
from app.services.challenger.split import TrafficSplits
from app.services.events.watch import EventWatch, WatchPolicy
from app.services.events.webhooks import Deliverer, DeliveryPolicy, Webhooks
from app.services.feedback.log_maintenance import LogMaintenance
from app.services.feedback.monitoring import Monitoring
from app.services.feedback.outcomes import Outcomes, PendingCounters
from app.services.feedback.prediction_log import LogStats, PredictionLogWriter
from app.services.feedback.priors import PriorEstimates
from app.services.feedback.recalibration import Recalibrator
from app.services.health.readiness import Readiness, StartupChecks
from app.services.jobs.service import JobService, make_queue
from app.services.model_registry.known_models import KnownModels
from app.services.model_registry.service import ModelRegistry
from app.services.plots.service import Plots
from app.services.prediction.predictor import Predictor
from app.services.training import Trainer
from app.settings import Settings

log = logging.getLogger(__name__)

#: What the factories have built so far, by name (``w.settings``, ``w.engine``, ...).
Wiring = SimpleNamespace

GC_THRESHOLDS = (50_000, 20, 20)
# threads of predict, evaluate and /v2 infer: as many may wait on a stalled database at
# once (each for at most the statement timeout + 0.5 s); the rest queue
PREDICTION_THREADS = 32


def timeouts_of(s: Settings) -> Timeouts:
    """The database bounds of a serving engine (statement, lock, connect, SQLite busy)."""
    return Timeouts(s.db_timeout, s.db_lock_timeout, s.db_connect_timeout, s.sqlite_busy_timeout)


def database(settings: Settings) -> Wiring:
    """The engine, its session factories and the start-up checks (run once here).

    Refuses to start (raises :class:`app.errors.SchemaOutOfDate`) when the database
    schema is not at the migrations' head, unless ``auto_migrate`` is on, and (raises
    :class:`app.errors.Misconfigured`) when ``COSTWISE_ENV=prod`` without authentication
    configured. When the database cannot be reached at all, the app starts anyway and
    runs these checks again in the background until it answers (see :class:`StartupChecks`).
    """
    health = DatabaseHealth()
    engine = make_engine(settings.database_url, timeouts=timeouts_of(settings), health=health)
    sessions = make_session_factory(engine)
    checks = StartupChecks(settings, engine, sessions)
    try:
        checks.run()
    except Unavailable as error:
        checks.error = error.detail
        log.warning("starting without the database (%s); ready once it answers", error.detail)
    except Exception:
        engine.dispose()
        raise
    read_sessions = make_session_factory(engine, readonly=True)
    return Wiring(
        settings=settings,
        health=health,
        engine=engine,
        sessions=sessions,
        read_sessions=read_sessions,
        checks=checks,
    )


# ------------------------------------------------------------------- the services
def _prediction_log(w: Wiring) -> PredictionLogWriter | None:
    s = w.settings
    if not s.prediction_log:
        return None  # COSTWISE_PREDICTION_LOG=false
    return PredictionLogWriter(
        w.engine,
        max_rows=s.prediction_log_queue_rows,
        batch_rows=s.prediction_log_batch_rows,
        flush_seconds=s.prediction_log_flush_seconds,
        overflow=s.prediction_log_overflow,
        wait_seconds=s.prediction_log_wait_seconds,
        pending=w.pending,
    )


def _monitoring(w: Wiring) -> Monitoring:
    s = w.settings
    return Monitoring(
        w.read_sessions,
        max_rows=s.monitoring_max_rows,
        gauge_rows=s.monitoring_gauge_rows,
        max_concurrent=s.monitoring_max_concurrent,
    )


def _log_maintenance(w: Wiring) -> LogMaintenance:
    s = w.settings
    return LogMaintenance(
        w.sessions,
        w.monitoring,
        retention_days=s.prediction_log_days,
        refresh_seconds=s.monitoring_refresh_seconds,
        window_hours=s.monitoring_window_hours,
        pending_seconds=s.pending_outcome_seconds,
        counters=w.pending,
    )


def _log_metrics(w: Wiring) -> PredictionLogCollector:
    """The prediction log's gauges, registered with the service's metrics."""
    writer, maintenance = w.prediction_log, w.log_maintenance
    collector = PredictionLogCollector(
        lambda: writer.stats if writer is not None else LogStats(),
        lambda: maintenance.snapshot,
        pending=w.pending,
        pending_by_model=lambda: maintenance.pending,
    )
    w.metrics.registry.register(collector)
    return collector


def _predictor(w: Wiring) -> Predictor:
    s = w.settings
    return Predictor(
        w.read_sessions,
        cache_size=s.model_cache_size,
        max_rows=s.max_predict_rows,
        max_features=s.max_features,
        stale_seconds=s.registry_stale_seconds,
        health=w.health,
        log=w.prediction_log,
        log_features=s.log_features,
        estimates=w.priors,
    )


def _shadow(w: Wiring) -> ShadowScorer:
    """The shadow scorer, hooked into the predictor (unless COSTWISE_SHADOW_QUEUE_ROWS=0)."""
    s = w.settings
    scorer = ShadowScorer(
        w.predictor,
        w.engine,
        w.sessions,
        w.read_sessions,
        max_rows=s.shadow_queue_rows,
        refresh_seconds=s.shadow_refresh_seconds,
    )
    if s.shadow_queue_rows > 0:
        w.predictor.shadow_now = scorer  # "shadow": true (recorded when the log is on)
    if s.shadow_queue_rows > 0 and w.prediction_log is not None:
        w.predictor.shadow = scorer.offer
    w.metrics.registry.register(ShadowCollector(lambda: scorer.stats))
    return scorer


def _splits(w: Wiring) -> TrafficSplits:
    """Aliases' traffic splits, asked by the predictor for every request by alias."""
    splits = TrafficSplits(w.sessions, w.read_sessions, w.settings.shadow_refresh_seconds)
    w.predictor.router = splits
    return splits


def _recalibrator(w: Wiring) -> Recalibrator:
    s = w.settings
    return Recalibrator(
        w.sessions, max_rows=s.max_train_rows, max_features=s.max_features, max_cells=s.max_cells
    )


def _trainer(w: Wiring) -> Trainer:
    registered = w.known_models.add
    return Trainer(w.sessions, w.settings, jobs=w.jobs, stopping=w.stopping, registered=registered)


#: (name, factory) in the order they are built; a factory reads what came before it
SERVICES: tuple[tuple[str, Callable[[Wiring], Any]], ...] = (
    ("metrics", lambda w: Metrics()),
    ("known_models", lambda w: KnownModels(w.read_sessions, w.settings.known_models_refresh_seconds)),
    ("queue", lambda w: make_queue(w.settings, w.sessions)),
    ("pending", lambda w: PendingCounters()),  # pending outcomes: writer, outcomes, upkeep
    ("prediction_log", _prediction_log),
    ("monitoring", _monitoring),
    ("log_maintenance", _log_maintenance),
    ("log_metrics", _log_metrics),
    ("jobs", lambda w: JobService(w.sessions, w.settings, w.queue)),
    ("stopping", lambda w: threading.Event()),  # set on SIGTERM: synchronous trainings stop
    ("priors", lambda w: PriorEstimates(w.sessions, w.read_sessions, max_rows=w.settings.monitoring_max_rows)),
    ("predictor", _predictor),
    ("registry", lambda w: ModelRegistry(w.sessions, w.read_sessions)),
    ("comparison", lambda w: Comparison(w.read_sessions, max_rows=w.settings.monitoring_max_rows, max_concurrent=w.settings.monitoring_max_concurrent)),
    ("promoter", lambda w: Promoter(w.comparison, w.registry, w.read_sessions)),
    ("shadow", _shadow),
    ("splits", _splits),
    ("webhooks", lambda w: Webhooks(w.sessions, w.read_sessions, DeliveryPolicy.from_settings(w.settings))),
    ("deliverer", lambda w: Deliverer(w.sessions, w.webhooks.policy)),
    ("event_watch", lambda w: EventWatch(w.sessions, w.read_sessions, w.monitoring, w.comparison, WatchPolicy.from_settings(w.settings))),
    ("keys", lambda w: Keys(w.sessions)),
    ("trainer", _trainer),
    ("batches", lambda w: BatchService(w.predictor, w.settings, w.jobs)),
    ("plots", lambda w: Plots(w.read_sessions)),
    ("readiness", lambda w: Readiness(w.engine, w.health, w.checks)),
    ("outcomes", lambda w: Outcomes(w.sessions, max_pending=w.settings.pending_outcomes_max, counters=w.pending)),
    ("recalibrator", _recalibrator),
    ("parsing", lambda w: ParsePool(w.settings.parse_workers, w.settings.parse_offload_bytes)),
    ("prediction_threads", lambda w: PredictionThreads(PREDICTION_THREADS, "costwise-predict")),
)  # fmt: skip


def build_services(w: Wiring) -> Wiring:
    """Every service of :data:`SERVICES`, built in order into ``w``."""
    for name, build in SERVICES:
        setattr(w, name, build(w))
    return w


# ------------------------------------------------------------------- the lifespan
def tune_garbage_collector() -> None:
    """Freeze what start-up allocated and make young collections rarer.

    A large predict request allocates ~10^5 small objects (parsed rows, response rows);
    with CPython's default thresholds (700, 10, 10) every few hundred of them trigger a
    collection that traverses the whole heap, which made parsing and rendering a
    10,000-row request 5-10x slower (measured: 20 -> 5 ms to parse, 30 -> 2 ms to render).
    Objects built at start-up (the app, the models module, SQLAlchemy) never die, so they
    are moved to the permanent generation (``gc.freeze``). Reference cycles are still
    collected, only less often.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def _retry_checks(checks: StartupChecks, stopping: threading.Event) -> None:
    while not stopping.wait(1.0):
        if checks.retry():
            log.warning("database answering: start-up checks passed, ready")
            return


def _stop_trainings_on_signal(stopping: threading.Event) -> Any:
    """On SIGTERM/SIGINT, set ``stopping`` at once (then let the server's handler run).

    uvicorn waits for running requests before it shuts the app down; a synchronous
    training could hold it for up to COSTWISE_MAX_TRAINING_SECONDS. With ``stopping``
    set, such a training stops at its next boosting round and answers 503 (nothing
    registered), so the process exits within seconds. Returns a function restoring the
    previous handlers (no-op outside the main thread, e.g. under a test client).
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous: dict[int, Any] = {}

    def handler(sig: int, frame: Any) -> None:
        stopping.set()
        before = previous.get(sig)
        if callable(before):
            before(sig, frame)
        elif sig == signal.SIGINT:
            raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(sig, handler)

    def restore() -> None:
        for sig, before in previous.items():
            if signal.getsignal(sig) is handler:
                signal.signal(sig, before)

    return restore


@asynccontextmanager
async def _collector(w: Wiring) -> AsyncIterator[None]:
    tune_garbage_collector()
    yield


@asynccontextmanager
async def _engine(w: Wiring) -> AsyncIterator[None]:
    yield
    w.engine.dispose()


@asynccontextmanager
async def _prediction_threads(w: Wiring) -> AsyncIterator[None]:
    # a fresh executor per lifespan: an app may be started again after a shutdown
    threads = w.services.prediction_threads = PredictionThreads(
        PREDICTION_THREADS, "costwise-predict"
    )
    yield
    threads.shutdown()


@asynccontextmanager
async def _parse_pool(w: Wiring) -> AsyncIterator[None]:
    yield
    w.parsing.close()


@asynccontextmanager
async def _log_writer(w: Wiring) -> AsyncIterator[None]:
    writer = w.prediction_log
    if writer is not None:
        writer.start()
    yield
    if writer is not None:  # write what is queued (bounded), off the event loop
        await anyio.to_thread.run_sync(writer.close)


@asynccontextmanager
async def _shadow_scorer(w: Wiring) -> AsyncIterator[None]:
    w.shadow.start()
    yield
    await anyio.to_thread.run_sync(w.shadow.close)  # before the log writer closes


@asynccontextmanager
async def _traffic_splits(w: Wiring) -> AsyncIterator[None]:
    await anyio.to_thread.run_sync(w.splits.start)  # reads the splits once: off the loop
    yield
    await anyio.to_thread.run_sync(w.splits.close)


@asynccontextmanager
async def _webhook_deliverer(w: Wiring) -> AsyncIterator[None]:
    w.deliverer.start()
    yield
    await anyio.to_thread.run_sync(w.deliverer.close)


@asynccontextmanager
async def _event_watch(w: Wiring) -> AsyncIterator[None]:
    w.event_watch.start()
    yield
    await anyio.to_thread.run_sync(w.event_watch.close)


@asynccontextmanager
async def _not_stopping(w: Wiring) -> AsyncIterator[None]:
    w.stopping.clear()  # before the queue starts: its in-process trainings check it
    yield


@asynccontextmanager
async def _job_queue(w: Wiring) -> AsyncIterator[None]:
    w.queue.start()
    yield
    await w.queue.close()  # in-process jobs still running are stopped and left queued


@asynccontextmanager
async def _stop_on_signal(w: Wiring) -> AsyncIterator[None]:
    restore = _stop_trainings_on_signal(w.stopping)
    yield
    w.stopping.set()  # before the queue closes: synchronous trainings stop
    restore()


@asynccontextmanager
async def _startup_checks(w: Wiring) -> AsyncIterator[None]:
    if not w.checks.passed:
        threading.Thread(target=_retry_checks, args=(w.checks, w.stopping), daemon=True).start()
    yield


#: Entered in this order when the application starts, left in reverse when it stops.
LIFESPAN: tuple[Callable[[Wiring], AbstractAsyncContextManager[Any]], ...] = (
    _collector,
    _engine,
    _prediction_threads,
    _parse_pool,
    _log_writer,
    _shadow_scorer,  # left before the log writer: it writes its last decisions first
    _traffic_splits,
    _webhook_deliverer,
    _event_watch,
    _not_stopping,
    _job_queue,
    _stop_on_signal,
    _startup_checks,
    lambda w: w.known_models.refreshing(),
    lambda w: w.log_maintenance.running(),
)
