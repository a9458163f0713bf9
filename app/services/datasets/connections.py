"""The connections a fetch makes: every address checked before connecting, pinned, and
shut down when the fetch's deadline passes.

:class:`FencedBackend` is an httpcore network backend (httpcore calls ``connect_tcp``
for every new connection: the first request's and each redirect's). It asks the
:class:`~app.services.datasets.addresses.AddressPolicy` for the host's checked addresses
(a refusal raises :class:`~app.errors.Forbidden` before any socket is opened), connects
to one of those addresses (never resolving the name again), and keeps the sockets so
that :meth:`FencedBackend.cut` can shut them down at the deadline: a read blocked on a
server that trickles returns at once.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any

from app.errors import InvalidArgument
from app.services.datasets.addresses import AddressPolicy

__all__ = ["DeadlinePassed", "FencedBackend"]


class DeadlinePassed(Exception):
    """The total deadline passed and the fetch's sockets were shut down."""


class FencedBackend:
    """httpcore network backend: check every address before connecting, pin it, and
    shut every socket down when the deadline passes (:meth:`cut`)."""

    def __init__(self, policy: AddressPolicy, field: str, uri: str, deadline: float) -> None:
        import httpcore

        self._inner = httpcore.SyncBackend()
        self._policy = policy
        self._field, self._uri = field, uri
        self._deadline = deadline
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.hop = 0
        self.was_cut = False

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> Any:
        import httpcore

        addresses = self._policy.checked_addresses(
            host, port, field=self._field, uri=self._uri, hop=self.hop
        )
        failure: Exception = httpcore.ConnectError("no address")
        for ip in addresses:  # each one checked above; DNS is not asked again
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise DeadlinePassed()
            try:
                stream = self._inner.connect_tcp(
                    str(ip),
                    port,
                    timeout=min(timeout or remaining, remaining),
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            with self._lock:
                self._sockets.append(stream.get_extra_info("socket"))
                if self.was_cut:
                    self._shutdown(self._sockets[-1])
            return stream
        raise failure

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise InvalidArgument(f"{self._field}: unix sockets are not fetched", field=self._field)

    def sleep(self, seconds: float) -> None:  # pragma: no cover - retries are off
        time.sleep(seconds)

    def cut(self) -> None:
        """The deadline: shut down every socket (a blocked read returns at once)."""
        with self._lock:
            self.was_cut = True
            for s in self._sockets:
                self._shutdown(s)

    @staticmethod
    def _shutdown(s: socket.socket) -> None:
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)
