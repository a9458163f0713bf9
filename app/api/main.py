"""The application factory: ``create_app(settings)`` builds everything once."""

from __future__ import annotations

import gc
import logging
import signal
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from fastapi import FastAPI

from app import __version__
from app.api.access.auth import AUTH_RESPONSES, AUTHORIZE, AUTHORIZE_OPEN, install_auth
from app.api.bodies.parse_pool import ParsePool
from app.api.deps import DATABASE_GATE, Services
from app.api.errors import install_error_handlers
from app.api.guards import AuthGateMiddleware, LargeRequestMiddleware
from app.api.log_metrics import PredictionLogCollector
from app.api.routes import (
    algorithms,
    batch,
    console,
    health,
    jobs,
    keys,
    monitoring,
    plots,
    predict,
    priors,
    recalibration,
    registry,
    training,
)
from app.api.routes.keys import KeyCreate
from app.api.schemas import (
    AliasRequest,
    BatchRequestIn,
    DatasetTrainingRequest,
    ErrorResponse,
    EvaluateRequest,
    ModelUpdate,
    OutcomesRequest,
    PredictRequest,
    PriorEstimateRequest,
    RecalibrationRequest,
    TrainingRequest,
)
from app.api.server.middleware import BodyLimitMiddleware, Metrics, MetricsMiddleware
from app.api.v2 import routes as v2
from app.api.v2.schemas import InferenceRequest
from app.db import DatabaseHealth, Timeouts, make_engine, make_session_factory
from app.errors import Unavailable
from app.services.access.keys import Keys
from app.services.batch.service import BatchService
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
from app.settings import Settings, get_settings

log = logging.getLogger(__name__)

DESCRIPTION = """
Cost-sensitive decisions from calibrated boosting models.

Train AdaBoost, calibrate its scores on held-out data and register the model; then send
feature rows **with the costs of this request** (or of each row) and get the decision
that minimises expected cost, its threshold and its expected cost, without retraining.
Cost matrix convention: `C[i][j]` is the cost of predicting class `j` when the truth is
class `i` (rows = truth). Every error body is `{"detail", "code", "field"}`, except on
the Open Inference Protocol (KServe V2) routes under `/v2`, whose errors are `{"error"}`.

A web console (models, versions, plots, a what-if panel for costs, aliases, monitoring) is served at
[/console](/console).
"""


def _document_manual_bodies(app: FastAPI) -> None:
    """Add the schemas of bodies that routes parse themselves to the OpenAPI components
    (every body: :mod:`app.api.bodies.limits`)."""
    base = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        spec = base()
        ref = "#/components/schemas/{model}"
        components = spec.setdefault("components", {}).setdefault("schemas", {})
        for model in (
            TrainingRequest,
            DatasetTrainingRequest,
            PredictRequest,
            EvaluateRequest,
            InferenceRequest,
            RecalibrationRequest,
            OutcomesRequest,
            BatchRequestIn,
            KeyCreate,
            ModelUpdate,
            AliasRequest,
            PriorEstimateRequest,
        ):
            schema = model.model_json_schema(ref_template=ref)
            components.update(schema.pop("$defs", {}))
            components[model.__name__] = schema
        app.openapi_schema = spec
        return spec

    app.openapi = openapi  # type: ignore[method-assign]


GATE_RESPONSES: dict[int | str, dict[str, Any]] = {
    503: {"model": ErrorResponse, "description": "The database is down or stalled."}
}
GC_THRESHOLDS = (50_000, 20, 20)
# threads of predict, evaluate and /v2 infer: as many may wait on a stalled database at
# once (each for at most the statement timeout + 0.5 s); the rest queue
PREDICTION_THREADS = 32


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


def timeouts_of(settings: Settings) -> Timeouts:
    """The database bounds of a serving engine, from the settings."""
    return Timeouts(
        statement=settings.db_timeout,
        lock=settings.db_lock_timeout,
        connect=settings.db_connect_timeout,
        sqlite_busy=settings.sqlite_busy_timeout,
    )


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


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the FastAPI application for ``settings`` (default: from the environment).

    Refuses to start (raises :class:`app.errors.SchemaOutOfDate`) when the database
    schema is not at the migrations' head, unless ``auto_migrate`` is on, and (raises
    :class:`app.errors.Misconfigured`) when ``COSTWISE_ENV=prod`` without authentication
    configured (see :func:`app.services.access.keys.check_auth_configuration`). When the
    database cannot be reached at all, the app starts anyway and runs these checks
    again in the background until it answers (see :class:`StartupChecks`).
    """
    settings = settings or get_settings()
    db_health = DatabaseHealth()
    engine = make_engine(settings.database_url, timeouts=timeouts_of(settings), health=db_health)
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
    metrics = Metrics()
    known_models = KnownModels(read_sessions, settings.known_models_refresh_seconds)
    queue = make_queue(settings, sessions)
    pending = PendingCounters()  # what became of pending outcomes (writer, outcomes, upkeep)
    writer = (
        PredictionLogWriter(
            engine,
            max_rows=settings.prediction_log_queue_rows,
            batch_rows=settings.prediction_log_batch_rows,
            flush_seconds=settings.prediction_log_flush_seconds,
            overflow=settings.prediction_log_overflow,
            wait_seconds=settings.prediction_log_wait_seconds,
            pending=pending,
        )
        if settings.prediction_log
        else None
    )
    monitor = Monitoring(
        read_sessions,
        max_rows=settings.monitoring_max_rows,
        gauge_rows=settings.monitoring_gauge_rows,
        max_concurrent=settings.monitoring_max_concurrent,
    )
    maintenance = LogMaintenance(
        sessions,
        monitor,
        retention_days=settings.prediction_log_days,
        refresh_seconds=settings.monitoring_refresh_seconds,
        window_hours=settings.monitoring_window_hours,
        pending_seconds=settings.pending_outcome_seconds,
        counters=pending,
    )
    metrics.registry.register(
        PredictionLogCollector(
            lambda: writer.stats if writer is not None else LogStats(),
            lambda: maintenance.snapshot,
            pending=pending,
            pending_by_model=lambda: maintenance.pending,
        )
    )
    job_service = JobService(sessions, settings, queue)
    stopping = threading.Event()  # set on SIGTERM: synchronous trainings stop
    estimates = PriorEstimates(sessions, read_sessions, max_rows=settings.monitoring_max_rows)
    predictor = Predictor(
        read_sessions,
        cache_size=settings.model_cache_size,
        max_rows=settings.max_predict_rows,
        max_features=settings.max_features,
        stale_seconds=settings.registry_stale_seconds,
        health=db_health,
        log=writer,
        log_features=settings.log_features,
        estimates=estimates,
    )
    services = Services(
        settings=settings,
        engine=engine,
        sessions=sessions,
        registry=ModelRegistry(sessions, read_sessions),
        keys=Keys(sessions),
        predictor=predictor,
        metrics=metrics,
        trainer=Trainer(
            sessions, settings, jobs=job_service, stopping=stopping, registered=known_models.add
        ),
        jobs=job_service,
        batches=BatchService(predictor, settings, job_service),
        plots=Plots(read_sessions),
        health=db_health,
        readiness=Readiness(engine, db_health, checks),
        stopping=stopping,
        outcomes=Outcomes(sessions, max_pending=settings.pending_outcomes_max, counters=pending),
        monitoring=monitor,
        recalibrator=Recalibrator(
            sessions,
            max_rows=settings.max_train_rows,
            max_features=settings.max_features,
            max_cells=settings.max_cells,
        ),
        priors=estimates,
        log_maintenance=maintenance,
        prediction_log=writer,
        parsing=ParsePool(settings.parse_workers, settings.parse_offload_bytes),
        prediction_threads=ThreadPoolExecutor(PREDICTION_THREADS, "costwise-predict"),
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        tune_garbage_collector()
        services.stopping.clear()
        # a fresh executor per lifespan: an app may be started again after a shutdown
        services.prediction_threads = ThreadPoolExecutor(PREDICTION_THREADS, "costwise-predict")
        restore = _stop_trainings_on_signal(services.stopping)
        if not checks.passed:
            threading.Thread(
                target=_retry_checks, args=(checks, services.stopping), daemon=True
            ).start()
        queue.start()
        if writer is not None:
            writer.start()
        async with known_models.refreshing(), maintenance.running():
            yield
        services.stopping.set()
        restore()
        await queue.close()  # in-process jobs still running are stopped and left queued
        if writer is not None:  # write what is queued (bounded), off the event loop
            await anyio.to_thread.run_sync(writer.close)
        services.parsing.close()
        services.prediction_threads.shutdown(wait=False, cancel_futures=True)
        engine.dispose()

    app = FastAPI(title="costwise", version=__version__, description=DESCRIPTION, lifespan=lifespan)
    app.state.services = services
    app.state.known_models = known_models
    install_error_handlers(app)
    install_auth(app, settings, sessions, db_health)
    # With authentication off, no dependency is attached at all: solving the security
    # dependencies costs ~0.3 ms per request even when they would let everyone in.
    auth_on = settings.auth == "on"
    for open_router in (health.router, v2.health_router, console.router):
        app.include_router(open_router, dependencies=[AUTHORIZE_OPEN] if auth_on else [])
    app.include_router(
        v2.router,
        dependencies=[AUTHORIZE] if auth_on else [],
        responses=v2.AUTH_RESPONSES if auth_on else None,
    )
    for router in (  # predict first: routes are matched in order
        predict.router,
        registry.router,
        plots.router,
        training.router,
        batch.router,
        recalibration.router,
        jobs.router,
        monitoring.router,
        priors.router,
        algorithms.router,
        keys.router,
    ):
        # routes that need the database fail fast while it is down (predictions may be
        # answered from memory: not gated); after authentication (401 before 503)
        gated = router not in (predict.router, algorithms.router)
        app.include_router(
            router,
            dependencies=([AUTHORIZE] if auth_on else []) + ([DATABASE_GATE] if gated else []),
            responses={**(AUTH_RESPONSES if auth_on else {}), **(GATE_RESPONSES if gated else {})},
        )
    # HEAD on the health probes: the same handlers (the server sends no body)
    for path, endpoint in (
        ("/health/live", health.live),
        ("/health/ready", health.ready),
        ("/v2/health/live", v2.live),
        ("/v2/health/ready", v2.ready),
    ):
        app.add_api_route(path, endpoint, methods=["HEAD"], include_in_schema=False)
    _document_manual_bodies(app)
    # the last added runs first: metrics, then authentication (headers only), then the
    # body-size limit, then the large-request slots, then the routes
    app.add_middleware(
        LargeRequestMiddleware,
        large_bytes=settings.large_request_bytes,
        max_large=settings.max_large_requests,
    )
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(
        AuthGateMiddleware, auth=app.state.auth, metrics_public=settings.metrics_public
    )
    app.add_middleware(MetricsMiddleware, metrics=metrics, model_label=known_models.label)
    log.info("costwise ready on %s", engine.url.render_as_string(hide_password=True))
    return app
