"""Liveness, readiness and Prometheus metrics (outside /v1, unauthenticated)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.api.auth import may_see_model_names
from app.api.deps import Services, ServicesDep
from app.api.middleware import WithoutModelNames
from app.api.responses import FastJSONResponse
from app.api.schemas import HealthResponse
from app.db import schema_revision
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
    checks: dict[str, Any] = {}
    ok = True
    try:
        with services.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        checks["database"] = "ok"
        current, head = schema_revision(services.engine)
        checks["schema"] = {"current": current, "head": head}
        ok = current == head
    except SQLAlchemyError:
        checks["database"] = "unreachable"
        ok = False
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
        for status, n in services.jobs.counts().items():
            services.metrics.jobs.labels(status).set(n)
    except ServiceError:  # database down: serve the process's own metrics anyway
        pass
    registry = services.metrics.registry
    text = generate_latest(registry if model_names else WithoutModelNames(registry))  # type: ignore[arg-type]
    return Response(text, media_type=CONTENT_TYPE_LATEST)
