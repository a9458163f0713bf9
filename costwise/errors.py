"""Exceptions raised by the costwise client, built from the service's error body.

Every error the service answers has the body ``{"detail", "code", "field"}``; the
client raises the subclass of :class:`CostwiseError` that matches the HTTP status,
carrying those fields. A body that is not JSON (a proxy's HTML page, an empty body)
still gives a :class:`CostwiseError` with ``code`` derived from the status.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

__all__ = [
    "Conflict",
    "CostwiseError",
    "Forbidden",
    "InvalidArgument",
    "JobTimeout",
    "NotFound",
    "PayloadTooLarge",
    "ServerError",
    "Unauthorized",
    "Unavailable",
    "UnexpectedResponse",
]


class CostwiseError(Exception):
    """An error answered by the service (or met on the way to it).

    Attributes
    ----------
    status : int or None
        HTTP status; None when no response was received (see :class:`Unavailable`).
    code : str
        The service's stable error code, e.g. ``NOT_FOUND``, ``INVALID_ARGUMENT``.
    detail : str
        What is wrong and what was expected.
    field : str or None
        The offending field or row (``features[3][1]``, ``costs.c_fp``...), when known.
    errors : list of dict
        Every validation error (``field``, ``message``, ``type``), for 422 answers.
    """

    def __init__(
        self,
        status: int | None,
        code: str,
        detail: str,
        field: str | None = None,
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        self.status = status
        self.code = code
        self.detail = detail
        self.field = field
        self.errors = errors or []
        where = f" (field {field})" if field else ""
        super().__init__(f"{status or '-'} {code}: {detail}{where}")


class InvalidArgument(CostwiseError):
    """400 or 422: the request is malformed or a value is out of its domain."""


class Unauthorized(CostwiseError):
    """401: missing, unknown or revoked API key."""


class Forbidden(CostwiseError):
    """403: the API key's role does not allow this."""


class NotFound(CostwiseError):
    """404: no such model, version, alias, job or plot."""


class Conflict(CostwiseError):
    """409: e.g. the name exists already, or the job has finished and cannot be cancelled."""


class PayloadTooLarge(CostwiseError):
    """413: the body is larger than the service accepts (``COSTWISE_MAX_BODY_BYTES``)."""


class Unavailable(CostwiseError):
    """503, or no answer at all (connection refused, timeout) after every retry."""


class ServerError(CostwiseError):
    """Any other 5xx: the request was not applied (the service says so in ``detail``)."""


class UnexpectedResponse(CostwiseError):
    """A 2xx answer whose body is not what the API documents (wrong server or version)."""


class JobTimeout(CostwiseError, TimeoutError):
    """:meth:`wait_for_job` gave up before the job finished (the job goes on)."""


_BY_STATUS: dict[int, type[CostwiseError]] = {
    400: InvalidArgument,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: InvalidArgument,
    503: Unavailable,
}
_CODE_BY_STATUS = {
    400: "MALFORMED_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    422: "INVALID_ARGUMENT",
    503: "UNAVAILABLE",
}


def error_class(status: int) -> type[CostwiseError]:
    """The exception class for an HTTP error status."""
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else CostwiseError


def error_from_response(response: httpx.Response) -> CostwiseError:
    """The exception for an error ``response``, from its JSON body when it has one."""
    status = response.status_code
    try:
        body = json.loads(response.content)
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("detail"), str):
        text = response.text.strip()
        detail = (text[:200] + "...") if len(text) > 200 else text
        return error_class(status)(
            status,
            _CODE_BY_STATUS.get(status, "HTTP_ERROR"),
            detail or response.reason_phrase or f"HTTP {status}",
        )
    return error_class(status)(
        status,
        str(body.get("code") or _CODE_BY_STATUS.get(status, "HTTP_ERROR")),
        body["detail"],
        body.get("field"),
        body.get("errors"),
    )
