"""Deployment class priors estimated from a version's prediction log."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from app.api.deps import ModelName, ServicesDep
from app.api.responses import FastJSONResponse
from app.api.schemas import MAX_INT, ErrorResponse, PriorEstimateResponse

router = APIRouter(
    prefix="/v1",
    tags=["monitoring"],
    responses={
        404: {"model": ErrorResponse},
        422: {"model": ErrorResponse},
        503: {"model": ErrorResponse},
    },
)


def _utc(t: datetime | None) -> datetime | None:
    if t is None:
        return None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t


@router.get(
    "/models/{name}/priors",
    response_model=PriorEstimateResponse,
    summary="Estimate the class priors of recent traffic from the logged probabilities",
    description="EM of Saerens, Latinne & Decaestecker (2002) over the calibrated "
    "probabilities logged for `version`'s predictions (default: the version served now) "
    "in [since, until) (ISO 8601; without a zone: UTC), at most "
    "COSTWISE_MONITORING_MAX_ROWS of the latest; no labels needed. Each call records its "
    'estimate: the latest one of a version is what predict\'s `"priors": "estimated"` '
    "applies. 404 when the version has no logged predictions in the window; 422 for a "
    "version without calibrated probabilities.",
)
def priors(
    name: ModelName,
    services: ServicesDep,
    version: Annotated[int | None, Query(ge=1, le=MAX_INT)] = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Any:
    out = services.priors.estimate(name, version=version, since=_utc(since), until=_utc(until))
    return FastJSONResponse(out)
