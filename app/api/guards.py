"""Guards that run before any body is read: authentication first, then capacity.

:class:`AuthGateMiddleware` authenticates the caller of every ``/v1`` and ``/v2`` route
(and of ``/metrics`` when it is not public) from the headers alone, **before** the body
is read or parsed: an anonymous 60 MiB ``POST /v1/keys`` is a 401 after the headers,
not after 60 MiB of JSON. The role is still checked by the route's dependency
(:func:`app.api.access.auth.authorize`), which reuses the principal found here.

:class:`LargeRequestMiddleware` counts a request as *large* when its declared (or, for a
chunked body, received) size reaches ``large_bytes``; at most ``max_large`` are handled
at once per process, others get **503 UNAVAILABLE with Retry-After** at once (their
body is not read). When the last large request finishes, the C allocator is asked to
give freed memory back to the system (glibc ``malloc_trim``, in a worker thread).

:class:`app.services.common.slots.Slots` is the same non-blocking counter that bounds synchronous
trainings (:class:`app.services.training.Trainer`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from collections.abc import Callable

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import STATUS_BY_CODE
from app.api.server.middleware import WatchedSend
from app.errors import ServiceError, Unauthorized
from app.services.access.auth import Authenticator
from app.services.common.slots import Slots

log = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = 1


def _load_malloc_trim() -> Callable[[], None] | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError, TypeError):  # not glibc: nothing to do
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int

    def release() -> None:
        trim(0)

    return release


release_free_memory = _load_malloc_trim()


def _is_v2(scope: Scope) -> bool:
    path: str = scope.get("path", "")
    return path == "/v2" or path.startswith("/v2/")


async def send_error(
    scope: Scope,
    send: Send,
    code: str,
    detail: str,
    field: str | None,
    headers: list[tuple[bytes, bytes]] | None = None,
    **extra: object,
) -> None:
    """An error in the body shape of the route family (``{"error"}`` on /v2)."""
    if _is_v2(scope):
        body = orjson.dumps({"error": detail})
    else:
        body = orjson.dumps({"detail": detail, "code": code, "field": field, **extra})
    status = STATUS_BY_CODE.get(code, 500)
    if _is_v2(scope) and code == "INVALID_ARGUMENT":
        status = 400
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def presented_key(scope: Scope) -> str | None:
    """The API key of ``Authorization: Bearer`` or ``X-API-Key``, if any."""
    scheme, _, credentials = (_header(scope, b"authorization") or "").partition(" ")
    key = credentials.strip() if scheme.lower() == "bearer" else None
    return key or _header(scope, b"x-api-key")


class AuthGateMiddleware:
    """Authenticate before the body is read (routes that need a key only)."""

    def __init__(self, app: ASGIApp, auth: Authenticator, metrics_public: bool) -> None:
        self.app = app
        self.auth = auth
        self.metrics_public = metrics_public

    def _needs_key(self, path: str) -> bool:
        if path == "/metrics":
            return not self.metrics_public
        if path.startswith("/v2/health/"):
            return False
        return path.startswith("/v1/") or path == "/v1" or path == "/v2" or path.startswith("/v2/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.auth.enabled or not self._needs_key(scope["path"]):
            await self.app(scope, receive, send)
            return
        try:
            principal = await self.auth.authenticate(presented_key(scope))
        except ServiceError as exc:  # Unauthorized, or the database unavailable
            headers = (
                [(b"www-authenticate", b'Bearer realm="costwise"')]
                if isinstance(exc, Unauthorized)
                else []
            )
            await send_error(scope, send, exc.code, exc.detail, exc.field, headers)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)


class LargeRequestMiddleware:
    """Bound the number of large requests handled at once (503 + Retry-After beyond)."""

    def __init__(self, app: ASGIApp, large_bytes: int, max_large: int) -> None:
        self.app = app
        self.large_bytes = large_bytes
        self.slots = Slots(max_large)

    async def _busy(self, scope: Scope, send: Send) -> None:
        await send_error(
            scope,
            send,
            "UNAVAILABLE",
            f"too many large requests (>= {self.large_bytes} bytes) in progress: at most "
            f"{self.slots.limit} at once (setting COSTWISE_MAX_LARGE_REQUESTS); retry shortly",
            "body",
            [(b"retry-after", str(RETRY_AFTER_SECONDS).encode())],
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        try:
            size = int(declared) if declared is not None else None
        except ValueError:
            size = None
        if size is not None and size < self.large_bytes:
            await self.app(scope, receive, send)
            return
        held = False
        if size is not None:  # declared large: a slot before reading a byte
            if not self.slots.try_acquire():
                await self._busy(scope, send)
                return
            held = True
        received = 0
        watched = WatchedSend(send)

        async def counting_receive() -> Message:
            nonlocal received, held
            message = await receive()
            if not held and message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received >= self.large_bytes:  # a chunked body that turned out large
                    if not self.slots.try_acquire():
                        raise _Busy
                    held = True
            return message

        try:
            await self.app(scope, counting_receive, watched)
        except _Busy:
            if not watched.started:
                await self._busy(scope, send)
        finally:
            if held:
                self.slots.release()
                if self.slots.used == 0 and release_free_memory is not None:
                    await run_in_threadpool(release_free_memory)


class _Busy(Exception):
    pass
