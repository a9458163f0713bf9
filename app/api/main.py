"""The application factory: ``create_app(settings)`` builds everything once."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import fields
from typing import Any

from fastapi import FastAPI

from app import __version__
from app.api.access.auth import AUTH_RESPONSES, AUTHORIZE, AUTHORIZE_OPEN, install_auth
from app.api.deps import DATABASE_GATE, Services
from app.api.errors import error_responses, install_error_handlers
from app.api.guards import AuthGateMiddleware, LargeRequestMiddleware
from app.api.routes import (
    algorithms,
    batch,
    challenger,
    console,
    health,
    jobs,
    keys,
    monitoring,
    plots,
    predict,
    priors,
    recalibration,
    registry,
    training,
    webhooks,
)
from app.api.routes.keys import KeyCreate
from app.api.routes.webhooks import WebhookCreate
from app.api.schemas import (
    AliasRequest,
    BatchRequestIn,
    DatasetTrainingRequest,
    EvaluateRequest,
    ModelUpdate,
    OutcomesRequest,
    PredictRequest,
    PriorEstimateRequest,
    RecalibrationRequest,
    TrainingRequest,
)
from app.api.server.middleware import BodyLimitMiddleware, MetricsMiddleware
from app.api.v2 import routes as v2
from app.api.v2.schemas import InferenceRequest
from app.api.wiring import LIFESPAN, Wiring, build_services, database
from app.settings import Settings, get_settings

log = logging.getLogger(__name__)

DESCRIPTION = """
Cost-sensitive decisions from calibrated boosting models.

Train AdaBoost, calibrate its scores on held-out data and register the model; then send
feature rows **with the costs of this request** (or of each row) and get the decision
that minimises expected cost, its threshold and its expected cost, without retraining.
Cost matrix convention: `C[i][j]` is the cost of predicting class `j` when the truth is
class `i` (rows = truth). Every error body is `{"detail", "code", "field"}`, except on
the Open Inference Protocol (KServe V2) routes under `/v2`, whose errors are `{"error"}`.

A web console (models, versions, plots, a what-if panel for costs, aliases, monitoring) is served at
[/console](/console).
"""


def _document_manual_bodies(app: FastAPI) -> None:
    """Add the schemas of bodies that routes parse themselves to the OpenAPI components
    (every body: :mod:`app.api.bodies.limits`)."""
    base = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        spec = base()
        ref = "#/components/schemas/{model}"
        components = spec.setdefault("components", {}).setdefault("schemas", {})
        for model in (
            TrainingRequest,
            DatasetTrainingRequest,
            PredictRequest,
            EvaluateRequest,
            InferenceRequest,
            RecalibrationRequest,
            OutcomesRequest,
            BatchRequestIn,
            KeyCreate,
            WebhookCreate,
            ModelUpdate,
            AliasRequest,
            PriorEstimateRequest,
        ):
            schema = model.model_json_schema(ref_template=ref)
            components.update(schema.pop("$defs", {}))
            components[model.__name__] = schema
        app.openapi_schema = spec
        return spec

    app.openapi = openapi  # type: ignore[method-assign]


GATE_RESPONSES = error_responses(described={503: "The database is down or stalled."})


def _lifespan(w: Wiring) -> Any:
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for part in LIFESPAN:
                await stack.enter_async_context(part(w))
            yield

    return lifespan


def _include_routers(app: FastAPI, auth_on: bool) -> None:
    # With authentication off, no dependency is attached at all: solving the security
    # dependencies costs ~0.3 ms per request even when they would let everyone in.
    for open_router in (health.router, v2.health_router, console.router):
        app.include_router(open_router, dependencies=[AUTHORIZE_OPEN] if auth_on else [])
    app.include_router(
        v2.router,
        dependencies=[AUTHORIZE] if auth_on else [],
        responses=v2.AUTH_RESPONSES if auth_on else None,
    )
    for router in (  # predict first: routes are matched in order
        predict.router,
        registry.router,
        plots.router,
        training.router,
        batch.router,
        recalibration.router,
        jobs.router,
        monitoring.router,
        challenger.router,
        priors.router,
        algorithms.router,
        keys.router,
        webhooks.router,
    ):
        # routes that need the database fail fast while it is down (predictions may be
        # answered from memory: not gated); after authentication (401 before 503)
        gated = router not in (predict.router, algorithms.router)
        app.include_router(
            router,
            dependencies=([AUTHORIZE] if auth_on else []) + ([DATABASE_GATE] if gated else []),
            responses={**(AUTH_RESPONSES if auth_on else {}), **(GATE_RESPONSES if gated else {})},
        )
    # HEAD on the health probes: the same handlers (the server sends no body)
    for path, endpoint in (
        ("/health/live", health.live),
        ("/health/ready", health.ready),
        ("/v2/health/live", v2.live),
        ("/v2/health/ready", v2.ready),
    ):
        app.add_api_route(path, endpoint, methods=["HEAD"], include_in_schema=False)
    predict.install_direct_routes(app, auth_on)


def _add_middleware(app: FastAPI, w: Wiring) -> None:
    """The last added runs first: metrics, then authentication (headers only), then the
    body-size limit, then the large-request slots, then the routes."""
    s = w.settings
    large = {"large_bytes": s.large_request_bytes, "max_large": s.max_large_requests}
    app.add_middleware(LargeRequestMiddleware, **large)
    app.add_middleware(BodyLimitMiddleware, max_bytes=s.max_body_bytes)
    app.add_middleware(AuthGateMiddleware, auth=app.state.auth, metrics_public=s.metrics_public)
    app.add_middleware(MetricsMiddleware, metrics=w.metrics, model_label=w.known_models.label)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the FastAPI application for ``settings`` (default: from the environment):
    the database (:func:`app.api.wiring.database`, which refuses a schema not at head or
    an unsafe production configuration), each service of :data:`app.api.wiring.SERVICES`,
    the parts of :data:`app.api.wiring.LIFESPAN`, the routes and the middleware."""
    w = build_services(database(settings or get_settings()))
    w.services = Services(**{f.name: getattr(w, f.name) for f in fields(Services)})
    app = FastAPI(
        title="costwise", version=__version__, description=DESCRIPTION, lifespan=_lifespan(w)
    )
    app.state.services = w.services
    app.state.known_models = w.known_models
    install_error_handlers(app)
    install_auth(app, w.settings, w.sessions, w.health)
    _include_routers(app, auth_on=w.settings.auth == "on")
    _document_manual_bodies(app)
    _add_middleware(app, w)
    log.info("costwise ready on %s", w.engine.url.render_as_string(hide_password=True))
    return app
