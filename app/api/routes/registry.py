"""Reading models and versions; moving aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response

from app.api.access.auth import CallerDep
from app.api.bodies.limits import SMALL_BODY_BYTES, JsonBody
from app.api.deps import AliasName, ModelName, ServicesDep
from app.api.errors import error_responses
from app.api.routes.deletion import deletes, no_content
from app.api.schemas import (
    MAX_INT,
    AliasHistoryResponse,
    AliasMoveOut,
    AliasOut,
    AliasRequest,
    ModelListResponse,
    ModelOut,
    ModelUpdate,
    VersionListResponse,
    VersionOut,
)
from app.services.model_registry.service import Actor

router = APIRouter(
    prefix="/v1", tags=["registry"], responses=error_responses(400, 404, 413, 415, 422, 503)
)

Limit = Annotated[int, Query(ge=1, le=1000, description="Page size.")]
Offset = Annotated[int, Query(ge=0, le=MAX_INT, description="Items to skip.")]
Version = Annotated[int, Path(ge=1, le=MAX_INT, description="Version number.")]
MODEL_BODY = JsonBody(ModelUpdate, max_bytes=SMALL_BODY_BYTES)  # one flag
ALIAS_BODY = JsonBody(AliasRequest, max_bytes=SMALL_BODY_BYTES)  # one version number


@router.get("/models", response_model=ModelListResponse, summary="List registered models")
def list_models(services: ServicesDep, limit: Limit = 100, offset: Offset = 0) -> ModelListResponse:
    models, total = services.registry.list_models(limit, offset)
    return ModelListResponse(models=[ModelOut(**vars(m)) for m in models], total=total)


@router.get("/models/{name}", response_model=ModelOut, summary="Get one model")
def get_model(name: ModelName, services: ServicesDep) -> ModelOut:
    return ModelOut(**vars(services.registry.get_model(name)))


@router.patch(
    "/models/{name}",
    response_model=ModelOut,
    summary="Change a model's settings (admin): prediction_log",
    description="`prediction_log: false` stops logging this model's predictions from the "
    "next request on (they get no `id` unless the caller sends `ids`); `true` resumes.",
    openapi_extra=MODEL_BODY.openapi(),
)
def update_model(
    name: ModelName, body: Annotated[ModelUpdate, Depends(MODEL_BODY)], services: ServicesDep
) -> ModelOut:
    return ModelOut(**vars(services.registry.set_prediction_log(name, body.prediction_log)))


@router.get(
    "/models/{name}/versions",
    response_model=VersionListResponse,
    summary="List a model's versions, newest first",
)
def list_versions(
    name: ModelName, services: ServicesDep, limit: Limit = 100, offset: Offset = 0
) -> VersionListResponse:
    versions = services.registry.list_versions(name, limit, offset)
    return VersionListResponse(model=name, versions=[VersionOut(**vars(v)) for v in versions])


@router.get(
    "/models/{name}/versions/{version}", response_model=VersionOut, summary="Get one version"
)
def get_version(name: ModelName, version: Version, services: ServicesDep) -> VersionOut:
    return VersionOut(**vars(services.registry.get_version(name, version)))


@router.put(
    "/models/{name}/aliases/{alias}",
    response_model=AliasOut,
    responses=error_responses(described={409: "The version's artifact is corrupted."}),
    summary="Point an alias at a version (creates or moves it)",
    openapi_extra=ALIAS_BODY.openapi(),
)
def set_alias(
    name: ModelName,
    alias: AliasName,
    body: Annotated[AliasRequest, Depends(ALIAS_BODY)],
    services: ServicesDep,
    caller: CallerDep,
) -> AliasOut:
    actor = Actor(caller.name, caller.role)
    services.registry.set_alias(name, alias, body.version, actor, note=body.note)
    return AliasOut(model=name, alias=alias, version=body.version)


@deletes(router, "/models/{name}/aliases/{alias}", "Remove an alias")
def delete_alias(
    name: ModelName, alias: AliasName, services: ServicesDep, caller: CallerDep
) -> Response:
    services.registry.delete_alias(name, alias, Actor(caller.name, caller.role))
    return no_content()


@router.get(
    "/models/{name}/aliases/{alias}/history",
    response_model=AliasHistoryResponse,
    summary="Every move of an alias, newest first: who, when, from, to, why",
    description="The audit trail kept with each move (PUT, DELETE and promote): the API "
    "key's name and role, the time, the versions before and after (null: created or "
    "removed), the reason and note, and a promotion's evidence (its rule and the "
    "comparison that satisfied it). Kept after the alias is removed.",
)
def alias_history(
    name: ModelName,
    alias: AliasName,
    services: ServicesDep,
    limit: Limit = 100,
) -> AliasHistoryResponse:
    moves = services.registry.alias_history(name, alias, limit)
    return AliasHistoryResponse(
        model=name, alias=alias, moves=[AliasMoveOut(**vars(m)) for m in moves]
    )
