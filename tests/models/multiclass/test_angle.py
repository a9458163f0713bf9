"""Angle-based cost-sensitive boosting (Algorithms 1-2 of Yang et al.) against the paper."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import expit
from sklearn.datasets import load_wine, make_classification
from sklearn.utils.estimator_checks import parametrize_with_checks

from models.boosting.adaboost import AdaBoost
from models.catalog.algorithms import get_algorithm, validate_params
from models.exceptions import InvalidCostMatrix, InvalidInput, InvalidPriors, TrainingError
from models.inference.simplex import scores_from_votes
from models.multiclass.angle import (
    AngleAdaBoost,
    AngleLogitBoost,
    _newton_line_search,
    lemma1_beta,
)
from tests.models.multiclass.conftest import assert_same_rounds, stump_ties

ANGLE = [AngleAdaBoost, AngleLogitBoost]


def _binary(n: int = 250, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def three() -> tuple[np.ndarray, np.ndarray]:
    return make_classification(
        1500, 6, n_informative=4, n_redundant=0, n_classes=3, n_clusters_per_class=1,
        class_sep=0.6, random_state=3,
    )  # fmt: skip


# ------------------------------------------------------------ K = 2: AdaBoost
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("costs", [None, [[0.0, 2.5], [2.5, 0.0]]])
def test_two_classes_symmetric_costs_is_adaboost(seed: int, costs: object) -> None:
    X, y = _binary(seed=seed)
    Xt, _ = _binary(1000, seed + 100)
    ada = AdaBoost(60).fit(X, y)
    ang = AngleAdaBoost(60, cost_matrix=costs).fit(X, y)
    # beta (Eq. 21 with K = 2) is AdaBoost's alpha (Eq. 5 of Nikolaou et al.)
    assert_same_rounds(ang, ada, X, Xt)


def test_two_classes_with_trees_is_adaboost() -> None:
    X, y = _binary(seed=5)
    ada = AdaBoost(20, weak_learner="tree", max_depth=2, random_state=0).fit(X, y)
    ang = AngleAdaBoost(20, weak_learner="tree", max_depth=2, random_state=0).fit(X, y)
    assert_same_rounds(ang, ada, X)


# ---------------------------------------------------------- cost sensitivity
@pytest.mark.parametrize("cls", ANGLE)
@pytest.mark.parametrize("learner", ["stump", "tree"])
@pytest.mark.parametrize("k", [0, 2])
def test_costlier_misses_of_a_class_mean_more_predictions_of_it(
    three: tuple, cls: type, learner: str, k: int
) -> None:
    X, y = three
    counts = []
    for factor in (1.0, 3.0, 10.0):
        c = 1.0 - np.eye(3)
        c[k] *= factor  # row k = truth k: missing class k costs `factor`
        model = cls(40, weak_learner=learner, max_depth=2, random_state=0, cost_matrix=c)
        counts.append(int((model.fit(X, y).predict(X) == k).sum()))
    assert counts[0] < counts[1] < counts[2], counts


# ------------------------------------------------------- steps of the paper
def _replay(model: object, X: np.ndarray, y: np.ndarray):
    """Per round m: scores <f^{(m-1)}(x_i), w_k>, <g_m(x_i), w_k> and beta_m."""
    vote = model.ensemble_  # type: ignore[attr-defined]
    k = vote.n_classes
    staged = vote.staged_votes(X)
    phi = vote.learner_classes(X)
    cum = np.concatenate([[0.0], np.cumsum(vote.betas)])
    for m in range(vote.n_learners):
        prev = np.zeros_like(staged[0]) if m == 0 else staged[m - 1]
        s = scores_from_votes(prev, cum[m])
        u = np.full(s.shape, -1.0 / (k - 1))
        u[np.arange(len(y)), phi[:, m]] = 1.0
        yield s, u, vote.betas[m]


@pytest.mark.parametrize("learner", ["stump", "tree"])
def test_adaboost_beta_minimises_eq19_and_follows_eq21(three: tuple, learner: str) -> None:
    X, y = three
    c = np.array([[0, 1, 4], [2, 0, 1], [1, 3, 0]], dtype=float)
    model = AngleAdaBoost(25, weak_learner=learner, max_depth=2, random_state=0, cost_matrix=c)
    model.fit(X, y)
    eps = model.estimator_errors_
    assert np.all(eps < 1 / 3)  # Lemma 1: beta > 0 iff eps < 1/K
    np.testing.assert_allclose(model.estimator_alphas_, [lemma1_beta(e, 3) for e in eps])
    cy = c[y]
    for s, u, beta in _replay(model, X, y):
        a = cy * np.exp(s)  # alpha^{(m)}_{i,k} of Eq. 20 from the scores
        d = (a * u * np.exp(beta * u)).sum()  # derivative of Eq. 20 in beta
        assert abs(d) < 1e-9 * a.sum()


def test_logitboost_beta_minimises_eq28(three: tuple) -> None:
    X, y = three
    c = np.array([[0, 1, 4], [2, 0, 1], [1, 3, 0]], dtype=float)
    model = AngleLogitBoost(25, cost_matrix=c).fit(X, y)
    assert np.all(model.estimator_errors_ < 1 / 3)
    cy = c[y]
    for s, u, beta in _replay(model, X, y):
        d = (cy * u * expit(s + beta * u)).sum()  # R'(beta) of Eq. 28
        assert abs(d) < 1e-9 * cy.sum()


def test_newton_line_search_matches_a_scalar_minimiser() -> None:
    rng = np.random.default_rng(0)
    cy, s = rng.uniform(size=(200, 4)), rng.normal(size=(200, 4))
    u = np.full((200, 4), -1 / 3)
    u[np.arange(200), rng.integers(0, 4, 200)] = 1.0
    cy[u == 1] *= 0.2  # the learner mostly picks cheap classes: a descent direction
    beta = _newton_line_search(cy, s, u, start=0.3, cap=30.0)

    def risk(b: float) -> float:
        return float((cy * np.logaddexp(0, s + b * u)).sum())

    ref = minimize_scalar(risk, bounds=(0, 30), method="bounded", options={"xatol": 1e-10})
    assert beta == pytest.approx(ref.x, abs=1e-6)
    assert risk(beta) <= risk(ref.x) + 1e-12


# ---------------------------------------------------------------- edge cases
@pytest.mark.parametrize("cls", ANGLE)
def test_perfect_fit_keeps_the_learner_and_stops(cls: type) -> None:
    X = np.repeat(np.arange(3.0), 10)[:, None]
    y = np.repeat([0, 1, 2], 10)
    model = cls(10, weak_learner="tree", max_depth=2).fit(X, y)
    assert model.termination_reason_ == "perfect_fit" and model.n_estimators_ == 1
    assert np.isfinite(model.estimator_alphas_).all() and model.estimator_alphas_[0] > 10
    np.testing.assert_array_equal(model.predict(X), y)


@pytest.mark.parametrize("cls", ANGLE)
def test_no_better_than_random_first_learner_raises(cls: type) -> None:
    X = np.zeros((30, 2))  # nothing to split: the best learner is constant, eps = 1/K
    y = np.repeat([0, 1, 2], 10)
    with pytest.raises(TrainingError, match="no positive weight"):
        cls(5).fit(X, y)


@pytest.mark.parametrize("cls", ANGLE)
def test_cost_matrix_errors(cls: type, three: tuple) -> None:
    X, y = three
    with pytest.raises(InvalidInput, match="expected a 3 x 3 matrix"):
        cls(5, cost_matrix=[[0, 1], [1, 0]]).fit(X, y)
    with pytest.raises(InvalidInput, match=r"cost_matrix\[2\]\[2\]: the diagonal must be 0"):
        cls(5, cost_matrix=[[0, 1, 1], [1, 0, 1], [1, 1, 1]]).fit(X, y)
    with pytest.raises(TrainingError, match="zero misclassification cost"):
        c = [[0, 0, 0], [0, 0, 0], [1, 1, 0]]  # only class 2 costs, and it has no weight
        cls(5, cost_matrix=c).fit(X, y, sample_weight=(y < 2).astype(float))
    with pytest.raises(InvalidInput, match="binary only"):
        cls(5, weak_learner="logistic").fit(X, y)


@pytest.mark.parametrize("name", ["angle_adaboost", "angle_logitboost"])
def test_catalog_build_validates_the_cost_matrix(name: str) -> None:
    spec = get_algorithm(name)
    assert spec.family == "multiclass" and spec.trains_with_costs
    assert spec.calibrated_probabilities is False
    common = {"n_estimators": 5, "weak_learner": "stump", "max_depth": 3,
              "score_kind": "vote", "random_state": 0}  # fmt: skip
    params = validate_params(spec, {"cost_matrix": [[0, 1], [-2, 0]]})
    with pytest.raises(InvalidInput, match=r"^params\.cost_matrix\[1\]\[0\]"):
        spec.build(common, params)
    with pytest.raises(InvalidInput, match="binary only"):
        spec.build({**common, "weak_learner": "logistic"}, validate_params(spec, {}))
    est = spec.build(common, validate_params(spec, {"cost_matrix": [[0, 1], [2, 0]]}))
    assert est.cost_matrix == [[0.0, 1.0], [2.0, 0.0]] and est.n_estimators == 5


# ----------------------------------------------------- serving: the fixed rule
@pytest.mark.parametrize("cls", ANGLE)
def test_served_with_the_fixed_rule_and_refuses_other_costs(cls: type) -> None:
    X, y = load_wine(return_X_y=True)
    c = np.array([[0, 1, 2], [1, 0, 1], [5, 1, 0]], dtype=float)
    model = cls(30, cost_matrix=c).fit(X, y)
    inf = model.to_inference()
    assert inf.rule == "fixed" and inf.classes == (0, 1, 2)
    assert model.calibration_info_["method"] == "none"  # recorded as never calibrated
    np.testing.assert_array_equal(inf.training_costs, c)
    pred = model.predict(X)
    np.testing.assert_array_equal(inf.decide(X, None).labels_index, pred)
    np.testing.assert_array_equal(inf.decide(X, 2.5 * c).labels_index, pred)  # a multiple
    with pytest.raises(InvalidCostMatrix, match="trained for the cost matrix .* decides only"):
        inf.decide(X, 1.0 - np.eye(3))
    with pytest.raises(InvalidPriors, match="priors"):
        inf.decide(X, c, priors=[0.2, 0.3, 0.5])
    p = inf.predict_proba(X)  # Theorem 2 plug-in estimate, not calibrated
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(p, model.predict_proba(X))


def test_decision_function_two_classes_is_one_dimensional() -> None:
    X, y = _binary()
    model = AngleLogitBoost(10).fit(X, y)
    d = model.decision_function(X)
    assert d.shape == (len(y),)
    np.testing.assert_array_equal(model.predict(X), (d > 0).astype(int))
    np.testing.assert_allclose(model.scores(X).sum(axis=1), 0.0, atol=1e-9)
    assert model.angle_vector(X).shape == (len(y), 1)


# ------------------------------------------------------------ check_estimator
@parametrize_with_checks(
    [
        AngleAdaBoost(n_estimators=10),
        AngleLogitBoost(n_estimators=10, weak_learner="tree", max_depth=2, random_state=0),
    ],
    expected_failed_checks=stump_ties,
)
def test_sklearn_compatible(estimator, check) -> None:  # type: ignore[no-untyped-def]
    check(estimator)
