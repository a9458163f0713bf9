"""API keys over HTTP (role admin): create (the key is shown once), list, revoke."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from app.api.bodies.limits import SMALL_BODY_BYTES, JsonBody
from app.api.deps import NO_STORE, ServicesDep
from app.api.errors import error_responses
from app.api.routes.deletion import deletes, no_content
from app.services.access.keys import KeyView

router = APIRouter(prefix="/v1", tags=["keys"], responses=error_responses(400, 413, 415, 422, 503))


class KeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1, max_length=128, description="Label, e.g. the team or service using it."
    )
    role: Literal["admin", "predictor", "reader"] = Field(
        description="admin: everything; predictor: predict, evaluate and read; reader: read."
    )


class KeyOut(BaseModel):
    id: int
    name: str
    role: str
    prefix: str = Field(description="First 8 characters of the key, to recognise it.")
    active: bool
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


class KeyCreated(KeyOut):
    key: str = Field(description="The API key. Shown only in this response: store it now.")


class KeyListResponse(BaseModel):
    keys: list[KeyOut]


def _out(v: KeyView) -> KeyOut:
    return KeyOut(**vars(v), active=v.active)


KEY_BODY = JsonBody(KeyCreate, max_bytes=SMALL_BODY_BYTES)  # a name and a role


@router.post(
    "/keys",
    status_code=201,
    response_model=KeyCreated,
    summary="Create an API key (the key is returned once, never again)",
    openapi_extra=KEY_BODY.openapi(),
    dependencies=[NO_STORE],
)
async def create(
    body: Annotated[KeyCreate, Depends(KEY_BODY)],
    services: ServicesDep,
    request: Request,
) -> KeyCreated:
    view, plaintext = await run_in_threadpool(services.keys.create, body.name, body.role)
    request.app.state.auth.stale()  # the new key works here at once
    return KeyCreated(**vars(view), active=view.active, key=plaintext)


@router.get("/keys", response_model=KeyListResponse, summary="List API keys (no secrets)")
async def list_all(services: ServicesDep) -> KeyListResponse:
    return KeyListResponse(keys=[_out(v) for v in await run_in_threadpool(services.keys.list)])


@deletes(
    router,
    "/keys/{key_id}",
    "Revoke an API key (idempotent; the last active admin key cannot be revoked)",
    404,
    409,
)
async def revoke(
    key_id: Annotated[int, Path(ge=1, le=2**31 - 1)], request: Request, services: ServicesDep
) -> Response:
    await run_in_threadpool(services.keys.revoke, key_id)
    request.app.state.auth.forget(key_id)
    return no_content()
