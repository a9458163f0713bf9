"""uvicorn's HTTP protocol with a deadline and a size limit for the request head.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive``, but it arms
no timer when a connection opens, nor while a request head is incomplete: a client that
connects and sends nothing, or half a header line, holds a file descriptor for ever
(about 20,000 of them exhausted the process). :class:`GuardedHttpToolsProtocol` closes a
connection that has not delivered a complete request head within
``COSTWISE_HEADER_TIMEOUT`` seconds of opening, or of the end of its previous response;
the deadline is not extended by trickled bytes (slowloris). Once a head is complete the
request runs under the application's own limits.

Used by ``costwise serve`` (and so by the Dockerfile and the compose file) through
uvicorn's ``http=`` option, with ``timeout_keep_alive`` and ``limit_concurrency``: see
:func:`uvicorn_options`. It extends uvicorn's httptools protocol (C parser; installed by
``uvicorn[standard]``): a guard on the pure-Python h11 protocol cost the single-row
predict about 0.4 ms of its 1.1 ms p50 in bench/bench_service.py (1.09 ms h11 vs 0.68 ms
before the guard), and was removed. httptools has no head-size option, so the protocol
counts the bytes of an incomplete head itself and answers 400 past
``COSTWISE_MAX_HEADER_BYTES``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.settings import Settings, get_settings


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """HttpToolsProtocol + a request-head deadline and a request-head size limit.

    A head (request line and headers) must be complete within ``Settings.header_timeout``
    of the connection opening or of its first byte (for the next request on a kept-alive
    connection, whose idle time before that byte is the keep-alive timeout's), and must
    not exceed ``Settings.max_header_bytes``: else the connection is closed (400 for an
    oversized head, as h11 answers).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings = get_settings()
        self.header_timeout = settings.header_timeout
        self.max_head_bytes = settings.max_header_bytes
        self._head_timer: asyncio.TimerHandle | None = None
        self._in_head = True  # waiting for (the rest of) a request head
        self._head_bytes = 0

    def _arm_head_timer(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._in_head and not self.transport.is_closing():
            self.transport.close()  # no complete request head in time

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._in_head and not self.transport.is_closing():
            self._head_bytes += len(data)  # bytes that did not complete a head
            if self._head_bytes > self.max_head_bytes:
                self._cancel_head_timer()
                self.send_400_response("Request head too large.")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._head_bytes = 0
        self._arm_head_timer()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._cancel_head_timer()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """The connection limits of ``costwise serve`` as ``uvicorn.run`` keyword arguments."""
    return {
        "http": GuardedHttpToolsProtocol,
        "timeout_keep_alive": settings.keep_alive_timeout,
        "limit_concurrency": settings.max_connections,
    }
