"""Exceptions raised by the costwise client, built from the service's error body.

Every error the service answers has the body ``{"detail", "code", "field"}``; the
client raises the subclass of :class:`CostwiseError` that matches the HTTP status,
carrying those fields. A body that is not JSON (a proxy's HTML page, an empty body)
still gives a :class:`CostwiseError` with ``code`` derived from the status.

:data:`ERROR_CODES` is the one list of the service's error codes (code, status on
``/v1`` and on ``/v2``, client exception, meaning): the service's error translation of
both doors (``app.api.errors``, ``app.api.v2.errors``), this client's exceptions and the
error table of docs/api.md (``scripts/errors_table.py``) are derived from it. It lives
here because the client stands alone (httpx and the standard library only).
"""

from __future__ import annotations

import json
from dataclasses import KW_ONLY, dataclass
from typing import Any

import httpx

__all__ = [
    "ERROR_CODES",
    "Conflict",
    "CostwiseError",
    "ErrorCode",
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
    evidence : dict or None
        For ``PROMOTION_REFUSED``: the rule, each check and the comparison behind the refusal.
    """

    def __init__(
        self,
        status: int | None,
        code: str,
        detail: str,
        field: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        evidence: dict[str, Any] | None = None,
    ) -> None:
        self.status = status
        self.code = code
        self.detail = detail
        self.field = field
        self.errors = errors or []
        self.evidence = evidence
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


@dataclass(frozen=True)
class ErrorCode:
    """One error code of the service: its HTTP status and what it means."""

    code: str
    status: int  # on /v1 (and on /v2 unless v2_status says otherwise)
    exception: type[CostwiseError]  # what this client raises for that status
    _: KW_ONLY
    meaning: str  # when the service answers it (the docs' table)
    v2_status: int | None = None  # the Open Inference Protocol's status, when different
    bare: bool = False  # the code a bare status gets (no JSON body, a framework's error)
    operator: bool = False  # logged by the service although not a 5xx

    @property
    def statuses(self) -> tuple[int, ...]:
        return (self.status,) if self.v2_status is None else (self.status, self.v2_status)


# one line per code, as the table it is: code, status on /v1, client exception, then flags
ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode("INVALID_ARGUMENT", 422, InvalidArgument, v2_status=400, bare=True, meaning="a field, row or cost is wrong (the detail names it and what was expected); on /v2 a 400, as the Open Inference Protocol expects"),
    ErrorCode("MALFORMED_REQUEST", 400, InvalidArgument, bare=True, meaning="the body, or a form field that holds JSON (`params`), is not valid JSON"),
    ErrorCode("NOT_FOUND", 404, NotFound, bare=True, meaning="unknown model, version, alias, job or plot"),
    ErrorCode("METHOD_NOT_ALLOWED", 405, CostwiseError, bare=True, meaning="the path does not take this method (header `Allow`)"),
    ErrorCode("ALREADY_EXISTS", 409, Conflict, meaning="the name exists already"),
    ErrorCode("CONFLICT", 409, Conflict, bare=True, meaning="the state does not allow it (e.g. the job has finished, the output exists)"),
    ErrorCode("PAYLOAD_TOO_LARGE", 413, PayloadTooLarge, bare=True, meaning='body, rows, features or items over a limit (the detail names it; see "Body limits" below)'),
    ErrorCode("UNSUPPORTED_MEDIA_TYPE", 415, CostwiseError, bare=True, meaning="a body that is not JSON (training: neither JSON nor multipart)"),
    ErrorCode("UNAUTHORIZED", 401, Unauthorized, bare=True, meaning="authentication is on and the API key is missing, unknown or revoked (header `WWW-Authenticate: Bearer`)"),
    ErrorCode("FORBIDDEN", 403, Forbidden, bare=True, meaning="the API key is valid but its role does not allow the operation"),
    ErrorCode("TRAINING_TIME_LIMIT", 422, InvalidArgument, v2_status=400, meaning="the training ran longer than `COSTWISE_MAX_TRAINING_SECONDS` and was stopped; nothing was registered (`limit` holds the value)"),
    ErrorCode("BATCH_TIME_LIMIT", 422, InvalidArgument, meaning="(on the job) a batch decision job ran longer than `COSTWISE_MAX_JOB_SECONDS` and was stopped; no output was left"),
    ErrorCode("PROMOTION_REFUSED", 409, Conflict, meaning="the promotion gate's rule does not hold for the candidate (too few labelled pairs, the cost-difference interval not below the bound, or calibration worse than allowed); the alias was not moved, `evidence` holds the rule, each check and the comparison"),
    ErrorCode("ARTIFACT_CORRUPTED", 409, Conflict, operator=True, meaning="the version's stored artifact (or the base artifact a recalibrated version shares) fails its sha256 check; it is never used, the detail names the version (no retry helps: move the alias to an intact version, retrain, or restore the artifact)"),
    ErrorCode("SCHEMA_OUT_OF_DATE", 503, Unavailable, meaning="the database schema is not at the migrations' head (run `costwise db upgrade`)"),
    ErrorCode("JOB_ABANDONED", 503, Unavailable, meaning="(on the job) its worker stopped answering and the job ran out of attempts"),
    ErrorCode("UNAVAILABLE", 503, Unavailable, bare=True, meaning="the database is unreachable or a statement ran past `COSTWISE_DB_TIMEOUT`; or a per-process cap (trainings, large requests, monitoring reports) or the prediction log's queue stayed full (`COSTWISE_PREDICTION_LOG_WAIT_SECONDS`): retry after `Retry-After`; (on a job) the Dask cluster of `COSTWISE_DASK_SCHEDULER` could not be reached or was lost (nothing was registered, no output was left)"),
    ErrorCode("MISCONFIGURED", 500, ServerError, meaning="the configuration is unsafe or incomplete (the service refuses to start)"),
    ErrorCode("INTERNAL", 500, ServerError, meaning="an unexpected error; the request was not applied (the service logs it)"),
)  # fmt: skip
_BY_STATUS = {s: e.exception for e in ERROR_CODES for s in e.statuses}
_CODE_BY_STATUS = {e.status: e.code for e in ERROR_CODES if e.bare}


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
        body.get("evidence") if isinstance(body.get("evidence"), dict) else None,
    )
