"""``interval: true`` on /v1 predict, /v2 infer and batch: each row's ``p_low`` <=
probability <= ``p_high`` and ``stable`` (the decision, among actions the action, the
same at both ends), checked against an independent recomputation; the doors agree; a
model without fold boosters is refused naming ``interval``; without it nothing changes."""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pytest
from fastapi.testclient import TestClient

from tests.app.api.conftest import dataset, train_body


def _default_body(**extra: Any) -> dict[str, Any]:
    body = train_body()
    del body["n_estimators"]  # the default algorithm chooses: a fold ensemble
    body.update(extra)
    return body


@pytest.fixture
def folds(client: TestClient) -> str:
    r = client.post("/v1/models/folds/versions", json=_default_body())
    assert r.status_code == 201, r.text
    return "folds"


def _rows(n: int = 60, seed: int = 3) -> list[list[float]]:
    X, _ = dataset(n, seed=seed)
    return X.tolist()


def _binary_decision(p1: float, c_fp: float, c_fn: float) -> int:
    return int(p1 * c_fn >= (1.0 - p1) * c_fp)  # ties to the positive class


def _review_action(p1: float, c_fp: float, c_fn: float, c_review: float) -> str:
    costs = {"negative": p1 * c_fn, "positive": (1.0 - p1) * c_fp, "review": c_review}
    return min(costs, key=costs.__getitem__)  # ties to the first listed


@pytest.mark.parametrize("review", [False, True])
def test_interval_holds_the_probability_and_stable_is_the_decision_at_both_ends(
    client: TestClient, folds: str, review: bool
) -> None:
    rows = _rows()
    amounts = [1.0 + 0.5 * i for i in range(len(rows))]
    row_costs = [{"c_fp": 1.0, "c_fn": a, **({"c_review": 0.3} if review else {})} for a in amounts]
    r = client.post(
        f"/v1/models/{folds}/predict",
        json={"instances": rows, "row_costs": row_costs, "interval": True},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["interval_method"] == "fold_jackknife"
    stable = []
    for p, a in zip(body["predictions"], amounts, strict=True):
        iv = p["interval"]
        p1 = p["probabilities"][1]
        assert 0.0 <= iv["p_low"] <= p1 <= iv["p_high"] <= 1.0
        if review:
            ends = {_review_action(q, 1.0, a, 0.3) for q in (iv["p_low"], iv["p_high"])}
            assert _review_action(p1, 1.0, a, 0.3) == p["action"]
        else:
            ends = {_binary_decision(q, 1.0, a) for q in (iv["p_low"], iv["p_high"])}
            assert _binary_decision(p1, 1.0, a) == p["decision"]
        assert iv["stable"] == (len(ends) == 1)
        stable.append(iv["stable"])
    assert any(stable) and not all(stable)  # both kinds occur on these rows


def test_without_interval_the_answer_is_unchanged(client: TestClient, folds: str) -> None:
    rows = _rows(20)
    ids = [f"r{i}" for i in range(len(rows))]
    body = {"instances": rows, "costs": {"c_fp": 1.0, "c_fn": 4.0}, "ids": ids}
    plain = client.post(f"/v1/models/{folds}/predict", json=body)
    asked = client.post(f"/v1/models/{folds}/predict", json={**body, "interval": True})
    assert plain.status_code == 200 and asked.status_code == 200, asked.text
    assert b"interval" not in plain.content
    stripped = asked.json()
    assert stripped.pop("interval_method") == "fold_jackknife"
    for p in stripped["predictions"]:
        del p["interval"]
    assert orjson.dumps(stripped) == plain.content  # the same bytes, less the interval


def test_v1_v2_and_batch_agree(client: TestClient, folds: str) -> None:
    rows = _rows(12, seed=5)
    costs = {"c_fp": 1.0, "c_fn": 6.0, "c_review": 0.4}
    v1 = client.post(
        f"/v1/models/{folds}/predict", json={"instances": rows, "costs": costs, "interval": True}
    ).json()
    X = np.asarray(rows)
    features = {"name": "x", "shape": list(X.shape), "datatype": "FP64", "data": X.ravel().tolist()}
    r = client.post(
        f"/v2/models/{folds}/infer",
        json={"inputs": [features], "parameters": {**costs, "interval": True}},
    )
    assert r.status_code == 200, r.text
    out = {t["name"]: t for t in r.json()["outputs"]}
    assert out["stable"]["datatype"] == "BOOL"
    assert r.json()["parameters"]["interval_method"] == v1["interval_method"]
    for i, p in enumerate(v1["predictions"]):
        assert out["p_low"]["data"][i] == p["interval"]["p_low"]
        assert out["p_high"]["data"][i] == p["interval"]["p_high"]
        assert out["stable"]["data"][i] == p["interval"]["stable"]
    plain = client.post(f"/v2/models/{folds}/infer", json={"inputs": [features]}).json()
    assert {t["name"] for t in plain["outputs"]}.isdisjoint({"p_low", "p_high", "stable"})
    asked = {"inputs": [features], "outputs": [{"name": "stable"}]}
    r = client.post(f"/v2/models/{folds}/infer", json=asked)
    assert r.status_code == 400 and "parameters.interval" in r.text, r.text
    r = client.post(
        f"/v2/models/{folds}/infer", json={"inputs": [features], "parameters": {"interval": 1}}
    )
    assert r.status_code == 400 and "parameters.interval" in r.text, r.text


def test_models_without_fold_boosters_are_refused_naming_interval(client: TestClient) -> None:
    X, y = dataset(300, seed=1)
    r = client.post("/v1/models/one/versions", json=train_body(algorithm="adaboost"))
    assert r.status_code == 201, r.text
    r = client.post("/v1/models/one/predict", json={"instances": X[:2].tolist(), "interval": True})
    assert 400 <= r.status_code < 500 and r.json()["field"] == "interval", r.text
    assert "'auto'" in r.json()["detail"] and "one booster" in r.json()["detail"]
    y3 = np.where(X[:, 0] > 0.5, 2, y)
    three = {"features": X.tolist(), "labels": y3.tolist(), "algorithm": "samme", "n_estimators": 5}
    assert client.post("/v1/models/three/versions", json=three).status_code == 201
    r = client.post(
        "/v1/models/three/predict", json={"instances": X[:2].tolist(), "interval": True}
    )
    assert 400 <= r.status_code < 500 and r.json()["field"] == "interval", r.text
    assert "3 classes" in r.json()["detail"]
    features = {"name": "x", "shape": [2, 4], "datatype": "FP64", "data": X[:2].ravel().tolist()}
    r = client.post(
        "/v2/models/one/infer", json={"inputs": [features], "parameters": {"interval": True}}
    )
    assert 400 <= r.status_code < 500 and "interval" in r.text, r.text
    for name in ("one", "three"):  # without interval both serve as before
        assert client.post(
            f"/v1/models/{name}/predict", json={"instances": X[:2].tolist()}
        ).is_success
    r = client.post("/v1/models/one/predict", json={"instances": X[:2].tolist(), "interval": [1]})
    assert r.status_code == 422 and "interval" in r.text, r.text


def test_monitoring_counts_the_unstable_decisions_logged(client: TestClient, folds: str) -> None:
    rows = _rows(80, seed=7)
    row_costs = [{"c_fp": 1.0, "c_fn": 1.0 + 0.25 * i} for i in range(len(rows))]
    asked = client.post(
        f"/v1/models/{folds}/predict",
        json={"instances": rows, "row_costs": row_costs, "interval": True},
    )
    plain = client.post(f"/v1/models/{folds}/predict", json={"instances": rows[:10]})
    assert asked.status_code == 200 and plain.status_code == 200, asked.text
    writer = client.app.state.services.prediction_log  # type: ignore[attr-defined]
    assert writer.flush(10.0)
    unstable = sum(not p["interval"]["stable"] for p in asked.json()["predictions"])
    assert 0 < unstable < len(rows)
    report = client.get(f"/v1/models/{folds}/monitoring").json()
    total = report["versions"][0]["total"]
    assert total["predictions"] == len(rows) + 10
    assert total["with_interval"] == len(rows)
    assert total["unstable"] == unstable
