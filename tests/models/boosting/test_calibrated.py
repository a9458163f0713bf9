"""Calibrated AdaMEC: disjoint calibration data, hold-out vs k-fold, cost decisions."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedAdaMEC, uncalibrated_rule
from models.catalog.algorithms import get_algorithm
from models.decisions.rule import CostMatrix, decide
from models.evaluation.metrics import brier_score
from models.exceptions import InvalidInput, NotFitted, TrainingError


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(1200, 6, n_informative=4, random_state=1)
    return X, y


def test_holdout_uses_a_stratified_third_for_calibration(data: tuple) -> None:
    X, y = data
    clf = CalibratedAdaMEC(AdaBoost(n_estimators=30), random_state=0).fit(X, y)
    info = clf.calibration_info_
    assert info["split"] == "holdout" and info["method"] == "platt"
    assert info["n_calibration"] == 400 and info["n_boost"] == 800
    # the booster saw only the boosting rows: refitting it on them gives the same model
    proba = clf.predict_proba(X)
    assert proba.shape == (1200, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_calibration_improves_brier_score_over_raw_scores(data: tuple) -> None:
    X, y = data
    Xtr, ytr, Xte, yte = X[:900], y[:900], X[900:], y[900:]
    raw = AdaBoost(n_estimators=100).fit(Xtr, ytr).predict_proba(Xte)[:, 1]
    cal = CalibratedAdaMEC(AdaBoost(n_estimators=100), random_state=0).fit(Xtr, ytr)
    assert brier_score(yte, cal.predict_proba(Xte)[:, 1]) < brier_score(yte, raw)


@pytest.mark.parametrize("method", ["platt", "isotonic", "none"])
@pytest.mark.parametrize("split", ["holdout", "kfold"])
def test_every_method_and_split_fits_and_serves(data: tuple, method: str, split: str) -> None:
    X, y = data
    clf = CalibratedAdaMEC(
        AdaBoost(n_estimators=15), method=method, split=split, n_folds=3, random_state=0
    ).fit(X, y)
    p = clf.predict_proba(X)[:, 1]
    assert np.all((p >= 0) & (p <= 1))
    inf = clf.to_inference()
    np.testing.assert_array_equal(inf.predict_proba(X), clf.predict_proba(X))
    if method != "none" and split == "kfold":
        assert clf.calibration_info_["n_folds"] == 3
        assert clf.calibration_info_["n_boost"] == len(y)  # refitted on every row


def test_kfold_refits_the_kept_booster_on_all_rows(data: tuple) -> None:
    X, y = data
    clf = CalibratedAdaMEC(AdaBoost(n_estimators=20), split="kfold", n_folds=4, random_state=0).fit(
        X, y
    )
    full = AdaBoost(n_estimators=20, random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.estimator_.decision_function(X), full.decision_function(X))


def test_decisions_follow_the_cost_threshold(data: tuple) -> None:
    X, y = data
    clf = CalibratedAdaMEC(AdaBoost(n_estimators=20), random_state=0).fit(X, y)
    p1 = clf.predict_proba(X)[:, 1]
    for c_fp, c_fn in [(1, 1), (1, 10), (10, 1), (3, 7)]:
        d = clf.decide(X, CostMatrix.from_binary(c_fp, c_fn).matrix)
        np.testing.assert_array_equal(d.labels_index, (p1 >= c_fp / (c_fp + c_fn)).astype(int))
    # equal costs: the decision is predict()
    d = decide(clf.predict_proba(X), CostMatrix.from_binary(1, 1))
    np.testing.assert_array_equal(clf.classes_[d.labels_index], clf.predict(X))


def test_string_labels_and_relabelling_change_nothing(data: tuple) -> None:
    X, y = data
    a = CalibratedAdaMEC(AdaBoost(n_estimators=10), random_state=0).fit(X, y)
    b = CalibratedAdaMEC(AdaBoost(n_estimators=10), random_state=0).fit(
        X, np.where(y == 1, "yes", "no")
    )
    assert list(b.classes_) == ["no", "yes"]
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_errors_are_clear(data: tuple) -> None:
    X, y = data
    with pytest.raises(TrainingError, match="exactly two classes"):
        CalibratedAdaMEC().fit(X, np.zeros(len(y)))
    with pytest.raises(TrainingError, match="rows of each class"):
        CalibratedAdaMEC().fit(X[:4], np.array([0, 0, 0, 1]))
    with pytest.raises(InvalidInput, match="split"):
        CalibratedAdaMEC(split="bootstrap").fit(X, y)
    with pytest.raises(InvalidInput, match="calibration_fraction"):
        CalibratedAdaMEC(calibration_fraction=1.5).fit(X, y)
    with pytest.raises(NotFitted):
        CalibratedAdaMEC().predict_proba(X)


def test_calibration_info_names_the_score_and_the_uncalibrated_rule() -> None:
    """``method="none"`` thresholds the raw score: s(x) (Eq. 24, AdaMEC of Eq. 9/19) or
    s'(x) (Eq. 25); the two rules are recorded apart (issue 16), and decide differently."""
    X, y = make_classification(400, 6, random_state=3)
    got = {}
    for kind, eq in (("vote", "Eq. 24"), ("logistic", "Eq. 25")):
        m = CalibratedAdaMEC(AdaBoost(n_estimators=20, score_kind=kind), method="none").fit(X, y)
        info = m.calibration_info_
        assert info["score"] == kind and eq in info["uncalibrated_rule"]
        assert info["uncalibrated_rule"] == uncalibrated_rule(kind, trained_with_costs=False)
        got[kind] = m.predict_proba(X)[:, 1]
    F = m.estimator_.decision_function(X)
    np.testing.assert_allclose(got["logistic"], 1 / (1 + np.exp(-2 * F)))
    assert np.mean((got["vote"] >= 0.2) != (got["logistic"] >= 0.2)) > 0
    cal = CalibratedAdaMEC(AdaBoost(n_estimators=10), split="kfold", n_folds=3).fit(X, y)
    assert cal.calibration_info_["score"] == "vote"
    assert "uncalibrated_rule" not in cal.calibration_info_
    cgada = get_algorithm("cgada").build({"n_estimators": 10}, {"c_fp": 1.0, "c_fn": 3.0})
    cs = CalibratedAdaMEC(cgada, method="none").fit(X, y)
    assert "training skew removed" in cs.calibration_info_["uncalibrated_rule"]
