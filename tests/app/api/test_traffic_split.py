"""Traffic splits: a share of an alias's requests served by a canary version, sticky by
the request's routing_key (checked against a hash computed here), drawn at random
without one, recorded in the answer's provenance and in the log (per version), compared
unpaired; bad splits are clear 4xx."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from fastapi.testclient import TestClient

from tests.app.api.conftest import FEATURES, dataset

X, Y = dataset(1200, seed=21)


def _train(client: TestClient, n: int, rounds: int) -> int:
    body = {"features": X[:n].tolist(), "labels": Y[:n].tolist(), "feature_names": FEATURES,
            "algorithm": "adaboost", "n_estimators": rounds, "calibration": "platt"}  # fmt: skip
    r = client.post("/v1/models/fraud/versions", json=body)
    assert r.status_code == 201, r.text
    return int(r.json()["version"])


def _u(key: str) -> float:
    """The sticky draw of ``key`` for model fraud's alias production, computed here."""
    digest = hashlib.blake2b(f"fraud\x00production\x00{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def _predict(client: TestClient, i: int, **extra: Any) -> dict[str, Any]:
    body = {"instances": X[600 + i : 601 + i].tolist(), "costs": {"c_fp": 1, "c_fn": 5}, **extra}
    r = client.post("/v1/models/fraud/predict", json=body)
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_a_split_alias_routes_a_share_to_the_canary(client: TestClient) -> None:
    v1, v2 = _train(client, 100, 5), _train(client, 600, 30)
    client.put("/v1/models/fraud/aliases/production", json={"version": v1})
    r = client.put("/v1/models/fraud/aliases/production/split", json={"version": v2, "weight": 0.3})
    assert r.status_code == 200, r.text
    assert (r.json()["champion_version"], r.json()["canary_version"], r.json()["weight"]) == (
        v1, v2, 0.3,
    )  # fmt: skip

    # sticky: each key's arm is its hash's, every time
    keys = [f"customer-{i}" for i in range(300)]
    served = {}
    for i, key in enumerate(keys):
        answer = _predict(client, i, routing_key=key)
        canary = _u(key) < 0.3
        assert answer["version"] == (v2 if canary else v1), key
        assert answer["alias"] == "production"
        assert answer["arm"] == {"name": "canary" if canary else "champion", "weight": 0.3,
                                 "sticky": True}  # fmt: skip
        served[key] = answer["version"]
    assert 60 <= sum(v == v2 for v in served.values()) <= 120  # 300 x 0.3 = 90
    assert {_predict(client, 0, routing_key="customer-7")["version"] for _ in range(10)} == {
        served["customer-7"]
    }
    # no key: drawn per request (300 x 0.3 = 90, sd 7.9)
    drawn = [_predict(client, i)["arm"] for i in range(300)]
    assert 50 <= sum(a["name"] == "canary" for a in drawn) <= 130
    assert not any(a["sticky"] for a in drawn)
    # a version asked by number is not split; evaluate and /v2 are
    assert "arm" not in _predict(client, 0, version=v1, routing_key="customer-7")
    key = next(k for k in keys if _u(k) < 0.3)
    r = client.post("/v1/models/fraud/evaluate", json={
        "instances": X[:5].tolist(), "labels": Y[:5].tolist(), "routing_key": key})  # fmt: skip
    assert r.status_code == 200 and r.json()["version"] == v2, r.text
    r = client.post("/v2/models/fraud/infer", json={
        "inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP64", "data": X[0].tolist()}],
        "parameters": {"routing_key": key}})  # fmt: skip
    assert r.status_code == 200, r.text
    assert r.json()["parameters"]["arm"] == "canary" and r.json()["model_version"] == str(v2)

    # the log holds each arm's version: an unpaired comparison of the arms
    services = client.app.state.services  # type: ignore[attr-defined]
    assert services.prediction_log.flush(10.0)
    outcomes = []
    arms = [k for k in keys if _u(k) < 0.3][:2] + [k for k in keys if _u(k) >= 0.3][:4]
    for n, arm_key in enumerate(arms):  # 2 requests of 100 rows to the canary, 4 not
        start = 100 * n
        r = client.post("/v1/models/fraud/predict", json={
            "instances": X[600 + start : 700 + start].tolist(),
            "ids": [f"s{start + j}" for j in range(100)], "routing_key": arm_key})  # fmt: skip
        assert r.status_code == 200, r.text
        outcomes += [{"id": f"s{start + j}", "label": int(Y[600 + start + j])} for j in range(100)]
    assert services.prediction_log.flush(10.0)
    r = client.post("/v1/models/fraud/outcomes", json={"outcomes": outcomes})
    assert r.json()["counts"]["recorded"] == 600, r.text
    r = client.get("/v1/models/fraud/compare", params={"a": v1, "b": v2})
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["mode"] == "unpaired" and report["labelled_pairs"] == 0
    assert report["labelled"]["a"] + report["labelled"]["b"] == 600
    assert (report["labelled"]["a"], report["labelled"]["b"]) == (400, 200)

    # ended: every request to the alias's own version, no arm
    assert client.delete("/v1/models/fraud/aliases/production/split").status_code == 204
    assert "arm" not in _predict(client, 1, routing_key=key)
    assert _predict(client, 1, routing_key=key)["version"] == v1
    r = client.delete("/v1/models/fraud/aliases/production/split")
    assert r.status_code == 404 and r.json()["field"] == "alias"


def test_bad_splits_are_clear_4xx(client: TestClient) -> None:
    v1 = _train(client, 100, 5)
    client.put("/v1/models/fraud/aliases/production", json={"version": v1})
    url = "/v1/models/fraud/aliases/production/split"
    for body, status, field in (
        ({"version": v1, "weight": 1.5}, 422, "weight"),
        ({"version": v1, "weight": -0.1}, 422, "weight"),
        ({"version": 9, "weight": 0.5}, 404, "version"),
        ({"version": v1}, 422, "weight"),
    ):
        r = client.put(url, json=body)
        assert r.status_code == status and field in (r.json()["field"] or ""), (body, r.text)
    r = client.put("/v1/models/fraud/aliases/nope/split", json={"version": v1, "weight": 0.5})
    assert r.status_code == 404 and r.json()["field"] == "alias", r.text
    r = client.get(url)
    assert r.status_code == 404 and r.json()["field"] == "alias", r.text
    r = client.post(
        "/v1/models/fraud/predict", json={"instances": X[:1].tolist(), "routing_key": ""}
    )
    assert r.status_code == 422 and "routing_key" in r.json()["field"], r.text
    np.testing.assert_equal(client.get("/v1/models/fraud").json()["aliases"], {"production": v1})


def test_removing_the_alias_removes_its_split(client: TestClient) -> None:
    v1, v2 = _train(client, 100, 5), _train(client, 200, 5)
    client.put("/v1/models/fraud/aliases/production", json={"version": v1})
    client.put("/v1/models/fraud/aliases/production/split", json={"version": v2, "weight": 1.0})
    assert _predict(client, 0)["version"] == v2
    assert client.delete("/v1/models/fraud/aliases/production").status_code == 204
    services = client.app.state.services  # type: ignore[attr-defined]
    services.splits.refresh()  # other processes: within COSTWISE_SHADOW_REFRESH_SECONDS
    answer = _predict(client, 0)
    assert "arm" not in answer and answer["alias"] is None and answer["version"] == v2  # latest
    client.put("/v1/models/fraud/aliases/production", json={"version": v1})
    assert _predict(client, 0)["version"] == v1  # the old split did not come back
