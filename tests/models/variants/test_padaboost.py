"""P-AdaBoost (Mease, Wyner & Buja 2007, Eq. 1): AdaBoost with p = 1/(1+exp(-2F))."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.catalog.algorithms import algorithms, get_algorithm, validate_params
from models.inference.artifacts import dump_model, load_model


def _common(weak_learner: str = "stump", score_kind: str = "vote") -> dict:
    return {
        "n_estimators": 20,
        "weak_learner": weak_learner,
        "max_depth": 2,
        "score_kind": score_kind,
        "random_state": 0,
    }


def _data() -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(400, 5, n_informative=3, flip_y=0.1, random_state=7)
    X[::13, 0] = np.nan
    return X, y


def test_catalog_entry_builds_adaboost_with_the_logistic_link() -> None:
    assert "p_adaboost" in algorithms()
    spec = get_algorithm("p_adaboost")
    assert validate_params(spec, None) == {}
    est = spec.build(_common(score_kind="vote"), {})  # the request's score kind is overridden
    assert type(est) is AdaBoost and est.score_kind == "logistic"
    assert est.get_params()["n_estimators"] == 20 and est.random_state == 0
    d = spec.describe()
    assert d["trains_with_costs"] is False and "Eq. 1" in d["equations"]
    assert "calibration 'none'" in d["notes"]
    # the link probabilities of Eq. 1 are not calibrated (Mease et al. 2007, section 2)
    assert d["calibrated_probabilities"] is False and spec.calibrated_probabilities is False


@pytest.mark.parametrize("weak_learner", ["stump", "tree", "logistic"])
def test_probabilities_are_eq_1_of_the_adaboost_score(weak_learner: str) -> None:
    X, y = _data()
    est = get_algorithm("p_adaboost").build(_common(weak_learner), {}).fit(X, y)
    F = est.decision_function(X)
    p = est.predict_proba(X)
    np.testing.assert_allclose(p[:, 1], 1.0 / (1.0 + np.exp(-2.0 * F)), rtol=1e-12, atol=0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    # Same training as plain AdaBoost; thresholding Eq. 1 at 1/2 is the sign rule.
    plain = AdaBoost(**{**_common(weak_learner), "score_kind": "vote"}).fit(X, y)
    np.testing.assert_array_equal(F, plain.decision_function(X))
    np.testing.assert_array_equal(p[:, 1] > 0.5, plain.predict(X) == 1)


def test_uncalibrated_service_form_round_trips_with_eq_1_probabilities() -> None:
    X, y = _data()
    booster = get_algorithm("p_adaboost").build(_common(), {})
    model = CalibratedBoosting(booster, method="none", random_state=0).fit(X, y)
    blob, sha = dump_model(model.to_inference())
    loaded = load_model(blob, expected_sha256=sha)
    F = model.estimator_.decision_function(X)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    np.testing.assert_allclose(loaded.predict_proba(X)[:, 1], 1 / (1 + np.exp(-2 * F)), rtol=1e-12)
    assert loaded.rule == "threshold"


def test_calibrated_form_round_trips() -> None:
    X, y = _data()
    booster = get_algorithm("p_adaboost").build(_common(), {})
    model = CalibratedBoosting(booster, method="platt", random_state=0).fit(X, y)
    loaded = load_model(dump_model(model.to_inference())[0])
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


@pytest.mark.parametrize(("c_fp", "c_fn"), [(1.0, 1.0), (1.0, 5.0), (10.0, 1.0)])
def test_uncalibrated_cost_decisions_are_adamec(c_fp: float, c_fn: float) -> None:
    # Thresholding Eq. 1 at c = c_fp / (c_fp + c_fn) shifts F by 1/2 log(c_fp / c_fn).
    X, y = _data()
    booster = get_algorithm("p_adaboost").build(_common(), {})
    model = CalibratedBoosting(booster, method="none").fit(X, y)
    decided = model.to_inference().decide(X, np.array([[0.0, c_fp], [c_fn, 0.0]]))
    f_x = model.estimator_.decision_function(X)
    shift = 0.5 * np.log(c_fp / c_fn)
    np.testing.assert_array_equal(decided.labels_index == 1, f_x >= shift)
