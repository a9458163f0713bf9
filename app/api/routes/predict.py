"""Cost-sensitive predictions and evaluations."""

from __future__ import annotations

from functools import partial
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from app.api.bodies import media_type
from app.api.deps import ModelName, Services, ServicesDep
from app.api.errors import validation_errors
from app.api.responses import FastJSONResponse
from app.api.schemas import (
    ErrorResponse,
    EvaluateRequest,
    EvaluateResponse,
    PredictRequest,
    PredictResponse,
    RowsRequest,
)
from app.errors import PayloadTooLarge
from app.services.inputs import check_limits
from app.services.predictor import CostRequest, Prediction, Rows
from app.settings import Settings

R = TypeVar("R", bound=RowsRequest)
INLINE_PARSE_BYTES = 64 * 1024  # larger bodies are parsed off the event loop

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


def _costs(req: RowsRequest) -> CostRequest:
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
    ids: list[str | None] = list(p.ids) if p.ids is not None else [None] * n
    # orjson writes NaN (no expected cost without probabilities) as null
    preds = [
        {"id": i, "decision": lab, "probabilities": pr, "threshold": th, "expected_cost": ec}
        for i, lab, pr, th, ec in zip(
            ids, labels, probas, thresholds, d.expected_cost.tolist(), strict=True
        )
    ]
    return {**p.provenance.fields(), "classes": classes, "predictions": preds}


def _body(model: type[RowsRequest]) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": ref}}}}


def _refuse_clearly_too_many_rows(body: bytes, settings: Settings) -> None:
    """413 before parsing when the body's row separators alone exceed the row limit.

    Parsing holds the GIL (pydantic-core builds Python objects), so even in a worker
    thread a 60 MiB body stalls the event loop for seconds. ``bytes.count`` is a C scan
    (~20 ms for 60 MiB) that takes no memory: ``],[`` / ``], [`` separate the rows of
    ``instances`` (and of a cost matrix, at most COSTWISE_MAX_CLASSES of them), ``},{``
    / ``}, {`` those of ``records`` and ``row_costs``. A count over the limit plus that
    slack proves too many rows; other layouts (e.g. pretty-printed) are parsed and
    checked as usual.
    """
    arrays = body.count(b"],[") + body.count(b"], [")
    objects = body.count(b"},{") + body.count(b"}, {")
    rows = max(arrays - settings.max_classes, objects // 2 - 1)
    if rows + 1 > settings.max_predict_rows:
        raise PayloadTooLarge(
            f"body: at least {rows + 1} rows is over the limit of {settings.max_predict_rows} "
            "rows per request (setting COSTWISE_MAX_PREDICT_ROWS); refused before parsing",
            field="instances" if arrays > objects else "records",
            limit=settings.max_predict_rows,
        )


async def _parse(request: Request, model: type[R]) -> R | FastJSONResponse:
    """One pass from bytes to a validated model (pydantic-core's JSON parser); the media
    type checked as every route checks it (:mod:`app.api.bodies`)."""
    media_type(request)
    body = await request.body()
    services: Services = request.app.state.services
    if len(body) > INLINE_PARSE_BYTES:
        _refuse_clearly_too_many_rows(body, services.settings)
    try:
        if len(body) <= INLINE_PARSE_BYTES:
            req = model.model_validate_json(body)
        else:  # a large body is parsed in a worker thread: the event loop stays free
            req = await run_in_threadpool(model.model_validate_json, body)
    except ValidationError as exc:
        return validation_errors(list(exc.errors()))
    rows: list[Any] = req.instances if req.instances is not None else req.records or []
    if rows:
        check_limits(
            len(rows),
            len(rows[0]),
            max_rows=services.settings.max_predict_rows,
            max_features=services.settings.max_features,
            max_cells=services.settings.max_cells,
            field="instances" if req.instances is not None else "records",
        )
    return req


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
        services.predictor.predict,
        name,
        rows,
        _costs(req),
        version=req.version,
        alias=req.alias,
        ids=req.ids,
    )
    # Always in the thread pool, even a 1-row request: resolving the version reads the
    # database, and a stalled database must never hold the event loop (a thread hop
    # costs ~0.1 ms).
    p = await run_in_threadpool(call)
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
