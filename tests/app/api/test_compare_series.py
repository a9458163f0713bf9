"""Both versions' cost over time in GET .../compare (SQLite and PostgreSQL): per day (or
hour) of the served predictions, each side's labelled rows and realised cost, equal to a
computation from the rows of the log; a bad bucket is a 422 naming it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from app.registry.orm import LoggedPrediction
from tests.app.api.test_challenger import _pairs, _services, _traffic, _train


def _spread_over_days(client: TestClient, ids: list[str]) -> None:
    """Move the served rows' time back 0, 1 or 2 days (by position), as if the traffic had
    come over three days."""
    back = {i: k % 3 for k, i in enumerate(ids)}
    with _services(client).sessions() as s:
        rows = s.execute(
            select(LoggedPrediction.id, LoggedPrediction.prediction_id, LoggedPrediction.created_at)
        ).all()
        moved = [
            {"id": pk, "created_at": at - timedelta(days=back[pid])}
            for pk, pid, at in rows
            if back.get(pid)
        ]
        s.execute(update(LoggedPrediction), moved)
        s.commit()


def _rows(client: TestClient, served: int, shadow: int) -> list[tuple[datetime, float, float]]:
    """(time, realised cost of the served decision, of the shadow's) per labelled pair."""
    times, a, b = _pairs(client, served, shadow)
    return list(zip(times, a.tolist(), b.tolist(), strict=True))


def test_the_comparison_has_both_versions_cost_per_day(client: TestClient) -> None:
    champion = _train(client, 200, seed=0, rounds=10)
    better = _train(client, 4000, seed=0, rounds=60)
    client.put("/v1/models/fraud/aliases/production", json={"version": champion})
    client.put("/v1/models/fraud/shadow", json={"version": better})
    ids, _ = _traffic(client, np.random.default_rng(5), "a")
    _spread_over_days(client, ids)

    r = client.get("/v1/models/fraud/compare", params={"a": "production", "b": str(better)})
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["bucket"] == "day"
    expected: dict[str, list[tuple[float, float]]] = {}
    for t, ca, cb in _rows(client, champion, better):
        t = t if t.tzinfo else t.replace(tzinfo=UTC)
        day = t.astimezone(UTC).strftime("%Y-%m-%dT00:00:00Z")
        expected.setdefault(day, []).append((ca, cb))
    assert len(expected) == 3  # three days, oldest first
    assert [e["start"] for e in report["series"]] == sorted(expected)
    for entry in report["series"]:
        costs = np.array(expected[entry["start"]])
        for side, column in (("a", 0), ("b", 1)):
            got = entry[side]
            assert got["labelled"] == len(costs)
            assert got["realised_cost"] == pytest.approx(costs[:, column].sum(), rel=1e-12)
            assert got["mean_realised_cost"] == pytest.approx(costs[:, column].mean(), rel=1e-12)
    total = sum(e["a"]["realised_cost"] for e in report["series"])
    assert total == pytest.approx(report["versions"]["a"]["realised_cost"], rel=1e-12)

    r = client.get(
        "/v1/models/fraud/compare",
        params={"a": "production", "b": str(better), "bucket": "hour"},
    )
    assert r.status_code == 200 and r.json()["bucket"] == "hour", r.text
    hours = r.json()["series"]
    assert 3 <= len(hours) <= 6  # three days, each within an hour (or across one)
    assert sum(e["b"]["labelled"] for e in hours) == 2000
    r = client.get(
        "/v1/models/fraud/compare", params={"a": "production", "b": str(better), "bucket": "week"}
    )
    assert r.status_code == 422 and "bucket" in r.text, r.text
