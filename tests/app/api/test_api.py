"""The HTTP API end to end: train, registry reads, aliases, predict, evaluate, health."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.services.training import TrainingData, TrainingSpec, fit_model
from tests.app.api.conftest import dataset, train_body


def _predict(client: TestClient, body: dict[str, Any], name: str = "fraud") -> dict[str, Any]:
    r = client.post(f"/v1/models/{name}/predict", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def _no_ids(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in p.items() if k != "id"} for p in response["predictions"]]


def test_train_with_the_papers_holdout_calibration(client: TestClient) -> None:
    r = client.post("/v1/models/ho/versions", json=train_body(calibration_split="holdout"))
    assert r.status_code == 201, r.text
    cal = r.json()["calibration"]
    assert cal["split"] == "holdout" and cal["n_boost"] + cal["n_calibration"] == 240
    assert cal["n_calibration"] == 80  # a stratified third of the 240 training rows


def test_train_returns_version_with_out_of_fold_metrics(client: TestClient) -> None:
    r = client.post("/v1/models/fraud/versions", json=train_body(description="card fraud"))
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["model"] == "fraud" and v["version"] == 1 and v["status"] == "ready"
    assert v["algorithm"] == "adaboost"
    for key in ("brier", "log_loss", "ece", "auc", "brier_curve_area"):
        assert 0.0 <= v["metrics"][key] <= 1.0, key
    assert v["metrics"]["auc"] > 0.8
    # no rows held out by default: the metrics are those of the out-of-fold calibrated
    # probabilities of all 300 rows (issue 13)
    assert v["metrics"]["n_evaluation"] == 300 and v["metrics"]["evaluation"] == "out_of_fold"
    assert v["params"]["evaluation_fraction"] is None
    # the default (issue 5, section 6): Platt scaling with 5-fold cross-fitting; the
    # booster is refitted on all 300 rows, the calibrator saw all of them out of fold
    assert v["calibration"]["method"] == "platt" and v["calibration"]["split"] == "kfold"
    assert v["calibration"]["n_folds"] == 5
    assert v["calibration"]["n_boost"] == v["calibration"]["n_calibration"] == 300
    assert v["data"]["n_rows"] == 300 and v["data"]["classes"] == [0, 1]
    assert len(v["artifact_sha256"]) == 64 and v["artifact_size"] > 0
    assert v["training_seconds"] > 0
    decision = v["params"]["decision"]
    assert decision["rule"] == "threshold" and decision["trains_with_costs"] is False
    assert decision["training_costs"] is None and "least expected cost" in decision["request_costs"]
    assert v["params"]["fitted"]["termination_reason"] in (
        "max_rounds",
        "perfect_fit",
        "no_positive_alpha",
    )
    assert 0.5 < v["metrics"]["accuracy"] <= 1.0
    r2 = client.post("/v1/models/fraud/versions", json=train_body(n_estimators=10))
    assert r2.json()["version"] == 2
    m = client.get("/v1/models/fraud").json()
    assert m["latest_version"] == 2 and m["description"] == "card fraud"


def test_listing_and_aliases(client: TestClient, trained: dict[str, Any]) -> None:
    client.post("/v1/models/fraud/versions", json=train_body(n_estimators=5))
    models = client.get("/v1/models").json()
    assert models["total"] == 1 and models["models"][0]["name"] == "fraud"
    versions = client.get("/v1/models/fraud/versions").json()["versions"]
    assert [v["version"] for v in versions] == [2, 1]
    r = client.put("/v1/models/fraud/aliases/production", json={"version": 1})
    assert r.status_code == 200 and r.json() == {
        "model": "fraud",
        "alias": "production",
        "version": 1,
    }
    assert client.get("/v1/models/fraud/versions/1").json()["aliases"] == ["production"]
    assert client.get("/v1/models/fraud").json()["aliases"] == {"production": 1}
    x = dataset()[0][:3].tolist()
    assert _predict(client, {"instances": x})["version"] == 1  # production wins over latest
    assert _predict(client, {"instances": x})["alias"] == "production"
    client.put("/v1/models/fraud/aliases/production", json={"version": 2})
    assert _predict(client, {"instances": x})["version"] == 2  # moved: next request sees it
    assert _predict(client, {"instances": x, "version": 1})["version"] == 1
    assert client.delete("/v1/models/fraud/aliases/production").status_code == 204
    out = _predict(client, {"instances": x})
    assert out["version"] == 2 and out["alias"] is None  # latest


def test_costs_per_request_change_decisions_correctly(
    client: TestClient, trained: dict[str, Any]
) -> None:
    X = dataset()[0].tolist()
    cheap_miss = _predict(client, {"instances": X, "costs": {"c_fp": 10, "c_fn": 1}})
    dear_miss = _predict(client, {"instances": X, "costs": {"c_fp": 1, "c_fn": 20}})
    assert cheap_miss["decision_rule"] == "threshold" and cheap_miss["training_costs"] is None
    d1 = [p["decision"] for p in cheap_miss["predictions"]]
    d2 = [p["decision"] for p in dear_miss["predictions"]]
    assert sum(d2) > sum(d1)  # a dear miss makes more positives
    for out, (c_fp, c_fn) in ((cheap_miss, (10, 1)), (dear_miss, (1, 20))):
        t = c_fp / (c_fp + c_fn)
        for p in out["predictions"]:
            p1 = p["probabilities"][1]
            assert p["threshold"] == pytest.approx(t)
            assert p["decision"] == int(p1 >= t)
            expected = (1 - p1) * c_fp if p["decision"] == 1 else p1 * c_fn
            assert p["expected_cost"] == pytest.approx(expected)
            assert sum(p["probabilities"]) == pytest.approx(1.0)
    # same probabilities whatever the costs: the model is not retrained
    assert [p["probabilities"] for p in cheap_miss["predictions"]] == [
        p["probabilities"] for p in dear_miss["predictions"]
    ]


def test_served_probabilities_equal_the_fitted_model(
    client: TestClient, trained: dict[str, Any]
) -> None:
    X, y = dataset()
    body = train_body()
    spec = TrainingSpec(n_estimators=body["n_estimators"], evaluation_fraction=0.2)
    model = fit_model(TrainingData(X, y, body["feature_names"]), spec).inference
    out = _predict(client, {"instances": X.tolist()})
    served = np.array([p["probabilities"] for p in out["predictions"]])
    np.testing.assert_array_equal(served, model.predict_proba(X))


def test_records_cost_matrix_row_costs_and_priors(
    client: TestClient, trained: dict[str, Any]
) -> None:
    X = dataset()[0][:20]
    records = [dict(zip("abcd", row, strict=True)) for row in X.tolist()]
    by_rows = _predict(client, {"instances": X.tolist(), "costs": {"c_fp": 1, "c_fn": 5}})
    by_records = _predict(client, {"records": records, "costs": {"c_fp": 1, "c_fn": 5}})
    by_matrix = _predict(client, {"records": records, "cost_matrix": [[0, 1], [5, 0]]})
    # the same decisions (each request's rows get ids of their own in the log)
    assert _no_ids(by_rows) == _no_ids(by_records)
    assert [p["decision"] for p in by_matrix["predictions"]] == [
        p["decision"] for p in by_rows["predictions"]
    ]
    assert by_matrix["cost_setting"] == "cost_matrix"
    amounts = np.linspace(1, 500, 20)
    rc = _predict(
        client,
        {"instances": X.tolist(), "row_costs": [{"c_fp": 5, "c_fn": float(a)} for a in amounts]},
    )
    for p, a in zip(rc["predictions"], amounts, strict=True):
        assert p["threshold"] == pytest.approx(5 / (5 + a))
    base = _predict(client, {"instances": X.tolist(), "priors": [0.5, 0.5]})
    rare = _predict(client, {"instances": X.tolist(), "priors": [0.99, 0.01]})
    p_base = [p["probabilities"][1] for p in base["predictions"]]
    p_rare = [p["probabilities"][1] for p in rare["predictions"]]
    assert all(r < b for r, b in zip(p_rare, p_base, strict=True))


def test_evaluate_reports_costs_on_labelled_rows(
    client: TestClient, trained: dict[str, Any]
) -> None:
    X, y = dataset()
    X, y = X[:200], y[:200]
    r = client.post(
        "/v1/models/fraud/evaluate",
        json={"instances": X.tolist(), "labels": y.tolist(), "costs": {"c_fp": 1, "c_fn": 4}},
    )
    assert r.status_code == 200, r.text
    e = r.json()
    cm = np.array(e["confusion_matrix"])
    assert cm.sum() == 200 and e["n_rows"] == 200
    fp, fn = cm[0, 1], cm[1, 0]
    assert e["total_cost"] == pytest.approx(fp * 1 + fn * 4)
    assert e["mean_cost"] == pytest.approx(e["total_cost"] / 200)
    assert e["accuracy"] == pytest.approx((cm[0, 0] + cm[1, 1]) / 200)
    fnr, fpr = fn / cm[1].sum(), fp / cm[0].sum()
    assert e["q"] == pytest.approx(fnr * (1 - e["skew"]) + fpr * e["skew"])
    assert 0 < e["brier"] < 0.25


def test_csv_upload_trains(client: TestClient) -> None:
    X, y = dataset()
    lines = ["x1,x2,x3,x4,target"] + [
        ",".join(f"{v:.4f}" for v in row) + f",{'yes' if t else 'no'}"
        for row, t in zip(X, y, strict=True)
    ]
    lines[5] = ",".join(["", *lines[5].split(",")[1:]])  # one missing value
    files = {"file": ("train.csv", io.BytesIO("\n".join(lines).encode()), "text/csv")}
    r = client.post(
        "/v1/models/churn/versions",
        files=files,
        data={"label_column": "target", "params": '{"n_estimators": 20}'},
    )
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["data"]["classes"] == ["no", "yes"] and v["data"]["missing_values"] == 1
    assert v["data"]["feature_names"] == ["x1", "x2", "x3", "x4"]
    out = _predict(
        client, {"records": [{"x1": None, "x2": 0.1, "x3": 0.2, "x4": 0.3}]}, name="churn"
    )
    assert out["predictions"][0]["decision"] in ("no", "yes")


def test_health_and_metrics(client: TestClient, trained: dict[str, Any]) -> None:
    assert client.get("/health/live").json()["status"] == "ok"
    ready = client.get("/health/ready")
    assert ready.status_code == 200 and ready.json()["checks"]["database"] == "ok"
    _predict(client, {"instances": dataset()[0][:2].tolist()})
    client.get("/v1/models/nope")
    text = client.get("/metrics").text
    assert (
        'costwise_http_requests_total{method="POST",model="fraud",'
        'route="/v1/models/{name}/predict",status="200"}' in text
    )
    assert (  # no such model: one fixed label, never the name from the URL
        'costwise_http_errors_total{method="GET",model="_other",'
        'route="/v1/models/{name}",status="404"}' in text
    )
    assert 'model="nope"' not in text
    assert 'costwise_predicted_rows_total{model="fraud"} 2.0' in text


def test_openapi_is_typed(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    for path in (
        "/v1/models",
        "/v1/models/{name}/versions",
        "/v1/models/{name}/predict",
        "/v1/models/{name}/evaluate",
        "/v1/models/{name}/aliases/{alias}",
        "/health/ready",
    ):
        assert path in paths, path
    content = paths["/v1/models/{name}/versions"]["post"]["requestBody"]["content"]
    assert set(content) == {"application/json", "multipart/form-data"}
    assert "TrainingRequest" in spec["components"]["schemas"]
    assert "PredictResponse" in spec["components"]["schemas"]
    assert "PredictRequest" in spec["components"]["schemas"]
    body = paths["/v1/models/{name}/predict"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"]["$ref"].endswith("PredictRequest")


def test_tampered_artifact_is_refused_and_never_served(
    client: TestClient, settings: Any, trained: dict[str, Any]
) -> None:
    from sqlalchemy import text

    from app.db import make_engine

    engine = make_engine(settings.database_url)
    with engine.begin() as conn:
        blob = bytearray(conn.execute(text("SELECT data FROM artifacts")).scalar_one())
        blob[len(blob) // 2] ^= 0x01
        conn.execute(text("UPDATE artifacts SET data = :d"), {"d": bytes(blob)})
    engine.dispose()
    r = client.post("/v1/models/fraud/predict", json={"instances": [[0.1, 0.2, 0.3, 0.4]]})
    assert r.status_code == 409  # the version's stored state: a retry cannot help
    assert r.json()["code"] == "ARTIFACT_CORRUPTED"
    assert "version 1 fails its sha256 checksum (integrity check" in r.json()["detail"]
    # registry reads still work, and the corrupted model was not cached
    assert client.get("/v1/models/fraud/versions/1").status_code == 200
    assert client.get("/health/ready").json()["checks"]["cached_models"] == 0


def test_algorithms_are_discoverable(client: TestClient) -> None:
    r = client.get("/v1/algorithms")
    assert r.status_code == 200
    algos = {a["name"]: a for a in r.json()["algorithms"]}
    ada = algos["adaboost"]
    assert ada["trains_with_costs"] is False and ada["family"] == "binary"
    assert ada["properties"]["cost_consistent"] is True
    assert "Eqs. 5-7" in ada["equations"]
