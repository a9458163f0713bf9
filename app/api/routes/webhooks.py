"""Webhooks over HTTP (role admin): register (the signing secret is shown once), list,
remove, and read a webhook's deliveries."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from app.api.access.auth import CallerDep
from app.api.bodies.limits import SMALL_BODY_BYTES, JsonBody
from app.api.deps import NO_STORE, ServicesDep
from app.api.errors import error_responses
from app.api.routes.deletion import deletes, no_content
from app.services.events.webhooks import EVENTS

router = APIRouter(
    prefix="/v1", tags=["webhooks"], responses=error_responses(400, 413, 415, 422, 503)
)
WebhookId = Annotated[int, Path(ge=1, le=2**31 - 1)]


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        min_length=8,
        max_length=2048,
        description="http:// or https:// URL the events are POSTed to. Its host must resolve "
        "to public addresses only, or be allowed by COSTWISE_WEBHOOK_ALLOW_HOSTS (403 "
        "otherwise); checked again before each delivery; redirects are not followed.",
    )
    events: list[str] = Field(
        min_length=1, max_length=len(EVENTS), description=f"Event types: {', '.join(EVENTS)}."
    )


class WebhookOut(BaseModel):
    id: int
    url: str
    events: list[str]
    created_by: str
    created_at: datetime


class WebhookCreated(WebhookOut):
    secret: str = Field(
        description="The HMAC-SHA256 key of the `X-Costwise-Signature` header. Shown only "
        "in this response: store it now."
    )


class WebhookListResponse(BaseModel):
    webhooks: list[WebhookOut]


class DeliveryOut(BaseModel):
    id: int
    event_id: str = Field(description="Same for every webhook and attempt of one event.")
    event: str
    status: str = Field(description="pending, delivered or failed.")
    attempts: int
    last_status: int | None = Field(description="The receiver's last HTTP status, if any.")
    last_error: str | None
    created_at: datetime
    next_attempt_at: datetime | None = Field(description="When pending: the next attempt.")
    delivered_at: datetime | None
    payload: dict[str, Any] = Field(description="The JSON body POSTed.")


class DeliveryListResponse(BaseModel):
    deliveries: list[DeliveryOut]


WEBHOOK_BODY = JsonBody(WebhookCreate, max_bytes=SMALL_BODY_BYTES)


@router.post(
    "/webhooks",
    status_code=201,
    response_model=WebhookCreated,
    responses=error_responses(403),
    summary="Register a webhook (its signing secret is returned once, never again)",
    description="Events of the listed types are POSTed to `url` as JSON `{id, type, "
    "created_at, data}`, signed (`X-Costwise-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "
    '"<t>." + body>`), retried with a doubling delay until a 2xx answer (see '
    "docs/challenger.md, Events). An `alias.moved` event is written in the same transaction "
    "as the move: none is lost, none is sent for a move that did not happen.",
    openapi_extra=WEBHOOK_BODY.openapi(),
    dependencies=[NO_STORE],
)
async def create(
    body: Annotated[WebhookCreate, Depends(WEBHOOK_BODY)],
    services: ServicesDep,
    caller: CallerDep,
) -> Any:
    return await run_in_threadpool(services.webhooks.register, body.url, body.events, caller.name)


@router.get("/webhooks", response_model=WebhookListResponse, summary="List webhooks (no secrets)")
async def list_all(services: ServicesDep) -> Any:
    return {"webhooks": await run_in_threadpool(services.webhooks.all)}


@deletes(router, "/webhooks/{webhook_id}", "Remove a webhook and its deliveries", 404)
async def remove(webhook_id: WebhookId, services: ServicesDep) -> Response:
    await run_in_threadpool(services.webhooks.remove, webhook_id)
    return no_content()


@router.get(
    "/webhooks/{webhook_id}/deliveries",
    response_model=DeliveryListResponse,
    responses=error_responses(404),
    summary="A webhook's deliveries, newest first: status, attempts, the last answer",
)
async def list_deliveries(
    webhook_id: WebhookId,
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Any:
    return {"deliveries": await run_in_threadpool(services.webhooks.deliveries, webhook_id, limit)}
