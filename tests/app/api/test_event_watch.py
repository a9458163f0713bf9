"""The event watch (SQLite and PostgreSQL): a version's calibration alarm, its cost ratio
leaving the operator's band and a challenger proven cheaper are each raised once when
they start to hold, through the webhooks' outbox, and received signed by a server on
127.0.0.1; the figures they carry equal an independent computation from the log rows."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.api.main import create_app
from app.registry.orm import EventState, LoggedPrediction
from app.settings import Settings
from models.feedback.monitoring import calibration_summary
from tests.app.api.test_challenger import _independent, _services, _traffic, _train
from tests.app.api.test_webhooks import Receiver, receiver  # noqa: F401 - the fixture

WATCHED = ["calibration.alarm", "cost.out_of_band", "challenger.better"]


def _client(database_url: str, **settings: Any) -> TestClient:
    values: dict[str, Any] = {
        "database_url": database_url,
        "webhook_allow_hosts": ["127.0.0.1"],
        "webhook_retry_seconds": 0.1,
        "webhook_poll_seconds": 0.05,
        "webhook_timeout": 2.0,
        "max_rounds": 500,
        "max_train_rows": 5000,
        "events_watch_seconds": 0,  # rounds run by the test, one at a time
        "events_min_labelled": 200,
    }
    return TestClient(create_app(Settings(**{**values, **settings})), raise_server_exceptions=False)


def _served_rows(client: TestClient, version: int) -> dict[str, np.ndarray]:
    with _services(client).sessions() as s:
        rows = s.execute(
            select(
                LoggedPrediction.label,
                LoggedPrediction.costs,
                LoggedPrediction.decision,
                LoggedPrediction.expected_cost,
                LoggedPrediction.probabilities,
            ).where(LoggedPrediction.version == version, LoggedPrediction.label.is_not(None))
        ).all()
    return {
        "y": np.array([r[0] for r in rows]),
        "C": np.array([r[1] for r in rows], dtype=float),
        "d": np.array([r[2] for r in rows]),
        "expected": np.array([r[3] for r in rows], dtype=float),
        "proba": np.array([r[4] for r in rows], dtype=float),
    }


def _verified(received: list[tuple[dict[str, str], bytes]], secret: str) -> list[dict[str, Any]]:
    """The events received, each signature checked against the webhook's secret."""
    events = []
    for headers, body in received:
        t, mac = (part.split("=", 1)[1] for part in headers["x-costwise-signature"].split(","))
        expected = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256)
        assert hmac.compare_digest(mac, expected.hexdigest())
        event = json.loads(body)
        assert headers["x-costwise-event"] == event["type"]
        events.append(event)
    return events


def test_watched_conditions_are_raised_once_when_they_start_to_hold(
    database_url: str,
    receiver: Receiver,  # noqa: F811 - the fixture
) -> None:
    wide = "0.5,2.0"  # the champion's cost ratio (1.29 on these rows) inside
    with _client(database_url, cost_ratio_band=wide) as client:
        watch = _services(client).event_watch
        champion = _train(client, 200, seed=0, rounds=10)
        better = _train(client, 4000, seed=0, rounds=60)
        client.put("/v1/models/fraud/aliases/production", json={"version": champion})
        client.put("/v1/models/fraud/shadow", json={"version": better})
        _traffic(client, np.random.default_rng(5), "a")
        assert watch.evaluate() == []  # no webhook receives these events: nothing judged
        with _services(client).sessions() as s:
            assert s.scalars(select(EventState)).all() == []

        r = client.post("/v1/webhooks", json={"url": receiver.url, "events": WATCHED})
        assert r.status_code == 201, r.text
        secret = r.json()["secret"]
        raised = watch.evaluate()
        by_type = {e["type"]: e["data"] for e in raised}
        assert sorted(by_type) == ["calibration.alarm", "challenger.better"], raised
        # independent figures from the rows the log holds
        rows = _served_rows(client, champion)
        assert len(rows["y"]) == 2000
        idx = np.arange(2000)
        ratio = rows["C"][idx, rows["y"], rows["d"]].sum() / rows["expected"].sum()
        assert 1.25 < ratio < 2.0  # inside the wide band, outside the default one
        summary = calibration_summary(rows["y"], rows["proba"])
        assert summary["alarm"]["fired"] is True
        alarm = by_type["calibration.alarm"]
        assert (alarm["model"], alarm["version"], alarm["labelled"]) == ("fraud", champion, 2000)
        assert alarm["ece"] == pytest.approx(summary["ece"], rel=1e-12)
        better_data = by_type["challenger.better"]
        cost_a, cost_b = _independent(client, champion, better)
        diff = better_data["cost_difference"]
        assert better_data["champion"] == {"version": champion, "alias": "production"}
        assert better_data["challenger"] == {"version": better, "alias": None}
        assert better_data["labelled_pairs"] == 2000 and diff["high"] < 0
        assert diff["mean_difference"] == pytest.approx((cost_b - cost_a).mean(), rel=1e-9)
        assert watch.evaluate() == []  # still holding: not raised again

        receiver.wait_for(2)
        events = _verified(receiver.received, secret)
        assert sorted(e["type"] for e in events) == ["calibration.alarm", "challenger.better"]
        for e in events:
            assert e["data"] == json.loads(json.dumps(by_type[e["type"]]))

    # the operator narrows the band; the watch's own thread (every 50 ms) raises the cost
    # event once, the others stay as they were (their state is in the database)
    with _client(database_url, events_watch_seconds=0.05) as client:
        receiver.wait_for(3)
        time.sleep(0.3)  # several more rounds: nothing more
        assert len(receiver.received) == 3
        (event,) = _verified(receiver.received[2:], secret)
        assert event["type"] == "cost.out_of_band"
        data = event["data"]
        assert (data["model"], data["version"], data["band"]) == ("fraud", champion, [0.8, 1.25])
        assert data["cost_ratio"] == pytest.approx(ratio, rel=1e-12)
        hook_id = client.get("/v1/webhooks").json()["webhooks"][0]["id"]
        deliveries = client.get(f"/v1/webhooks/{hook_id}/deliveries").json()["deliveries"]
    assert sorted(d["event"] for d in deliveries) == sorted(WATCHED)

    # back inside the band: recorded without an event; out again: raised again
    with _client(database_url, cost_ratio_band=wide) as client:
        assert _services(client).event_watch.evaluate() == []
    with _client(database_url) as client:
        (again,) = _services(client).event_watch.evaluate()
        assert again["type"] == "cost.out_of_band"
        with _services(client).sessions() as s:
            states = {(st.event, st.subject): st.active for st in s.scalars(select(EventState))}
    assert states == {
        ("calibration.alarm", f"version {champion}"): True,
        ("cost.out_of_band", f"version {champion}"): True,
        ("challenger.better", f"{champion} vs {better}"): True,
    }
