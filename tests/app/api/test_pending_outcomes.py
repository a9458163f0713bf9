"""Outcomes for ids not (yet) in the prediction log are kept as pending and joined when
the log row lands (real app, SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.api.main import create_app
from app.registry.orm import LoggedPrediction, PendingOutcome
from app.settings import Settings
from tests.app.api.conftest import dataset, train_body


def _flush(client: TestClient) -> None:
    assert client.app.state.services.prediction_log.flush(10.0)  # type: ignore[attr-defined]


def _labels(client: TestClient) -> dict[str, tuple[int | None, float | None]]:
    sessions = client.app.state.services.sessions  # type: ignore[attr-defined]
    with sessions() as s:
        rows = s.execute(
            select(
                LoggedPrediction.prediction_id,
                LoggedPrediction.label,
                LoggedPrediction.outcome_cost,
            )
        )
        return {pid: (label, cost) for pid, label, cost in rows}


def _pending(client: TestClient) -> list[str]:
    sessions = client.app.state.services.sessions  # type: ignore[attr-defined]
    with sessions() as s:
        return sorted(s.scalars(select(PendingOutcome.prediction_id)))


def _outcomes(client: TestClient, items: list[dict[str, Any]]) -> dict[str, Any]:
    r = client.post("/v1/models/fraud/outcomes", json={"outcomes": items})
    assert r.status_code == 200, r.text
    return r.json()


def _predict(client: TestClient, ids: list[str]) -> None:
    X, _ = dataset(300)
    body = {"instances": X[: len(ids)].tolist(), "ids": ids}
    r = client.post("/v1/models/fraud/predict", json=body)
    assert r.status_code == 200, r.text


def test_an_outcome_before_its_prediction_is_pending_then_recorded(
    client: TestClient, trained: dict[str, Any]
) -> None:
    """The client's own ids: outcomes sent first are kept (pending, counted by
    monitoring), joined by the writer when the rows land, then idempotent as usual."""
    out = _outcomes(
        client,
        [{"id": "early1", "label": 1, "cost": 2.5}, {"id": "early2", "label": 0}],
    )
    assert [x["status"] for x in out["results"]] == ["pending", "pending"]
    assert out["counts"]["pending"] == 2 and "unknown" not in out["counts"]
    again = _outcomes(client, [{"id": "early1", "label": 1, "cost": 2.5}])
    assert again["results"][0]["status"] == "pending"  # the same report: idempotent
    other = _outcomes(client, [{"id": "early2", "label": 1}])
    assert other["results"][0]["status"] == "conflict"  # the first report stands
    assert "already pending" in other["results"][0]["detail"]
    m = client.get("/v1/models/fraud/monitoring").json()
    assert m["pending_outcomes"] == 2 and m["versions"] == []
    _predict(client, ["early1", "early2", "late3"])
    _flush(client)
    assert _labels(client) == {"early1": (1, 2.5), "early2": (0, None), "late3": (None, None)}
    assert _pending(client) == []
    assert client.get("/v1/models/fraud/monitoring").json()["pending_outcomes"] == 0
    assert (
        _outcomes(client, [{"id": "early1", "label": 1, "cost": 2.5}])["results"][0]["status"]
        == "unchanged"
    )
    counters = client.app.state.services.outcomes.counters  # type: ignore[attr-defined]
    assert (counters.joined, counters.invalid, counters.conflict) == (2, 0, 0)
    metrics = client.get("/metrics").text
    assert 'costwise_pending_outcomes_total{result="joined"} 2.0' in metrics


def test_a_label_of_no_version_is_invalid_at_once(
    client: TestClient, trained: dict[str, Any]
) -> None:
    out = _outcomes(client, [{"id": "x", "label": "1"}, {"id": "y", "label": 7}])
    assert [x["status"] for x in out["results"]] == ["invalid", "invalid"]
    assert "not a class of any version" in out["results"][0]["detail"]
    assert _pending(client) == []


@pytest.fixture
def small_client(settings: Settings) -> Iterator[TestClient]:
    small = settings.model_copy(update={"pending_outcomes_max": 2})
    with TestClient(create_app(small), raise_server_exceptions=False) as c:
        r = c.post("/v1/models/fraud/versions", json=train_body())
        assert r.status_code == 201, r.text
        yield c


def test_pending_outcomes_are_bounded_per_model(small_client: TestClient) -> None:
    out = _outcomes(small_client, [{"id": f"p{i}", "label": 1} for i in range(3)])
    assert [x["status"] for x in out["results"]] == ["pending", "pending", "refused"]
    assert "COSTWISE_PENDING_OUTCOMES_MAX" in out["results"][2]["detail"]
    _predict(small_client, ["p0", "p1", "p2"])
    _flush(small_client)
    assert _pending(small_client) == []  # joined: room again
    assert _outcomes(small_client, [{"id": "p2", "label": 1}])["results"][0]["status"] == (
        "recorded"
    )


def test_pending_outcomes_expire(client: TestClient, trained: dict[str, Any]) -> None:
    _outcomes(client, [{"id": "never", "label": 1}])
    services = client.app.state.services  # type: ignore[attr-defined]
    upkeep = services.log_maintenance
    assert upkeep.upkeep_pending() == 0 and upkeep.pending == {"fraud": 1}
    later = datetime.now(UTC) + timedelta(seconds=services.settings.pending_outcome_seconds + 1)
    assert upkeep.upkeep_pending(later) == 1
    assert _pending(client) == [] and upkeep.pending == {}
    assert services.outcomes.counters.expired == 1
