"""Authentication and roles for HTTP: one dependency and one policy table.

Keys are sent as ``Authorization: Bearer <key>`` or ``X-API-Key: <key>``. Who may do
what (with ``COSTWISE_AUTH=on``) is declared once, route by route, in
:data:`app.api.access.permissions.PERMISSIONS`; :func:`required_role` answers from it.

A missing, unknown or revoked key is 401 ``UNAUTHORIZED`` (with
``WWW-Authenticate: Bearer``); a valid key whose role is too low is 403 ``FORBIDDEN``.
Neither body contains the key. On ``/v2`` routes the same errors have the Open Inference
Protocol's body ``{"error": "..."}`` (see :mod:`app.api.v2.errors`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, FastAPI, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session, sessionmaker

from app.api.access.permissions import minimum_role
from app.api.errors import error_response, error_responses
from app.api.responses import FastJSONResponse
from app.db import DatabaseHealth
from app.errors import Unauthorized
from app.services.access.auth import ANONYMOUS_ADMIN, Authenticator, Principal
from app.settings import Settings

ANONYMOUS = Principal(None, "anonymous", "reader")  # caller of an open route (never checked)

bearer_scheme = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    bearerFormat="cw_<random>",
    description="An API key: `Authorization: Bearer cw_...` (roles admin, predictor, reader).",
)
api_key_scheme = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    scheme_name="apiKey",
    description="The same API key in the `X-API-Key` header.",
)


def required_role(method: str, path: str, *, metrics_public: bool = True) -> str | None:
    """Minimum role for ``method`` on the route template ``path`` (None: open), from the
    declared table :data:`app.api.access.permissions.PERMISSIONS` (undeclared: ``admin``)."""
    return minimum_role(method, path, metrics_public=metrics_public)


async def _check(request: Request, key: str | None) -> Principal:
    auth: Authenticator = request.app.state.auth
    if not auth.enabled:
        return ANONYMOUS_ADMIN
    route = request.scope.get("route")
    role = required_role(
        request.method,
        getattr(route, "path", request.url.path),
        metrics_public=request.app.state.metrics_public,
    )
    if role is None:
        return ANONYMOUS
    # authenticated before the body was read (app.api.guards.AuthGateMiddleware)
    principal: Principal | None = request.scope.get("state", {}).get("principal")
    if principal is None:
        principal = await auth.authenticate(key)
    principal.require(role)
    return principal


async def check_role(request: Request, key: str | None) -> Principal:
    """The caller of ``request`` (on its matched route, ``scope["route"]``), checked
    against :func:`required_role`: what :func:`authorize` does, for a route that solves
    no dependencies (:class:`app.api.routes.predict.DirectRoute`)."""
    return await _check(request, key)


async def authorize(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(bearer_scheme)],
    api_key: Annotated[str | None, Security(api_key_scheme)],
) -> Principal:
    """The caller of a ``/v1`` or ``/v2`` route, checked against :func:`required_role`."""
    return await _check(request, bearer.credentials if bearer is not None else api_key)


async def authorize_open(request: Request) -> Principal:
    """Same check for routes outside ``/v1`` (no security requirement in the OpenAPI)."""
    if not request.app.state.auth.enabled:
        return ANONYMOUS_ADMIN
    role = required_role(
        request.method,
        getattr(request.scope.get("route"), "path", request.url.path),
        metrics_public=request.app.state.metrics_public,
    )
    if role is None:
        return ANONYMOUS
    return await _check(request, _presented_key(request))


def _presented_key(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    key = credentials.strip() if scheme.lower() == "bearer" else None
    return key or request.headers.get("x-api-key")


async def may_see_model_names(request: Request) -> bool:
    """Whether ``/metrics`` may show model names to this caller.

    Yes with authentication off, with ``COSTWISE_METRICS_MODEL_NAMES_PUBLIC=true``, or
    for a caller presenting a valid key (any role); a caller without one sees every
    series summed over models (see :class:`app.api.server.middleware.WithoutModelNames`).
    """
    auth: Authenticator = request.app.state.auth
    if not auth.enabled or request.app.state.metrics_model_names_public:
        return True
    try:
        await auth.authenticate(_presented_key(request))
    except Unauthorized:
        return False
    return True


CallerDep = Annotated[Principal, Depends(authorize)]
AUTH_RESPONSES = error_responses(
    described={
        401: "Missing, unknown or revoked API key.",
        403: "The API key's role does not allow this.",
    }
)
AUTHORIZE = Depends(authorize)
AUTHORIZE_OPEN = Depends(authorize_open)


def install_auth(
    app: FastAPI,
    settings: Settings,
    sessions: sessionmaker[Session],
    health: DatabaseHealth | None = None,
) -> None:
    """Attach the :class:`Authenticator` and the 401 handler (adds ``WWW-Authenticate``)."""
    bootstrap = settings.bootstrap_admin_key
    app.state.auth = Authenticator(
        sessions,
        enabled=settings.auth == "on",
        ttl_seconds=settings.key_cache_seconds,
        bootstrap_key=None if bootstrap is None else bootstrap.get_secret_value(),
        stale_seconds=settings.registry_stale_seconds,
        health=health,
    )
    app.state.metrics_public = settings.metrics_public
    app.state.metrics_model_names_public = settings.metrics_model_names_public

    @app.exception_handler(Unauthorized)
    async def _unauthorized(_: Request, exc: Unauthorized) -> FastJSONResponse:
        response = error_response(exc.code, exc.detail, exc.field)
        response.headers["WWW-Authenticate"] = 'Bearer realm="costwise"'
        return response
