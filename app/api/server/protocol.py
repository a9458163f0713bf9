"""uvicorn's HTTP protocol with a deadline and a size limit for the request head.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive``, but it arms
no timer when a connection opens, nor while a request head is incomplete: a client that
connects and sends nothing, or half a header line, holds a file descriptor for ever
(about 20,000 of them exhausted the process). :class:`GuardedHttpToolsProtocol` closes a
connection that has not delivered a complete request head within
``COSTWISE_HEADER_TIMEOUT`` seconds of opening, or of the end of its previous response;
the deadline is not extended by trickled bytes (slowloris). Once a head is complete the
request runs under the application's own limits.

With a connection budget (uvicorn's ``limit_concurrency``, COSTWISE_MAX_CONNECTIONS), a new
connection arriving at a full budget closes the oldest connection that waits for a request
head (:mod:`app.api.server.connection_budget`), so silent connections cannot starve probes and
clients; connections with a request in flight are kept and still capped by uvicorn (503).

Used by ``costwise serve`` (and so by the Dockerfile and the compose file) through
uvicorn's ``http=`` option, with ``timeout_keep_alive`` and ``limit_concurrency``: see
:func:`uvicorn_options`. It extends uvicorn's httptools protocol (C parser; installed by
``uvicorn[standard]``): a guard on the pure-Python h11 protocol cost the single-row
predict about 0.4 ms of its 1.1 ms p50 in bench/serving/service.py (1.09 ms h11 vs 0.68 ms
before the guard), and was removed. httptools has no head-size option, so the protocol
counts the bytes of an incomplete head itself and answers 400 past
``COSTWISE_MAX_HEADER_BYTES``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.api.server.connection_budget import waiting_connections
from app.settings import Settings, get_settings


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """HttpToolsProtocol + a request-head deadline and a request-head size limit.

    A head (request line and headers) must be complete within ``Settings.header_timeout``
    of the connection opening or of its first byte (for the next request on a kept-alive
    connection, whose idle time before that byte is the keep-alive timeout's), and must
    not exceed ``Settings.max_header_bytes``: else the connection is closed (400 for an
    oversized head, as h11 answers). While it waits for a head it may be closed to admit
    a new connection at a full budget (``evict``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings = get_settings()
        self.header_timeout = settings.header_timeout
        self.max_head_bytes = settings.max_header_bytes
        self._head_timer: asyncio.TimerHandle | None = None
        self._in_head = True  # waiting for (the rest of) a request head
        self._head_bytes = 0
        self.waiting = waiting_connections(self.server_state)

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

    def evict(self) -> None:
        """Close this waiting connection to admit a new one. It leaves uvicorn's count at
        once (uvicorn's ``connection_lost`` comes a loop turn later), so that requests
        completing their head meanwhile are not refused for connections already closing."""
        self._cancel_head_timer()
        self.connections.discard(self)
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()
        self.waiting.opened(self)
        if self.limit_concurrency is not None:
            self.waiting.make_room(len(self.connections), self.limit_concurrency, self)

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
        self.waiting.busy(self)
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self.pipeline:
            self.waiting.idle(self)  # kept alive, waiting for its next head

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        self.waiting.forget(self)
        super().connection_lost(exc)


def uvicorn_options(settings: Settings, connection_budget: int | None = None) -> dict[str, Any]:
    """The connection limits of ``costwise serve`` as ``uvicorn.run`` keyword arguments.

    ``connection_budget`` (default ``settings.max_connections``) is the budget that fits
    the open-file limit (:func:`app.api.server.connection_budget.fit_open_files`).
    """
    return {
        "http": GuardedHttpToolsProtocol,
        "timeout_keep_alive": settings.keep_alive_timeout,
        "limit_concurrency": connection_budget or settings.max_connections,
    }
