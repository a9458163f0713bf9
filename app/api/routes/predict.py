"""Cost-sensitive predictions and evaluations."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, FastAPI, Request, Response
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.routing import BaseRoute, Match
from starlette.types import Receive, Scope, Send

from app.api.access.auth import check_role
from app.api.bodies.limits import Body, RouteBody, parse_body
from app.api.bodies.parse_pool import BodyInvalid
from app.api.bodies.parsing import predict_input
from app.api.bodies.scan import Limits
from app.api.deps import NAME_PATTERN, ModelName, Services, ServicesDep, in_prediction_thread
from app.api.errors import error_responses, validation_errors
from app.api.guards import presented_key
from app.api.schemas import (
    EvaluateRequest,
    EvaluateResponse,
    PredictRequest,
    PredictResponse,
    RowsRequest,
)
from app.services.prediction.explanations import RowExplanations
from app.services.prediction.intervals import RowIntervals
from app.services.prediction.predictor import Prediction, Predictor
from app.services.prediction.request import DecisionRequest
from models.decisions.rule import Decisions

CORRUPTED = (
    "ARTIFACT_CORRUPTED: the version's stored artifact (or the base artifact whose booster "
    "it shares) fails its checks; it is never used."
)
router = APIRouter(
    prefix="/v1",
    tags=["prediction"],
    responses=error_responses(400, 404, 413, 422, 503, described={409: CORRUPTED}),
)


def _labels_and_actions(
    d: Decisions, classes: list[Any], names: list[str] | None
) -> tuple[list[Any], list[str | None]]:
    """Each row's class decided and, among actions, the action taken (else None)."""
    if d.action_index is None:
        return [classes[i] for i in d.labels_index.tolist()], [None] * len(d.labels_index)
    # among actions: the class an action stands for, or null
    labels = [classes[i] if i >= 0 else None for i in d.labels_index.tolist()]
    return labels, [(names or [])[a] for a in d.action_index.tolist()]


def _shadow(p: Prediction, classes: list[Any]) -> dict[str, Any] | None:
    """``"shadow": true``: the shadow version's decisions of the rows."""
    if p.shadow is None:
        return None
    out = p.shadow.decisions
    labels, actions = _labels_and_actions(out.decisions, classes, p.provenance.actions)
    probas = [None] * len(labels) if out.proba is None else out.proba.tolist()
    preds = [
        {"decision": lab, "action": act, "probabilities": pr, "expected_cost": ec}
        for lab, act, pr, ec in zip(
            labels, actions, probas, out.decisions.expected_cost.tolist(), strict=True
        )
    ]
    return {"version": p.shadow.version, "alias": p.shadow.alias, "predictions": preds}


def _render(p: Prediction) -> dict[str, Any]:
    d = p.decisions
    classes = list(p.classes)
    n = len(d.labels_index)
    labels, actions = _labels_and_actions(d, classes, p.provenance.actions)
    thresholds = [None] * n if d.threshold is None else d.threshold.tolist()
    probas = [None] * n if p.proba is None else p.proba.tolist()
    ids: list[str | None] = list(p.ids) if p.ids is not None else [None] * n
    # orjson writes NaN (no expected cost without probabilities) as null
    preds = [
        {"id": i, "decision": lab, "action": act, "probabilities": pr, "threshold": th,
         "expected_cost": ec}
        for i, lab, act, pr, th, ec in zip(
            ids, labels, actions, probas, thresholds, d.expected_cost.tolist(), strict=True
        )
    ]  # fmt: skip
    content = {**p.provenance.fields(), "classes": classes}
    if p.shadow is not None:
        content["shadow"] = _shadow(p, classes)
    if p.explanations is not None:
        _add_explanations(preds, p.explanations)
    if p.intervals is not None:
        _add_intervals(preds, p.intervals)
    content["predictions"] = preds  # last: large answers are encoded in slices of it
    return content


def _add_explanations(preds: list[dict[str, Any]], e: RowExplanations) -> None:
    """Each row's ``explanation`` (``explain: true``), in the rows' order."""
    names = e.features
    for pred, bias, contrib, score, prob, margin in zip(
        preds,
        e.bias.tolist(),
        e.contributions.tolist(),
        e.score.tolist(),
        e.probability.tolist(),
        e.margin.tolist(),
        strict=True,
    ):
        pred["explanation"] = {
            "bias": bias,
            "contributions": dict(zip(names, contrib, strict=True)),
            "score": score,
            "probability": prob,
            "expected_cost_margin": margin,
        }


def _add_intervals(preds: list[dict[str, Any]], iv: RowIntervals) -> None:
    """Each row's ``interval`` (``interval: true``), in the rows' order."""
    for pred, low, high, stable in zip(
        preds, iv.low.tolist(), iv.high.tolist(), iv.stable.tolist(), strict=True
    ):
        pred["interval"] = {"p_low": low, "p_high": high, "stable": stable}


def _body(model: type[RowsRequest]) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": ref}}}}


# rows are bounded by COSTWISE_MAX_PREDICT_ROWS and COSTWISE_MAX_CELLS, whose largest
# bodies need COSTWISE_MAX_BODY_BYTES: no smaller byte limit (app.api.bodies.limits)
ROWS_BODY = RouteBody()
RowsBody = Annotated[Body, Depends(ROWS_BODY)]


async def _decided(
    name: str,
    body: Body,
    services: Services,
    model: type[RowsRequest],
    answer: Callable[[Predictor, str, DecisionRequest], tuple[int, Any]],
) -> Any:
    """Parse the body in one pass from bytes to a checked request (pydantic-core's JSON
    parser; a large body in a worker process, :mod:`app.api.bodies.parse_pool`, after a
    count of its rows and values, :mod:`app.api.bodies.scan`: the event loop never waits
    for it), then ``answer`` it in a prediction thread and count its rows.

    Always in the thread pool, even a 1-row request: resolving the version reads the
    database, and a stalled database must never hold the event loop (a thread hop costs
    ~0.1 ms). The response is rendered in the same hop (100,000 rows: ~0.1 s)."""
    limits = Limits.of(services.settings)
    try:
        req = await parse_body(services.parsing, predict_input, body, model, limits)
    except ValidationError as exc:
        return validation_errors(list(exc.errors()))
    except BodyInvalid as exc:
        return validation_errors(exc.errors)
    n_rows, response = await in_prediction_thread(
        services, partial(answer, services.predictor, name, req)
    )
    services.metrics.count_rows(name, n_rows)
    return response


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
async def predict(name: ModelName, body: RowsBody, services: ServicesDep) -> Any:
    return await _decided(name, body, services, PredictRequest, _predicted)


ROWS_PER_SLICE = 5_000
NUMPY = orjson.OPT_SERIALIZE_NUMPY  # as FastJSONResponse


def _predicted(predictor: Predictor, name: str, req: DecisionRequest) -> tuple[int, Response]:
    """Predict and render the response (in a prediction thread)."""
    n, content = _predict_json(predictor.predict(name, req))
    return n, Response(content, media_type="application/json")


def _predict_json(p: Prediction) -> tuple[int, bytes]:
    """The rows and the JSON body of a prediction.

    Large responses are encoded by orjson in slices of ROWS_PER_SLICE predictions: one
    call for 100,000 rows held the GIL (and so the event loop) ~30 ms at once.
    """
    content = _render(p)
    predictions = content["predictions"]
    n = len(predictions)
    if n <= ROWS_PER_SLICE:
        return n, orjson.dumps(content, option=NUMPY)
    head = orjson.dumps({**content, "predictions": []}, option=NUMPY)  # ... "predictions":[]}
    slices = (
        orjson.dumps(predictions[i : i + ROWS_PER_SLICE], option=NUMPY)[1:-1]
        for i in range(0, n, ROWS_PER_SLICE)
    )
    return n, head[:-2] + b",".join(slices) + b"]}"  # head[:-2] ends with '"predictions":['


@router.post(
    "/models/{name}/evaluate",
    response_model=EvaluateResponse,
    openapi_extra=_body(EvaluateRequest),
    summary="What these costs would have cost on labelled rows",
    description="Decides the labelled rows exactly as predict would, then reports the "
    "confusion matrix at those decisions (rows = truth), total and mean cost, the "
    "normalised cost loss Q (Eq. 26 of Nikolaou et al.) at the cost skew, and the Brier score.",
)
async def evaluate(name: ModelName, body: RowsBody, services: ServicesDep) -> Any:
    return await _decided(name, body, services, EvaluateRequest, _evaluated)


def _evaluated(predictor: Predictor, name: str, req: DecisionRequest) -> tuple[int, Any]:
    e = predictor.evaluate(name, req)
    m = e.metrics
    n_rows = int(m.confusion.sum())
    return n_rows, EvaluateResponse(
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


# ------------------------------------------------------------ the direct route
class DirectRoute(BaseRoute):
    """``POST /v1/models/{name}/predict`` without FastAPI's routing and
    dependency solving, which cost more than the rest of a one-row predict's web layer
    (bench/serving/request_path.py).

    Matched first, for a valid model name only (any other request falls through to the
    documented route, whose 405, 422 and OpenAPI entry are unchanged). It does what that
    route's dependencies do, in the same order: the role (:func:`app.api.access.auth.check_role`,
    when authentication is on), the body through :data:`ROWS_BODY` (media type, byte limit;
    :meth:`~app.api.bodies.limits.RouteBody.read_asgi`),
    then :func:`_decided`; errors propagate to the app's one set of handlers. The
    documented route stays the ``scope["route"]`` that metrics and permissions read.
    """

    def __init__(
        self,
        route: APIRoute,
        endpoint: Callable[[str, Body, Services], Any],
        auth_on: bool,
    ) -> None:
        self.route = route
        self.endpoint = endpoint
        self.auth_on = auth_on
        prefix, _, suffix = route.path.partition("{name}")
        self.regex = re.compile(re.escape(prefix) + "(?P<name>[^/]+)" + re.escape(suffix))
        self.name_pattern = re.compile(NAME_PATTERN)
        self.path = route.path
        self.path_format = route.path_format

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or scope["method"] != "POST":
            return Match.NONE, {}
        found = self.regex.fullmatch(scope["path"]) if not scope.get("root_path") else None
        if found is None or self.name_pattern.match(found["name"]) is None:
            return Match.NONE, {}
        return Match.FULL, {"route": self.route, "path_params": {"name": found["name"]}}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.auth_on:
            await check_role(Request(scope, receive), presented_key(scope))
        services: Services = scope["app"].state.services
        body = await ROWS_BODY.read_asgi(scope, receive, services.settings.max_body_bytes)
        response = await self.endpoint(scope["path_params"]["name"], body, services)
        await response(scope, receive, send)


def install_direct_routes(app: FastAPI, auth_on: bool) -> None:
    """Put the direct route of predict first in ``app``'s routes (evaluate, whose answer
    FastAPI renders through its response model, keeps the documented route alone)."""
    for route in router.routes:
        if isinstance(route, APIRoute) and route.endpoint is predict:
            app.router.routes.insert(0, DirectRoute(route, _predict_direct, auth_on))


async def _predict_direct(name: str, body: Body, services: Services) -> Any:
    return await _decided(name, body, services, PredictRequest, _predicted)
