"""Retries: against a tiny real HTTP server that answers 503 before it answers 200.

The backoff arithmetic (``Retry.delay``) is checked directly, and the sleeps the
client takes are observed with an httpx MockTransport (only for the timing logic;
the API itself is always the real service in the other tests).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from costwise import Client, CostwiseError, Retry, ServerError, Unavailable, UnexpectedResponse
from costwise._core import Call
from tests.costwise.conftest import free_port

HEALTH = json.dumps({"status": "ok", "checks": {}}).encode()
NOT_READY = json.dumps({"detail": "database unreachable", "code": "UNAVAILABLE", "field": None})


class Flaky:
    """A real HTTP server: the first ``failures`` requests get ``status``, then 200."""

    def __init__(self, failures: int, status: int = 503, body: bytes = NOT_READY.encode()) -> None:
        self.failures, self.status, self.body = failures, status, body
        self.requests: list[str] = []
        flaky = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                flaky.requests.append(f"{self.command} {self.path}")
                failing = len(flaky.requests) <= flaky.failures
                status, body = (flaky.status, flaky.body) if failing else (200, HEALTH)
                self.send_response(status)
                self.send_header(
                    "Content-Type", "application/json" if body[:1] == b"{" else "text/html"
                )
                self.send_header("Content-Length", str(len(body)))
                if failing:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Flaky:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


FAST = Retry(attempts=4, backoff=0.01, max_delay=0.02)


@pytest.fixture
def flaky_twice() -> Iterator[Flaky]:
    with Flaky(failures=2) as server:
        yield server


def test_a_read_is_retried_on_503_until_it_succeeds(flaky_twice: Flaky) -> None:
    with Client(flaky_twice.url, retry=FAST) as c:
        assert c.live().status == "ok"
    assert flaky_twice.requests == ["GET /health/live"] * 3


def test_503_after_the_last_attempt_raises_unavailable_with_the_service_code() -> None:
    with Flaky(failures=10) as server, Client(server.url, retry=FAST) as c:
        err = pytest.raises(Unavailable, c.list_models)
    assert (err.value.status, err.value.code) == (503, "UNAVAILABLE")
    assert err.value.detail == "database unreachable" and len(server.requests) == 4


def test_predict_is_retried_on_503_but_training_is_not(flaky_twice: Flaky) -> None:
    with Client(flaky_twice.url, retry=FAST) as c:
        with pytest.raises(Unavailable):
            c.train("m", [[1.0], [2.0]], [0, 1])  # the server may have registered it
        assert flaky_twice.requests == ["POST /v1/models/m/versions"]
        with pytest.raises(CostwiseError):  # 200 with a health body is not a PredictResponse
            c.predict("m", [[1.0]])
    assert flaky_twice.requests[1:] == ["POST /v1/models/m/predict"] * 2


def test_a_non_json_error_body_still_gives_a_typed_error() -> None:
    page = b"<html><body>502 Bad Gateway</body></html>"
    with Flaky(failures=1, status=502, body=page) as server, Client(server.url, retry=FAST) as c:
        err = pytest.raises(ServerError, c.list_models)
    assert (err.value.status, err.value.code) == (502, "HTTP_ERROR")
    assert "502 Bad Gateway" in err.value.detail and len(server.requests) == 1


@dataclass(frozen=True)
class CountingRetry(Retry):
    waits: list[float] = field(default_factory=list)

    def delay(self, tries: int, retry_after: float | None = None) -> float:
        self.waits.append(super().delay(tries, retry_after))
        return self.waits[-1]


def test_connection_refused_is_retried_then_unavailable_even_for_training() -> None:
    retry = CountingRetry(attempts=3, backoff=0.001, max_delay=0.001)
    with Client(f"http://127.0.0.1:{free_port()}", retry=retry) as c:
        err = pytest.raises(Unavailable, c.train, "m", [[1.0]], [0])
    assert (err.value.status, err.value.code) == (None, "UNREACHABLE")
    assert len(retry.waits) == 2  # three tries: a request that never left is safe to repeat


def test_backoff_doubles_with_jitter_below_the_cap() -> None:
    retry = Retry(backoff=0.5, max_delay=3.0, jitter=0.5, rng=random.Random(7))
    for tries, base in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 3.0), (9, 3.0)]:
        waits = [retry.delay(tries) for _ in range(200)]
        assert base * 0.5 <= min(waits) and max(waits) <= base
        assert max(waits) - min(waits) > base * 0.3  # jittered, not constant
    assert retry.delay(1, retry_after=2.5) == 2.5  # Retry-After is honoured ...
    assert retry.delay(1, retry_after=60) == 3.0  # ... up to max_delay


def test_which_calls_are_retried_after_the_request_was_sent() -> None:
    retry = Retry(attempts=3)
    lost = httpx.ReadTimeout("answer lost")
    refused = httpx.ConnectError("refused")
    busy = httpx.Response(503)
    safe, once = Call("POST", "/predict"), Call("POST", "/versions", retry="connect")
    assert retry.should_retry(safe, busy, 1) and retry.should_retry(safe, lost, 2)
    assert not retry.should_retry(safe, busy, 3)  # attempts used up
    assert retry.should_retry(once, refused, 1)
    assert not retry.should_retry(once, busy, 1) and not retry.should_retry(once, lost, 1)
    assert not retry.should_retry(safe, httpx.Response(500), 1)


def test_the_client_sleeps_the_backoff_between_tries() -> None:
    """MockTransport only times the loop: 503, 503, 200, with the sleeps it took."""
    answers = iter([503, 503, 200])
    transport = httpx.MockTransport(
        lambda request: httpx.Response(next(answers), json={"status": "ok", "checks": {}})
    )
    retry = Retry(attempts=3, backoff=0.05, max_delay=1.0, jitter=0.0)
    with Client("http://costwise.test", retry=retry, transport=transport) as c:
        start = time.monotonic()
        assert c.live().status == "ok"
        elapsed = time.monotonic() - start
    assert 0.05 + 0.10 <= elapsed < 5.0


def test_not_ready_is_an_answer_not_an_error_and_is_not_retried() -> None:
    body = json.dumps({"status": "unavailable", "checks": {"database": "unreachable"}}).encode()
    with Flaky(failures=1, body=body) as server, Client(server.url, retry=FAST) as c:
        ready = c.ready()
    assert (ready.status, ready.checks) == ("unavailable", {"database": "unreachable"})
    assert server.requests == ["GET /health/ready"]


def test_an_answer_of_the_wrong_shape_is_an_unexpected_response(flaky_twice: Flaky) -> None:
    with Client(flaky_twice.url, retry=FAST) as c:  # answers a health body to everything
        with pytest.raises(UnexpectedResponse) as listed:
            c.list_algorithms()
        with pytest.raises(UnexpectedResponse) as single:
            c.get_model("m")
    assert listed.value.code == single.value.code == "BAD_RESPONSE"
