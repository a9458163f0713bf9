"""Liveness, readiness and Prometheus metrics (outside /v1, unauthenticated)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.concurrency import run_in_threadpool

from app.api.access.auth import may_see_model_names
from app.api.deps import Services, ServicesDep
from app.api.responses import FastJSONResponse
from app.api.schemas import HealthResponse
from app.api.server.middleware import WithoutModelNames
from app.errors import ServiceError

router = APIRouter(tags=["health"])


@router.get("/health/live", response_model=HealthResponse, summary="The process is up")
async def live() -> HealthResponse:
    """Answered on the event loop, touching nothing: milliseconds even while the
    database or Redis is stalled."""
    return HealthResponse(status="ok")


@router.get(
    "/health/ready",
    response_model=HealthResponse,
    responses={503: {"model": HealthResponse}},
    summary="The database answers (schema at head, start-up checks passed), and Redis "
    "when it is the job queue",
)
async def ready(services: ServicesDep) -> Response:
    ok, checks = await readiness(services)
    body = {"status": "ok" if ok else "unavailable", "checks": checks}
    return FastJSONResponse(body, status_code=200 if ok else 503)


async def readiness(services: Services) -> tuple[bool, dict[str, Any]]:
    """Whether the database (and Redis, when it is the queue) answers, and the checks made.

    ``checks["database"]`` is ``ok`` or ``unreachable`` (``checks["database_down_since"]``
    while calls are failing); with COSTWISE_QUEUE=redis ``checks["redis"]`` likewise.
    Each check is bounded by its timeout (COSTWISE_DB_TIMEOUT, COSTWISE_REDIS_TIMEOUT) and
    runs off the event loop.
    """
    ok, checks = await run_in_threadpool(services.readiness.check)
    if services.settings.queue == "redis":
        queue_ok = await services.jobs.queue.ready()
        checks["redis"] = "ok" if queue_ok else "unreachable"
        ok = ok and queue_ok
    checks["cached_models"] = services.predictor.cached
    return ok, checks


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}}},
)
def metrics(
    services: ServicesDep, model_names: Annotated[bool, Depends(may_see_model_names)]
) -> Response:
    services.metrics.cached_models.set(services.predictor.cached)
    try:
        services.health.check()  # database down: do not wait for it
        for status, n in services.jobs.counts().items():
            services.metrics.jobs.labels(status).set(n)
    except ServiceError:  # database down: serve the process's own metrics anyway
        pass
    registry = services.metrics.registry
    text = generate_latest(registry if model_names else WithoutModelNames(registry))  # type: ignore[arg-type]
    return Response(text, media_type=CONTENT_TYPE_LATEST)
