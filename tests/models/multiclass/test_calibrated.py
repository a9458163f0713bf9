"""Calibrated multiclass models: SAMME with per-class calibration, one-vs-rest AdaBoost."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.exceptions import InvalidInput, NotFitted, TrainingError
from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.ovr import OneVsRestAdaBoost
from models.multiclass.samme import SAMME


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    return make_classification(
        3000, 8, n_informative=5, n_redundant=0, n_classes=4, n_clusters_per_class=1,
        class_sep=0.8, random_state=7,
    )  # fmt: skip


def _model(kind: str, **kw: object) -> CalibratedMulticlass | OneVsRestAdaBoost:
    if kind == "samme":
        return CalibratedMulticlass(SAMME(60), random_state=0, **kw)  # type: ignore[arg-type]
    return OneVsRestAdaBoost(60, random_state=0, **kw)  # type: ignore[arg-type]


def _brier(y: np.ndarray, p: np.ndarray) -> float:
    return float(((p - np.eye(p.shape[1])[y]) ** 2).sum(axis=1).mean())


@pytest.mark.parametrize("kind", ["samme", "ovr"])
def test_probabilities_sum_to_one_and_beat_raw_scores(data: tuple, kind: str) -> None:
    X, y = data
    Xtr, ytr, Xte, yte = X[:2000], y[:2000], X[2000:], y[2000:]
    raw = _model(kind, calibration="none").fit(Xtr, ytr).predict_proba(Xte)
    for method in ("platt", "isotonic"):
        cal = _model(kind, calibration=method).fit(Xtr, ytr).predict_proba(Xte)
        np.testing.assert_allclose(cal.sum(axis=1), 1.0, atol=1e-12)
        assert np.all(cal >= 0)
        assert _brier(yte, cal) < 0.8 * _brier(yte, raw), method  # held-out Brier score
    np.testing.assert_allclose(raw.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("kind", ["samme", "ovr"])
def test_request_costs_decide_by_least_expected_cost(data: tuple, kind: str) -> None:
    X, y = data
    model = _model(kind).fit(X[:2000], y[:2000])
    Xte = X[2000:]
    inf = model.to_inference()
    assert inf.rule == "threshold" and inf.training_costs is None
    p = inf.predict_proba(Xte)
    # 0-1 costs: the most probable class
    np.testing.assert_array_equal(inf.decide(Xte, 1 - np.eye(4)).labels_index, p.argmax(1))
    np.testing.assert_array_equal(model.predict(Xte), model.classes_[p.argmax(1)])
    # any K x K matrix: argmin_j sum_i p_i C[i][j]
    c = np.array([[0, 1, 1, 9], [1, 0, 1, 1], [4, 1, 0, 1], [1, 1, 2, 0]], dtype=float)
    d = inf.decide(Xte, c)
    np.testing.assert_array_equal(d.labels_index, np.argmin(p @ c, axis=1))
    np.testing.assert_allclose(d.expected_cost, np.min(p @ c, axis=1))
    # costlier misses of class 2 (row 2 = truth 2) -> more decisions for class 2
    counts = []
    for factor in (1.0, 3.0, 10.0):
        c2 = 1 - np.eye(4)
        c2[2] *= factor
        counts.append(int((inf.decide(Xte, c2).labels_index == 2).sum()))
    assert counts[0] < counts[1] < counts[2], counts
    # per-row matrices and priors are supported as for binary models
    rows = np.broadcast_to(c, (len(Xte), 4, 4))
    np.testing.assert_array_equal(inf.decide(Xte, rows).labels_index, d.labels_index)
    shifted = inf.decide(Xte, 1 - np.eye(4), priors=[0.7, 0.1, 0.1, 0.1]).labels_index
    assert (shifted == 0).sum() > (p.argmax(1) == 0).sum()


@pytest.mark.parametrize("method", ["platt", "isotonic", "none"])
def test_two_class_calibrated_samme_is_calibrated_adamec(method: str) -> None:
    """For K = 2, SAMME = AdaBoost and per-class calibration of (1 - s, s) normalised is
    the binary calibration of s: the calibrated AdaMEC of Nikolaou et al."""
    X, y = make_classification(1200, 6, n_informative=4, random_state=1)
    ref = CalibratedBoosting(AdaBoost(30), method=method, random_state=0).fit(X, y)
    ours = CalibratedMulticlass(SAMME(30), calibration=method, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)


@pytest.mark.parametrize("kind", ["samme", "ovr"])
@pytest.mark.parametrize("split", ["holdout", "kfold"])
def test_splits_keep_calibration_rows_apart(data: tuple, kind: str, split: str) -> None:
    X, y = data
    model = _model(kind, calibration_split=split, n_folds=3).fit(X[:900], y[:900])
    info = model.calibration_info_
    assert info["split"] == split and info["method"] == "platt"
    if split == "holdout":
        assert (info["n_boost"], info["n_calibration"]) == (600, 300)
    else:
        assert info["n_folds"] == 3 and info["n_boost"] == info["n_calibration"] == 900
    assert isinstance(model.n_estimators_, int) and model.n_estimators_ > 0
    assert isinstance(model.termination_reason_, str)


def test_samme_holdout_booster_saw_only_the_boosting_rows(data: tuple) -> None:
    X, y = data
    model = CalibratedMulticlass(SAMME(20), random_state=0).fit(X[:600], y[:600])
    from sklearn.model_selection import StratifiedShuffleSplit

    boost, _ = next(
        StratifiedShuffleSplit(1, test_size=1 / 3, random_state=0).split(X[:600], y[:600])
    )
    alone = SAMME(20, random_state=0).fit(X[boost], y[boost])
    np.testing.assert_array_equal(model.estimator_.predict(X), alone.predict(X))


def test_ovr_members_are_binary_class_vs_rest(data: tuple) -> None:
    X, y = data
    model = OneVsRestAdaBoost(20, random_state=0).fit(X[:900], y[:900])
    assert len(model.estimators_) == 4
    for k, member in enumerate(model.estimators_):
        assert member.classes_.tolist() == [0, 1]
        score = member.predict_proba(X[:900])[:, 1]
        assert score[y[:900] == k].mean() > score[y[:900] != k].mean()
    assert model.n_estimators_ == sum(model.n_estimators_per_class_) == 80
    assert model.calibration_info_["n_models"] == 4


@pytest.mark.parametrize("kind", ["samme", "ovr"])
def test_errors(data: tuple, kind: str) -> None:
    X, y = data
    with pytest.raises(InvalidInput, match="calibration_split"):
        _model(kind, calibration_split="random").fit(X, y)
    with pytest.raises(InvalidInput, match="calibration_fraction"):
        _model(kind, calibration_fraction=1.5).fit(X, y)
    with pytest.raises(InvalidInput, match="n_folds"):
        _model(kind, n_folds=1).fit(X, y)
    with pytest.raises(InvalidInput):
        _model(kind, calibration="sigmoid").fit(X, y)
    small = np.concatenate([y[:100], [9, 9]])
    Xs = np.vstack([X[:100], X[:2]])
    with pytest.raises(TrainingError, match="9"):
        _model(kind).fit(Xs, small)
    with pytest.raises(TrainingError, match="at least two classes"):
        _model(kind).fit(X[:10], np.zeros(10))
    with pytest.raises(NotFitted):
        _model(kind).predict_proba(X)
