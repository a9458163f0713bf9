"""Liveness, readiness and Prometheus metrics (outside /v1, unauthenticated)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api.deps import Services, ServicesDep
from app.api.responses import FastJSONResponse
from app.api.schemas import HealthResponse
from app.errors import ServiceError

router = APIRouter(tags=["health"])


@router.get("/health/live", response_model=HealthResponse, summary="The process is up")
def live() -> HealthResponse:
    return HealthResponse(status="ok")


@router.get(
    "/health/ready",
    response_model=HealthResponse,
    responses={503: {"model": HealthResponse}},
    summary="The database answers and its schema is at the migrations' head",
)
def ready(services: ServicesDep) -> Response:
    ok, checks = readiness(services)
    body = {"status": "ok" if ok else "unavailable", "checks": checks}
    return FastJSONResponse(body, status_code=200 if ok else 503)


def readiness(services: Services) -> tuple[bool, dict[str, Any]]:
    """Whether the database answers and its schema is at head, and the checks made."""
    ok, checks = services.readiness.check()
    checks["cached_models"] = services.predictor.cached
    return ok, checks


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}}},
)
def metrics(services: ServicesDep) -> Response:
    services.metrics.cached_models.set(services.predictor.cached)
    try:
        for status, n in services.jobs.counts().items():
            services.metrics.jobs.labels(status).set(n)
    except ServiceError:  # database down: serve the process's own metrics anyway
        pass
    return Response(generate_latest(services.metrics.registry), media_type=CONTENT_TYPE_LATEST)
