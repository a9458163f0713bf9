"""Cost-sensitive predictions and evaluations."""

from __future__ import annotations

from functools import partial
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from app.api.bodies import json_body
from app.api.deps import ModelName, ServicesDep
from app.api.errors import validation_errors
from app.api.responses import FastJSONResponse
from app.api.schemas import (
    ErrorResponse,
    EvaluateRequest,
    EvaluateResponse,
    PredictRequest,
    PredictResponse,
)
from app.services.predictor import CostRequest, Prediction, Rows

R = TypeVar("R", bound=PredictRequest)
INLINE_ROWS = 256

router = APIRouter(
    prefix="/v1",
    tags=["prediction"],
    responses={
        400: {"model": ErrorResponse},
        404: {"model": ErrorResponse},
        413: {"model": ErrorResponse},
        422: {"model": ErrorResponse},
        503: {"model": ErrorResponse},
    },
)


def _costs(req: PredictRequest) -> CostRequest:
    return CostRequest(
        costs=None if req.costs is None else req.costs.model_dump(),
        cost_matrix=req.cost_matrix,
        row_costs=req.row_costs,  # TypedDicts: already plain dicts
        priors=req.priors,
    )


def _render(p: Prediction) -> dict[str, Any]:
    d = p.decisions
    classes = list(p.classes)
    labels = [classes[i] for i in d.labels_index.tolist()]
    n = len(labels)
    thresholds = [None] * n if d.threshold is None else d.threshold.tolist()
    probas = [None] * n if p.proba is None else p.proba.tolist()
    # orjson writes NaN (no expected cost without probabilities) as null
    preds = [
        {"decision": lab, "probabilities": pr, "threshold": th, "expected_cost": ec}
        for lab, pr, th, ec in zip(
            labels, probas, thresholds, d.expected_cost.tolist(), strict=True
        )
    ]
    return {**p.provenance.fields(), "classes": classes, "predictions": preds}


def _body(model: type[PredictRequest]) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": ref}}}}


async def _parse(request: Request, model: type[R]) -> R | FastJSONResponse:
    """One pass from bytes to a validated model (see :mod:`app.api.bodies`)."""
    try:
        return await json_body(request, model)
    except ValidationError as exc:
        return validation_errors(list(exc.errors()))


@router.post(
    "/models/{name}/predict",
    response_model=PredictResponse,
    openapi_extra=_body(PredictRequest),
    summary="Decide by least expected cost under this request's costs",
    description="Scores `instances` (rows in feature order) or `records` (objects keyed by "
    "feature name) with the `production` alias (else the latest version, or the `version` / "
    "`alias` given), then decides each row by least expected cost under `costs`, "
    "`cost_matrix` or `row_costs` (default: 0-1 costs). With `priors`, probabilities are "
    "shifted to the deployment class priors before deciding. A row is positive iff its "
    "probability of `classes[1]` is >= its `threshold`.",
)
async def predict(name: ModelName, request: Request, services: ServicesDep) -> Any:
    req = await _parse(request, PredictRequest)
    if isinstance(req, FastJSONResponse):
        return req
    rows = Rows(req.instances, req.records)
    call = partial(
        services.predictor.predict, name, rows, _costs(req), version=req.version, alias=req.alias
    )
    n = len(req.instances if req.instances is not None else req.records or [])
    # Small requests run inline (a thread hop costs more than the work); big ones in
    # the thread pool so that they do not hold the event loop.
    p = call() if n <= INLINE_ROWS else await run_in_threadpool(call)
    services.metrics.rows.labels(name).inc(len(p.decisions.labels_index))
    return FastJSONResponse(_render(p))


@router.post(
    "/models/{name}/evaluate",
    response_model=EvaluateResponse,
    openapi_extra=_body(EvaluateRequest),
    summary="What these costs would have cost on labelled rows",
    description="Decides the labelled rows exactly as predict would, then reports the "
    "confusion matrix at those decisions (rows = truth), total and mean cost, the "
    "normalised cost loss Q (Eq. 26 of Nikolaou et al.) at the cost skew, and the Brier score.",
)
async def evaluate(name: ModelName, request: Request, services: ServicesDep) -> Any:
    req = await _parse(request, EvaluateRequest)
    if isinstance(req, FastJSONResponse):
        return req
    e = await run_in_threadpool(
        services.predictor.evaluate,
        name,
        Rows(req.instances, req.records),
        req.labels,
        _costs(req),
        version=req.version,
        alias=req.alias,
    )
    m = e.metrics
    n_rows = int(m.confusion.sum())
    services.metrics.rows.labels(name).inc(n_rows)
    return EvaluateResponse(
        **e.provenance.fields(),
        classes=list(e.classes),
        n_rows=n_rows,
        confusion_matrix=m.confusion.astype(int).tolist(),
        total_cost=m.total_cost,
        mean_cost=m.mean_cost,
        q=m.q,
        skew=m.skew,
        brier=m.brier,
        accuracy=m.accuracy,
    )
