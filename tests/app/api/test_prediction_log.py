"""Prediction log, outcomes and monitoring through the real app (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.registry.orm import LoggedPrediction
from tests.app.api.conftest import dataset


def _flush(client: TestClient) -> None:
    writer = client.app.state.services.prediction_log  # type: ignore[attr-defined]
    assert writer.flush(10.0)


def _rows(client: TestClient) -> list[LoggedPrediction]:
    sessions = client.app.state.services.sessions  # type: ignore[attr-defined]
    with sessions() as s:
        return list(s.scalars(select(LoggedPrediction).order_by(LoggedPrediction.id)))


def _predict(client: TestClient, n: int = 5, **extra: Any) -> dict[str, Any]:
    X, _ = dataset(300)
    body = {"instances": X[:n].tolist(), "costs": {"c_fp": 1.0, "c_fn": 5.0}, **extra}
    r = client.post("/v1/models/fraud/predict", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_every_row_is_logged_with_its_id(client: TestClient, trained: dict[str, Any]) -> None:
    out = _predict(client, 5)
    ids = [p["id"] for p in out["predictions"]]
    assert len(set(ids)) == 5 and all(isinstance(i, str) for i in ids)
    _flush(client)
    rows = _rows(client)
    assert [r.prediction_id for r in rows] == ids
    for r, p in zip(rows, out["predictions"], strict=True):
        assert r.version == 1 and r.alias is None
        assert r.probabilities == pytest.approx(p["probabilities"])
        assert r.threshold == pytest.approx(p["threshold"])
        assert r.expected_cost == pytest.approx(p["expected_cost"])
        assert out["classes"][r.decision] == p["decision"]
        assert r.costs == [[0.0, 1.0], [5.0, 0.0]] and r.cost_setting == "costs"
        assert isinstance(r.raw_score, float) and r.features is None and r.label is None


def test_client_ids_duplicates_and_relogging(client: TestClient, trained: dict[str, Any]) -> None:
    out = _predict(client, 3, ids=["t1", "t2", "t3"])
    assert [p["id"] for p in out["predictions"]] == ["t1", "t2", "t3"]
    r = client.post(
        "/v1/models/fraud/predict",
        json={"instances": dataset(300)[0][:3].tolist(), "ids": ["a", "b", "a"]},
    )
    assert r.status_code == 422 and r.json()["field"] == "ids[2]", r.text
    assert "duplicate of ids[0]" in r.json()["detail"]
    r = client.post(
        "/v1/models/fraud/predict", json={"instances": dataset(300)[0][:3].tolist(), "ids": ["a"]}
    )
    assert r.status_code == 422 and "one id per row (3)" in r.json()["detail"]
    _predict(client, 2, ids=["t1", "t9"], costs={"c_fp": 2.0, "c_fn": 2.0})  # t1 again
    _flush(client)
    rows = {r.prediction_id: r for r in _rows(client)}
    assert set(rows) == {"t1", "t2", "t3", "t9"}
    assert rows["t1"].costs == [[0.0, 1.0], [5.0, 0.0]]  # the first record stands
    stats = client.app.state.services.prediction_log.stats  # type: ignore[attr-defined]
    assert (stats.written, stats.duplicate, stats.dropped) == (4, 1, 0)
