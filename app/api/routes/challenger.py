"""Champion and challenger: compare two versions by what their decisions cost; promote."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from starlette.concurrency import run_in_threadpool

from app.api.access.auth import CallerDep
from app.api.bodies.limits import SMALL_BODY_BYTES, JsonBody
from app.api.deps import AliasName, ModelName, QueryWindow, ServicesDep
from app.api.errors import error_responses
from app.api.responses import FastJSONResponse
from app.api.routes.deletion import deletes, no_content
from app.api.schemas import (
    CompareResponse,
    PromoteRequest,
    PromoteResponse,
    ShadowOut,
    ShadowRequest,
    SplitOut,
    SplitRequest,
)
from app.api.time_window import utc_window
from app.services.challenger.promotion import PromotionRule
from app.services.model_registry.service import Actor

router = APIRouter(
    prefix="/v1", tags=["challenger"], responses=error_responses(400, 404, 413, 422, 503)
)
PROMOTE_BODY = JsonBody(PromoteRequest, max_bytes=SMALL_BODY_BYTES)
SHADOW_BODY = JsonBody(ShadowRequest, max_bytes=SMALL_BODY_BYTES)
Ref = Annotated[str, Query(min_length=1, max_length=200)]


@router.get(
    "/models/{name}/compare",
    response_model=CompareResponse,
    summary="Would b have decided more cheaply than a? Realised cost, paired or not",
    description="Over the labelled predictions in [since, until): `a` (champion) and `b` "
    "(challenger) name versions of this model (number, alias or model:version). Paired "
    "(shadow pairs: one served, the other decided the same prediction id in shadow): the "
    "per-row difference in realised cost under each row's own costs, its mean with a "
    "paired t interval, the share of differing decisions and their cost to each side. "
    "Unpaired (split traffic): Welch's t interval. Both: Brier, log loss, ECE, realised "
    "over expected cost, the labelled pairs needed to exclude zero at the observed "
    "effect, and `series`: both sides' realised cost per `bucket` (hour or day). The same version twice, a version of another model or a window without "
    "labelled rows is a 422 naming the field.",
)
async def compare(
    name: ModelName,
    services: ServicesDep,
    window: QueryWindow,
    a: Ref,
    b: Ref,
    mode: Literal["auto", "paired", "unpaired"] = "auto",
    confidence: Annotated[float, Query(ge=0.5, lt=1.0)] = 0.95,
    bucket: Literal["hour", "day"] = "day",
) -> Any:
    report = await run_in_threadpool(
        lambda: services.comparison.compare(
            name, a, b, window, mode=mode, confidence=confidence, bucket=bucket
        )
    )
    return FastJSONResponse(report)


@router.post(
    "/models/{name}/aliases/{alias}/promote",
    response_model=PromoteResponse,
    responses=error_responses(
        described={409: "PROMOTION_REFUSED: the rule does not hold (`evidence` has the figures)."}
    ),
    summary="Move an alias to a candidate only if the comparison's evidence holds (admin)",
    description="Compares the alias's current version (a) with `candidate` (b) over the "
    "window and checks the rule: at least `min_labelled_pairs` labelled rows, the upper "
    "end of the interval of mean(cost_b - cost_a) below `max_cost_difference`, the ECE "
    "not worse by more than `max_ece_increase`. Holds: the alias moves and the evidence "
    "is kept with the move (GET .../history). Fails: 409 PROMOTION_REFUSED with the "
    "figures; nothing moves.",
    openapi_extra=PROMOTE_BODY.openapi(),
)
async def promote(
    name: ModelName,
    alias: AliasName,
    body: Annotated[PromoteRequest, Depends(PROMOTE_BODY)],
    services: ServicesDep,
    caller: CallerDep,
) -> Any:
    window = utc_window(body.since, body.until)
    rule = PromotionRule(**body.rule.model_dump())
    moved = await run_in_threadpool(
        lambda: services.promoter.promote(
            name,
            alias,
            str(body.candidate),
            rule,
            Actor(caller.name, caller.role),
            window,
            note=body.note,
        )
    )
    return FastJSONResponse(moved)


@router.put(
    "/models/{name}/shadow",
    response_model=ShadowOut,
    summary="Name the model's shadow: a version (or an alias) that decides every logged "
    "predict again, off the request path",
    description="From the next predict on, every logged predict of this model (v1 and v2) "
    "is also decided by the shadow under the same costs and priors, after the response "
    "is made (a bounded queue: rows beyond COSTWISE_SHADOW_QUEUE_ROWS are dropped and "
    "counted); its decisions are logged against the same prediction ids, which is what "
    "GET .../compare pairs. An alias is followed (moving it moves the shadow).",
    openapi_extra=SHADOW_BODY.openapi(),
)
async def set_shadow(
    name: ModelName, body: Annotated[ShadowRequest, Depends(SHADOW_BODY)], services: ServicesDep
) -> Any:
    out = await run_in_threadpool(services.shadow.set_shadow, name, body.version, body.alias)
    return FastJSONResponse(out)


@router.get("/models/{name}/shadow", response_model=ShadowOut, summary="The model's shadow")
async def get_shadow(name: ModelName, services: ServicesDep) -> Any:
    return FastJSONResponse(await run_in_threadpool(services.shadow.status, name))


@deletes(
    router,
    "/models/{name}/shadow",
    "Stop shadow scoring (the shadow decisions logged so far stay)",
)
async def delete_shadow(name: ModelName, services: ServicesDep) -> Response:
    await run_in_threadpool(services.shadow.clear_shadow, name)
    return no_content()


SPLIT_BODY = JsonBody(SplitRequest, max_bytes=SMALL_BODY_BYTES)


@router.put(
    "/models/{name}/aliases/{alias}/split",
    response_model=SplitOut,
    summary="Split an alias's traffic: a share of its requests to a canary version",
    description="`weight` (in [0, 1]) of the predicts and evaluates that take this alias "
    "(named, or as the default) without a `version` are served by `version`; the rest by "
    "the alias's own version. A request's `routing_key` makes its arm sticky (a hash of "
    "the key); without one the arm is drawn at random. The answer's `arm` says which "
    "arm served; the log holds the version that decided, so GET .../compare (unpaired) "
    "compares the arms. Takes effect at once here, within "
    "COSTWISE_SHADOW_REFRESH_SECONDS on other replicas.",
    openapi_extra=SPLIT_BODY.openapi(),
)
async def set_split(
    name: ModelName,
    alias: AliasName,
    body: Annotated[SplitRequest, Depends(SPLIT_BODY)],
    services: ServicesDep,
    caller: CallerDep,
) -> Any:
    out = await run_in_threadpool(
        services.splits.set_split, name, alias, body.version, body.weight, caller.name
    )
    return FastJSONResponse(out)


@router.get(
    "/models/{name}/aliases/{alias}/split",
    response_model=SplitOut,
    responses=error_responses(404),
    summary="An alias's traffic split",
)
async def get_split(name: ModelName, alias: AliasName, services: ServicesDep) -> Any:
    return FastJSONResponse(await run_in_threadpool(services.splits.status, name, alias))


@deletes(
    router,
    "/models/{name}/aliases/{alias}/split",
    "End an alias's traffic split (all its requests to its own version)",
    404,
)
async def delete_split(name: ModelName, alias: AliasName, services: ServicesDep) -> Response:
    await run_in_threadpool(services.splits.clear_split, name, alias)
    return no_content()
