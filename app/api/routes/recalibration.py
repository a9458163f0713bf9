"""Recalibrate a version without retraining: a new calibration map over its booster."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from app.api.bodies.limits import Body, RouteBody, parse_body
from app.api.bodies.parse_pool import BodyInvalid
from app.api.bodies.scan import Limits, refuse_oversized, rows_field
from app.api.deps import ModelName, ServicesDep
from app.api.errors import error_responses, validation_errors
from app.api.schemas import MAX_INT, RecalibrationRequest, VersionOut
from app.api.time_window import LogWindow, utc_window
from app.errors import InvalidArgument
from app.services.common.inputs import features_matrix
from app.services.feedback.recalibration import LabelledInput
from app.settings import Settings

router = APIRouter(prefix="/v1", tags=["training"])

Version = Annotated[int, Path(ge=1, le=MAX_INT, description="The version to recalibrate.")]


def _source(req: RecalibrationRequest) -> tuple[LabelledInput | None, LogWindow | None]:
    """The labelled rows, or the window of logged outcomes: exactly one."""
    given = [k for k in ("instances", "records") if getattr(req, k) is not None]
    if req.from_outcomes is not None:
        if given or req.labels is not None:
            raise InvalidArgument(
                "from_outcomes: give either from_outcomes or labelled rows (instances or "
                "records, and labels), not both",
                field="from_outcomes",
            )
        w = req.from_outcomes
        return None, utc_window(w.since, w.until, prefix="from_outcomes.")
    if not given:
        raise InvalidArgument(
            "instances: give labelled rows (instances or records, and labels) or from_outcomes",
            field="instances",
        )
    if len(given) > 1:
        raise InvalidArgument(
            "records: give either instances or records, not both", field="records"
        )
    if req.labels is None:
        raise InvalidArgument(
            f"labels: one true label per row of {given[0]} is required", field="labels"
        )
    return LabelledInput(req.labels, instances=req.instances, records=req.records), None


# labelled rows are bounded by COSTWISE_MAX_TRAIN_ROWS and COSTWISE_MAX_CELLS, whose
# largest bodies need COSTWISE_MAX_BODY_BYTES: no smaller byte limit (app.api.bodies.limits)
RECALIBRATION_BODY = RouteBody()


def recalibration_input(body: bytes, settings: Settings, large: bool) -> RecalibrationRequest:
    """The body as a request; when ``large`` (in the parse worker), first refused if it
    provably holds too many rows or values, and its ``instances`` sent back as one
    float64 matrix (a buffer, not millions of Python floats to rebuild on the server)."""
    if large:
        limits = Limits.training(settings)
        refuse_oversized(body, limits, field=rows_field(body), values_per_row=1)  # its label
    req = RecalibrationRequest.model_validate_json(body)
    if large and req.instances:
        matrix = features_matrix(req.instances, field="instances")
        req = req.model_copy(update={"instances": matrix})
    return req


@router.post(
    "/models/{name}/versions/{version}/recalibrate",
    status_code=201,
    response_model=VersionOut,
    summary="Refit a version's calibration map(s) on labelled rows (no retraining)",
    description="Send labelled rows (`instances` or `records`, and `labels`) or "
    "`from_outcomes` (`since`, `until`: the version's logged predictions whose outcomes "
    "were reported, with their logged raw scores), and `method` (`platt` or `isotonic`; "
    "for more than two classes one map per class, normalised). "
    "Registers the next version: it shares the parent's booster (stored once), has the new "
    "calibration map, records `parent_version` and the rows it used (`data`), and reports "
    "Brier score, log loss and ECE before and after on a held-out part of the rows "
    "(`metrics.recalibration`). 422 for a model without a calibration map over a raw "
    "score (angle-based, JOUS-Boost; the message says why), rows with the wrong "
    "features, labels that are not the model's classes, too few labelled rows or one "
    "class only, or a window without labelled predictions; nothing is registered then. "
    "Role: admin.",
    responses=error_responses(
        400, 404, 413, 415, 422, 503, described={409: "The parent's artifact is corrupted."}
    ),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {"$ref": "#/components/schemas/RecalibrationRequest"}
                }
            },
        }
    },
)
async def recalibrate(
    name: ModelName,
    version: Version,
    request: Request,
    body: Annotated[Body, Depends(RECALIBRATION_BODY)],
    services: ServicesDep,
) -> Any:
    try:  # a large body in a worker process (app.api.bodies.parse_pool)
        req = await parse_body(services.parsing, recalibration_input, body, services.settings)
    except ValidationError as exc:
        return validation_errors(list(exc.errors()))
    except BodyInvalid as exc:
        return validation_errors(exc.errors)
    rows, window = _source(req)
    view = await run_in_threadpool(
        partial(
            services.recalibrator.recalibrate,
            name,
            version,
            method=req.method,
            rows=rows,
            outcomes=window,
            holdout_fraction=req.holdout_fraction,
            random_state=req.random_state,
        )
    )
    request.app.state.known_models.add(name)
    return VersionOut(**vars(view))
