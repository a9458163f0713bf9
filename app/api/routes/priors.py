"""Deployment class priors estimated from a version's prediction log.

``GET`` computes an estimate and records nothing (role reader): reading never changes
a decision. ``POST`` computes the same estimate and records it (role admin): the latest
recorded estimate of a version is what predict's ``"priors": "estimated"`` applies.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from starlette.concurrency import run_in_threadpool

from app.api.bodies.limits import SMALL_BODY_BYTES, JsonBody
from app.api.deps import ModelName, QueryWindow, ServicesDep, VersionQuery
from app.api.errors import error_responses
from app.api.responses import FastJSONResponse
from app.api.schemas import PriorEstimateRequest, PriorEstimateResponse
from app.api.time_window import utc_window

router = APIRouter(prefix="/v1", tags=["monitoring"], responses=error_responses(404, 422, 503))

_METHOD = (
    "EM of Saerens, Latinne & Decaestecker (2002) over the calibrated probabilities "
    "logged for `version`'s predictions (default: the version served now) in "
    "[since, until) (ISO 8601; without a zone: UTC; a time outside years 1-9999 in UTC "
    "is a 422 naming it), at most COSTWISE_MONITORING_MAX_ROWS of the latest; no labels "
    "needed. 404 when the version has no logged predictions in the window; 422 for a "
    "version without calibrated probabilities."
)


@router.get(
    "/models/{name}/priors",
    response_model=PriorEstimateResponse,
    summary="Estimate the class priors of recent traffic (records nothing)",
    description=_METHOD + " Records nothing and changes no decision (`id` is null, "
    '`recorded` false): `"priors": "estimated"` applies only an estimate recorded with '
    "`POST` (role admin). Role: reader.",
)
def priors(
    name: ModelName,
    services: ServicesDep,
    window: QueryWindow,
    version: VersionQuery = None,
) -> Any:
    out = services.priors.estimate(name, version=version, window=window)
    return FastJSONResponse(out)


# A version and two times: a small body, or none (every default).
PRIORS_BODY = JsonBody(PriorEstimateRequest, max_bytes=SMALL_BODY_BYTES, optional=True)


@router.post(
    "/models/{name}/priors",
    status_code=201,
    response_model=PriorEstimateResponse,
    responses=error_responses(400, 413),
    summary="Estimate the class priors of recent traffic and record the estimate",
    openapi_extra=PRIORS_BODY.openapi(),
    description=_METHOD
    + " The body (`version`, `since`, `until`, all optional; no body: all defaults) "
    "selects the rows as the query of `GET` does. The estimate is recorded (table `prior_estimates`; its `id` "
    'and `estimated_at` are returned): from now on predict\'s `"priors": "estimated"` '
    "for this version applies it (on every replica within 5 s), and the predict "
    "response's `applied_costs.priors_estimate` names it. Role: admin.",
)
async def record_priors(
    name: ModelName,
    services: ServicesDep,
    body: Annotated[PriorEstimateRequest, Depends(PRIORS_BODY)],
) -> Any:
    window = utc_window(body.since, body.until)
    out = await run_in_threadpool(
        lambda: services.priors.estimate(name, version=body.version, window=window, record=True)
    )
    return FastJSONResponse(out, status_code=201)
