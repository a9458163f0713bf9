"""Proof 7: connection limits of ``costwise serve`` (a real uvicorn subprocess).

- 2,000 half-open connections (half send nothing, half send an incomplete request head)
  are closed by the server within ``COSTWISE_HEADER_TIMEOUT`` while a normal client is
  served on fresh connections the whole time.
- A request head over ``COSTWISE_MAX_HEADER_BYTES`` is refused (400) and closed.
- Authentication happens before any body byte is read: a head announcing a 60 MiB body
  to ``POST /v1/keys`` or ``PUT .../aliases/...`` without a key gets its 401 although the
  body is never sent.

Bounded: one server, 2,000 sockets, at most ~20 s. Figures go to
``bench/reliability/out/connections.json``.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.reliability.conftest import write_result

HALF_OPEN = 2_000
HEADER_TIMEOUT = 3.0
SLACK = 5.0  # scheduling slack on a loaded 2-CPU machine (the figure is recorded)
BOOTSTRAP = "bootstrap-R7q2Vx9LmT4wZ8pK3sN6yB1cF5hJ0dGa"


@pytest.fixture
def served(server_factory: Any, tmp_path: Path) -> Any:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    return server_factory(
        url,
        serve=True,
        env={
            "COSTWISE_HEADER_TIMEOUT": str(HEADER_TIMEOUT),
            "COSTWISE_MAX_HEADER_BYTES": str(16 * 1024),
            "COSTWISE_AUTH": "on",
            "COSTWISE_BOOTSTRAP_ADMIN_KEY": BOOTSTRAP,
        },
    )


def _address(base_url: str) -> tuple[str, int]:
    host, port = base_url.removeprefix("http://").split(":")
    return host, int(port)


def test_half_open_connections_are_closed_while_a_client_is_served(served: Any) -> None:
    address = _address(served.base_url)
    normal: list[int | str] = []
    stop = threading.Event()

    def client() -> None:
        with httpx.Client(base_url=served.base_url, timeout=10) as c:
            while not stop.is_set():
                try:
                    normal.append(c.get("/health/live").status_code)
                    normal.append(c.get("/v1/models", headers={"X-API-Key": BOOTSTRAP}).status_code)
                except httpx.HTTPError as exc:
                    normal.append(type(exc).__name__)
                time.sleep(0.02)

    socks: list[socket.socket] = []
    opened: dict[int, float] = {}
    started = time.monotonic()
    try:
        for i in range(HALF_OPEN):
            s = socket.create_connection(address, timeout=5)
            if i % 2:
                s.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # never ends
            s.setblocking(False)
            opened[s.fileno()] = time.monotonic()
            socks.append(s)
        open_seconds = time.monotonic() - started
        worker = threading.Thread(target=client)
        worker.start()
        selector = selectors.DefaultSelector()
        for s in socks:
            selector.register(s, selectors.EVENT_READ)
        closed_after: list[float] = []
        deadline = time.monotonic() + HEADER_TIMEOUT + SLACK + open_seconds
        while selector.get_map() and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=0.5):
                s = key.fileobj
                assert isinstance(s, socket.socket)
                try:
                    data = s.recv(4096)
                except (ConnectionResetError, BlockingIOError):
                    data = b""
                assert data == b"", f"unexpected answer to a half-open connection: {data[:80]!r}"
                closed_after.append(time.monotonic() - opened[s.fileno()])
                selector.unregister(s)
        still_open = len(selector.get_map())
        stop.set()
        worker.join(timeout=30)
    finally:
        stop.set()
        for s in socks:
            s.close()
    served_ok = sum(1 for v in normal if v == 200)
    errors = [v for v in normal if v != 200]
    closed_after.sort()
    write_result(
        "connections",
        {
            "half_open": HALF_OPEN,
            "header_timeout_s": HEADER_TIMEOUT,
            "seconds_to_open_all": round(open_seconds, 3),
            "closed": len(closed_after),
            "still_open_at_deadline": still_open,
            "closed_after_s_min_p50_max": [
                round(closed_after[0], 3),
                round(closed_after[len(closed_after) // 2], 3),
                round(closed_after[-1], 3),
            ]
            if closed_after
            else None,
            "normal_client_200": served_ok,
            "normal_client_errors": errors[:20],
        },
    )
    assert still_open == 0, f"{still_open} half-open connections still open"
    assert min(closed_after) >= HEADER_TIMEOUT * 0.9  # closed by the timeout, not at once
    assert max(closed_after) <= HEADER_TIMEOUT + SLACK + open_seconds
    assert served_ok > 0 and not errors, errors[:10]


def _raw(address: tuple[str, int], head: bytes, timeout: float = 10.0) -> bytes:
    """Send ``head`` (no body) and read the answer until the server closes or 2 s idle."""
    with socket.create_connection(address, timeout=timeout) as s:
        s.sendall(head)
        chunks = []
        try:
            while chunk := s.recv(65536):
                chunks.append(chunk)
                if b"\r\n\r\n" in b"".join(chunks):
                    s.settimeout(2)
        except (TimeoutError, ConnectionResetError):
            pass
    return b"".join(chunks)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/keys"),
        ("PUT", "/v1/models/m/aliases/production"),
        ("POST", "/v1/models/m/predict"),
    ],
)
def test_authentication_before_the_body(served: Any, method: str, path: str) -> None:
    """Only the head is sent (announcing 60 MiB): the 401 comes without reading a body."""
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {60 * 2**20}\r\n\r\n"
    ).encode()
    answer = _raw(_address(served.base_url), head)
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]
    assert b"UNAUTHORIZED" in answer and b"www-authenticate: Bearer" in answer.lower().replace(
        b"www-authenticate: bearer", b"www-authenticate: Bearer"
    )


def test_oversized_request_head_is_refused(served: Any) -> None:
    """A 1 MiB head (the limit is 16 KiB): the guarded protocol refuses it once its
    incomplete head is over the limit, so a head costs at most the limit plus one read."""
    head = b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 2**20 + b"\r\n\r\n"
    answer = _raw(_address(served.base_url), head)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    with httpx.Client(base_url=served.base_url) as c:  # and the server is fine
        assert c.get("/health/live").status_code == 200


CAP = 2 * 2**20  # COSTWISE_MAX_BODY_BYTES of the server below


def _send_chunked_until_answered(
    address: tuple[str, int], path: str, total: int, chunk_size: int = 64 * 1024
) -> tuple[bytes, int]:
    """POST a chunked body (no Content-Length) of up to ``total`` bytes, one chunk at a
    time, stopping as soon as the server answers (or stops reading); returns the answer
    and how many body bytes were sent by then."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    row = b"[0.1,0.2,0.3,0.4],"
    data = (b'{"instances": [' + row * (chunk_size // len(row)))[:chunk_size]
    frame = f"{len(data):x}\r\n".encode() + data + b"\r\n"
    sent = 0
    answer = b""
    with socket.create_connection(address, timeout=10) as s:
        s.sendall(head)
        sel = selectors.DefaultSelector()
        sel.register(s, selectors.EVENT_READ)
        try:
            while sent < total:
                if sel.select(timeout=0):  # the server has answered
                    break
                s.sendall(frame)
                sent += len(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed by the server after its answer
        s.settimeout(5)
        try:
            while chunk := s.recv(65536):
                answer += chunk
                if b"\r\n\r\n" in answer and answer.rstrip().endswith(b"}"):
                    break
        except (TimeoutError, ConnectionResetError):
            pass
    return answer, sent


@pytest.mark.parametrize("path", ["/v1/models/m/predict", "/v2/models/m/infer"])
def test_chunked_body_hits_the_body_cap_while_streaming(
    server_factory: Any, tmp_path: Path, path: str
) -> None:
    """A body without Content-Length is counted as it streams in: 413 once it passes
    COSTWISE_MAX_BODY_BYTES (2 MiB here), while the client is still sending a 32 MiB body;
    the server keeps serving."""
    server = server_factory(
        f"sqlite:///{tmp_path / 'registry.db'}",
        serve=True,
        env={"COSTWISE_MAX_BODY_BYTES": str(CAP)},
    )
    total = 32 * 2**20
    answer, sent = _send_chunked_until_answered(_address(server.base_url), path, total)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:300]
    assert b"COSTWISE_MAX_BODY_BYTES" in answer, answer[:500]
    # answered once the cap was passed, long before the whole body was sent (what the
    # socket buffers of the loopback interface absorbed meanwhile is the slack)
    assert CAP <= sent < total // 2, sent
    write_result(f"chunked-cap{path.replace('/', '-')}", {"cap": CAP, "sent_when_answered": sent})
    with httpx.Client(base_url=server.base_url) as c:
        assert c.get("/health/live").status_code == 200
