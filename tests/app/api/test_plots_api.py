"""Plots and what-if over HTTP: stored at registration, served as JSON and SVG, checked
against predict/evaluate on the same held-out rows."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import make_classification
from sqlalchemy import create_engine, text

from app.services.training.spec import TrainingSpec, estimator_of, evaluation_split
from app.settings import Settings
from tests.app.api.conftest import dataset, train_body

KINDS = ["brier_curve", "reliability", "roc", "cost_curve"]
BASE = "/v1/models/fraud/versions/1"
SVG_ROOT = "{http://www.w3.org/2000/svg}svg"


def _heldout() -> tuple[np.ndarray, np.ndarray]:
    """The evaluation rows of ``train_body()`` (same split, same seed as training)."""
    X, y = dataset()
    _, eval_idx = evaluation_split(y, 0.2, 0)
    return X[eval_idx], y[eval_idx]


def _ok(client: TestClient, url: str, **kw: Any) -> Any:
    r = client.get(url, **kw)
    assert r.status_code == 200, r.text
    return r


def test_plots_are_listed_and_well_formed(client: TestClient, trained: dict[str, Any]) -> None:
    listed = _ok(client, f"{BASE}/plots").json()
    assert [p["kind"] for p in listed["plots"]] == KINDS
    assert listed["model"] == "fraud" and listed["version"] == 1
    metrics = trained["metrics"]
    for p in listed["plots"]:
        assert p["json_url"] == f"{BASE}/plots/{p['kind']}?format=json" and p["title"]
        data = _ok(client, p["json_url"]).json()
        assert data["kind"] == p["kind"] and data["n"] == metrics["n_evaluation"] == 60
        assert (
            data["classes"] == [0, 1] and data["evaluation"] == metrics["evaluation"] == "holdout"
        )
        svg = _ok(client, p["svg_url"])
        assert svg.headers["content-type"] == "image/svg+xml"
        root = ET.fromstring(svg.content)
        assert (
            root.tag == SVG_ROOT and root.find(f"{{{SVG_ROOT[1:].split('}')[0]}}}title") is not None
        )
    brier = _ok(client, f"{BASE}/plots/brier_curve").json()
    assert len(brier["z"]) == len(brier["q"]) == len(brier["cost_ratios"]) == 21
    assert brier["area"] == pytest.approx(metrics["brier_curve_area"], abs=1e-12)
    assert brier["all_positive"] == brier["z"]
    assert brier["all_negative"] == pytest.approx([1 - z for z in brier["z"]])
    rel = _ok(client, f"{BASE}/plots/reliability").json()
    assert len(rel["bins"]) == 11 and sum(rel["after"]["count"]) == 60
    assert sum(rel["before"]["count"]) == 60
    assert rel["ece_after"] == pytest.approx(metrics["ece"], abs=1e-12)
    roc = _ok(client, f"{BASE}/plots/roc").json()
    assert roc["auc"] == pytest.approx(metrics["auc"], abs=1e-12)
    assert roc["fpr"][0] == roc["tpr"][0] == 0 and roc["fpr"][-1] == roc["tpr"][-1] == 1
    cost = _ok(client, f"{BASE}/plots/cost_curve").json()
    assert (cost["ratio_min"], cost["ratio_max"]) == (0.01, 100.0)
    assert len(cost["ratios"]) == len(cost["mean_cost"]) == len(cost["all_negative"])


def test_svg_by_accept_header_and_caching(client: TestClient, trained: dict[str, Any]) -> None:
    r = _ok(client, f"{BASE}/plots/roc", headers={"Accept": "image/svg+xml"})
    assert r.headers["content-type"] == "image/svg+xml"
    assert ET.fromstring(r.content).tag == SVG_ROOT
    assert "immutable" in r.headers["cache-control"]
    again = client.get(f"{BASE}/plots/roc?format=svg", headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304 and not again.content
    as_json = _ok(client, f"{BASE}/plots/roc", headers={"Accept": "application/json"})
    assert as_json.headers["content-type"] == "application/json"
    assert as_json.headers["etag"] != r.headers["etag"]
    assert r.content == _ok(client, f"{BASE}/plots/roc?format=svg").content  # stored bytes


@pytest.mark.parametrize(
    "costs",
    [
        {"c_fp": 1.0, "c_fn": 5.0},
        {"c_fp": 3.0, "c_fn": 1.0},
        {"c_fp": 2.0, "c_fn": 9.0, "c_tp": 0.5, "c_tn": 0.25},
    ],
)
def test_whatif_equals_evaluate_and_predict_on_the_heldout_rows(
    client: TestClient, trained: dict[str, Any], costs: dict[str, float]
) -> None:
    X, y = _heldout()
    out = _ok(client, f"{BASE}/whatif", params=costs).json()
    body = {"instances": X.tolist(), "labels": y.tolist(), "costs": costs, "version": 1}
    ev = client.post("/v1/models/fraud/evaluate", json=body).json()
    assert out["confusion_matrix"] == ev["confusion_matrix"]
    assert out["total_cost"] == pytest.approx(ev["total_cost"], abs=1e-9)
    assert out["mean_cost"] == pytest.approx(ev["mean_cost"], abs=1e-12)
    assert out["accuracy"] == pytest.approx(ev["accuracy"]) and out["n"] == len(y) == 60
    del body["labels"]
    pred = client.post("/v1/models/fraud/predict", json=body).json()["predictions"]
    assert out["threshold"] == pred[0]["threshold"]
    decided = np.array([p["decision"] for p in pred])
    tn, fp = int(((y == 0) & (decided == 0)).sum()), int(((y == 0) & (decided == 1)).sum())
    fn, tp = int(((y == 1) & (decided == 0)).sum()), int(((y == 1) & (decided == 1)).sum())
    assert out["confusion_matrix"] == [[tn, fp], [fn, tp]]
    assert out["labels"] == [0, 1]
    assert out["costs"] == {"c_tp": 0.0, "c_tn": 0.0, **costs}


@pytest.mark.parametrize(
    "costs",
    [
        {"c_fp": 1.0, "c_fn": 5.0, "c_review": 0.5},
        {"c_fp": 2.0, "c_fn": 9.0, "c_tp": 0.5, "c_tn": 0.25, "c_review": 1.1},
        {"c_fp": 1.0, "c_fn": 5.0, "c_review": 3.0},  # dearer than deciding: no band
    ],
)
def test_whatif_review_band_equals_predict_with_c_review(
    client: TestClient, trained: dict[str, Any], costs: dict[str, float]
) -> None:
    X, y = _heldout()
    out = _ok(client, f"{BASE}/whatif", params=costs).json()
    plain = _ok(
        client, f"{BASE}/whatif", params={k: v for k, v in costs.items() if k != "c_review"}
    )
    assert {k: v for k, v in out.items() if k != "review"} == {
        k: v for k, v in plain.json().items() if k != "review"
    }
    assert out["threshold"] == plain.json()["threshold"]  # the two-action decision, as before
    assert plain.json()["review"] is None
    body = {"instances": X.tolist(), "costs": costs, "version": 1}
    pred = client.post("/v1/models/fraud/predict", json=body).json()["predictions"]
    names = ["negative", "positive", "review"]
    taken = np.array([names.index(p["action"]) for p in pred])
    review = out["review"]
    counts = [[int(((y == t) & (taken == a)).sum()) for a in range(3)] for t in range(2)]
    assert review["confusion_matrix"] == counts
    assert review["reviewed"] == int((taken == 2).sum())
    assert review["reviewed_share"] == pytest.approx((taken == 2).mean())
    c = costs
    matrix = [
        [c.get("c_tn", 0.0), c["c_fp"], c["c_review"]],
        [c["c_fn"], c.get("c_tp", 0.0), c["c_review"]],
    ]
    total = sum(matrix[int(t)][int(a)] for t, a in zip(y, taken, strict=True))
    assert review["total_cost"] == pytest.approx(total, rel=1e-12)
    # the band from the costs alone: review iff c_review < E_neg(p) and < E_pos(p)
    p1 = np.array([p["probabilities"][1] for p in pred])
    band = review["band"]
    if band is None:
        assert not (taken == 2).any()
        return
    low, high = band
    c_tn, c_tp = c.get("c_tn", 0.0), c.get("c_tp", 0.0)
    assert low == pytest.approx((c["c_review"] - c_tn) / (c["c_fn"] - c_tn), rel=1e-12)
    assert high == pytest.approx((c["c_fp"] - c["c_review"]) / (c["c_fp"] - c_tp), rel=1e-12)
    clear = (np.abs(p1 - low) > 1e-9) & (np.abs(p1 - high) > 1e-9)
    inside = (p1 > low) & (p1 < high)
    assert ((taken == 2) == inside)[clear].all()
    assert (taken[clear & (p1 < low)] == 0).all() and (taken[clear & (p1 > high)] == 1).all()
    assert inside.any() and (~inside).any()  # the band splits these rows


def test_cost_curve_over_a_chosen_range_matches_whatif(
    client: TestClient, trained: dict[str, Any]
) -> None:
    cost = _ok(client, f"{BASE}/plots/cost_curve", params={"ratio_min": 0.5, "ratio_max": 8}).json()
    assert cost["ratio_min"] == 0.5 and cost["ratio_max"] == 8.0
    assert cost["ratios"][0] == pytest.approx(0.5) and cost["ratios"][-1] == pytest.approx(8.0)
    for i in (0, 37, 100):
        r = cost["ratios"][i]
        w = _ok(client, f"{BASE}/whatif", params={"c_fp": 1, "c_fn": repr(r)}).json()
        assert cost["mean_cost"][i] == pytest.approx(w["mean_cost"], abs=1e-12)
    svg = _ok(client, f"{BASE}/plots/cost_curve?format=svg&ratio_min=0.5&ratio_max=8")
    assert ET.fromstring(svg.content).tag == SVG_ROOT


BAD = [
    ("fraud/versions/1/plots/nope", 404, "NOT_FOUND", "kind", "brier_curve, reliability"),
    ("fraud/versions/1/plots/heldout", 404, "NOT_FOUND", "kind", "does not exist"),
    ("fraud/versions/1/plots/roc?format=png", 422, "INVALID_ARGUMENT", "format", ""),
    ("fraud/versions/1/plots/cost_curve?ratio_min=0", 422, "INVALID_ARGUMENT", "ratio_min", ""),
    ("fraud/versions/1/plots/cost_curve?ratio_min=-2", 422, "INVALID_ARGUMENT", "ratio_min", ""),
    ("fraud/versions/1/plots/cost_curve?ratio_min=5&ratio_max=1", 422, "INVALID_ARGUMENT",
     "ratio_max", "above ratio_min"),
    ("fraud/versions/1/plots/cost_curve?ratio_min=200", 422, "INVALID_ARGUMENT", "ratio_max", ""),
    ("fraud/versions/1/plots/cost_curve?ratio_max=inf", 422, "INVALID_ARGUMENT", "ratio_max",
     "finite"),
    ("fraud/versions/1/plots/cost_curve?ratio_max=abc", 422, "INVALID_ARGUMENT", "ratio_max", ""),
    ("fraud/versions/1/plots/roc?ratio_min=1", 422, "INVALID_ARGUMENT", "ratio_min", "cost_curve"),
    ("fraud/versions/1/whatif?c_fp=1&c_fn=-1", 422, "INVALID_ARGUMENT", "c_fn", ">= 0"),
    ("fraud/versions/1/whatif?c_fp=nan&c_fn=1", 422, "INVALID_ARGUMENT", "c_fp", "finite"),
    ("fraud/versions/1/whatif?c_fp=abc&c_fn=1", 422, "INVALID_ARGUMENT", "c_fp", ""),
    ("fraud/versions/1/whatif?c_fn=1", 422, "INVALID_ARGUMENT", "c_fp", ""),
    ("fraud/versions/1/whatif?c_fp=1&c_fn=5&c_tn=2", 422, "INVALID_ARGUMENT", "c_tn", "correct"),
    ("fraud/versions/1/whatif?c_fp=0&c_fn=0", 422, "INVALID_ARGUMENT", "costs", "denominator"),
    ("fraud/versions/1/whatif?c_fp=1&c_fn=5&c_review=-1", 422, "INVALID_ARGUMENT", "c_review",
     ">= 0"),
    ("fraud/versions/1/whatif?c_fp=1&c_fn=5&c_review=inf", 422, "INVALID_ARGUMENT", "c_review",
     "finite"),
    ("fraud/versions/99/plots", 404, "NOT_FOUND", "version", "no version 99"),
    ("fraud/versions/99/plots/roc", 404, "NOT_FOUND", "version", "no version 99"),
    ("fraud/versions/99/whatif?c_fp=1&c_fn=1", 404, "NOT_FOUND", "version", "no version 99"),
    ("fraud/versions/0/plots", 422, "INVALID_ARGUMENT", "version", ""),
    ("nobody/versions/1/plots", 404, "NOT_FOUND", "name", "not found"),
    ("nobody/versions/1/whatif?c_fp=1&c_fn=1", 404, "NOT_FOUND", "name", "not found"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "status", "code", "field", "says"), BAD)
def test_bad_inputs(
    client: TestClient,
    trained: dict[str, Any],
    path: str,
    status: int,
    code: str,
    field: str,
    says: str,
) -> None:
    r = client.get(f"/v1/models/{path}")
    assert r.status_code == status, r.text
    body = r.json()
    assert (body["code"], body["field"]) == (code, field), body
    assert says in body["detail"]


def _assert_no_plots(client: TestClient, base: str, says: str) -> None:
    for url in (f"{base}/plots", f"{base}/plots/roc", f"{base}/whatif?c_fp=1&c_fn=2"):
        r = client.get(url)
        assert r.status_code == 404, r.text
        assert r.json()["code"] == "NOT_FOUND" and says in r.json()["detail"], r.json()


def test_by_default_plots_and_whatif_come_from_out_of_fold_probabilities(
    client: TestClient,
) -> None:
    """No rows held out: every row's out-of-fold calibrated probability (issue 13)."""
    r = client.post("/v1/models/oof/versions", json=train_body())
    assert r.status_code == 201, r.text
    metrics = r.json()["metrics"]
    assert metrics["evaluation"] == "out_of_fold" and metrics["n_evaluation"] == 300
    base = "/v1/models/oof/versions/1"
    assert [p["kind"] for p in _ok(client, f"{base}/plots").json()["plots"]] == KINDS
    for kind in KINDS:
        data = _ok(client, f"{base}/plots/{kind}").json()
        assert data["n"] == 300 and data["evaluation"] == "out_of_fold"
    brier = _ok(client, f"{base}/plots/brier_curve").json()
    assert brier["area"] == pytest.approx(metrics["brier_curve_area"], abs=1e-12)
    assert _ok(client, f"{base}/plots/roc").json()["auc"] == pytest.approx(metrics["auc"])
    rel = _ok(client, f"{base}/plots/reliability").json()
    assert sum(rel["after"]["count"]) == sum(rel["before"]["count"]) == 300

    # the what-if decides exactly the out-of-fold probabilities of the fitted estimator
    X, y = dataset()
    estimator = estimator_of(TrainingSpec(n_estimators=30))
    estimator.fit(X, y)
    p1 = estimator.oof_.proba[:, 1]  # type: ignore[attr-defined]
    w = _ok(client, f"{base}/whatif", params={"c_fp": 1, "c_fn": 3}).json()
    d = (p1 >= 1 / (1 + 3)).astype(int)
    expected = [[int(((y == i) & (d == j)).sum()) for j in (0, 1)] for i in (0, 1)]
    assert w["confusion_matrix"] == expected and w["n"] == 300


def test_no_plots_without_heldout_rows(client: TestClient) -> None:
    r = client.post("/v1/models/all/versions", json=train_body(evaluation_fraction=0))
    assert r.status_code == 201, r.text
    _assert_no_plots(client, "/v1/models/all/versions/1", "evaluation_fraction 0")


def test_version_registered_before_plots_existed(
    client: TestClient, trained: dict[str, Any], settings: Settings
) -> None:
    engine = create_engine(settings.database_url)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM version_plots"))
    engine.dispose()
    _assert_no_plots(client, BASE, "registered before plots existed")


def _multiclass_body(algorithm: str, **extra: Any) -> dict[str, Any]:
    X, y = make_classification(
        300, 5, n_informative=4, n_redundant=1, n_classes=3, n_clusters_per_class=1, random_state=4
    )
    labels = np.array(["a", "b", "c"])[y]
    return {
        "features": np.round(X, 4).tolist(),
        "labels": labels.tolist(),
        "algorithm": algorithm,
        "n_estimators": 10,
        "evaluation_fraction": 0.25,
        **extra,
    }


def test_multiclass_gets_top_label_reliability_and_one_vs_rest_roc(client: TestClient) -> None:
    r = client.post("/v1/models/iris/versions", json=_multiclass_body("samme"))
    assert r.status_code == 201, r.text
    base = "/v1/models/iris/versions/1"
    assert [p["kind"] for p in _ok(client, f"{base}/plots").json()["plots"]] == [
        "reliability",
        "roc",
    ]
    rel = _ok(client, f"{base}/plots/reliability").json()
    assert rel["top_label"] is True and sum(rel["after"]["count"]) == 75
    assert rel["before"] is not None and rel["ece_before"] is not None
    roc = _ok(client, f"{base}/plots/roc").json()
    assert [c["label"] for c in roc["curves"]] == ["a", "b", "c"] and 0.5 < roc["auc"] <= 1
    for kind in ("reliability", "roc"):
        svg = _ok(client, f"{base}/plots/{kind}?format=svg")
        assert ET.fromstring(svg.content).tag == SVG_ROOT
    missing = client.get(f"{base}/plots/brier_curve")
    assert missing.status_code == 404 and "needs two" in missing.json()["detail"]
    w = client.get(f"{base}/whatif?c_fp=1&c_fn=5")
    assert w.status_code == 422, w.text
    assert w.json()["code"] == "INVALID_ARGUMENT" and "two-class" in w.json()["detail"]


def test_multiclass_whatif_of_a_cost_matrix_equals_evaluate(client: TestClient) -> None:
    body = _multiclass_body("samme")
    r = client.post("/v1/models/tri/versions", json=body)
    assert r.status_code == 201, r.text
    X, labels = np.asarray(body["features"]), np.asarray(body["labels"])
    _, eval_idx = evaluation_split(labels, 0.25, 0)
    matrix = [[0.0, 1.0, 4.0], [2.0, 0.0, 1.0], [9.0, 1.0, 0.0]]
    r = client.get("/v1/models/tri/versions/1/whatif/matrix", params=_matrix(matrix))
    assert r.status_code == 200, r.text
    out = r.json()
    ev = client.post(
        "/v1/models/tri/evaluate",
        json={
            "instances": X[eval_idx].tolist(),
            "labels": labels[eval_idx].tolist(),
            "cost_matrix": matrix,
        },
    ).json()
    assert out["confusion_matrix"] == ev["confusion_matrix"] and out["n"] == len(eval_idx) == 75
    assert out["total_cost"] == pytest.approx(ev["total_cost"], abs=1e-9)
    assert out["accuracy"] == pytest.approx(ev["accuracy"])
    assert out["labels"] == ["a", "b", "c"] and out["cost_matrix"] == matrix
    # the binary GET says where to go instead
    w = client.get("/v1/models/tri/versions/1/whatif?c_fp=1&c_fn=5").json()
    assert "GET /v1/models/tri/versions/1/whatif/matrix?cost_matrix=" in w["detail"]
    # a matrix that does not fit, or is no matrix: 422 naming cost_matrix
    bad = [[[0, 1], [1, 0]], [[0, 1, 1], [1, 0], [1, 1, 0]], [[0, 1, 1], [1, 0, 1], [-1, 1, 0]]]
    for params in [_matrix(b) for b in bad] + [{"cost_matrix": "[[0,1"}, {"cost_matrix": '"x"'}]:
        r = client.get("/v1/models/tri/versions/1/whatif/matrix", params=params)
        assert r.status_code == 422 and r.json()["field"] == "cost_matrix", r.text
    r = client.get("/v1/models/tri/versions/1/whatif/matrix", params=_matrix(bad[0]))
    assert "3 x 3" in r.json()["detail"]


def _matrix(matrix: list[list[float]]) -> dict[str, str]:
    return {"cost_matrix": json.dumps(matrix)}


def test_binary_whatif_of_a_cost_matrix_equals_the_named_costs(
    client: TestClient, trained: dict[str, Any]
) -> None:
    named = _ok(client, f"{BASE}/whatif", params={"c_fp": 1, "c_fn": 7}).json()
    r = client.get(f"{BASE}/whatif/matrix", params=_matrix([[0, 1], [7, 0]]))
    assert r.status_code == 200, r.text
    out = r.json()
    for key in ("confusion_matrix", "total_cost", "mean_cost", "accuracy", "n", "labels"):
        assert out[key] == named[key], key


def test_fixed_rule_models_have_no_probability_plots(client: TestClient) -> None:
    body = _multiclass_body("angle_adaboost")
    r = client.post("/v1/models/angle/versions", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["params"]["decision"]["rule"] == "fixed"
    r = client.get("/v1/models/angle/versions/1/plots")
    assert r.status_code == 404 and "'fixed'" in r.json()["detail"]


def test_skew_change_whatif_decides_like_predict(client: TestClient) -> None:
    body = train_body(algorithm="csb1", calibration="none", params={"c_fp": 1.0, "c_fn": 4.0})
    r = client.post("/v1/models/cs/versions", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["params"]["decision"]["rule"] == "skew_change"
    X, y = _heldout()
    costs = {"c_fp": 1.0, "c_fn": 2.0}
    out = _ok(client, "/v1/models/cs/versions/1/whatif", params=costs).json()
    ev = client.post(
        "/v1/models/cs/evaluate",
        json={"instances": X.tolist(), "labels": y.tolist(), "costs": costs},
    ).json()
    assert out["confusion_matrix"] == ev["confusion_matrix"]
    assert out["total_cost"] == pytest.approx(ev["total_cost"])


def test_jous_has_no_before_calibration(client: TestClient) -> None:
    r = client.post("/v1/models/jous/versions", json=train_body(algorithm="jous", n_estimators=5))
    assert r.status_code == 201, r.text
    rel = _ok(client, "/v1/models/jous/versions/1/plots/reliability").json()
    assert rel["before"] is None and rel["ece_before"] is None and rel["after"] is not None
    svg = _ok(client, "/v1/models/jous/versions/1/plots/reliability?format=svg")
    assert ET.fromstring(svg.content).tag == SVG_ROOT


def test_whatif_with_costs_near_the_largest_float(
    client: TestClient, trained: dict[str, Any]
) -> None:
    """Every figure is a number as the schema says; only total_cost may be null (over the
    largest float64), as documented, and the mean is then still given."""
    spec = client.get("/openapi.json").json()["components"]["schemas"]["WhatIfResponse"]
    assert {"type": "null"} in spec["properties"]["total_cost"]["anyOf"]
    assert spec["properties"]["mean_cost"]["type"] == "number"
    big = _ok(client, f"{BASE}/whatif", params={"c_fp": 1e308, "c_fn": 1e308}).json()
    one = _ok(client, f"{BASE}/whatif", params={"c_fp": 1, "c_fn": 1}).json()
    assert big["confusion_matrix"] == one["confusion_matrix"]  # scaling changes no decision
    assert big["total_cost"] is None
    assert big["mean_cost"] == pytest.approx(one["mean_cost"] * 1e308, rel=1e-12)
    for key in ("threshold", "mean_cost", "accuracy"):
        assert isinstance(big[key], float) and np.isfinite(big[key]), key
