"""Proof: probes and keyed traffic survive a flood of idle connections (issue 25, item 6).

- ``costwise serve`` (authentication on, default COSTWISE_MAX_CONNECTIONS = 2,048) while
  3,000 anonymous connections are held open and silent, each one the server closes opened
  again at once, for 18 s: every ``/health/live`` and ``/health/ready`` probe (every 100 ms,
  each on a fresh connection) and every request of a keyed client (predict on a kept-alive
  connection, GET on a fresh one) is answered 200. The server's connection count shows the
  budget was full the whole time (the flood was real). If the hard open-file limit of the
  machine cannot hold 3,000 sockets the flood is smaller and the budget is lowered to stay
  below it (written to the result file).
- With a budget of 16: a new connection closes the oldest silent one, never a connection
  with a request in flight; once requests in flight fill the budget a new request gets
  uvicorn's 503, and the requests in flight still complete.

Loopback only. Figures go to ``bench/reliability/out/connection_flood.json``.
"""

from __future__ import annotations

import selectors
import socket
import time
from pathlib import Path
from typing import Any

import httpx

from bench.reliability.flood import ADMIN, FD_MARGIN, flood_size, measure, raise_open_files, train
from tests.reliability.conftest import write_result

FLOOD = 3_000
DEFAULT_BUDGET = 2_048  # COSTWISE_MAX_CONNECTIONS's default
SECONDS = 18.0


def _address(base_url: str) -> tuple[str, int]:
    host, port = base_url.removeprefix("http://").split(":")
    return host, int(port)


def test_probes_and_keyed_client_are_served_during_an_idle_flood(
    server_factory: Any, tmp_path: Path
) -> None:
    size = flood_size(FLOOD)
    budget = DEFAULT_BUDGET if size >= FLOOD else max(16, size * 2 // 3)
    raise_open_files(size + budget + 2 * FD_MARGIN)  # the server inherits it
    env = {"COSTWISE_AUTH": "on", "COSTWISE_BOOTSTRAP_ADMIN_KEY": ADMIN}
    if budget != DEFAULT_BUDGET:
        env["COSTWISE_MAX_CONNECTIONS"] = str(budget)
    server = server_factory(f"sqlite:///{tmp_path / 'registry.db'}", serve=True, env=env)
    train(server, "flood")

    result = measure(server, "flood", SECONDS, size)
    result["budget"] = budget
    write_result("connection_flood", result)

    probes, keyed, flood = result["probes"], result["keyed"], result["flood"]
    assert probes["calls"] >= SECONDS * 5, probes  # one every 100 ms, give or take
    assert probes["failures"] == [] and probes["ok_200"] == probes["calls"], probes
    assert keyed["calls"] >= 40, keyed
    assert keyed["failures"] == [] and keyed["ok_200"] == keyed["calls"], keyed
    # the flood was real: it filled the budget (the server says so in its log), and the
    # server closed its connections to admit others, without answering them
    assert "connection budget full" in server.log(), server.log()
    assert result["server_connections_min_max"][1] >= budget // 2, result
    assert flood["closed_by_server"] >= size - budget, flood
    assert flood["bytes_answered"] == 0, flood


SMALL = 16
BODY = b'{"instances": [[0.1, -0.2, 0.3, 0.4]]}'


def _closed(s: socket.socket, wait: float) -> bool:
    """True if the server closed ``s`` (EOF or reset) within ``wait`` seconds."""
    selector = selectors.DefaultSelector()
    selector.register(s, selectors.EVENT_READ)
    try:
        if not selector.select(timeout=wait):
            return False
        try:
            return s.recv(1, socket.MSG_PEEK) == b""
        except ConnectionResetError:
            return True
    finally:
        selector.close()


def _answer(s: socket.socket) -> bytes:
    s.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith((b"}", b"]")):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_budget_closes_the_oldest_waiting_connection_never_one_in_flight(
    server_factory: Any, tmp_path: Path
) -> None:
    env = {
        "COSTWISE_AUTH": "on",
        "COSTWISE_BOOTSTRAP_ADMIN_KEY": ADMIN,
        "COSTWISE_MAX_CONNECTIONS": str(SMALL),
    }
    server = server_factory(f"sqlite:///{tmp_path / 'registry.db'}", serve=True, env=env)
    train(server, "flood")
    address = _address(server.base_url)
    silent = []
    for _ in range(SMALL - 1):  # the budget less one: nobody is closed yet
        silent.append(socket.create_connection(address, timeout=5))
        time.sleep(0.02)  # accepted in this order
    busy: list[socket.socket] = []
    try:
        assert not any(_closed(s, 0.2) for s in silent)
        # a probe on a fresh connection: admitted, the oldest silent connection closed
        assert httpx.get(server.base_url + "/health/live", timeout=5).status_code == 200
        assert _closed(silent[0], 2.0)
        assert not any(_closed(s, 0.05) for s in silent[1:])

        # predicts whose body has not arrived yet are in flight: each new one closes a
        # silent connection, oldest first, and none of them is ever closed
        head = (
            "POST /v1/models/flood/predict HTTP/1.1\r\nHost: x\r\n"
            f"X-API-Key: {ADMIN}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(BODY)}\r\n\r\n"
        ).encode()
        for i in range(SMALL - 1):
            s = socket.create_connection(address, timeout=5)
            s.sendall(head)
            busy.append(s)
            time.sleep(0.05)
            if i:  # (the first fills the slot the probe left) the oldest silent one went
                assert _closed(silent[i], 2.0), i
            assert not any(_closed(s, 0.01) for s in silent[i + 1 :])
        assert not any(_closed(s, 0.05) for s in busy)

        # the budget is all requests in flight: nothing is evicted, uvicorn's cap answers
        r = httpx.get(server.base_url + "/health/live", timeout=5)
        assert r.status_code == 503, r.text
        assert not any(_closed(s, 0.05) for s in busy)

        for s in busy:  # and every request in flight completes
            s.sendall(BODY)
        for s in busy:
            answer = _answer(s)
            assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]
        # served and kept alive: evictable again, so new connections are admitted
        assert httpx.get(server.base_url + "/health/live", timeout=5).status_code == 200
    finally:
        for s in silent + busy:
            s.close()
