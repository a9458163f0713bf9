"""Errors on /v2 routes: the Open Inference Protocol's ``{"error": "<message>"}`` body.

The protocol says a failed request is "indicated by an HTTP error status (typically
400)" with that body. Statuses follow the service's one list of error codes
(:data:`costwise.errors.ERROR_CODES`): /v1's status, except where a code names its
``v2_status`` (a bad argument, a tensor, parameter or cost, is 400 as the protocol
expects rather than /v1's 422). Messages are the same
precise ones as on /v1 (which tensor, field or row; what was expected).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

from app.api.errors import OPERATOR_CODES, describe_validation
from app.api.responses import FastJSONResponse
from app.errors import ServiceError
from costwise.errors import ERROR_CODES

log = logging.getLogger(__name__)
V2_STATUS = {e.code: e.v2_status or e.status for e in ERROR_CODES}


def v2_error(code: str, detail: str, retry_after: Any = None) -> FastJSONResponse:
    status = V2_STATUS.get(code, 500)
    if status >= 500 or code in OPERATOR_CODES:
        log.warning("%s: %s", code, detail)
    response = FastJSONResponse({"error": detail}, status_code=status)
    if code == "UNAUTHORIZED":
        response.headers["WWW-Authenticate"] = 'Bearer realm="costwise"'
    if retry_after is not None:  # e.g. the prediction log's queue stayed full
        response.headers["Retry-After"] = str(retry_after)
    return response


class V2Route(APIRoute):
    """A route whose service, validation and authentication errors get the V2 body.

    Dependencies (the API-key check) run inside the route handler, so their errors are
    translated here too.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except ServiceError as exc:
                return v2_error(exc.code, exc.detail, exc.extra.get("retry_after"))
            except RequestValidationError as exc:
                code, detail, _, _ = describe_validation(list(exc.errors()))
                return v2_error(code, detail)

        return route
