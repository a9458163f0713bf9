"""A TCP relay on 127.0.0.1 that can be frozen: a database (or Redis) path that stalls.

``Relay(host, port)`` listens on a free loopback port and forwards every connection to
``host:port``. :meth:`Relay.freeze` stops forwarding bytes in both directions without
closing anything (new connections are still accepted, their bytes held): to a client this
is a server, or a network path, that stopped answering. :meth:`Relay.thaw` forwards again
everything held and what follows. Used by the stall proofs (tests/reliability/test_stall.py)
and their measurements (bench/reliability/stall.py).
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time


class Relay:
    """Threaded relay: one accept thread, two pump threads per connection."""

    def __init__(self, host: str, port: int, *, frozen: bool = False) -> None:
        self.target = (host, port)
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(256)
        self._listener.settimeout(0.1)
        self.port: int = self._listener.getsockname()[1]
        self._running = threading.Event()  # set: forward; clear: frozen
        if not frozen:
            self._running.set()
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.connections = 0
        self._thread = threading.Thread(target=self._accept, name="relay-accept", daemon=True)
        self._thread.start()

    @property
    def frozen(self) -> bool:
        return not self._running.is_set()

    def freeze(self) -> None:
        self._running.clear()

    def thaw(self) -> None:
        self._running.set()

    def close(self) -> None:
        self._closed.set()
        self._running.set()
        self._thread.join(timeout=2)
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                with contextlib.suppress(OSError):
                    s.close()
            self._sockets.clear()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, upstream]
                self.connections += 1
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        while not self._closed.is_set():
            if not self._running.wait(0.05):
                continue  # frozen: read nothing, so nothing is forwarded or answered
            try:
                ready, _, _ = select.select([src], [], [], 0.05)
                if not ready:
                    continue
                data = src.recv(65536)
            except (OSError, ValueError):
                break
            if not data:
                break
            while not self._running.is_set() and not self._closed.is_set():
                time.sleep(0.02)  # frozen while holding bytes: deliver them after the thaw
            try:
                dst.sendall(data)
            except OSError:
                break
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
