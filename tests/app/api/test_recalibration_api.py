"""POST /v1/models/{name}/versions/{version}/recalibrate through the real app (both databases)."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import make_classification

from app.registry.repository import Registry
from app.services.model_registry.stored_models import read_stored
from models.evaluation.metrics import brier_score, expected_calibration_error
from models.inference.artifacts import artifact_base
from tests.app.conftest import refused

NAMES = ["a", "b", "c", "d"]


def _population(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(
        4000, 4, n_informative=3, n_redundant=1, flip_y=0.05, random_state=seed
    )
    return np.round(X, 4), y


def _shifted(X: np.ndarray, y: np.ndarray, pos_share: float, n: int, seed: int) -> tuple:
    """Label shift: resample so that positives are ``pos_share`` of the rows."""
    rng = np.random.default_rng(seed)
    n_pos = int(round(n * pos_share))
    idx = rng.permutation(
        np.r_[
            rng.choice(np.flatnonzero(y == 1), n_pos),
            rng.choice(np.flatnonzero(y == 0), n - n_pos),
        ]
    )
    return X[idx], y[idx]


def _register(client: TestClient, name: str, X: Any, y: Any, **params: Any) -> dict[str, Any]:
    """Train and register the next version of ``name`` on ``X``, ``y`` (201)."""
    body = {"features": X.tolist(), "labels": y.tolist(), **params}
    r = client.post(f"/v1/models/{name}/versions", json=body)
    assert r.status_code == 201, r.text
    return r.json()


@pytest.fixture
def parent(client: TestClient) -> dict[str, Any]:
    """Model 'shift' version 1, trained on balanced rows 0..1199 of the population."""
    X, y = _population()
    return _register(client, "shift", X[:1200], y[:1200], feature_names=NAMES, n_estimators=40)


def _proba(client: TestClient, X: np.ndarray, version: int) -> np.ndarray:
    r = client.post("/v1/models/shift/predict", json={"instances": X.tolist(), "version": version})
    assert r.status_code == 200, r.text
    return np.array([p["probabilities"][1] for p in r.json()["predictions"]])


def _stored(client: TestClient, version: int) -> Any:
    sessions = client.app.state.services.sessions  # type: ignore[attr-defined]
    with sessions() as s:
        reg = Registry(s)
        return read_stored(reg, reg.get_version("shift", version))


def _versions(client: TestClient) -> int:
    r = client.get("/v1/models/shift/versions")
    return len(r.json()["versions"])


@pytest.mark.parametrize("method", ["platt", "isotonic"])
def test_recalibration_fixes_shifted_calibration_and_shares_the_booster(
    client: TestClient, parent: dict[str, Any], method: str
) -> None:
    X, y = _population()
    X_lab, y_lab = _shifted(X[1200:2600], y[1200:2600], 0.1, 1500, seed=1)
    X_new, y_new = _shifted(X[2600:], y[2600:], 0.1, 1000, seed=2)
    r = client.post(
        "/v1/models/shift/versions/1/recalibrate",
        json={"instances": X_lab.tolist(), "labels": y_lab.tolist(), "method": method},
    )
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["version"] == 2 and v["parent_version"] == 1
    assert v["algorithm"] == parent["algorithm"]
    assert v["params"]["recalibration"] == {
        "parent_version": 1,
        "base_version": 1,
        "method": method,
        "holdout_fraction": 0.3,
        "random_state": 0,
        "source": "rows",
    }
    assert v["calibration"]["method"] == method and v["calibration"]["split"] == "recalibration"
    assert v["calibration"]["n_calibration"] + v["calibration"]["n_holdout"] == 1500
    assert v["data"]["n_rows"] == 1500 and v["data"]["source"] == "rows"
    assert v["data"]["class_counts"] == {"0": int((y_lab == 0).sum()), "1": int((y_lab == 1).sum())}
    assert len(v["data"]["fingerprint"]) == 64
    rec = v["metrics"]["recalibration"]
    assert rec["after"]["brier"] < rec["before"]["brier"]
    assert rec["after"]["ece"] < rec["before"]["ece"]
    assert v["metrics"]["brier"] == pytest.approx(rec["after"]["brier"])
    # on rows neither version saw, the recalibrated one is better calibrated
    p1, p2 = _proba(client, X_new, 1), _proba(client, X_new, 2)
    assert brier_score(y_new, p2) < brier_score(y_new, p1)
    assert expected_calibration_error(y_new, p2) < expected_calibration_error(y_new, p1)
    # the booster is stored once: version 2's artifact names version 1's and holds no arrays
    s1, s2 = _stored(client, 1), _stored(client, 2)
    assert artifact_base(s2.blob) == parent["artifact_sha256"] and s2.base_version == 1
    assert s2.base == s1.blob
    assert zipfile.ZipFile(io.BytesIO(s2.blob)).namelist() == ["manifest.json"]
    assert v["artifact_size"] == len(s2.blob) < parent["artifact_size"]
    _, a1 = s1.load().scorer.to_parts()
    _, a2 = s2.load().scorer.to_parts()
    assert a1.keys() == a2.keys() and all(np.array_equal(a1[k], a2[k]) for k in a1)
    # it serves like any version: through the production alias too
    assert client.put("/v1/models/shift/aliases/production", json={"version": 2}).status_code == 200
    r = client.post("/v1/models/shift/predict", json={"instances": X_new[:3].tolist()})
    assert r.json()["version"] == 2
    assert r.json()["calibration"] == {
        "method": method,
        "split": "recalibration",
        "score": parent["calibration"]["score"],
    }


def test_recalibrating_a_recalibrated_version_keeps_one_base(
    client: TestClient, parent: dict[str, Any]
) -> None:
    X, y = _population()
    body = {"records": [dict(zip(NAMES, row, strict=True)) for row in X[1200:1500].tolist()]}
    body["labels"] = y[1200:1500].tolist()
    assert client.post("/v1/models/shift/versions/1/recalibrate", json=body).status_code == 201
    r = client.post(
        "/v1/models/shift/versions/2/recalibrate",
        json={"instances": X[1500:1800].tolist(), "labels": y[1500:1800].tolist()},
    )
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["version"] == 3 and v["parent_version"] == 2
    assert v["params"]["recalibration"]["base_version"] == 1
    assert artifact_base(_stored(client, 3).blob) == parent["artifact_sha256"]
    assert client.get("/v1/models/shift/versions/3").json()["parent_version"] == 2
    assert client.get("/v1/models/shift/versions/1").json()["parent_version"] is None
    assert _proba(client, X[:5], 3).shape == (5,)


def _bad_cases() -> list[tuple[str, dict[str, Any], int, str, str]]:
    X, y = _population()
    rows, labels = X[1200:1300].tolist(), y[1200:1300].tolist()
    return [
        ("one class", {"instances": rows, "labels": [0] * 100}, 422, "labels", "all 100"),
        ("too few", {"instances": rows[:20], "labels": labels[:20]}, 422, "labels", "got 20"),
        (
            "few positives",
            {"instances": rows, "labels": [1] * 5 + [0] * 95},
            422,
            "labels",
            "class 1 has 5",
        ),
        (
            "wrong width",
            {"instances": [r[:3] for r in rows], "labels": labels},
            422,
            "instances",
            "4",
        ),
        (
            "unknown feature",
            {"records": [{"a": 1, "b": 2, "c": 3, "e": 4}], "labels": [1]},
            422,
            "records[0]",
            "missing feature",
        ),
        (
            "label not a class",
            {"instances": rows, "labels": labels[:99] + [7]},
            422,
            "labels[99]",
            "not a class",
        ),
        ("labels missing", {"instances": rows}, 422, "labels", "labels"),
        (
            "both sources",
            {"instances": rows, "labels": labels, "from_outcomes": {}},
            422,
            "",
            "not both",
        ),
        ("bad method", {"instances": rows, "labels": labels, "method": "none"}, 422, "method", ""),
        (
            "bad fraction",
            {"instances": rows, "labels": labels, "holdout_fraction": 0.8},
            422,
            "holdout_fraction",
            "",
        ),
        (
            "no outcomes",
            {"from_outcomes": {"since": "2020-01-01T00:00:00"}},
            422,
            "from_outcomes",
            "no logged predictions",
        ),
    ]


@pytest.mark.parametrize(
    ("case", "body", "status", "field", "detail"), _bad_cases(), ids=[c[0] for c in _bad_cases()]
)
def test_bad_recalibrations_are_4xx_and_write_nothing(
    client: TestClient,
    parent: dict[str, Any],
    case: str,
    body: dict[str, Any],
    status: int,
    field: str,
    detail: str,
) -> None:
    r = client.post("/v1/models/shift/versions/1/recalibrate", json=body)
    refused(r, status, field_prefix=field, detail=detail)
    assert _versions(client) == 1


def test_unknown_model_or_version_is_404(client: TestClient, parent: dict[str, Any]) -> None:
    X, y = _population()
    body = {"instances": X[:100].tolist(), "labels": y[:100].tolist()}
    r = client.post("/v1/models/shift/versions/9/recalibrate", json=body)
    assert r.status_code == 404 and "no version 9" in r.json()["detail"]
    r = client.post("/v1/models/nobody/versions/1/recalibrate", json=body)
    assert r.status_code == 404
    r = client.post(
        "/v1/models/shift/versions/1/recalibrate",
        content=b"instances=1",
        headers={"content-type": "text/plain"},
    )
    assert r.status_code == 415


def _population3(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(
        4500, 5, n_informative=4, n_redundant=1, n_classes=3, n_clusters_per_class=1,
        flip_y=0.05, random_state=seed,
    )  # fmt: skip
    return np.round(X, 4), y


def _shifted3(X: np.ndarray, y: np.ndarray, shares: list[float], n: int, seed: int) -> tuple:
    """Label shift of three classes: resample so that class k is ``shares[k]`` of the rows."""
    rng = np.random.default_rng(seed)
    counts = [int(round(n * s)) for s in shares]
    idx = rng.permutation(
        np.concatenate([rng.choice(np.flatnonzero(y == k), c) for k, c in enumerate(counts)])
    )
    return X[idx], y[idx]


def _proba3(client: TestClient, name: str, X: np.ndarray, version: int) -> np.ndarray:
    r = client.post(
        f"/v1/models/{name}/predict", json={"instances": X.tolist(), "version": version}
    )
    assert r.status_code == 200, r.text
    return np.array([p["probabilities"] for p in r.json()["predictions"]])


def _stored_of(client: TestClient, name: str, version: int) -> Any:
    sessions = client.app.state.services.sessions  # type: ignore[attr-defined]
    with sessions() as s:
        reg = Registry(s)
        return read_stored(reg, reg.get_version(name, version))


SHIFT3 = [0.7, 0.2, 0.1]


@pytest.mark.parametrize(
    ("algorithm", "method"),
    [("samme", "platt"), ("ovr_adaboost", "isotonic"), ("samme", "multinomial")],
)
def test_multiclass_recalibration_fixes_shifted_calibration_and_shares_the_booster(
    client: TestClient, algorithm: str, method: str
) -> None:
    X, y = _population3()
    parent = _register(client, "tri", X[:1500], y[:1500], algorithm=algorithm, n_estimators=30)
    X_lab, y_lab = _shifted3(X[1500:3000], y[1500:3000], SHIFT3, 1500, seed=1)
    X_new, y_new = _shifted3(X[3000:], y[3000:], SHIFT3, 1000, seed=2)
    r = client.post(
        "/v1/models/tri/versions/1/recalibrate",
        json={"instances": X_lab.tolist(), "labels": y_lab.tolist(), "method": method},
    )
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["version"] == 2 and v["parent_version"] == 1 and v["algorithm"] == algorithm
    assert v["calibration"]["method"] == method and v["calibration"]["split"] == "recalibration"
    assert v["data"]["class_counts"] == {str(k): int((y_lab == k).sum()) for k in range(3)}
    assert "positive_class" not in v["data"]
    rec = v["metrics"]["recalibration"]
    assert rec["after"]["brier"] < rec["before"]["brier"]
    assert rec["after"]["log_loss"] < rec["before"]["log_loss"]
    # per class: the top-label ECE ("ece") is reported, not asserted (it can rise while
    # every class's calibration improves: a few hundred held-out rows, ten bins)
    assert rec["after"]["classwise_ece"] < rec["before"]["classwise_ece"]
    assert v["metrics"]["brier"] == pytest.approx(rec["after"]["brier"])
    # on rows neither version saw, the recalibrated one is better calibrated
    onehot = np.eye(3)[y_new]
    p1, p2 = _proba3(client, "tri", X_new, 1), _proba3(client, "tri", X_new, 2)
    assert np.allclose(p2.sum(axis=1), 1.0)
    brier1, brier2 = (((p - onehot) ** 2).sum(axis=1).mean() for p in (p1, p2))
    assert brier2 < brier1
    # calibration in the large, per class: mean probability against observed share
    share = onehot.mean(axis=0)
    assert np.abs(p2.mean(axis=0) - share).sum() < np.abs(p1.mean(axis=0) - share).sum()
    # the booster is stored once, byte-identical
    s1, s2 = _stored_of(client, "tri", 1), _stored_of(client, "tri", 2)
    assert artifact_base(s2.blob) == parent["artifact_sha256"] and s2.base == s1.blob
    assert zipfile.ZipFile(io.BytesIO(s2.blob)).namelist() == ["manifest.json"]
    _, a1 = s1.load().scorer.to_parts()
    _, a2 = s2.load().scorer.to_parts()
    assert a1.keys() == a2.keys() and all(np.array_equal(a1[k], a2[k]) for k in a1)


def test_multiclass_recalibration_from_logged_outcomes(client: TestClient) -> None:
    X, y = _population3(1)
    _register(client, "tri", X[:1200], y[:1200], algorithm="samme", n_estimators=20)
    X_lab, y_lab = _shifted3(X[1200:], y[1200:], SHIFT3, 700, seed=3)
    ids = [f"t{i}" for i in range(700)]
    r = client.post("/v1/models/tri/predict", json={"instances": X_lab.tolist(), "ids": ids})
    assert r.status_code == 200, r.text
    _flush(client)
    outcomes = [{"id": i, "label": int(lab)} for i, lab in zip(ids, y_lab, strict=True)]
    r = client.post("/v1/models/tri/outcomes", json={"outcomes": outcomes})
    assert r.status_code == 200 and r.json()["counts"]["recorded"] == 700
    r = client.post(
        "/v1/models/tri/versions/1/recalibrate", json={"from_outcomes": {}, "method": "platt"}
    )
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["data"]["source"] == "outcomes" and v["data"]["n_rows"] == 700
    rec = v["metrics"]["recalibration"]
    assert rec["after"]["brier"] < rec["before"]["brier"]
    # the logged raw class scores are the ones the rows give: the same maps as from rows
    r = client.post(
        "/v1/models/tri/versions/1/recalibrate",
        json={"instances": X_lab.tolist(), "labels": y_lab.tolist(), "method": "platt"},
    )
    assert r.status_code == 201, r.text
    maps2 = [c.to_state() for c in _stored_of(client, "tri", 2).load().scorer.calibrators]
    maps3 = [c.to_state() for c in _stored_of(client, "tri", 3).load().scorer.calibrators]
    assert maps2 == maps3
    assert r.json()["metrics"]["recalibration"] == rec


def test_multiclass_recalibration_needs_every_class(client: TestClient) -> None:
    X, y = _population3(2)
    _register(client, "tri", X[:900], y[:900], algorithm="samme", n_estimators=10)
    few = np.r_[np.flatnonzero(y[900:] == 0)[:60], np.flatnonzero(y[900:] == 1)[:60],
                np.flatnonzero(y[900:] == 2)[:4]] + 900  # fmt: skip
    r = client.post(
        "/v1/models/tri/versions/1/recalibrate",
        json={"instances": X[few].tolist(), "labels": y[few].tolist()},
    )
    assert r.status_code == 422 and r.json()["field"] == "labels", r.text
    assert "class 2 has 4 labelled rows" in r.json()["detail"]
    assert "one calibration map per class" in r.json()["detail"]
    assert _versions_of(client, "tri") == 1


def _versions_of(client: TestClient, name: str) -> int:
    return len(client.get(f"/v1/models/{name}/versions").json()["versions"])


def test_angle_based_version_is_refused_saying_why(client: TestClient) -> None:
    X, y = make_classification(300, 4, n_informative=3, n_redundant=1, n_classes=3, random_state=0)
    _register(client, "multi", X, y, algorithm="angle_adaboost", n_estimators=10)
    r = client.post(
        "/v1/models/multi/versions/1/recalibrate",
        json={"instances": X.tolist(), "labels": y.tolist()},
    )
    assert r.status_code == 422 and r.json()["field"] == "version", r.text
    assert "scorer kind 'angle'" in r.json()["detail"]
    assert "no calibration map" in r.json()["detail"]
    assert _versions_of(client, "multi") == 1


def _flush(client: TestClient) -> None:
    assert client.app.state.services.prediction_log.flush(10.0)  # type: ignore[attr-defined]


def _close(a: Any, b: Any) -> bool:
    """Equal JSON documents, numbers within 1e-9 (scores logged as JSON vs recomputed)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return bool(a == b)


def test_recalibration_from_logged_outcomes(client: TestClient, parent: dict[str, Any]) -> None:
    X, y = _population()
    X_lab, y_lab = _shifted(X[1200:2600], y[1200:2600], 0.1, 600, seed=3)
    ids = [f"tx{i}" for i in range(600)]
    r = client.post(
        "/v1/models/shift/predict", json={"instances": X_lab.tolist(), "ids": ids, "version": 1}
    )
    assert r.status_code == 200, r.text
    _flush(client)
    # outcomes of the first 500 only: the rest stay unlabelled and are not used
    outcomes = [
        {"id": i, "label": int(label)} for i, label in zip(ids[:500], y_lab[:500], strict=True)
    ]
    r = client.post("/v1/models/shift/outcomes", json={"outcomes": outcomes})
    assert r.status_code == 200 and r.json()["counts"]["recorded"] == 500
    r = client.post(
        "/v1/models/shift/versions/1/recalibrate",
        json={"from_outcomes": {"since": "2000-01-01T00:00:00Z"}, "method": "isotonic"},
    )
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["parent_version"] == 1 and v["data"]["source"] == "outcomes"
    assert v["data"]["n_rows"] == 500 and v["data"]["first_prediction_id"] == "tx0"
    assert v["params"]["recalibration"]["since"] == "2000-01-01T00:00:00.000000Z"
    assert v["params"]["recalibration"]["until"] is None
    rec = v["metrics"]["recalibration"]
    assert rec["after"]["brier"] < rec["before"]["brier"]
    # the same rows sent with their features give the same calibration map
    r = client.post(
        "/v1/models/shift/versions/1/recalibrate",
        json={
            "instances": X_lab[:500].tolist(),
            "labels": y_lab[:500].tolist(),
            "method": "isotonic",
        },
    )
    assert r.status_code == 201
    assert _stored(client, 3).load().scorer.calibrator.to_state() == (
        _stored(client, 2).load().scorer.calibrator.to_state()
    )
    # plots and what-if of the version from outcomes: computed from the held-out logged
    # scores, the same as those computed from the rows' features
    base2, base3 = "/v1/models/shift/versions/2", "/v1/models/shift/versions/3"
    kinds = [p["kind"] for p in client.get(f"{base2}/plots").json()["plots"]]
    assert kinds == [p["kind"] for p in client.get(f"{base3}/plots").json()["plots"]]
    assert {"brier_curve", "reliability", "roc", "cost_curve"} <= set(kinds)
    for kind in kinds:
        from_log = client.get(f"{base2}/plots/{kind}").json()
        from_rows = client.get(f"{base3}/plots/{kind}").json()
        assert from_log.pop("version") == 2 and from_rows.pop("version") == 3
        assert _close(from_log, from_rows), kind
    costs = {"c_fp": 1, "c_fn": 5}
    w2 = client.get(f"{base2}/whatif", params=costs).json()
    w3 = client.get(f"{base3}/whatif", params=costs).json()
    assert w2["confusion_matrix"] == w3["confusion_matrix"] and w2["n"] == w3["n"]
    # a window with no labelled predictions of that version
    r = client.post(
        "/v1/models/shift/versions/1/recalibrate",
        json={"from_outcomes": {"until": "2001-01-01T00:00:00Z"}},
    )
    assert r.status_code == 422 and r.json()["field"] == "from_outcomes", r.text
    r = client.post(
        "/v1/models/shift/versions/1/recalibrate",
        json={"from_outcomes": {"since": "2030-01-02T00:00:00Z", "until": "2030-01-01T00:00:00Z"}},
    )
    assert r.status_code == 422 and "since must be before until" in r.json()["detail"]


def test_the_default_fold_ensemble_recalibrates_from_logged_outcomes(client: TestClient) -> None:
    """The default model serves its 5 fold boosters; the logged raw score is the mean fold
    score its calibration map took, and a map refitted on it serves the same boosters."""
    X, y = _population()
    parent = _register(client, "shift", X[:1200], y[:1200], feature_names=NAMES)
    assert parent["algorithm"] == "auto"
    assert parent["calibration"]["served"] == "fold_ensemble"
    assert parent["calibration"]["n_folds"] == 5
    s1 = _stored(client, 1)
    m1 = s1.load()
    assert m1.scorer.kind == "binary_folds" and m1.metadata["served"] == "fold_ensemble"
    X_lab, y_lab = _shifted(X[1200:2600], y[1200:2600], 0.1, 600, seed=3)
    ids = [f"tx{i}" for i in range(600)]
    r = client.post("/v1/models/shift/predict", json={"instances": X_lab.tolist(), "ids": ids})
    assert r.status_code == 200, r.text
    _flush(client)
    outcomes = [{"id": i, "label": int(lab)} for i, lab in zip(ids, y_lab, strict=True)]
    assert client.post("/v1/models/shift/outcomes", json={"outcomes": outcomes}).status_code == 200
    r = client.post(
        "/v1/models/shift/versions/1/recalibrate",
        json={"from_outcomes": {"since": "2000-01-01T00:00:00Z"}, "method": "isotonic"},
    )
    assert r.status_code == 201, r.text
    rec = r.json()["metrics"]["recalibration"]
    assert rec["after"]["brier"] < rec["before"]["brier"]
    # the logged scores are the ones the rows' features give: the same map either way
    r = client.post(
        "/v1/models/shift/versions/1/recalibrate",
        json={"instances": X_lab.tolist(), "labels": y_lab.tolist(), "method": "isotonic"},
    )
    assert r.status_code == 201, r.text
    s2, s3 = _stored(client, 2), _stored(client, 3)
    assert s2.load().scorer.calibrator.to_state() == s3.load().scorer.calibrator.to_state()
    assert s2.base == s1.blob
    assert zipfile.ZipFile(io.BytesIO(s2.blob)).namelist() == ["manifest.json"]
