"""Webhooks: an alias move is POSTed to a receiver on 127.0.0.1 (allowed by the
operator), signed with the secret shown once, retried after a failed answer, and every
attempt kept; an address the operator did not allow is refused before anything is sent."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.settings import Settings
from tests.app.api.conftest import train_body


class Receiver:
    """An HTTP server on 127.0.0.1 that records POSTs and answers the next status."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.statuses: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server interface
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                status = receiver.statuses.pop(0) if receiver.statuses else 204
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/costwise"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def wait_for(self, n: int, seconds: float = 15.0) -> None:
        deadline = time.monotonic() + seconds
        while len(self.received) < n and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(self.received) >= n, self.received


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    r.thread.start()
    yield r
    r.server.shutdown()
    r.server.server_close()


def _client(database_url: str, **settings: Any) -> TestClient:
    values: dict[str, Any] = {
        "database_url": database_url,
        "webhook_retry_seconds": 0.1,
        "webhook_poll_seconds": 0.05,
        "webhook_timeout": 2.0,
        "max_rounds": 500,
    }
    return TestClient(create_app(Settings(**{**values, **settings})), raise_server_exceptions=False)


def _settled_delivery(client: TestClient, webhook_id: Any) -> dict[str, Any]:
    """The webhook's one delivery once it is no longer pending (or after 10 s)."""
    deadline = time.monotonic() + 10
    while True:
        (d,) = client.get(f"/v1/webhooks/{webhook_id}/deliveries").json()["deliveries"]
        if d["status"] != "pending" or time.monotonic() > deadline:
            return dict(d)
        time.sleep(0.05)


def test_an_alias_move_is_delivered_signed_after_a_retry(
    database_url: str, receiver: Receiver
) -> None:
    with _client(database_url, webhook_allow_hosts=["127.0.0.1"]) as client:
        r = client.post("/v1/webhooks", json={"url": receiver.url, "events": ["alias.moved"]})
        assert r.status_code == 201, r.text
        hook = r.json()
        assert r.headers["cache-control"] == "no-store" and len(hook["secret"]) == 64
        assert "secret" not in client.get("/v1/webhooks").json()["webhooks"][0]
        assert (
            client.post("/v1/models/fraud/versions", json=train_body(n_estimators=5)).status_code
            == 201
        )
        receiver.statuses = [500]  # the first attempt fails: retried
        r = client.put("/v1/models/fraud/aliases/production", json={"version": 1, "note": "go"})
        assert r.status_code == 200, r.text
        receiver.wait_for(2)
        (h1, b1), (h2, b2) = receiver.received[:2]
        assert b1 == b2 and h1["x-costwise-event-id"] == h2["x-costwise-event-id"]
        event = json.loads(b2)
        assert event["type"] == "alias.moved" and h2["x-costwise-event"] == "alias.moved"
        assert event["data"] == {
            "model": "fraud", "alias": "production", "from_version": None, "to_version": 1,
            "reason": "manual", "note": "go", "actor": "anonymous (authentication off)",
            "actor_role": "admin", "evidence": None,
        }  # fmt: skip
        t, mac = (part.split("=", 1)[1] for part in h2["x-costwise-signature"].split(","))
        expected = hmac.new(hook["secret"].encode(), f"{t}.".encode() + b2, hashlib.sha256)
        assert hmac.compare_digest(mac, expected.hexdigest())
        assert abs(int(t) - time.time()) < 60
        deadline = time.monotonic() + 10
        while True:
            (d,) = client.get(f"/v1/webhooks/{hook['id']}/deliveries").json()["deliveries"]
            if d["status"] == "delivered" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert (d["status"], d["attempts"], d["last_status"]) == ("delivered", 2, 204), d
        assert d["payload"] == event and d["delivered_at"] is not None
        # a webhook removed receives nothing more, and its deliveries go with it
        assert client.delete(f"/v1/webhooks/{hook['id']}").status_code == 204
        client.delete("/v1/models/fraud/aliases/production")
        time.sleep(0.3)
        assert len(receiver.received) == 2
        r = client.get(f"/v1/webhooks/{hook['id']}/deliveries")
        assert r.status_code == 404 and r.json()["field"] == "webhook_id"


def test_a_receiver_that_never_answers_2xx_fails_after_the_attempts(
    database_url: str, receiver: Receiver
) -> None:
    with _client(database_url, webhook_allow_hosts=["127.0.0.1"], webhook_max_attempts=3) as client:
        hook = client.post(
            "/v1/webhooks", json={"url": receiver.url, "events": ["alias.moved"]}
        ).json()
        client.post("/v1/models/fraud/versions", json=train_body(n_estimators=5))
        receiver.statuses = [503, 500, 410, 204]
        client.put("/v1/models/fraud/aliases/staging", json={"version": 1})
        receiver.wait_for(3)
        d = _settled_delivery(client, hook["id"])
        assert (d["status"], d["attempts"], d["last_status"], d["last_error"]) == (
            "failed",
            3,
            410,
            "HTTP 410",
        )
        time.sleep(0.3)
        assert len(receiver.received) == 3  # no fourth attempt


def test_addresses_the_operator_did_not_allow_are_refused(
    database_url: str, receiver: Receiver
) -> None:
    with _client(database_url) as client:  # no COSTWISE_WEBHOOK_ALLOW_HOSTS
        for url in (receiver.url, "http://169.254.169.254/latest", "http://10.0.0.7/x"):
            r = client.post("/v1/webhooks", json={"url": url, "events": ["alias.moved"]})
            assert r.status_code == 403 and r.json()["field"] == "url", r.text
            assert "COSTWISE_WEBHOOK_ALLOW_HOSTS" in r.json()["detail"]
        for body, field in (
            ({"url": "ftp://hooks.example/x", "events": ["alias.moved"]}, "url"),
            ({"url": "http://user:pw@hooks.example/x", "events": ["alias.moved"]}, "url"),
            ({"url": receiver.url, "events": ["model.deleted"]}, "events"),
            ({"url": receiver.url, "events": []}, "events"),
        ):
            r = client.post("/v1/webhooks", json=body)
            assert r.status_code == 422 and field in (r.json()["field"] or ""), r.text
        assert client.get("/v1/webhooks").json()["webhooks"] == []
    assert receiver.received == []


def test_a_webhook_whose_address_is_no_longer_allowed_is_not_sent_to(
    database_url: str, receiver: Receiver
) -> None:
    """Allowed at registration, refused at delivery (the operator removed it from the
    allow-list, or DNS changed): each attempt is refused before connecting, and says so."""
    with _client(database_url, webhook_allow_hosts=["127.0.0.1"]) as client:
        r = client.post("/v1/webhooks", json={"url": receiver.url, "events": ["alias.moved"]})
        hook = r.json()
    with _client(database_url, webhook_max_attempts=2) as client:
        client.post("/v1/models/fraud/versions", json=train_body(n_estimators=5))
        client.put("/v1/models/fraud/aliases/production", json={"version": 1})
        d = _settled_delivery(client, hook["id"])
    assert d["status"] == "failed" and d["attempts"] == 2 and d["last_status"] is None
    assert "address refused" in d["last_error"]
    assert receiver.received == []
