"""Catalog entries, serving through the change-of-skew rule and artifact round trips."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from models.boosting.calibrated import CalibratedBoosting
from models.catalog.algorithms import algorithms, get_algorithm, validate_params
from models.decisions.rule import CostMatrix
from models.exceptions import InvalidInput
from models.inference.artifacts import dump_model, load_model
from tests.models.variants.csboost.conftest import binary_data, normalized

NAMES = ("csada", "adadb", "cs_realboost", "cs_logitboost")
#: Every algorithm with its default stumps, plus the paper's own learners of section 4.3 /
#: Eqs. 50-53 (the per-feature histogram of CS-RealBoost, the linear a phi + b of CS-Logit).
LEARNERS = [(n, "stump") for n in NAMES] + [
    ("cs_realboost", "histogram"),
    ("cs_logitboost", "linear"),
]
COMMON: dict[str, Any] = {
    "n_estimators": 25,
    "weak_learner": "stump",
    "max_depth": 3,
    "score_kind": "vote",  # the service's default; real-valued models use the logistic link
    "random_state": 0,
}


def _build(name: str, score: str = "vote", wl: str = "stump", **params: Any) -> Any:
    spec = get_algorithm(name)
    common = dict(COMMON, score_kind=score, weak_learner=wl)
    return spec.build(common, validate_params(spec, params))


def test_catalog_entries() -> None:
    catalog = algorithms()
    for name in NAMES:
        d = catalog[name].describe()
        assert d["trains_with_costs"] is True and d["family"] == "binary"
        assert {p["name"] for p in d["params"]} >= {"c_fp", "c_fn"}
        assert "Masnadi-Shirazi" in d["source"] + d["equations"] or name == "adadb"
    assert catalog["csada"].properties == {
        "fgd_consistent": True,
        "cost_consistent": True,
        "asymmetry_preserving": False,
    }
    assert catalog["adadb"].properties == catalog["csada"].properties
    assert _build("cs_realboost").score_kind == "logistic"
    with pytest.raises(InvalidInput, match="weak_learner"):
        get_algorithm("cs_logitboost").build(dict(COMMON, weak_learner="tree"), {})
    for name, wl in (("cs_realboost", "histogram"), ("cs_logitboost", "linear")):
        assert catalog[name].weak_learners == ("stump", wl)
        assert _build(name, wl=wl).weak_learner == wl
        other = "linear" if wl == "histogram" else "histogram"
        with pytest.raises(InvalidInput, match="weak_learner"):
            _build(name, wl=other)


@pytest.mark.parametrize(
    ("name", "score", "wl"),
    [(n, "logistic", wl) for n, wl in LEARNERS]
    + [("csada", "vote", "stump"), ("adadb", "vote", "stump")],
)
@pytest.mark.parametrize(("c_fp", "c_fn"), [(1.0, 4.0), (3.0, 1.0)])
def test_uncalibrated_serving_reproduces_the_papers_rule(
    name: str, score: str, wl: str, c_fp: float, c_fn: float
) -> None:
    """With the training costs in the request, the served decision is sgn[F(x)] (sgn(0) =
    +1) for either score; with the logistic score the skew-removed probability is the
    paper's posterior (Eq. 61 inverted; the link p_c of Eq. 35 for LogitBoost)."""
    X, y = binary_data(n=700, seed=31, nan=0.03)
    Xt, _ = binary_data(n=400, seed=32, nan=0.03)
    est = _build(name, score, wl, c_fp=c_fp, c_fn=c_fn)
    model = CalibratedBoosting(est, method="none").fit(X, y)
    est = model.estimator_
    inference = model.to_inference()
    assert inference.rule == "skew_change"
    np.testing.assert_array_equal(inference.training_costs, [[0, c_fp], [c_fn, 0]])
    F = est.decision_function(Xt)
    assert np.abs(F).min() > 1e-9  # no exact ties on these rows
    for scale in (1.0, 10.0):  # the rule depends on the cost ratio only
        got = inference.decide(Xt, CostMatrix.from_binary(scale * c_fp, scale * c_fn))
        np.testing.assert_array_equal(got.labels_index, (F >= 0).astype(int))
    np.testing.assert_array_equal(est.classes_[(F >= 0).astype(int)], est.predict(Xt))
    if score == "vote":
        return
    c1, c2 = normalized(c_fp, c_fn)
    posterior = 1.0 / (1.0 + (c1 / c2) * np.exp(-(c1 + c2) * F))
    np.testing.assert_allclose(inference.decision_proba(Xt)[:, 1], posterior, rtol=1e-12)
    if name == "cs_logitboost":  # ... which is the paper's link p_c (Eq. 35)
        np.testing.assert_allclose(est.link(F), posterior, rtol=1e-12)
    # other request costs: least expected cost under that posterior (never ignored)
    other = inference.decide(Xt, CostMatrix.from_binary(1.0, 1.0))
    np.testing.assert_array_equal(other.labels_index, (posterior >= 0.5).astype(int))


@pytest.mark.parametrize(("name", "wl"), LEARNERS)
@pytest.mark.parametrize("method", ["none", "platt"])
def test_artifact_round_trip(name: str, wl: str, method: str) -> None:
    X, y = binary_data(n=600, seed=33, nan=0.05)
    Xt, _ = binary_data(n=300, seed=34, nan=0.05)
    est = _build(name, wl=wl, c_fn=3.0)
    model = CalibratedBoosting(est, method=method, random_state=0).fit(X, y)
    inference = model.to_inference()
    blob, digest = dump_model(inference, metadata={"algorithm": name})
    loaded = load_model(blob, expected_sha256=digest)
    np.testing.assert_array_equal(loaded.predict_proba(Xt), inference.predict_proba(Xt))
    np.testing.assert_array_equal(loaded.predict_proba(Xt), model.predict_proba(Xt))
    costs = CostMatrix.from_binary(1.0, 3.0)
    np.testing.assert_array_equal(
        loaded.decide(Xt, costs).labels_index, inference.decide(Xt, costs).labels_index
    )
    assert loaded.rule == ("skew_change" if method == "none" else "threshold")


@pytest.mark.parametrize(("name", "wl"), LEARNERS)
def test_staged_outputs_end_at_the_final_model(name: str, wl: str) -> None:
    X, y = binary_data(n=400, seed=35)
    est = _build(name, wl=wl, c_fn=2.0).fit(X, y)
    staged_f = list(est.staged_decision_function(X))
    staged_p = list(est.staged_predict(X))
    staged_s = list(est.staged_predict_proba(X))
    assert len(staged_f) == len(staged_p) == est.n_estimators_
    np.testing.assert_allclose(staged_f[-1], est.decision_function(X), atol=1e-12)
    np.testing.assert_array_equal(staged_p[-1], est.predict(X))
    np.testing.assert_allclose(staged_s[-1], est.predict_proba(X), atol=1e-12)
