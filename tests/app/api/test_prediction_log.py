"""Prediction log, outcomes and monitoring through the real app (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.api.main import create_app
from app.registry.orm import LoggedPrediction
from app.settings import Settings
from tests.app.api.conftest import dataset, train_body


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


def _outcomes(client: TestClient, items: list[dict[str, Any]], model: str = "fraud") -> Any:
    return client.post(f"/v1/models/{model}/outcomes", json={"outcomes": items})


def test_outcomes_are_idempotent_and_reported_per_item(
    client: TestClient, trained: dict[str, Any]
) -> None:
    _predict(client, 4, ids=["a", "b", "c", "d"])
    _flush(client)
    r = _outcomes(
        client,
        [
            {"id": "a", "label": 1},
            {"id": "b", "label": 0, "cost": 3.5},
            {"id": "nope", "label": 1},
            {"id": "c", "label": "1"},  # wrong type: the classes are integers
            {"id": "d", "label": 1, "cost": -1.0},
        ],
    )
    assert r.status_code == 200, r.text
    out = r.json()
    assert [x["status"] for x in out["results"]] == [
        "recorded",
        "recorded",
        "pending",  # not logged (yet): kept, never unknown
        "invalid",
        "invalid",
    ]
    assert out["counts"] == {
        "recorded": 2,
        "unchanged": 0,
        "conflict": 0,
        "pending": 1,
        "invalid": 2,
        "refused": 0,
    }
    assert "not a class of version 1 [0, 1]" in out["results"][3]["detail"]
    again = _outcomes(client, [{"id": "a", "label": 1}, {"id": "b", "label": 1}]).json()
    assert [x["status"] for x in again["results"]] == ["unchanged", "conflict"]
    rows = {r.prediction_id: r for r in _rows(client)}
    assert (rows["a"].label, rows["b"].label, rows["b"].outcome_cost) == (1, 0, 3.5)
    assert rows["c"].label is None and rows["d"].label is None and rows["a"].labelled_at


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"outcomes": [{"id": "a", "label": 1}, {"id": "a", "label": 0}]}, "outcomes[1].id"),
        ({"outcomes": []}, "outcomes"),
        ({"outcomes": [{"id": "a", "label": [1]}]}, "outcomes[0].label"),
        ({"outcomes": [{"id": "a", "label": 1, "extra": 2}]}, "outcomes[0].extra"),
    ],
)
def test_bad_outcome_batches_are_refused_whole(
    client: TestClient, trained: dict[str, Any], body: dict[str, Any], field: str
) -> None:
    _predict(client, 1, ids=["a"])
    _flush(client)
    r = client.post("/v1/models/fraud/outcomes", json=body)
    assert r.status_code == 422, r.text
    assert field in (r.json().get("field") or "") + r.json()["detail"], r.text
    assert _rows(client)[0].label is None  # nothing written


def test_outcomes_of_an_unknown_model_are_404(client: TestClient, trained: dict[str, Any]) -> None:
    r = _outcomes(client, [{"id": "a", "label": 1}], model="nobody")
    assert r.status_code == 404 and r.json()["code"] == "NOT_FOUND"


def test_monitoring_realised_cost_equals_an_independent_computation(
    client: TestClient, trained: dict[str, Any]
) -> None:
    X, y = dataset(300)
    rng = np.random.default_rng(3)
    n = 60
    row_costs = [
        {"c_fp": float(rng.uniform(1, 3)), "c_fn": float(rng.uniform(2, 20))} for _ in range(n)
    ]
    ids = [f"tx{i}" for i in range(n)]
    r = client.post(
        "/v1/models/fraud/predict",
        json={"instances": X[:n].tolist(), "row_costs": row_costs, "ids": ids},
    )
    assert r.status_code == 200, r.text
    preds = r.json()["predictions"]
    _flush(client)
    labelled = list(range(0, n, 2))  # half of the rows get an outcome
    reported = {i: 7.25 for i in labelled[:3]}  # and three a reported cost
    items = [
        {"id": ids[i], "label": int(y[i]), **({"cost": reported[i]} if i in reported else {})}
        for i in labelled
    ]
    assert _outcomes(client, items).json()["counts"]["recorded"] == len(labelled)
    # independently: C[truth][decision] under the row's own costs, or the reported cost
    expected_total = 0.0
    realised = 0.0
    for i in labelled:
        d, t = preds[i]["decision"], int(y[i])
        c = row_costs[i]
        matrix = [[0.0, c["c_fp"]], [c["c_fn"], 0.0]]
        realised += reported.get(i, matrix[t][d])
        expected_total += preds[i]["expected_cost"]
    m = client.get("/v1/models/fraud/monitoring", params={"bucket": "hour"})
    assert m.status_code == 200, m.text
    body = m.json()
    (v,) = body["versions"]
    total = v["total"]
    assert v["version"] == 1 and v["classes"] == [0, 1]
    assert total["predictions"] == n and total["labelled"] == len(labelled)
    assert total["coverage"] == pytest.approx(len(labelled) / n)
    assert total["realised_cost"] == pytest.approx(realised, rel=1e-12)
    assert total["expected_cost"] == pytest.approx(expected_total, rel=1e-9)
    assert total["cost_ratio"] == pytest.approx(realised / expected_total, rel=1e-9)
    p1 = np.array([preds[i]["probabilities"][1] for i in labelled])
    t = y[labelled]
    assert total["calibration"]["brier"] == pytest.approx(float(np.mean((p1 - t) ** 2)))
    assert total["predicted_positive_rate"] == pytest.approx(
        np.mean([p["decision"] == 1 for p in preds])
    )
    assert total["observed_positive_rate"] == pytest.approx(float(np.mean(t)))
    assert 0 <= total["calibration"]["ece"] <= 1
    assert total["calibration"]["spiegelhalter"]["p_value"] is not None
    assert len(v["buckets"]) == 1 and v["buckets"][0]["predictions"] == n


def test_monitoring_bad_input(client: TestClient, trained: dict[str, Any]) -> None:
    _predict(client, 2)
    _flush(client)
    client.post("/v1/models/fraud/versions", json=train_body(n_estimators=5))  # version 2
    cases = [
        ({"version": 2}, 404, "version 2 of model 'fraud' has no logged predictions"),
        ({"version": 9}, 404, "has no version 9"),
        ({"bucket": "week"}, 422, "bucket"),
        ({"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"}, 422, "since"),
        ({"since": "yesterday"}, 422, "since"),
    ]
    for params, status, text in cases:
        r = client.get("/v1/models/fraud/monitoring", params=params)
        assert r.status_code == status, (params, r.text)
        assert text in r.text, (params, r.text)
    assert client.get("/v1/models/nobody/monitoring").status_code == 404
    ok = client.get("/v1/models/fraud/monitoring", params={"version": 1}).json()
    assert [v["version"] for v in ok["versions"]] == [1]
    future = client.get("/v1/models/fraud/monitoring", params={"since": "2100-01-01"}).json()
    assert future["versions"] == []


def test_logging_off_for_one_model(client: TestClient, trained: dict[str, Any]) -> None:
    r = client.patch("/v1/models/fraud", json={"prediction_log": False})
    assert r.status_code == 200 and r.json()["prediction_log"] is False
    assert client.get("/v1/models/fraud").json()["prediction_log"] is False
    out = _predict(client, 2)
    assert [p["id"] for p in out["predictions"]] == [None, None]
    assert [p["id"] for p in _predict(client, 1, ids=["x"])["predictions"]] == ["x"]
    _flush(client)
    assert _rows(client) == []
    assert client.patch("/v1/models/fraud", json={"prediction_log": "maybe"}).status_code == 422
    assert client.patch("/v1/models/nobody", json={"prediction_log": True}).status_code == 404
    client.patch("/v1/models/fraud", json={"prediction_log": True})
    _predict(client, 2)
    _flush(client)
    assert len(_rows(client)) == 2


def test_v2_rows_are_logged_with_client_ids(client: TestClient, trained: dict[str, Any]) -> None:
    X, _ = dataset(300)
    body = {
        "inputs": [
            {"name": "features", "shape": [2, 4], "datatype": "FP64", "data": X[:2].tolist()},
            {"name": "ids", "shape": [2], "datatype": "BYTES", "data": ["v2-a", "v2-b"]},
        ],
        "parameters": {"c_fp": 1, "c_fn": 4},
    }
    r = client.post("/v2/models/fraud/infer", json=body)
    assert r.status_code == 200, r.text
    (ids,) = [o for o in r.json()["outputs"] if o["name"] == "id"]
    assert ids["data"] == ["v2-a", "v2-b"] and ids["datatype"] == "BYTES"
    body["inputs"][1]["data"] = ["same", "same"]
    bad = client.post("/v2/models/fraud/infer", json=body)
    assert bad.status_code == 400 and "duplicate" in bad.json()["error"], bad.text
    _flush(client)
    assert [r.prediction_id for r in _rows(client)] == ["v2-a", "v2-b"]


def test_metrics_count_log_rows_and_publish_monitoring_gauges(
    client: TestClient, trained: dict[str, Any]
) -> None:
    _predict(client, 4, ids=["a", "b", "c", "d"])
    _flush(client)
    _outcomes(client, [{"id": "a", "label": 0}, {"id": "b", "label": 1}])
    services = client.app.state.services  # type: ignore[attr-defined]
    assert services.log_maintenance.run_once()
    text = client.get("/metrics").text
    assert 'costwise_prediction_log_rows_total{outcome="written"} 4.0' in text
    assert 'costwise_prediction_log_rows_total{outcome="dropped"} 0.0' in text
    assert 'costwise_monitoring_coverage{model="fraud",version="1"} 0.5' in text
    assert 'costwise_monitoring_ece{model="fraud",version="1"}' in text
    assert 'model="nobody"' not in text


@pytest.fixture
def quiet_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"prediction_log": False})


def test_logging_off_globally(quiet_settings: Settings) -> None:
    with TestClient(create_app(quiet_settings)) as c:
        assert c.post("/v1/models/fraud/versions", json=train_body()).status_code == 201
        out = _predict(c, 2)
        assert [p["id"] for p in out["predictions"]] == [None, None]
        assert c.app.state.services.prediction_log is None  # type: ignore[attr-defined]
        assert _rows(c) == []


def test_features_are_logged_only_when_asked(settings: Settings) -> None:
    on = settings.model_copy(update={"log_features": True})
    with TestClient(create_app(on)) as c:
        assert c.post("/v1/models/fraud/versions", json=train_body()).status_code == 201
        X, _ = dataset(300)
        _predict(c, 2, priors=[0.5, 0.5])
        _flush(c)
        rows = _rows(c)
        np.testing.assert_array_equal(np.array([r.features for r in rows]), X[:2])
        assert rows[0].priors == [0.5, 0.5]


def test_shutdown_flushes_the_queue(settings: Settings) -> None:
    slow = settings.model_copy(update={"prediction_log_flush_seconds": 60.0})
    with TestClient(create_app(slow)) as c:
        assert c.post("/v1/models/fraud/versions", json=train_body()).status_code == 201
        _predict(c, 3)
        services = c.app.state.services  # type: ignore[attr-defined]
        assert services.prediction_log.stats.queued == 3  # not yet written (60 s interval)
    assert [r.version for r in _rows(c)] == [1, 1, 1]  # written at shutdown


def test_ids_and_times_that_cannot_be_stored_are_refused(
    client: TestClient, trained: dict[str, Any]
) -> None:
    X, _ = dataset(300)
    r = client.post(
        "/v1/models/fraud/predict", json={"instances": X[:1].tolist(), "ids": ["a\x00"]}
    )
    assert r.status_code == 422 and r.json()["field"] == "ids[0]", r.text
    long = client.post(
        "/v1/models/fraud/predict", json={"instances": X[:1].tolist(), "ids": ["x" * 129]}
    )
    assert long.status_code == 422 and long.json()["field"] == "ids[0]", long.text
    r = _outcomes(client, [{"id": "b\x00", "label": 1}])
    assert r.status_code == 422 and r.json()["field"] == "outcomes[0].id", r.text
    r = client.get("/v1/models/fraud/monitoring", params={"until": "9999-12-31T23:00:00-12:00"})
    assert r.status_code == 422 and r.json()["field"] == "until", r.text


def test_multiclass_monitoring_reports_class_shares(client: TestClient) -> None:
    from sklearn.datasets import make_classification

    X, y = make_classification(
        300, 5, n_informative=4, n_redundant=1, n_classes=3, n_clusters_per_class=1,
        random_state=4,
    )  # fmt: skip
    body = {"features": np.round(X, 4).tolist(), "labels": y.tolist(), "algorithm": "samme",
            "n_estimators": 10}  # fmt: skip
    r = client.post("/v1/models/tri/versions", json=body)
    assert r.status_code == 201, r.text
    r = client.post(
        "/v1/models/tri/predict",
        json={"instances": np.round(X[:30], 4).tolist(), "ids": [f"m{i}" for i in range(30)]},
    )
    assert r.status_code == 200, r.text
    preds = r.json()["predictions"]
    _flush(client)
    items = [{"id": f"m{i}", "label": int(y[i])} for i in range(30)]
    out = _outcomes(client, items, model="tri").json()
    assert out["counts"]["recorded"] == 30
    total = client.get("/v1/models/tri/monitoring").json()["versions"][0]["total"]
    assert total["predicted_positive_rate"] is None and len(total["observed_shares"]) == 3
    assert total["observed_shares"] == pytest.approx(np.bincount(y[:30], minlength=3) / 30)
    # 0-1 costs: the realised cost is the number of errors
    errors = sum(p["decision"] != int(y[i]) for i, p in enumerate(preds))
    assert total["realised_cost"] == errors
    assert total["calibration"]["classwise_ece"] is not None
    assert total["calibration"]["spiegelhalter"] is None
    rows = [r for r in _rows(client) if r.prediction_id.startswith("m")]
    assert all(isinstance(r.raw_score, list) and len(r.raw_score) == 3 for r in rows) or all(
        r.raw_score is None for r in rows
    )


def test_a_predict_the_log_cannot_take_is_refused_with_retry_after(
    client: TestClient, trained: dict[str, Any]
) -> None:
    """A writer that takes no more rows (here: closed) refuses the request with 503 and
    Retry-After, in /v1 and /v2, without its decisions; counted as refused, not dropped."""
    writer = client.app.state.services.prediction_log  # type: ignore[attr-defined]
    writer.close()
    X, _ = dataset(300)
    r = client.post("/v1/models/fraud/predict", json={"instances": X[:3].tolist()})
    assert r.status_code == 503 and r.headers["retry-after"] == "5", r.text
    assert r.json()["code"] == "UNAVAILABLE" and "predictions" not in r.json()
    assert "prediction log" in r.json()["detail"]
    body = {
        "inputs": [
            {"name": "features", "shape": [2, 4], "datatype": "FP64", "data": X[:2].tolist()}
        ]
    }
    v2 = client.post("/v2/models/fraud/infer", json=body)
    assert v2.status_code == 503 and v2.headers["retry-after"] == "5", v2.text
    assert "outputs" not in v2.json()
    assert (writer.stats.refused, writer.stats.dropped) == (5, 0)
    metrics = client.get("/metrics").text
    assert 'costwise_prediction_log_rows_total{outcome="refused"} 5.0' in metrics
