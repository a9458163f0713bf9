"""Cost-sensitive AdaBoost (CSAda, Algorithm 1 of Masnadi-Shirazi & Vasconcelos)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp

from models.boosting.adaboost import AdaBoost
from models.exceptions import InvalidInput, TrainingError
from models.variants.csboost.cs_adaboost import CostSensitiveAdaBoost
from tests.models.variants.csboost.conftest import binary_data, cheap_and_dear_misses, normalized


@pytest.mark.parametrize("nan", [0.0, 0.05])
@pytest.mark.parametrize("cost", [1.0, 3.0])
def test_equal_costs_reduce_to_adaboost(nan: float, cost: float) -> None:
    X, y = binary_data(n=800, seed=1, nan=nan)
    Xt, _ = binary_data(n=500, seed=2, nan=nan)
    ada = AdaBoost(40).fit(X, y)
    cs = CostSensitiveAdaBoost(40, c_fp=cost, c_fn=cost).fit(X, y)
    assert cs.c1_ == cs.c2_ == 1.0  # normalised: the paper's C1 = C2 = 1
    assert cs.n_estimators_ == ada.n_estimators_ == 40
    np.testing.assert_allclose(cs.estimator_alphas_, ada.estimator_alphas_, rtol=1e-12)
    np.testing.assert_allclose(cs.decision_function(Xt), ada.decision_function(Xt), atol=1e-10)
    np.testing.assert_array_equal(cs.predict(Xt), ada.predict(Xt))
    np.testing.assert_array_equal(cs.ensemble_.arrays["feature"], ada.ensemble_.arrays["feature"])


def _line_search(c: np.ndarray, margin_f: np.ndarray, margin_h: np.ndarray) -> float:
    """argmin_a sum_i exp(-c_i y_i (F + a h)) (Eq. 12 of Nikolaou et al., Table 3 loss)."""

    def log_loss(a: float) -> float:
        return float(logsumexp(-c * (margin_f + a * margin_h)))

    return float(
        minimize_scalar(log_loss, bounds=(0, 20), method="bounded", options={"xatol": 1e-12}).x
    )


@pytest.mark.parametrize(("c_fp", "c_fn"), [(1.0, 5.0), (4.0, 1.0), (1.0, 20.0)])
def test_fgd_consistency_alpha_is_the_line_search_minimiser(c_fp: float, c_fn: float) -> None:
    X, y = binary_data(n=500, seed=3, nan=0.03)
    model = CostSensitiveAdaBoost(15, c_fp=c_fp, c_fn=c_fn).fit(X, y)
    ys = np.where(y == 1, 1.0, -1.0)
    c1, c2 = normalized(c_fp, c_fn)
    c = np.where(ys > 0, c1, c2)
    h = model.ensemble_.learner_outputs(X)
    F = np.zeros(len(y))
    for t, f_t in enumerate(model.staged_decision_function(X)):
        a_star = _line_search(c, ys * F, ys * h[:, t])
        assert model.estimator_alphas_[t] == pytest.approx(a_star, rel=1e-6, abs=1e-9)
        F = f_t


def _brute_force_best_loss(
    x: np.ndarray, ys: np.ndarray, w: np.ndarray, c1: float, c2: float
) -> float:
    """min over every stump sign(x_j - t) (both polarities, constants) and alpha of (38)."""
    cost = np.where(ys > 0, c1, c2)
    best = w.sum()
    outputs = [np.ones(len(ys)), -np.ones(len(ys))]
    for j in range(x.shape[1]):
        v = np.unique(x[:, j])
        for t in (v[1:] + v[:-1]) / 2:
            g = np.where(x[:, j] <= t, 1.0, -1.0)
            outputs += [g, -g]
    for g in outputs:
        res = minimize_scalar(
            lambda a, g=g: float((w * np.exp(-cost * ys * a * g)).sum()),
            bounds=(0, 30),
            method="bounded",
            options={"xatol": 1e-12},
        )
        best = min(best, res.fun)
    return float(best)


def test_joint_search_finds_the_best_stump_and_step() -> None:
    """Algorithm 1: the kept (g, alpha) has the smallest loss (38) of all stumps."""
    X, y = binary_data(n=80, f=3, seed=4)
    ys = np.where(y == 1, 1.0, -1.0)
    c_fp, c_fn = 1.0, 6.0
    model = CostSensitiveAdaBoost(4, c_fp=c_fp, c_fn=c_fn).fit(X, y)
    c1, c2 = model.c1_, model.c2_
    cost = np.where(ys > 0, c1, c2)
    h = model.ensemble_.learner_outputs(X)
    F = np.zeros(len(y))
    for t, f_t in enumerate(model.staged_decision_function(X)):
        w = np.exp(-cost * ys * F)
        w /= w.sum()
        ours = float((w * np.exp(-cost * ys * model.estimator_alphas_[t] * h[:, t])).sum())
        assert ours <= _brute_force_best_loss(X, ys, w, c1, c2) + 1e-10
        F = f_t


def test_costs_move_the_decisions_and_are_recorded() -> None:
    X, y = binary_data(n=800, seed=5)
    rates = []
    for c_fn in (0.2, 1.0, 5.0):
        m = CostSensitiveAdaBoost(30, c_fp=1.0, c_fn=c_fn).fit(X, y)
        np.testing.assert_array_equal(m.training_cost_matrix_, [[0.0, 1.0], [c_fn, 0.0]])
        assert m.c1_ + m.c2_ == pytest.approx(2.0) and m.c1_ / m.c2_ == pytest.approx(c_fn)
        rates.append((m.predict(X) == 1).mean())
        # sgn[F] with sgn(0) = +1 (Eq. 1)
        np.testing.assert_array_equal(m.predict(X), m.classes_[(m.decision_function(X) >= 0) * 1])
        assert m.roots_solved_.size >= m.n_estimators_ and m.roots_solved_.min() > 100
    assert rates[0] < rates[1] < rates[2]


@pytest.mark.parametrize("weak_learner", ["tree", "logistic"])
def test_other_weak_learners_follow_the_gradient_weights(weak_learner: str) -> None:
    _, hi = cheap_and_dear_misses(CostSensitiveAdaBoost, 15, 6, weak_learner)
    assert np.all(hi.estimator_alphas_ > 0) and hi.roots_solved_.size == 0


def test_class_balanced_init_is_algorithm_1() -> None:
    """w_i = 1/(2|I+|), 1/(2|I-|) equals uniform D^1 with those sample weights."""
    X, y = binary_data(n=400, seed=7)
    y[:120] = 0  # unbalance the classes
    a = CostSensitiveAdaBoost(10, c_fn=3.0, init_weights="class_balanced").fit(X, y)
    sw = np.where(y == 1, 1.0 / (2 * (y == 1).sum()), 1.0 / (2 * (y == 0).sum()))
    b = CostSensitiveAdaBoost(10, c_fn=3.0).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(a.estimator_alphas_, b.estimator_alphas_, rtol=1e-10)


def test_edge_cases() -> None:
    X = np.arange(20, dtype=float)[:, None]
    y = (X[:, 0] > 9).astype(int)
    m = CostSensitiveAdaBoost(10, c_fn=3.0).fit(X, y)
    assert m.termination_reason_ == "perfect_fit" and m.n_estimators_ == 1
    np.testing.assert_array_equal(m.predict(X), y)
    # constant features, balanced classes, equal costs: no learner has a positive step
    with pytest.raises(TrainingError, match="no positive alpha"):
        CostSensitiveAdaBoost(5).fit(np.zeros((10, 2)), np.r_[np.zeros(5), np.ones(5)])
    for bad in (
        {"c_fp": 0.0},
        {"c_fn": -1.0},
        {"c_fn": np.inf},
        {"init_weights": "x"},
        {"weak_learner": "svm"},
        {"score_kind": "probit"},
    ):
        with pytest.raises(InvalidInput):
            CostSensitiveAdaBoost(5, **bad).fit(X, y)  # type: ignore[arg-type]
