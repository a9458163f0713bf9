"""Tests of models.boosting.adaboost.AdaBoost and the shared loop of models.boosting.loop."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from models.boosting.adaboost import AdaBoost
from models.boosting.loop import EPS_CLIP
from models.exceptions import InvalidInput, NotFitted, TrainingError


def _data(n: int = 250, f: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    return X, y


# ------------------------------------------------------------ sklearn parity
@pytest.mark.parametrize("seed", [0, 1])
def test_parity_with_sklearn_adaboost_stumps(seed: int) -> None:
    X, y = _data(seed=seed)  # continuous: no ties, < 255 distinct values per feature
    Xt, _ = _data(n=1000, seed=seed + 100)
    M = 40
    ours = AdaBoost(M, stump_criterion="gini").fit(X, y)
    ref = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=M)
    ref.fit(X, y)
    assert ours.n_estimators_ == len(ref.estimators_) == M
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    # SAMME weights for two classes are log((1-eps)/eps) = 2 * alpha (Eq. 5)
    np.testing.assert_allclose(2 * ours.estimator_alphas_, ref.estimator_weights_, rtol=1e-7)
    np.testing.assert_allclose(ours.estimator_errors_, ref.estimator_errors_, rtol=1e-7)
    # sklearn's binary decision function is 2 F(x) / sum(SAMME weights) = F(x) / sum(alpha)
    np.testing.assert_allclose(
        2 * ours.decision_function(Xt) / ours.estimator_alphas_.sum(),
        ref.decision_function(Xt),
        atol=1e-9,
    )


def test_error_criterion_alpha_is_eq5() -> None:
    X, y = _data()
    m = AdaBoost(30).fit(X, y)
    e = m.estimator_errors_
    np.testing.assert_allclose(m.estimator_alphas_, 0.5 * np.log((1 - e) / e))
    assert m.termination_reason_ == "max_rounds" and m.n_estimators_ == 30
    assert (m.predict(X) == y).mean() > 0.78


# ------------------------------------------------------------------ edge cases
def test_perfect_fit_keeps_learner_and_stops() -> None:
    X = np.arange(20, dtype=float)[:, None]
    y = (X[:, 0] > 9).astype(int)
    m = AdaBoost(50).fit(X, y)
    assert m.termination_reason_ == "perfect_fit" and m.n_estimators_ == 1
    assert m.estimator_errors_[0] == 0.0
    assert np.isclose(m.estimator_alphas_[0], 0.5 * np.log((1 - EPS_CLIP) / EPS_CLIP))
    np.testing.assert_array_equal(m.predict(X), y)


def test_no_positive_alpha_stops_without_adding() -> None:
    X = np.ones((10, 1))  # nothing to split: constant learner, eps = 0.3, then 0.5
    y = np.array([1] * 7 + [0] * 3)
    m = AdaBoost(50).fit(X, y)
    assert m.termination_reason_ == "no_positive_alpha"
    assert m.n_estimators_ == 1 and m.ensemble_.n_learners == 1
    np.testing.assert_allclose(m.estimator_errors_, [0.3])


def test_no_positive_alpha_on_first_round_raises() -> None:
    X = np.ones((10, 1))
    y = np.array([1, 0] * 5)
    with pytest.raises(TrainingError, match="no positive alpha"):
        AdaBoost(10).fit(X, y)


class _Exploding(AdaBoost):
    """Weights become infinite after round ``explode_at`` (tests the guard)."""

    def __init__(self, n_estimators: int = 10, explode_at: int = 2) -> None:
        super().__init__(n_estimators=n_estimators)
        self.explode_at = explode_at

    def _setup(self, y: np.ndarray, sample_weight: np.ndarray) -> None:
        self._round = 0

    def _update_weights(self, y, h, w, alpha):  # type: ignore[no-untyped-def]
        self._round += 1
        out = super()._update_weights(y, h, w, alpha)
        return out * np.inf if self._round >= self.explode_at else out


def test_non_finite_weights_drop_round_and_stop() -> None:
    X, y = _data()
    with pytest.warns(RuntimeWarning, match="non-finite"):
        m = _Exploding(10, explode_at=3).fit(X, y)
    assert m.termination_reason_ == "non_finite_weights"
    assert m.n_estimators_ == 2 and m.ensemble_.n_learners == 2
    with pytest.raises(TrainingError, match="non-finite"):
        _Exploding(10, explode_at=1).fit(X, y)


def test_hooks_make_short_variants() -> None:
    """A CGAda-like variant (cost-weighted D^1) is a few lines and changes the model."""

    class CostInit(AdaBoost):
        def _initial_weights(self, y: np.ndarray, sample_weight: np.ndarray) -> np.ndarray:
            w = sample_weight * np.where(y > 0, 5.0, 1.0)
            return w / w.sum()

    X, y = _data()
    plain = AdaBoost(20).fit(X, y).predict(X)
    costly = CostInit(20).fit(X, y).predict(X)
    assert costly.sum() > plain.sum()  # more positive predictions


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    ("X", "y", "sw", "exc", "match"),
    [
        (np.ones((4, 2)), [1, 1, 1, 1], None, TrainingError, "1 class"),
        (np.ones((6, 2)), [0, 1, 2, 0, 1, 2], None, TrainingError, "Only binary"),
        (np.ones((4, 2)), [0.1, 0.2, 0.3, 0.4], None, InvalidInput, "Unknown label type"),
        (np.ones(4), [0, 1, 0, 1], None, InvalidInput, "2D array"),
        (np.array([[1.0], [np.inf], [0], [1]]), [0, 1, 0, 1], None, InvalidInput, "infinity"),
        (np.ones((4, 1)), [0, 1, 0, 1], [1, -1, 1, 1], InvalidInput, ">= 0, got -1.0 in row 1"),
        (np.ones((4, 1)), [0, 1, 0, 1], [1, np.nan, 1, 1], InvalidInput, "NaN|finite"),
        (np.ones((4, 1)), [0, 1, 0, 1], [0, 0, 0, 0], TrainingError, "positive sum"),
        (np.ones((4, 1)), [0, 1, 0, 1], [1, 1], InvalidInput, "shape|samples"),
    ],
)
def test_fit_input_validation(X, y, sw, exc, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=match):
        AdaBoost(5).fit(X, y, sample_weight=sw)


@pytest.mark.parametrize(
    "params",
    [
        {"n_estimators": 0},
        {"weak_learner": "svm"},
        {"score_kind": "platt"},
        {"stump_criterion": "entropy"},
        {"max_bins": 1000},
        {"weak_learner": "tree", "max_depth": 12},
    ],
)
def test_bad_hyper_parameters(params: dict) -> None:
    X, y = _data()
    with pytest.raises(InvalidInput):
        AdaBoost(**params).fit(X, y)


def test_predict_validation() -> None:
    X, y = _data()
    with pytest.raises(NotFitted):
        AdaBoost().predict(X)
    m = AdaBoost(5).fit(X, y)
    with pytest.raises(InvalidInput, match="expecting 5 features"):
        m.predict(X[:, :3])
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(InvalidInput, match="infinity"):
        m.predict_proba(bad)
    np.testing.assert_array_equal(m.predict(X.tolist()), m.predict(X))


# ------------------------------------------------------------------ NaN
@pytest.mark.parametrize("learner", ["stump", "tree", "logistic"])
def test_nan_in_train_and_predict(learner: str) -> None:
    rng = np.random.default_rng(5)
    X, y = _data(n=600)
    X[rng.random(X.shape) < 0.15] = np.nan
    m = AdaBoost(30, weak_learner=learner, random_state=0).fit(X, y)
    p = m.predict_proba(X)
    assert np.all(np.isfinite(p)) and np.allclose(p.sum(1), 1)
    assert (m.predict(X) == y).mean() > 0.7
    all_nan = np.full((3, 5), np.nan)
    assert np.all(np.isfinite(m.decision_function(all_nan)))


# ------------------------------------------------------------ scores, staged
@pytest.mark.parametrize("learner", ["stump", "tree", "logistic"])
@pytest.mark.parametrize("score_kind", ["vote", "logistic"])
def test_scores_and_staged_outputs(learner: str, score_kind: str) -> None:
    X, y = _data()
    m = AdaBoost(25, weak_learner=learner, score_kind=score_kind, random_state=0).fit(X, y)
    F = m.decision_function(X)
    a = m.estimator_alphas_
    s = m.score_samples(X)
    if score_kind == "vote" and learner != "tree":
        np.testing.assert_allclose(s, (F / a.sum() + 1) / 2, atol=1e-12)  # Eq. 24
    if score_kind == "logistic":
        np.testing.assert_allclose(s, 1 / (1 + np.exp(-2 * F)))  # Eq. 25
    np.testing.assert_allclose(m.predict_proba(X), np.c_[1 - s, s])
    np.testing.assert_array_equal(m.predict(X), m.classes_[(F > 0).astype(int)])
    staged_f = list(m.staged_decision_function(X))
    staged_s = list(m.staged_score_samples(X))
    staged_p = list(m.staged_predict_proba(X))
    staged_y = list(m.staged_predict(X))
    assert len(staged_f) == len(staged_s) == len(staged_p) == len(staged_y) == m.n_estimators_
    np.testing.assert_allclose(staged_f[-1], F, atol=1e-12)
    np.testing.assert_allclose(staged_s[-1], s, atol=1e-12)
    np.testing.assert_allclose(staged_p[-1], m.predict_proba(X), atol=1e-12)
    np.testing.assert_array_equal(staged_y[-1], m.predict(X))
    h0 = m.ensemble_.learner_outputs(X)[:, 0]
    np.testing.assert_allclose(staged_f[0], a[0] * h0)


def test_relabelling_changes_nothing() -> None:
    X, y = _data()
    a = AdaBoost(20).fit(X, y)
    b = AdaBoost(20).fit(X, np.where(y == 1, "yes", "no"))
    c = AdaBoost(20).fit(X, np.where(y == 1, 7, -3))
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.decision_function(X), c.decision_function(X))
    np.testing.assert_array_equal(b.predict(X), np.where(a.predict(X) == 1, "yes", "no"))
    assert list(b.classes_) == ["no", "yes"]


def test_integer_weights_equal_repeated_rows() -> None:
    X, y = _data(n=120)
    sw = np.random.default_rng(0).integers(0, 3, size=120)
    a = AdaBoost(15).fit(X, y, sample_weight=sw)
    b = AdaBoost(15).fit(np.repeat(X, sw, axis=0), np.repeat(y, sw))
    np.testing.assert_allclose(a.estimator_alphas_, b.estimator_alphas_)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))


def test_one_row_predict_is_warning_free() -> None:
    X, y = _data()
    m = AdaBoost(10).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert m.predict_proba(X[:1]).shape == (1, 2)


# ----------------------------------------------------------- check_estimator
# Every scikit-learn check passes; none is listed as an expected failure. (Checks that
# need pandas are skipped by scikit-learn itself when pandas is not installed.)
@parametrize_with_checks(
    [
        AdaBoost(n_estimators=10),
        AdaBoost(n_estimators=10, stump_criterion="gini", score_kind="logistic"),
        AdaBoost(n_estimators=10, weak_learner="tree", max_depth=2, random_state=0),
        AdaBoost(n_estimators=10, weak_learner="logistic"),
    ],
    expected_failed_checks=lambda est: {},
)
def test_sklearn_compatible(estimator, check) -> None:  # type: ignore[no-untyped-def]
    check(estimator)
