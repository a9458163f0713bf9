"""One path for every request body: each route declares its body once, as a dependency.

Every POST/PUT/PATCH route takes its body through a :class:`RouteBody` (raw bytes, for
routes that parse themselves: predict, evaluate, /v2 infer, training, recalibration) or a
:class:`JsonBody` (a pydantic model: outcomes, batch, keys, aliases, model settings),
declared beside the route with its limits::

    OUTCOMES_BODY = JsonBody(OutcomesRequest, max_bytes=..., items=Items("outcomes", 3, 10_000))

    async def outcomes(name: ModelName, body: Annotated[OutcomesRequest, Depends(OUTCOMES_BODY)])

What every body then goes through, whatever the route:

1. its media type (415 ``UNSUPPORTED_MEDIA_TYPE``, :func:`app.api.bodies.parsing.media_type`);
2. its byte limit: the route's ``max_bytes`` where its items are bounded (10,000 outcomes
   never need more than ~10 MB), else COSTWISE_MAX_BODY_BYTES. A declared
   ``Content-Length`` over it is a 413 ``PAYLOAD_TOO_LARGE`` before a byte is read; a
   streamed (chunked) body is counted chunk by chunk and refused as soon as it passes;
3. its parse: on the event loop below COSTWISE_PARSE_OFFLOAD_BYTES (a one-row predict
   stays fast), else in the parse worker process (:mod:`app.api.bodies.parse_pool`), where an
   item limit is first checked by counting, without decoding (:mod:`app.api.bodies.scan`).

Nothing here reads a body that a route does not declare: a route with FastAPI's own body
parameter would read and decode it on the event loop, so none has one
(``tests/app/api/test_body_limits.py`` checks every route of the app).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope

from app.api.bodies.parse_pool import BodyInvalid, ParsePool
from app.api.bodies.parsing import JSON, media_type, media_type_of
from app.api.bodies.scan import scan
from app.errors import PayloadTooLarge

M = TypeVar("M", bound=BaseModel)
KIB = 1024
SMALL_BODY_BYTES = 64 * KIB  # a body of a few scalars (a key's name, an alias's version)


@dataclass(frozen=True)
class Items:
    """At most ``limit`` items in the list ``field``, each a JSON object or array at
    ``depth`` (1 = the body itself; ``{"outcomes": [{...}, ...]}``: depth 3)."""

    field: str
    depth: int
    limit: int


def too_many(field: str, count: int, limit: int, before_decoding: bool) -> PayloadTooLarge:
    when = "; refused before decoding" if before_decoding else ""
    return PayloadTooLarge(
        f"{field}: the body holds {'at least ' if before_decoding else ''}{count} items, "
        f"over the limit of {limit} per request{when}",
        field=field,
        limit=limit,
    )


def validate_json(body: bytes, model: type[M], items: Items | None, large: bool) -> M:
    """``body`` as ``model``; over ``items``' limit is a 413 (counted without decoding
    when ``large``, in the parse worker). pydantic's errors propagate."""
    if large and items is not None:
        count = scan(body, max_depth=items.depth).containers(items.depth)
        if count > items.limit:
            raise too_many(items.field, count, items.limit, before_decoding=True)
    value = model.model_validate_json(body)
    if items is not None:
        listed = getattr(value, items.field)
        if listed is not None and len(listed) > items.limit:
            raise too_many(items.field, len(listed), items.limit, before_decoding=False)
    return value


class Body:
    """A request body as it arrived: its chunks, joined only when parsed here (a large
    one travels to the parse worker without being joined: :meth:`ParsePool.run_on_body`)."""

    __slots__ = ("chunks", "size")

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.size = sum(len(c) for c in chunks)

    def __len__(self) -> int:
        return self.size

    def join(self) -> bytes:
        return b"".join(self.chunks)  # one chunk: the chunk itself, no copy


async def parse_body(
    parsing: ParsePool, fn: Any, body: Body, *args: Any, small_in_thread: bool = False
) -> Any:
    """``fn(bytes, *args, large)``: on the event loop for a small body (``large`` False;
    in a thread with ``small_in_thread``), in the parse worker for one of
    COSTWISE_PARSE_OFFLOAD_BYTES or more (``large`` True; ``fn`` importable by name,
    ``args`` picklable). Errors as :meth:`ParsePool.run` raises them, or pydantic's
    ValidationError for a small body."""
    if parsing.offloads(body.size):
        return await parsing.run_on_body(fn, body.chunks, *args)
    if small_in_thread:
        return await run_in_threadpool(partial(fn, body.join(), *args, False))
    return fn(body.join(), *args, False)


class RouteBody:
    """A route's body as bytes, read under the route's byte limit.

    ``max_bytes``: the route's own limit (None: COSTWISE_MAX_BODY_BYTES; never more than
    it). ``media_types``: what the route accepts (``default`` without a Content-Type).
    ``streamed``: the route reads the body itself as a stream (multipart): only its
    media type and declared length are checked here, the stream is counted by
    :class:`app.api.server.middleware.BodyLimitMiddleware`.
    """

    def __init__(
        self,
        *,
        max_bytes: int | None = None,
        media_types: tuple[str, ...] = (JSON,),
        default: str = JSON,
        streamed: tuple[str, ...] = (),
    ) -> None:
        self.max_bytes = max_bytes
        self.media_types = media_types
        self.default = default
        self.streamed = streamed

    def limit(self, request: Request) -> tuple[int, str]:
        """The byte limit for this request, and the setting or reason that sets it."""
        return self.limit_of(request.app.state.services.settings.max_body_bytes)

    def limit_of(self, global_limit: int) -> tuple[int, str]:
        """:meth:`limit` under COSTWISE_MAX_BODY_BYTES = ``global_limit``."""
        if self.max_bytes is not None and self.max_bytes < global_limit:
            return self.max_bytes, "this route's items are bounded"
        return global_limit, "setting COSTWISE_MAX_BODY_BYTES"

    def _refuse(self, limit: int, why: str) -> PayloadTooLarge:
        return PayloadTooLarge(
            f"request body is larger than the limit of {limit} bytes ({why})",
            field="body",
            limit=limit,
        )

    async def read(self, request: Request) -> tuple[str, Body]:
        """The media type, and the body (empty for a ``streamed`` type); 413 over the
        limit, before reading when the length is declared, else as soon as it passes."""
        ctype = media_type(request, self.media_types, self.default)
        limit, why = self.limit(request)
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise self._refuse(limit, why)
        chunks: list[bytes] = []
        if ctype in self.streamed:
            return ctype, Body(chunks)
        received = 0
        async for chunk in request.stream():
            if chunk:
                received += len(chunk)
                if received > limit:
                    raise self._refuse(limit, why)
                chunks.append(chunk)
        return ctype, Body(chunks)

    async def __call__(self, request: Request) -> Body:
        """The dependency: the body (checked media type and size)."""
        _, body = await self.read(request)
        return body

    async def read_asgi(self, scope: Scope, receive: Receive, global_limit: int) -> Body:
        """:meth:`read`'s body for a route that owns the raw ASGI request (the direct
        predict route, :class:`app.api.routes.predict.DirectRoute`): the same checks in
        the same order, on the scope's headers and ``receive`` as Starlette's
        ``Request.stream`` reads them, without building a Request and its Headers (a few
        us of a one-row predict). ``global_limit``: COSTWISE_MAX_BODY_BYTES."""
        content_type = declared = None
        for key, value in scope["headers"]:  # lower-case names (ASGI); the first counts
            if key == b"content-type" and content_type is None:
                content_type = value.decode("latin-1")
            elif key == b"content-length" and declared is None:
                declared = value.decode("latin-1")
        ctype = media_type_of(content_type, self.media_types, self.default)
        limit, why = self.limit_of(global_limit)
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise self._refuse(limit, why)
        chunks: list[bytes] = []
        if ctype in self.streamed:
            return Body(chunks)
        received = 0
        while True:
            message = await receive()
            if message["type"] == "http.request":
                chunk = message.get("body", b"")
                if chunk:
                    received += len(chunk)
                    if received > limit:
                        raise self._refuse(limit, why)
                    chunks.append(chunk)
                if not message.get("more_body", False):
                    return Body(chunks)
            elif message["type"] == "http.disconnect":
                raise ClientDisconnect()


class NoBody(RouteBody):
    """A POST route that takes no body (e.g. cancelling a job): nothing is read; a
    declared length over ``max_bytes`` is refused (413) before anything is received."""

    def __init__(self, max_bytes: int = SMALL_BODY_BYTES) -> None:
        super().__init__(max_bytes=max_bytes)

    async def __call__(self, request: Request) -> Body:
        limit, why = self.limit(request)
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise self._refuse(limit, why)
        return Body([])


class JsonBody(RouteBody, Generic[M]):
    """A route's JSON body as ``model``: read under the byte limit, then validated on the
    event loop when small or in the parse worker when large, ``items`` checked first."""

    def __init__(
        self,
        model: type[M],
        *,
        max_bytes: int | None = None,
        items: Items | None = None,
        optional: bool = False,
    ) -> None:
        super().__init__(max_bytes=max_bytes)
        self.model = model
        self.items = items
        self.optional = optional  # an empty body is ``model()``: every field's default

    async def __call__(self, request: Request) -> M:  # type: ignore[override]
        _, body = await self.read(request)
        if self.optional and not body.size:
            return self.model()
        parsing: ParsePool = request.app.state.services.parsing
        try:
            value: M = await parse_body(parsing, validate_json, body, self.model, self.items)
        except ValidationError as exc:
            raise RequestValidationError(_at_body(exc.errors())) from None
        except BodyInvalid as exc:
            raise RequestValidationError(_at_body(exc.errors)) from None
        return value

    def openapi(self) -> dict[str, Any]:
        """The route's ``openapi_extra``: its body's schema (added to the components by
        :func:`app.api.main.create_app`), as FastAPI documents a body parameter."""
        return json_request_body(self.model.__name__, required=not self.optional)


def json_request_body(schema_name: str, *, required: bool = True) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{schema_name}"}
    return {"requestBody": {"required": required, "content": {JSON: {"schema": ref}}}}


def _at_body(errors: Any) -> list[dict[str, Any]]:
    """pydantic's errors located as FastAPI locates a body's (``("body", ...)``)."""
    return [dict(e, loc=("body", *tuple(e.get("loc", ())))) for e in errors]
