"""Request bodies that routes parse themselves: one media-type check, one JSON parser.

Routes that read the raw body (predict and evaluate, training, KServe V2 infer) call
these, so an unsupported content type gets the same 415 everywhere (``{"detail", "code":
"UNSUPPORTED_MEDIA_TYPE", "field": "content-type"}``; on /v2 the V2 error body with the
same message), and JSON is validated in one pass by pydantic-core.
"""

from __future__ import annotations

from typing import TypeVar

from fastapi import Request
from pydantic import BaseModel

from app.errors import ServiceError

JSON = "application/json"
M = TypeVar("M", bound=BaseModel)


class UnsupportedMediaType(ServiceError):
    code = "UNSUPPORTED_MEDIA_TYPE"

    def __init__(self, ctype: str, accepted: tuple[str, ...]) -> None:
        super().__init__(
            f"content type {ctype or '(none)'!r} is not supported; send " + " or ".join(accepted),
            field="content-type",
        )


def media_type(request: Request, accepted: tuple[str, ...] = (JSON,), default: str = JSON) -> str:
    """The request's media type (lower case, parameters dropped), one of ``accepted``;
    ``default`` when there is no Content-Type header. Raises UnsupportedMediaType."""
    ctype = request.headers.get("content-type", default).split(";")[0].strip().lower()
    if ctype not in accepted:
        raise UnsupportedMediaType(ctype, accepted)
    return ctype


async def json_body(request: Request, model: type[M]) -> M:
    """The body as ``model``, from bytes in one pass; pydantic's ValidationError
    propagates (the caller turns it into its own error shape)."""
    media_type(request)
    return model.model_validate_json(await request.body())
