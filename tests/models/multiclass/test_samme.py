"""SAMME (Zhu et al. 2009) against scikit-learn's AdaBoostClassifier and binary AdaBoost."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from models.boosting.adaboost import AdaBoost
from models.exceptions import InvalidInput, NotFitted, TrainingError
from models.multiclass.samme import SAMME
from tests.models.multiclass.conftest import assert_same_rounds, stump_ties


def _data(n: int = 240, k: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Continuous features, no ties, < 255 distinct values per feature (exact bins)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    return X, np.argmax(X[:, :k] + 0.8 * rng.normal(size=(n, k)), axis=1)


# ------------------------------------------------------------ sklearn parity
# scikit-learn's SAMME fits DecisionTreeClassifier(max_depth=1) (Gini) with the weights;
# our histogram "tree" learner with the Gini criterion grows that same tree, and our
# "gini" stump searches the same candidate
# thresholds (midpoints of the distinct values) with the same criterion. On data
# without ties both give scikit-learn's predictions and weights (to rounding; scikit-
# learn clips weights at machine epsilon and updates them in log space).
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [3, 4])
@pytest.mark.parametrize("learner", ["tree", "gini_stump"])
def test_parity_with_sklearn_samme(seed: int, k: int, learner: str) -> None:
    X, y = _data(k=k, seed=seed)
    Xt, _ = _data(1000, k=k, seed=seed + 50)
    M = 40
    ref = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=M, random_state=0)
    ref.fit(X, y)
    if learner == "tree":
        ours = SAMME(M, weak_learner="tree", max_depth=1, stump_criterion="gini").fit(X, y)
    else:
        ours = SAMME(M, stump_criterion="gini").fit(X, y)
    assert ours.n_estimators_ == len(ref.estimators_) == M
    assert_same_rounds(ours, ref, X, Xt, ref_alphas="estimator_weights_")


def test_alpha_is_step_2c() -> None:
    X, y = _data(k=4)
    model = SAMME(30).fit(X, y)
    e = model.estimator_errors_
    np.testing.assert_allclose(model.estimator_alphas_, np.log((1 - e) / e) + np.log(3))
    assert np.all(e < 0.75)


# --------------------------------------------------------- K = 2: AdaBoost
def test_two_classes_is_adaboost() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(250, 5))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=250) > 0).astype(int)
    ada = AdaBoost(50).fit(X, y)
    samme = SAMME(50).fit(X, y)
    np.testing.assert_array_equal(samme.predict(X), ada.predict(X))
    np.testing.assert_allclose(samme.estimator_alphas_, 2 * ada.estimator_alphas_, rtol=1e-12)
    # decision_function = f_1 - f_0 = 2 F(x) (Eq. 7); vote fraction = s(x) (Eq. 24);
    # softmax of the votes = 1 / (1 + exp(-2 F)) (Eq. 25)
    f = ada.decision_function(X)
    np.testing.assert_allclose(samme.decision_function(X), 2 * f, atol=1e-9)
    np.testing.assert_allclose(samme.predict_proba(X)[:, 1], ada.score_samples(X), atol=1e-12)
    logistic = SAMME(50, score_kind="logistic").fit(X, y)
    np.testing.assert_allclose(
        logistic.predict_proba(X)[:, 1], 1 / (1 + np.exp(-2 * f)), atol=1e-12
    )


# ---------------------------------------------------------------- edge cases
def test_chance_level_first_learner_raises_and_later_stops() -> None:
    X = np.zeros((30, 2))
    y = np.repeat([0, 1, 2], 10)
    with pytest.raises(TrainingError, match="no positive weight"):
        SAMME(5).fit(X, y)


def test_perfect_fit_stops() -> None:
    X = np.repeat(np.arange(3.0), 10)[:, None]
    y = np.repeat([0, 1, 2], 10)
    model = SAMME(10, weak_learner="tree", max_depth=2).fit(X, y)
    assert model.termination_reason_ == "perfect_fit" and model.n_estimators_ == 1
    np.testing.assert_array_equal(model.predict(X), y)


def test_invalid_parameters_and_unfitted_use() -> None:
    X, y = _data()
    with pytest.raises(InvalidInput, match="score_kind"):
        SAMME(5, score_kind="softmax").fit(X, y)
    with pytest.raises(InvalidInput, match="binary only"):
        SAMME(5, weak_learner="logistic").fit(X, y)
    with pytest.raises(InvalidInput, match="n_estimators"):
        SAMME(0).fit(X, y)
    with pytest.raises(TrainingError, match="1 class"):
        SAMME(5).fit(X, np.zeros(len(y)))
    with pytest.raises(NotFitted):
        SAMME().predict(X)


def test_string_labels_and_missing_values() -> None:
    X, y = _data(k=3)
    X = X.copy()
    X[::7, 0] = np.nan
    labels = np.array(["a", "b", "c"])[y]
    model = SAMME(20).fit(X, labels)
    assert model.classes_.tolist() == ["a", "b", "c"]
    assert (model.predict(X) == labels).mean() > 0.6
    assert list(model.staged_predict(X))[-1].tolist() == model.predict(X).tolist()


@parametrize_with_checks(
    [
        SAMME(n_estimators=10),
        SAMME(
            n_estimators=10, weak_learner="tree", max_depth=2, score_kind="logistic", random_state=0
        ),
    ],  # fmt: skip
    expected_failed_checks=stump_ties,
)
def test_sklearn_compatible(estimator, check) -> None:  # type: ignore[no-untyped-def]
    check(estimator)
