"""Error translation for HTTP: error codes to status codes, from the one list of codes.

The codes, their statuses on ``/v1`` and ``/v2`` and their meanings are declared once, in
:data:`costwise.errors.ERROR_CODES` (the client package, which stands alone); this
module, :mod:`app.api.v2.errors`, the client's exceptions and the docs' error table
derive from it.

Every error body has the shape ``{"detail": str, "code": str, "field": str | None}``
(validation errors add ``errors``). No stack trace ever reaches a client: unexpected
exceptions are logged and answered with a generic 500 body. Errors that an operator must
act on are logged as well: every 5xx, and ``ARTIFACT_CORRUPTED`` (a 409: the version's
stored artifact, or the base artifact it shares, fails its checks).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.api.responses import FastJSONResponse
from app.api.schemas import ErrorResponse
from app.errors import ServiceError
from costwise.errors import ERROR_CODES

log = logging.getLogger(__name__)

# from the one list of error codes shared with /v2 and the client (costwise.errors)
STATUS_BY_CODE: dict[str, int] = {e.code: e.status for e in ERROR_CODES}
OPERATOR_CODES = frozenset(e.code for e in ERROR_CODES if e.operator)  # logged, not 5xx
_HTTP_CODES = {e.status: e.code for e in ERROR_CODES if e.bare}  # a framework's HTTP error


def error_responses(
    *statuses: int, described: dict[int, str] | None = None
) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` of error statuses (the error body), ``described`` ones with
    their description."""
    described = described or {}
    return {
        s: {"model": ErrorResponse, **({"description": described[s]} if s in described else {})}
        for s in sorted({*statuses, *described})
    }


def error_response(
    code: str, detail: str, field: str | None = None, **extra: Any
) -> FastJSONResponse:
    body: dict[str, Any] = {"detail": detail, "code": code, "field": field}
    body.update({k: v for k, v in extra.items() if v is not None})
    return FastJSONResponse(body, status_code=STATUS_BY_CODE.get(code, 500))


def _location(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path")]
    out = ""
    for p in parts:
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out or "body"


def describe_validation(errors: list[Any]) -> tuple[str, str, str, list[dict[str, Any]]]:
    """(code, detail, field, cleaned errors) of pydantic errors: MALFORMED_REQUEST for
    unparsable JSON, else INVALID_ARGUMENT naming the first offending field."""
    cleaned = [
        {
            "field": _location(tuple(e.get("loc", ()))),
            "message": e.get("msg", ""),
            "type": e.get("type", ""),
        }
        for e in errors
    ]
    bad_json = next((e for e in cleaned if e["type"] == "json_invalid"), None)
    if bad_json is not None:
        where = bad_json["field"]  # "body", or a field holding JSON (a form's `params`)
        if where == "body":
            detail = "request body is not valid JSON: " + bad_json["message"]
        else:
            detail = f"{where}: not valid JSON: {bad_json['message']}"
        return "MALFORMED_REQUEST", detail, where, cleaned
    first = cleaned[0] if cleaned else {"field": "body", "message": "invalid request"}
    detail = f"{first['field']}: {first['message']}"
    if len(cleaned) > 1:
        detail += f" (and {len(cleaned) - 1} more error(s))"
    return "INVALID_ARGUMENT", detail, first["field"], cleaned


def validation_errors(errors: list[Any]) -> FastJSONResponse:
    """422 (or 400 for unparsable JSON) naming the first offending field."""
    code, detail, field, cleaned = describe_validation(errors)
    if code == "MALFORMED_REQUEST":
        return error_response(code, detail, field=field)
    return error_response(code, detail, field=field, errors=cleaned[:20])


def install_error_handlers(app: FastAPI) -> None:
    """Register the translation of every exception type the API can meet."""

    @app.exception_handler(ServiceError)
    async def _service(_: Request, exc: ServiceError) -> FastJSONResponse:
        if STATUS_BY_CODE.get(exc.code, 500) >= 500 or exc.code in OPERATOR_CODES:
            log.warning("%s: %s", exc.code, exc.detail)
        limit = exc.extra.get("limit")
        evidence = exc.extra.get("evidence")  # a refused promotion's figures
        response = error_response(exc.code, exc.detail, exc.field, limit=limit, evidence=evidence)
        if (retry_after := exc.extra.get("retry_after")) is not None:
            response.headers["Retry-After"] = str(retry_after)
        return response

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> FastJSONResponse:
        return validation_errors(list(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> FastJSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "INTERNAL")
        resp = error_response(code, str(exc.detail))
        resp.status_code = exc.status_code
        resp.headers.update(exc.headers or {})  # e.g. Allow on a 405
        return resp

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> FastJSONResponse:
        log.exception("unexpected error", exc_info=exc)
        return error_response("INTERNAL", "internal error; the request was not applied")
