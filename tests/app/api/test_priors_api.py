"""GET/POST /v1/models/{name}/priors and "priors": "estimated" through the real app (both databases).

GET computes an estimate and records nothing; POST records it, and only a recorded
estimate is what "priors": "estimated" applies.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import make_classification


def _population() -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(
        6000, 4, n_informative=3, n_redundant=1, class_sep=1.5, random_state=0
    )
    return np.round(X, 4), y


def _shifted(X: np.ndarray, y: np.ndarray, pos_share: float, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n_pos = int(round(n * pos_share))
    idx = np.r_[
        rng.choice(np.flatnonzero(y == 1), n_pos), rng.choice(np.flatnonzero(y == 0), n - n_pos)
    ]
    return X[rng.permutation(idx)]


@pytest.fixture
def balanced(client: TestClient) -> dict[str, Any]:
    X, y = _population()
    body = {"features": X[:2000].tolist(), "labels": y[:2000].tolist(), "n_estimators": 40}
    r = client.post("/v1/models/traffic/versions", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def _flush(client: TestClient) -> None:
    assert client.app.state.services.prediction_log.flush(10.0)  # type: ignore[attr-defined]


def _predict(client: TestClient, X: np.ndarray, **extra: Any) -> dict[str, Any]:
    """Predict in requests of at most 1000 rows (the test settings' limit); the last answer."""
    for start in range(0, len(X), 1000):
        chunk = X[start : start + 1000].tolist()
        r = client.post("/v1/models/traffic/predict", json={"instances": chunk, **extra})
        assert r.status_code == 200, r.text[:500]
    return r.json()


def _now() -> str:
    return datetime.now(UTC).isoformat()


def test_em_estimate_of_shifted_traffic_and_predict_with_it(
    client: TestClient, balanced: dict[str, Any]
) -> None:
    X, y = _population()
    traffic = _shifted(X[2000:], y[2000:], 0.15, 2000, seed=1)
    r = client.post(
        "/v1/models/traffic/predict",
        json={"instances": traffic[:10].tolist(), "priors": "estimated"},
    )
    assert r.status_code == 422 and r.json()["field"] == "priors", r.text
    assert "no prior estimate yet" in r.json()["detail"]
    _predict(client, traffic)
    _flush(client)
    r = client.post("/v1/models/traffic/priors")
    assert r.status_code == 201, r.text
    est = r.json()
    assert est["recorded"] is True and isinstance(est["id"], int)
    assert est["model"] == "traffic" and est["version"] == 1 and est["n_rows"] == 2000
    assert est["classes"] == [0, 1] and est["converged"] is True
    assert abs(est["priors"][1] - 0.15) < 0.04, est
    assert est["p_value"] < 1e-6  # the traffic's priors did change
    assert abs(est["train_priors"][1] - 0.5) < 0.05  # the balanced training rows
    # predict with the estimate: the same as sending those priors, and provenance names it
    out = _predict(client, traffic[:20], priors="estimated", costs={"c_fp": 1, "c_fn": 3})
    same = _predict(client, traffic[:20], priors=est["priors"], costs={"c_fp": 1, "c_fn": 3})
    assert [p["probabilities"] for p in out["predictions"]] == [
        p["probabilities"] for p in same["predictions"]
    ]
    applied = out["applied_costs"]
    assert applied["priors"] == est["priors"]
    assert applied["priors_estimate"] == {
        k: est[k] for k in ("id", "version", "estimated_at", "since", "until", "n_rows")
    }
    assert same["applied_costs"]["priors_estimate"] is None
    # evaluate takes it too
    r = client.post(
        "/v1/models/traffic/evaluate",
        json={"instances": traffic[:20].tolist(), "labels": [0] * 20, "priors": "estimated"},
    )
    assert r.status_code == 200 and r.json()["applied_costs"]["priors_estimate"]["id"] == est["id"]


def test_request_priors_are_undone_before_em(client: TestClient, balanced: dict[str, Any]) -> None:
    X, y = _population()
    traffic = _shifted(X[2000:], y[2000:], 0.3, 800, seed=2)
    t0 = _now()
    _predict(client, traffic)
    _flush(client)
    time.sleep(0.01)
    t1 = _now()
    _predict(client, traffic, priors=[0.8, 0.2])  # logged probabilities are shifted
    _flush(client)
    r1 = client.post("/v1/models/traffic/priors", json={"version": 1, "since": t0, "until": t1})
    r2 = client.post("/v1/models/traffic/priors", json={"version": 1, "since": t1})
    assert r1.status_code == 201 and r2.status_code == 201, r1.text + r2.text
    assert r1.json()["n_rows"] == r2.json()["n_rows"] == 800
    np.testing.assert_allclose(r2.json()["priors"], r1.json()["priors"], atol=1e-6)
    assert r2.json()["id"] > r1.json()["id"]
    # the latest estimate is the one predict applies
    out = _predict(client, traffic[:3], priors="estimated")
    assert out["applied_costs"]["priors_estimate"]["id"] == r2.json()["id"]


def test_priors_errors(client: TestClient, balanced: dict[str, Any]) -> None:
    r = client.get("/v1/models/traffic/priors")
    assert r.status_code == 404 and "no logged predictions" in r.json()["detail"], r.text
    r = client.get("/v1/models/traffic/priors", params={"version": 7})
    assert r.status_code == 404 and r.json()["field"] == "version"
    r = client.get("/v1/models/nobody/priors")
    assert r.status_code == 404
    r = client.get(
        "/v1/models/traffic/priors",
        params={"since": "2030-01-02T00:00:00Z", "until": "2030-01-01T00:00:00Z"},
    )
    assert r.status_code == 422 and r.json()["field"] == "since"
    r = client.post(
        "/v1/models/traffic/predict", json={"instances": [[0, 0, 0, 0]], "priors": "guessed"}
    )
    assert r.status_code == 422 and "priors" in (r.json().get("field") or ""), r.text


def test_uncalibrated_version_is_refused(client: TestClient) -> None:
    X, y = _population()
    body = {
        "features": X[:600].tolist(),
        "labels": y[:600].tolist(),
        "n_estimators": 10,
        "calibration": "none",
    }
    assert client.post("/v1/models/raw/versions", json=body).status_code == 201
    r = client.post("/v1/models/raw/predict", json={"instances": X[600:700].tolist()})
    assert r.status_code == 200
    _flush(client)
    r = client.get("/v1/models/raw/priors")
    assert r.status_code == 422 and r.json()["field"] == "version", r.text
    assert "calibrated probabilities" in r.json()["detail"]


def test_estimated_priors_survive_a_database_outage(
    client: TestClient, balanced: dict[str, Any], tmp_path: Any
) -> None:
    from sqlalchemy import create_engine
    from sqlalchemy.orm import sessionmaker

    X, y = _population()
    traffic = _shifted(X[2000:], y[2000:], 0.2, 600, seed=4)
    _predict(client, traffic)
    _flush(client)
    est = client.post("/v1/models/traffic/priors").json()
    estimates = client.app.state.services.priors  # type: ignore[attr-defined]
    # the estimate's cache has expired and the database no longer answers
    down = create_engine(f"sqlite:///{tmp_path}/missing/dir/x.db")
    estimates._read = sessionmaker(bind=down)
    estimates._cache = {k: (0.0, v) for k, (_, v) in estimates._cache.items()}
    try:
        out = _predict(client, traffic[:5], priors="estimated")
    finally:
        down.dispose()
    assert out["applied_costs"]["priors_estimate"]["id"] == est["id"]
    assert out["applied_costs"]["priors"] == est["priors"]


def _infer(client: TestClient, X: np.ndarray, **parameters: Any) -> Any:
    body = {
        "parameters": parameters,
        "inputs": [{"name": "features", "shape": list(X.shape), "datatype": "FP64",
                    "data": X.ravel().tolist()}],
    }  # fmt: skip
    return client.post("/v2/models/traffic/infer", json=body)


def test_v2_infer_with_estimated_priors(client: TestClient, balanced: dict[str, Any]) -> None:
    X, y = _population()
    traffic = _shifted(X[2000:], y[2000:], 0.2, 1000, seed=5)
    # no estimate yet: a 400 naming the parameter and how to make one, nothing decided
    r = _infer(client, traffic[:5], priors="estimated")
    assert r.status_code == 400, r.text
    assert r.json()["error"].startswith("parameters.priors: version 1 of model 'traffic' has no")
    assert "POST /v1/models/traffic/priors" in r.json()["error"]
    for bad in ("guessed", "estimate", 3):
        r = _infer(client, traffic[:5], priors=bad)
        assert r.status_code == 400 and r.json()["error"].startswith("parameters.priors: "), r.text
    _predict(client, traffic)
    _flush(client)
    est = client.post("/v1/models/traffic/priors", json={"version": 1}).json()
    ref = {k: est[k] for k in ("id", "version", "estimated_at", "since", "until", "n_rows")}
    # the same probabilities and decisions as /v1 with "estimated", and as sending the priors
    r = _infer(client, traffic[:20], priors="estimated", c_fp=1, c_fn=3)
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["parameters"]["priors"] == est["priors"]
    assert answer["parameters"]["priors_estimate"] == ref
    v1 = _predict(client, traffic[:20], priors="estimated", costs={"c_fp": 1, "c_fn": 3})
    assert v1["applied_costs"]["priors_estimate"] == ref
    out = {o["name"]: o["data"] for o in answer["outputs"]}
    np.testing.assert_array_equal(
        np.reshape(out["probabilities"], (20, 2)), [p["probabilities"] for p in v1["predictions"]]
    )
    assert out["decision"] == [p["decision"] for p in v1["predictions"]]
    explicit = _infer(client, traffic[:20], priors=json.dumps(est["priors"]), c_fp=1, c_fn=3)
    assert explicit.status_code == 200, explicit.text
    assert "priors_estimate" not in explicit.json()["parameters"]
    assert explicit.json()["outputs"][0]["data"] == out["probabilities"]


def test_get_records_nothing_and_changes_no_decision(
    client: TestClient, balanced: dict[str, Any]
) -> None:
    """GET computes the estimate POST records, but records nothing: "estimated" still has
    no estimate to apply, and after a POST, GETs over other windows change nothing."""
    X, y = _population()
    traffic = _shifted(X[2000:], y[2000:], 0.2, 1000, seed=6)
    _predict(client, traffic)
    _flush(client)
    read = client.get("/v1/models/traffic/priors")
    assert read.status_code == 200, read.text
    assert read.json()["id"] is None and read.json()["recorded"] is False
    r = client.post(
        "/v1/models/traffic/predict",
        json={"instances": traffic[:5].tolist(), "priors": "estimated"},
    )
    assert r.status_code == 422 and "no prior estimate yet" in r.json()["detail"], r.text
    assert "POST /v1/models/traffic/priors" in r.json()["detail"]
    recorded = client.post("/v1/models/traffic/priors", json={})
    assert recorded.status_code == 201, recorded.text
    assert recorded.json()["recorded"] is True
    same = ("priors", "n_rows", "n_iter", "log_likelihood_ratio", "version", "since", "until")
    assert {k: read.json()[k] for k in same} == {k: recorded.json()[k] for k in same}
    before = _predict(client, traffic[:50], priors="estimated")
    t = _now()
    for params in ({"since": t}, {"until": t, "version": 1}, {}):  # other windows: read only
        assert client.get("/v1/models/traffic/priors", params=params).status_code in (200, 404)
    after = _predict(client, traffic[:50], priors="estimated")
    assert after["applied_costs"] == before["applied_costs"]
    assert after["applied_costs"]["priors_estimate"]["id"] == recorded.json()["id"]
    assert [p["decision"] for p in after["predictions"]] == [
        p["decision"] for p in before["predictions"]
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [("since", "0001-01-01T00:00:00+14:00"), ("until", "9999-12-31T23:59:59-14:00")],
)
def test_times_outside_utc_are_a_422_naming_the_field(
    client: TestClient, balanced: dict[str, Any], field: str, value: str
) -> None:
    r = client.get("/v1/models/traffic/priors", params={field: value})
    assert r.status_code == 422 and r.json()["field"] == field, r.text
    r = client.post("/v1/models/traffic/priors", json={field: value})
    assert r.status_code == 422 and r.json()["field"] == field, r.text


def test_post_body_errors_name_the_field(client: TestClient, balanced: dict[str, Any]) -> None:
    for body, field in (
        ({"version": 0}, "version"),
        ({"since": "yesterday"}, "since"),
        ({"window": "1h"}, "window"),
        ({"since": "2030-01-02T00:00:00Z", "until": "2030-01-01T00:00:00Z"}, "since"),
    ):
        r = client.post("/v1/models/traffic/priors", json=body)
        assert r.status_code == 422 and r.json()["field"] == field, (body, r.text)


def test_a_tiny_applied_prior_does_not_poison_later_estimates(
    client: TestClient, balanced: dict[str, Any]
) -> None:
    """A request that applied priors [5e-324, 1] is logged with them; undoing that shift
    overflowed (0.5 / 5e-324 = inf) into NaN, and every later estimate over a window
    holding the row was a 422 blaming `version`. Undone in log space, it is finite."""
    X, y = _population()
    traffic = _shifted(X[2000:], y[2000:], 0.3, 400, seed=7)
    _predict(client, traffic)
    for priors in ([5e-324, 1.0], [1.0, 5e-324], [1e-300, 1.0]):
        r = client.post(
            "/v1/models/traffic/predict",
            content=json.dumps({"instances": traffic[:20].tolist(), "priors": priors}),
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 200, r.text
    _flush(client)
    r = client.get("/v1/models/traffic/priors")
    assert r.status_code == 200, r.text
    est = r.json()
    assert est["n_rows"] == 460 and np.all(np.isfinite(est["priors"]))
    assert abs(sum(est["priors"]) - 1) < 1e-9


def test_the_earliest_and_latest_times_in_utc_are_answered_in_iso_8601(
    client: TestClient, balanced: dict[str, Any]
) -> None:
    """The edges of the range are valid: answered, and echoed as ISO 8601 with a
    four-digit year (strftime's %Y wrote year 1 as "1-01-01"), also by monitoring."""
    X, y = _population()
    _predict(client, X[2000:2100])
    _flush(client)
    window = {"since": "0001-01-01T00:00:00-14:00", "until": "9999-12-31T23:59:59.999999Z"}
    r = client.get("/v1/models/traffic/priors", params=window)
    assert r.status_code == 200, r.text
    assert r.json()["since"] == "0001-01-01T14:00:00.000000Z"
    assert r.json()["until"] == "9999-12-31T23:59:59.999999Z" and r.json()["n_rows"] == 100
    r = client.get("/v1/models/traffic/monitoring", params=window)
    assert r.status_code == 200 and r.json()["since"] == "0001-01-01T14:00:00Z", r.text
