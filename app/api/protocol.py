"""uvicorn's h11 protocol with a deadline for the request head (slow or half-open clients).

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive``, but it arms
no timer when a connection opens, nor while a request head is incomplete: a client that
connects and sends nothing, or half a header line, holds a file descriptor for ever
(about 20,000 of them exhausted the process). :class:`GuardedH11Protocol` closes a
connection that has not delivered a complete request head within
``COSTWISE_HEADER_TIMEOUT`` seconds of opening, or of the end of its previous response;
the deadline is not extended by trickled bytes (slowloris). Once a head is complete the
request runs under the application's own limits.

Used by ``costwise serve`` (and so by the Dockerfile and the compose file) through
uvicorn's ``http=`` option, with ``h11_max_incomplete_event_size`` (header size),
``timeout_keep_alive`` and ``limit_concurrency``: see :func:`uvicorn_options`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.settings import Settings, get_settings


class GuardedH11Protocol(H11Protocol):
    """H11Protocol + a request-head deadline (``Settings.header_timeout``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = get_settings().header_timeout
        self._head_timer: asyncio.TimerHandle | None = None

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()  # no complete request head in time

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # a complete request head arrived
            self._cancel_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm_head_timer()  # the next request's head has the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """The connection limits of ``costwise serve`` as ``uvicorn.run`` keyword arguments."""
    return {
        "http": GuardedH11Protocol,
        "h11_max_incomplete_event_size": settings.max_header_bytes,
        "timeout_keep_alive": settings.keep_alive_timeout,
        "limit_concurrency": settings.max_connections,
    }
