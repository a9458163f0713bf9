"""Late outcomes of logged predictions, and monitoring per version and time bucket."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from starlette.concurrency import run_in_threadpool

from app.api.bodies.limits import KIB, SMALL_BODY_BYTES, Items, JsonBody
from app.api.deps import ModelName, QueryWindow, ServicesDep, VersionQuery
from app.api.errors import error_responses
from app.api.responses import FastJSONResponse
from app.api.schemas import (
    MonitoringResponse,
    OutcomesRequest,
    OutcomesResponse,
)
from app.services.feedback.outcomes import MAX_OUTCOMES, Outcome

router = APIRouter(
    prefix="/v1", tags=["monitoring"], responses=error_responses(400, 404, 413, 422, 503)
)


# An outcome is under 1 KiB of JSON: an id of 128 characters even written as \uXXXX
# escapes (770 bytes), a label, a cost. 10,000 of them never need 58 MiB: a larger body is
# refused before it is read, and more than 10,000 items before they are decoded.
OUTCOMES_BODY = JsonBody(
    OutcomesRequest,
    max_bytes=MAX_OUTCOMES * KIB + SMALL_BODY_BYTES,
    items=Items("outcomes", depth=3, limit=MAX_OUTCOMES),
)


@router.post(
    "/models/{name}/outcomes",
    response_model=OutcomesResponse,
    summary="Report the true labels (and realised costs) of logged predictions",
    description="Idempotent, per item: `recorded`, `unchanged` (the same again), `conflict` "
    "(a different label or cost for a recorded or pending outcome: the first report "
    "stands), `pending` (no prediction with this id is logged yet: kept, and recorded when "
    "its log row lands; expires after COSTWISE_PENDING_OUTCOME_SECONDS), `invalid` (label "
    "not a class of the version that predicted, or a negative cost) or `refused` (too many "
    "pending outcomes for the model: report it again later); an id the service answered "
    "is never `unknown`. Never fatal for the batch. The same id twice in one batch is a "
    "422 and records nothing. More than 10,000 outcomes, or a body over 10 MB, is a 413. "
    "Role: predictor.",
    openapi_extra=OUTCOMES_BODY.openapi(),
)
async def outcomes(
    name: ModelName,
    body: Annotated[OutcomesRequest, Depends(OUTCOMES_BODY)],
    services: ServicesDep,
) -> Any:
    items = [Outcome(o.id, o.label, o.cost) for o in body.outcomes]
    report = await run_in_threadpool(services.outcomes.record, name, items)
    return FastJSONResponse(
        {
            "model": report.model,
            "counts": report.counts(),
            "results": [
                {
                    "id": r.prediction_id,
                    "status": r.status,
                    "version": r.version,
                    "detail": r.detail,
                }
                for r in report.results
            ],
        }
    )


@router.get(
    "/models/{name}/monitoring",
    response_model=MonitoringResponse,
    summary="Realised cost and calibration per version and hour or day, from the log",
    description="Over the logged predictions in [since, until) (ISO 8601; without a zone: "
    "UTC), per version (or only `version`) and per `bucket`: predictions, labelled "
    "(coverage), predicted and observed class shares, mean probabilities, realised "
    "against expected cost and their ratio, Brier score, log loss, ECE with reliability "
    "bins, Spiegelhalter's z and Hosmer-Lemeshow tests. A version that was never logged "
    "is a 404. At most COSTWISE_MONITORING_MAX_CONCURRENT reports are computed at once per "
    "process: more get 503 UNAVAILABLE with Retry-After.",
)
def monitoring(
    name: ModelName,
    services: ServicesDep,
    window: QueryWindow,
    version: VersionQuery = None,
    bucket: Literal["hour", "day"] = "day",
) -> Any:
    report = services.monitoring.report(name, version=version, window=window, bucket=bucket)
    return FastJSONResponse(report)
