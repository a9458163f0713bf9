"""Cost-sensitive predictions and evaluations."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from app.api.deps import ModelName, ServicesDep
from app.api.responses import FastJSONResponse
from app.api.schemas import (
    ErrorResponse,
    EvaluateRequest,
    EvaluateResponse,
    PredictRequest,
    PredictResponse,
)
from app.services.predictor import CostRequest, Prediction, Rows

router = APIRouter(
    prefix="/v1",
    tags=["prediction"],
    responses={
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
        row_costs=None if req.row_costs is None else [c.model_dump() for c in req.row_costs],
        priors=req.priors,
    )


def _render(p: Prediction) -> dict[str, Any]:
    d = p.decisions
    classes = list(p.classes)
    labels = [classes[i] for i in d.labels_index.tolist()]
    thresholds = [None] * len(labels) if d.threshold is None else d.threshold.tolist()
    preds = [
        {"decision": lab, "probabilities": pr, "threshold": th, "expected_cost": ec}
        for lab, pr, th, ec in zip(
            labels, p.proba.tolist(), thresholds, d.expected_cost.tolist(), strict=True
        )
    ]
    r = p.resolved
    return {
        "model": r.model,
        "version": r.version,
        "alias": r.alias,
        "classes": classes,
        "cost_setting": p.cost_source,
        "predictions": preds,
    }


@router.post(
    "/models/{name}/predict",
    response_model=PredictResponse,
    summary="Decide by least expected cost under this request's costs",
    description="Scores `instances` (rows in feature order) or `records` (objects keyed by "
    "feature name) with the `production` alias (else the latest version, or the `version` / "
    "`alias` given), then decides each row by least expected cost under `costs`, "
    "`cost_matrix` or `row_costs` (default: 0-1 costs). With `priors`, probabilities are "
    "shifted to the deployment class priors before deciding. A row is positive iff its "
    "probability of `classes[1]` is >= its `threshold`.",
)
def predict(name: ModelName, req: PredictRequest, services: ServicesDep) -> Any:
    p = services.predictor.predict(
        name, Rows(req.instances, req.records), _costs(req), version=req.version, alias=req.alias
    )
    services.metrics.rows.labels(name).inc(len(p.proba))
    return FastJSONResponse(_render(p))


@router.post(
    "/models/{name}/evaluate",
    response_model=EvaluateResponse,
    summary="What these costs would have cost on labelled rows",
    description="Decides the labelled rows exactly as predict would, then reports the "
    "confusion matrix at those decisions (rows = truth), total and mean cost, the "
    "normalised cost loss Q (Eq. 26 of Nikolaou et al.) at the cost skew, and the Brier score.",
)
async def evaluate(name: ModelName, req: EvaluateRequest, services: ServicesDep) -> Any:
    e = await run_in_threadpool(
        services.predictor.evaluate,
        name,
        Rows(req.instances, req.records),
        req.labels,
        _costs(req),
        version=req.version,
        alias=req.alias,
    )
    services.metrics.rows.labels(name).inc(int(e.confusion.sum()))
    r = e.resolved
    return EvaluateResponse(
        model=r.model,
        version=r.version,
        alias=r.alias,
        classes=list(e.classes),
        n_rows=int(e.confusion.sum()),
        confusion_matrix=e.confusion.astype(int).tolist(),
        total_cost=e.total_cost,
        mean_cost=e.mean_cost,
        q=e.q,
        skew=e.skew,
        brier=e.brier,
        accuracy=e.accuracy,
    )
