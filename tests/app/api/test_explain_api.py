"""``explain: true`` on /v1 predict: per-row contributions that sum to the served score,
the probability and the expected-cost margin; refusals naming ``explain``."""

from __future__ import annotations

from typing import Any

import numpy as np
from fastapi.testclient import TestClient

from tests.app.api.conftest import FEATURES, dataset, train_body

COSTS = {"c_fp": 1.0, "c_fn": 5.0}


def _default_body(**extra: Any) -> dict[str, Any]:
    body = train_body()
    del body["n_estimators"]  # the default algorithm chooses
    body.update(extra)
    return body


def test_explanations_sum_to_the_score_and_lead_to_the_decision(client: TestClient) -> None:
    r = client.post("/v1/models/auto/versions", json=_default_body())
    assert r.status_code == 201, r.text
    X, _ = dataset(40, seed=3)
    X[::5, 2] = np.nan
    rows = [[None if np.isnan(v) else v for v in row] for row in X.tolist()]
    ids = [f"r{i}" for i in range(len(rows))]
    body = {"instances": rows, "row_costs": [{"c_fp": 1.0, "c_fn": 1.0 + i} for i in range(40)]}
    plain = client.post("/v1/models/auto/predict", json={**body, "ids": ids})
    r = client.post(
        "/v1/models/auto/predict", json={**body, "ids": [f"e{i}" for i in ids], "explain": True}
    )
    assert plain.status_code == 200 and r.status_code == 200, r.text
    assert all("explanation" not in p for p in plain.json()["predictions"])
    for i, (p, q) in enumerate(
        zip(r.json()["predictions"], plain.json()["predictions"], strict=True)
    ):
        e = p.pop("explanation")
        assert {k: v for k, v in p.items() if k != "id"} == {
            k: v for k, v in q.items() if k != "id"
        }  # the same decision, probabilities and costs as without explain
        assert list(e["contributions"]) == FEATURES
        terms = [e["bias"], *e["contributions"].values()]
        assert abs(sum(terms) - e["score"]) <= 1e-9 * sum(abs(t) for t in terms)
        assert 0.0 <= e["score"] <= 1.0
        assert e["probability"] == p["probabilities"][1]
        p0, p1 = p["probabilities"]
        c_fn = 1.0 + i  # expected costs of deciding 0 (misses) and 1 (false alarms)
        assert abs(e["expected_cost_margin"] - abs(p1 * c_fn - p0 * 1.0)) <= 1e-12
        assert e["expected_cost_margin"] >= 0.0


def test_explain_is_refused_where_there_is_no_exact_attribution(client: TestClient) -> None:
    X, y = dataset(300, seed=1)
    y3 = np.where(X[:, 0] > 0.5, 2, y)  # three classes
    r = client.post(
        "/v1/models/three/versions",
        json={
            "features": X.tolist(),
            "labels": y3.tolist(),
            "algorithm": "samme",
            "n_estimators": 10,
        },
    )
    assert r.status_code == 201, r.text
    r = client.post("/v1/models/three/predict", json={"instances": X[:2].tolist(), "explain": True})
    assert 400 <= r.status_code < 500 and r.json()["field"] == "explain", r.text
    assert "two-class models; this model has 3 classes" in r.json()["detail"]
    r = client.post("/v1/models/jous/versions", json=train_body(algorithm="jous", n_estimators=5))
    assert r.status_code == 201, r.text
    r = client.post("/v1/models/jous/predict", json={"instances": X[:2].tolist(), "explain": True})
    assert 400 <= r.status_code < 500 and r.json()["field"] == "explain", r.text
    assert "no exact attribution" in r.json()["detail"]
    # without explain both serve as before
    for name in ("three", "jous"):
        assert client.post(
            f"/v1/models/{name}/predict", json={"instances": X[:2].tolist()}
        ).is_success


def test_v2_explain_parameter_gives_the_same_explanations(client: TestClient) -> None:
    r = client.post("/v1/models/auto/versions", json=_default_body())
    assert r.status_code == 201, r.text
    X, _ = dataset(6, seed=4)
    v1 = client.post(
        "/v1/models/auto/predict",
        json={"instances": X.tolist(), "costs": COSTS, "explain": True},
    ).json()["predictions"]
    features = {"name": "x", "shape": list(X.shape), "datatype": "FP64", "data": X.ravel().tolist()}
    body = {"inputs": [features], "parameters": {**COSTS, "explain": True}}
    r = client.post("/v2/models/auto/infer", json=body)
    assert r.status_code == 200, r.text
    out = {t["name"]: t for t in r.json()["outputs"]}
    contrib = out["contributions"]
    assert contrib["shape"] == [6, 4] and contrib["parameters"]["features"] == FEATURES
    values = np.asarray(contrib["data"]).reshape(6, 4)
    for i, p in enumerate(v1):
        e = p["explanation"]
        assert values[i].tolist() == list(e["contributions"].values())
        assert out["explanation_bias"]["data"][i] == e["bias"]
        assert out["explanation_score"]["data"][i] == e["score"]
        assert out["expected_cost_margin"]["data"][i] == e["expected_cost_margin"]
    plain = client.post("/v2/models/auto/infer", json={"inputs": [features]}).json()
    assert {t["name"] for t in plain["outputs"]}.isdisjoint({"contributions", "explanation_score"})
    asked = {"inputs": [features], "outputs": [{"name": "contributions"}]}
    r = client.post("/v2/models/auto/infer", json=asked)
    assert r.status_code == 400 and "parameters.explain" in r.text, r.text
    r = client.post("/v2/models/auto/infer", json={**body, "parameters": {"explain": "yes"}})
    assert r.status_code == 400 and "parameters.explain" in r.text, r.text


def test_the_margin_among_actions_is_the_gap_to_the_second_best_action(
    client: TestClient,
) -> None:
    r = client.post("/v1/models/auto/versions", json=_default_body())
    assert r.status_code == 201, r.text
    X, _ = dataset(30, seed=5)
    costs = {"c_fp": 1.0, "c_fn": 20.0, "c_review": 0.5}
    r = client.post(
        "/v1/models/auto/predict", json={"instances": X.tolist(), "costs": costs, "explain": True}
    )
    assert r.status_code == 200, r.text
    for p in r.json()["predictions"]:
        p0, p1 = p["probabilities"]
        expected = sorted([p1 * 20.0, p0 * 1.0, 0.5])  # negative, positive, review
        e = p["explanation"]
        assert abs(e["expected_cost_margin"] - (expected[1] - expected[0])) <= 1e-12
        assert abs(p["expected_cost"] - expected[0]) <= 1e-12
