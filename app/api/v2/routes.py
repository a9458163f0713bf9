"""Open Inference Protocol (KServe V2) routes: health, server and model metadata, infer.

Thin HTTP: parse, call one service, shape the response (tensors in
:mod:`app.api.v2.tensors`, errors in :mod:`app.api.v2.errors`).
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import ValidationError

from app import __version__
from app.api.bodies.limits import Body, RouteBody, parse_body
from app.api.bodies.parse_pool import BodyInvalid
from app.api.bodies.scan import Limits, refuse_oversized
from app.api.deps import ModelName, ServicesDep, in_prediction_thread
from app.api.errors import describe_validation
from app.api.responses import FastJSONResponse
from app.api.routes.health import readiness
from app.api.schemas import MAX_INT
from app.api.v2.errors import V2Route, v2_error
from app.api.v2.schemas import (
    InferenceRequest,
    InferenceResponse,
    ModelMetadataResponse,
    ModelReadyResponse,
    ServerLiveResponse,
    ServerMetadataResponse,
    ServerReadyResponse,
    V2ErrorResponse,
)
from app.api.v2.tensors import OUTPUTS, Decoded, decode, encode, label_datatype
from app.errors import InvalidArgument, NotFound
from app.services.common.inputs import check_limits
from app.services.prediction.model_info import ModelInfo, describe_model, model_ready
from app.services.prediction.request import DecisionRequest

_ERRORS: dict[int | str, dict[str, Any]] = {
    s: {"model": V2ErrorResponse} for s in (400, 404, 409, 413, 415, 503)
}
AUTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": V2ErrorResponse, "description": "Missing, unknown or revoked API key."},
    403: {"model": V2ErrorResponse, "description": "The API key's role does not allow this."},
}
_NOT_READY: dict[int | str, dict[str, Any]] = {503: {"model": ModelReadyResponse}}
TAGS: list[str | Any] = ["open inference protocol (KServe V2)"]
health_router = APIRouter(prefix="/v2/health", tags=TAGS, route_class=V2Route)
router = APIRouter(prefix="/v2", tags=TAGS, route_class=V2Route, responses=_ERRORS)


@health_router.get("/live", response_model=ServerLiveResponse, summary="V2 server live")
async def live() -> dict[str, bool]:
    return {"live": True}


@health_router.get(
    "/ready",
    response_model=ServerReadyResponse,
    responses={503: {"model": ServerReadyResponse}},
    summary="V2 server ready: database reachable, schema at head",
)
async def ready(services: ServicesDep) -> FastJSONResponse:
    ok, _ = await readiness(services)
    return FastJSONResponse({"ready": ok}, status_code=200 if ok else 503)


@router.get("", response_model=ServerMetadataResponse, summary="V2 server metadata")
async def server_metadata() -> dict[str, Any]:
    return {"name": "costwise", "version": __version__, "extensions": []}


def _version(name: str, version: str | None) -> int | None:
    if version is None:
        return None
    if not (version.isascii() and version.isdigit()) or not 1 <= int(version) <= MAX_INT:
        raise NotFound(
            f"model {name!r} has no version {version!r} (versions are numbers 1, 2, ...)",
            field="version",
        )
    return int(version)


def _metadata(info: ModelInfo) -> dict[str, Any]:
    m = info.model
    produced = {"decision": (label_datatype(m.classes), [-1])}
    if m.rule != "fixed":
        produced["probabilities"] = ("FP64", [-1, m.n_classes])
        produced["expected_cost"] = ("FP64", [-1])
        if m.n_classes == 2:
            produced["threshold"] = ("FP64", [-1])
    return {
        "name": info.resolved.model,
        "versions": [str(v) for v in info.versions],
        "platform": f"costwise_{info.algorithm}",
        "inputs": [{"name": "features", "datatype": "FP64", "shape": [-1, m.n_features]}],
        "outputs": [
            {"name": n, "datatype": produced[n][0], "shape": produced[n][1]}
            for n in OUTPUTS
            if n in produced
        ],
    }


@router.get("/models/{name}", response_model=ModelMetadataResponse, summary="V2 model metadata")
def model_metadata(name: ModelName, services: ServicesDep) -> dict[str, Any]:
    return _metadata(describe_model(services.predictor, services.registry, name))


@router.get("/models/{name}/versions/{version}", response_model=ModelMetadataResponse)
def version_metadata(name: ModelName, version: str, services: ServicesDep) -> dict[str, Any]:
    info = describe_model(services.predictor, services.registry, name, _version(name, version))
    return _metadata(info)


def _ready(name: str, version: int | None, services: Any) -> FastJSONResponse:
    ok = model_ready(services.predictor, name, version)
    return FastJSONResponse({"name": name, "ready": ok}, status_code=200 if ok else 503)


@router.get(
    "/models/{name}/ready",
    response_model=ModelReadyResponse,
    responses=_NOT_READY,
    summary="V2 model ready (503: its artifact fails its checks)",
)
def ready_model(name: ModelName, services: ServicesDep) -> FastJSONResponse:
    return _ready(name, None, services)


@router.get(
    "/models/{name}/versions/{version}/ready",
    response_model=ModelReadyResponse,
    responses=_NOT_READY,
)
def ready_version(name: ModelName, version: str, services: ServicesDep) -> FastJSONResponse:
    return _ready(name, _version(name, version), services)


def parse_and_decode(body: bytes, limits: Limits, large: bool) -> tuple[str | None, Decoded]:
    """The request's id and its decoded tensors, checked against the limits; a large body
    (parsed in a worker process) is first scanned for provably too many values."""
    if large:
        # flat or nested data: the value count bounds the rows x features
        refuse_oversized(body, limits, field="inputs", rows_depth=None)
    req = InferenceRequest.model_validate_json(body)
    decoded = decode(req)
    matrix = decoded.request.rows.matrix
    if matrix is not None:
        n_rows, n_features = matrix.shape
        check_limits(
            n_rows,
            n_features,
            max_rows=limits.max_rows,
            max_features=limits.max_features,
            max_cells=limits.max_cells,
            field="inputs",
        )
    return req.id, decoded


def infer_request(name: str, version: str | None, decoded: Decoded) -> DecisionRequest:
    """The V2 door's one request value: the decoded tensors and parameters, and the
    version the path names (never with an alias)."""
    number = _version(name, version)
    if number is not None and decoded.request.alias is not None:
        raise InvalidArgument(
            "parameters.alias: the path names version "
            f"{number}; give either a version or an alias, not both",
            field="parameters.alias",
        )
    return replace(decoded.request, version=number)


# tensors are bounded by the row and cell limits, whose largest bodies need
# COSTWISE_MAX_BODY_BYTES: no smaller byte limit (app.api.bodies.limits)
INFER_BODY = RouteBody()
InferBody = Annotated[Body, Depends(INFER_BODY)]


async def _infer(name: str, version: str | None, raw: Body, services: Any) -> FastJSONResponse:
    limits = Limits.of(services.settings)
    try:  # a large body in a worker process (app.api.bodies.parse_pool)
        request_id, decoded = await parse_body(services.parsing, parse_and_decode, raw, limits)
    except ValidationError as exc:
        code, detail, _, _ = describe_validation(list(exc.errors()))
        return v2_error(code, detail)
    except BodyInvalid as exc:
        code, detail, _, _ = describe_validation(exc.errors)
        return v2_error(code, detail)
    req = infer_request(name, version, decoded)
    n = len(req.rows.matrix) if req.rows.matrix is not None else 0
    # never on the loop: resolving reads the database
    p = await in_prediction_thread(services, partial(services.predictor.predict, name, req))
    outputs = encode(p, decoded.outputs)
    services.metrics.count_rows(name, n)
    body = {
        "model_name": p.resolved.model,
        "model_version": str(p.resolved.version),
        "id": request_id if request_id is not None else str(uuid.uuid4()),
        "parameters": {**p.provenance.parameters(), "classes": list(p.classes)},
        "outputs": outputs,
    }
    return FastJSONResponse(body)


_INFER_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/InferenceRequest"}}
        },
    }
}


@router.post(
    "/models/{name}/infer",
    response_model=InferenceResponse,
    openapi_extra=_INFER_BODY,
    summary="V2 inference: least-expected-cost decisions under the request's costs",
)
async def infer(name: ModelName, body: InferBody, services: ServicesDep) -> FastJSONResponse:
    return await _infer(name, None, body, services)


@router.post(
    "/models/{name}/versions/{version}/infer",
    response_model=InferenceResponse,
    openapi_extra=_INFER_BODY,
    summary="V2 inference with one version",
)
async def infer_version(
    name: ModelName, version: str, body: InferBody, services: ServicesDep
) -> FastJSONResponse:
    return await _infer(name, version, body, services)
