"""Configured limits name themselves and their value; a training over its time limit
is stopped and registers nothing (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.api.main import create_app
from app.db import make_engine
from app.errors import TrainingTimeLimit
from app.services.training.deadline import training_deadline
from app.settings import Settings
from models.boosting.progress import report
from tests.app.api.conftest import train_body


def make_client(database_url: str, **limits: Any) -> TestClient:
    settings = Settings(database_url=database_url, **limits)
    return TestClient(create_app(settings), raise_server_exceptions=False)


LIMITS: dict[str, Any] = {
    "max_training_seconds": 0.001,
    "max_train_rows": 5000,
    "max_predict_rows": 10,
    "max_features": 8,
    "max_rounds": 3000,
    "max_body_bytes": 200_000,
}


@pytest.fixture
def client(database_url: str) -> Iterator[TestClient]:
    with make_client(database_url, **LIMITS) as c:
        yield c


def _counts(database_url: str) -> tuple[int, int, int]:
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            return tuple(  # type: ignore[return-value]
                int(conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one())
                for t in ("registered_models", "model_versions", "artifacts")
            )
    finally:
        engine.dispose()


def test_training_over_the_time_limit_registers_nothing(
    client: TestClient, database_url: str
) -> None:
    r = client.post("/v1/models/slow/versions", json=train_body(n=2000, n_estimators=3000))
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["code"] == "TRAINING_TIME_LIMIT"
    assert "COSTWISE_MAX_TRAINING_SECONDS" in body["detail"] and "0.001 s" in body["detail"]
    assert body["limit"] == 0.001 and "nothing was registered" in body["detail"]
    assert {"detail", "code", "field"} <= set(body)
    assert client.get("/v1/models").json()["total"] == 0
    assert _counts(database_url) == (0, 0, 0)


def test_a_timed_out_version_leaves_earlier_versions_alone(database_url: str) -> None:
    with make_client(database_url, max_training_seconds=60) as c:
        assert c.post("/v1/models/m/versions", json=train_body(n_estimators=5)).status_code == 201
    with make_client(database_url, max_training_seconds=0.001) as c:
        r = c.post("/v1/models/m/versions", json=train_body(n=2000, n_estimators=3000))
        assert r.json()["code"] == "TRAINING_TIME_LIMIT"
        assert [v["version"] for v in c.get("/v1/models/m/versions").json()["versions"]] == [1]
    assert _counts(database_url) == (1, 1, 1)


def test_deadline_stops_between_rounds_and_names_the_phase() -> None:
    match = r"during boosting \(3 of 10 done\)"
    with pytest.raises(TrainingTimeLimit, match=match) as caught, training_deadline(1e-9):
        report(3, 10)
    assert caught.value.extra["limit"] == 1e-9
    with training_deadline(None) as checkpoint:
        report(1, 2)
        checkpoint("registering")
    with training_deadline(60) as checkpoint:
        report(1, 2)
        checkpoint("registering")


def test_default_time_limit_is_ten_minutes() -> None:
    assert Settings().max_training_seconds == 600


@pytest.mark.parametrize(
    ("path", "body", "status", "setting", "value"),
    [
        (
            "/v1/models/m/versions",
            train_body(n=120, n_estimators=3001),
            422,
            "COSTWISE_MAX_ROUNDS",
            "3000",
        ),
        (
            "/v1/models/m/versions",
            {"features": [[0.0] * 9] * 4, "labels": [0, 1, 0, 1]},
            413,
            "COSTWISE_MAX_FEATURES",
            "8",
        ),
        (
            "/v1/models/m/predict",
            {"instances": [[0.0, 0.0, 0.0, 0.0]] * 11},
            413,
            "COSTWISE_MAX_PREDICT_ROWS",
            "10",
        ),
        (
            "/v1/models/m/versions",
            {"features": [[0.0]] * 5001, "labels": [0, 1] * 2500 + [0]},
            413,
            "COSTWISE_MAX_TRAIN_ROWS",
            "5000",
        ),
        (
            "/v1/models/m/predict",
            {"instances": [[0.0] * 4] * 10, "pad": "x" * 200_001},
            413,
            "COSTWISE_MAX_BODY_BYTES",
            "200000",
        ),
    ],
)
def test_limits_name_the_setting_and_value(
    database_url: str, path: str, body: Any, status: int, setting: str, value: str
) -> None:
    if path.endswith("/predict"):
        with make_client(database_url) as c:
            assert (
                c.post("/v1/models/m/versions", json=train_body(n_estimators=5)).status_code == 201
            )
    with make_client(database_url, **LIMITS) as c:
        r = c.post(path, json=body)
        assert r.status_code == status, r.text
        detail = r.json()["detail"]
    assert setting in detail and value in detail
