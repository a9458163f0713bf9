"""Every catalogued algorithm trains through the API, round-trips its artifact and serves."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import make_classification

from models.catalog.algorithms import algorithms

ALGORITHMS = sorted(algorithms())


def _data(family: str, class_sep: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    if family == "binary":
        X, y = make_classification(
            240, 4, n_informative=3, n_redundant=1, random_state=4, class_sep=class_sep
        )
    else:
        X, y = make_classification(
            300,
            5,
            n_informative=4,
            n_redundant=1,
            n_classes=3,
            n_clusters_per_class=1,
            random_state=4,
        )
    return np.round(X, 4), y


@pytest.mark.parametrize("name", ALGORITHMS)
def test_algorithm_trains_and_serves(client: TestClient, name: str) -> None:
    spec = algorithms()[name]
    # AdaCost has a positive alpha only while eps < (1 - mean cost) / 2 (see its module):
    # give it an easy problem and strong learners.
    X, y = _data(spec.family, class_sep=3.0 if name == "adacost" else 1.0)
    body: dict[str, Any] = {
        "features": X.tolist(),
        "labels": y.tolist(),
        "algorithm": name,
        "evaluation_fraction": 0.25,
    }
    if name != "auto":  # auto chooses its rounds (and refuses n_estimators)
        body["n_estimators"] = 8
    if (
        spec.trains_with_costs
        and spec.family == "binary"
        and any(p.name == "c_fn" for p in spec.params)
    ):
        body["params"] = {"c_fp": 1.0, "c_fn": 3.0}
    if name == "adacost":
        body.update(weak_learner="tree", max_depth=3)
    r = client.post(f"/v1/models/m-{name}/versions", json=body)
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["algorithm"] == name and v["params"]["decision"]["rule"] in (
        "threshold",
        "skew_change",
        "fixed",
    )
    assert v["metrics"]["n_evaluation"] == 60 if spec.family == "binary" else 75
    k = len(np.unique(y))
    costs: dict[str, Any] = {"costs": {"c_fp": 1, "c_fn": 5}} if k == 2 else {}
    out = client.post(f"/v1/models/m-{name}/predict", json={"instances": X[:20].tolist(), **costs})
    assert out.status_code == 200, out.text
    resp = out.json()
    assert resp["decision_rule"] == v["params"]["decision"]["rule"]
    assert len(resp["predictions"]) == 20
    for p in resp["predictions"]:
        assert p["decision"] in resp["classes"]
        if p["probabilities"] is not None:
            assert len(p["probabilities"]) == k
            assert sum(p["probabilities"]) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("name", "learner"), [("cs_realboost", "histogram"), ("cs_logitboost", "linear")]
)
def test_the_papers_weak_learners_train_and_serve(
    client: TestClient, name: str, learner: str
) -> None:
    """Masnadi-Shirazi & Vasconcelos' own learners (Eq. 49; Eqs. 50-53) through the API;
    an algorithm that does not fit them answers 422 naming weak_learner."""
    X, y = _data("binary")
    body: dict[str, Any] = {
        "features": X.tolist(),
        "labels": y.tolist(),
        "algorithm": name,
        "n_estimators": 8,
        "weak_learner": learner,
        "calibration": "none",
        "params": {"c_fp": 1.0, "c_fn": 3.0},
    }
    r = client.post(f"/v1/models/paper-{learner}/versions", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["params"]["weak_learner"] == learner
    out = client.post(f"/v1/models/paper-{learner}/predict", json={"instances": X[:5].tolist()})
    assert out.status_code == 200, out.text
    for other in ("adaboost", "cs_logitboost" if learner == "histogram" else "cs_realboost"):
        bad = {**body, "algorithm": other, "params": {} if other == "adaboost" else body["params"]}
        r = client.post("/v1/models/paper-bad/versions", json=bad)
        assert r.status_code == 422, r.text
        assert "weak_learner" in r.text, r.text
    assert client.get("/v1/models/paper-bad").status_code == 404  # nothing half-written


@pytest.mark.parametrize("name", ["adaboost", "samme"])
def test_the_oblique_learner_trains_and_serves(client: TestClient, name: str) -> None:
    """weak_learner "oblique" through the API (two classes and SAMME), listed in the
    catalog; the angle-based algorithm and cs_realboost answer 422 naming weak_learner."""
    X, y = _data("binary" if name == "adaboost" else "multiclass")
    body: dict[str, Any] = {
        "features": X.tolist(),
        "labels": y.tolist(),
        "algorithm": name,
        "n_estimators": 8,
        "weak_learner": "oblique",
    }
    r = client.post(f"/v1/models/oblique-{name}/versions", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["params"]["weak_learner"] == "oblique"
    out = client.post(f"/v1/models/oblique-{name}/predict", json={"instances": X[:5].tolist()})
    assert out.status_code == 200, out.text
    catalog = {a["name"]: a for a in client.get("/v1/algorithms").json()["algorithms"]}
    assert "oblique" in catalog[name]["weak_learners"]
    other = "angle_adaboost" if name == "samme" else "cs_realboost"
    assert "oblique" not in catalog[other]["weak_learners"]
    params = {} if name == "samme" else {"c_fp": 1.0, "c_fn": 3.0}
    bad = {**body, "algorithm": other, "params": params}
    r = client.post("/v1/models/oblique-bad/versions", json=bad)
    assert r.status_code == 422, r.text
    assert "weak_learner" in r.text, r.text
