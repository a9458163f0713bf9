"""Cost-sensitive variants of Tables 1-2 (Nikolaou et al. 2016): behaviour, hand
computations, reductions to AdaBoost, catalog entries and serving round trips."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.utils.estimator_checks import parametrize_with_checks

from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.boosting.loop import BaseBoosting
from models.catalog.algorithms import algorithms, get_algorithm, validate_params
from models.exceptions import InvalidInput, TrainingError
from models.inference.artifacts import dump_model, load_model
from models.inference.model import training_skew
from models.variants import (
    CSB0,
    CSB1,
    CSB2,
    AdaC1,
    AdaC2,
    AdaC3,
    AdaCost,
    AdaCostBeta2,
    AsymAda,
    AsymmetricAdaBoost,
    CGAda,
)
from models.variants._common import CostSensitiveBoosting, half_log_ratio

COST_VARIANTS: dict[str, type[CostSensitiveBoosting]] = {
    "cgada": CGAda,
    "asymada": AsymAda,
    "adac1": AdaC1,
    "adac2": AdaC2,
    "adac3": AdaC3,
    "csb0": CSB0,
    "csb1": CSB1,
    "csb2": CSB2,
    "adacost": AdaCost,
    "adacost_beta2": AdaCostBeta2,
}
# Section 2.3: all but CSB0/CSB1 and AdaCost/AdaCost(beta2) reduce to AdaBoost.
REDUCE_TO_ADABOOST = ["cgada", "asymada", "adac1", "adac2", "adac3", "csb2"]


@pytest.fixture(scope="module")
def noisy() -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(500, 6, n_informative=3, flip_y=0.1, random_state=3)
    return X, y


@pytest.fixture(scope="module")
def easy() -> tuple[np.ndarray, np.ndarray]:
    """Well-separated data on which even AdaCost finds positive alphas."""
    X, y = make_classification(
        400, 6, n_informative=2, n_redundant=0, n_clusters_per_class=1, class_sep=2.0,
        random_state=0,
    )  # fmt: skip
    return X, y


# ------------------------------------------------------------- Tables 1-2 by hand
def scaled(name: str, c_fp: float, c_fn: float, m: int) -> tuple[float, float]:
    """Scaled (c_hat_FP, c_hat_FN) as documented: CSB by the smaller cost, AdaCost and
    AdaCost(beta2) by the sum (c_hat_FP = cost skew z, Eq. 28), the others by the larger."""
    if name.startswith("csb"):
        s = min(c_fp, c_fn)
    elif name.startswith("adacost"):
        s = c_fp + c_fn
    else:
        s = max(c_fp, c_fn)
    hat = (c_fp / s, c_fn / s)
    return (hat[0] ** (1 / m), hat[1] ** (1 / m)) if name == "asymada" else hat


def tables_round(
    name: str, y: list[int], h: list[int], d: list[float], cost: tuple[float, float]
) -> tuple[float, list[float]]:
    """alpha_t (Table 2) and normalised D^{t+1} (Table 1), written out example by example."""
    c = [cost[1] if yi == 1 else cost[0] for yi in y]
    n = len(y)
    ok = [i for i in range(n) if h[i] == y[i]]
    nok = [i for i in range(n) if h[i] != y[i]]
    ok_d, nok_d = sum(d[i] for i in ok), sum(d[i] for i in nok)
    ok_dc, nok_dc = sum(d[i] * c[i] for i in ok), sum(d[i] * c[i] for i in nok)
    if name in ("cgada", "csb0", "csb1", "csb2", "adacost_beta2"):
        alpha = 0.5 * math.log(ok_d / nok_d)
    elif name in ("adac2", "asymada"):
        alpha = 0.5 * math.log(ok_dc / nok_dc)
    elif name == "adac1":
        alpha = 0.5 * math.log((1 + ok_dc - nok_dc) / (1 - ok_dc + nok_dc))
    elif name == "adac3":
        s = sum(d[i] * c[i] for i in range(n))
        ok2, nok2 = sum(d[i] * c[i] ** 2 for i in ok), sum(d[i] * c[i] ** 2 for i in nok)
        alpha = 0.5 * math.log((s + ok2 - nok2) / (s - ok2 + nok2))
    else:  # adacost
        beta = [(1 + c[i]) / 2 if h[i] != y[i] else (1 - c[i]) / 2 for i in range(n)]
        ok_b = sum(d[i] * beta[i] for i in ok)
        nok_b = sum(d[i] * beta[i] for i in nok)
        alpha = 0.5 * math.log((1 + ok_b - nok_b) / (1 - ok_b + nok_b))
    new = []
    for i in range(n):
        yh = y[i] * h[i]
        gamma = c[i] if h[i] != y[i] else 1.0
        beta_i = (1 + c[i]) / 2 if h[i] != y[i] else (1 - c[i]) / 2
        factor = {
            "cgada": math.exp(-alpha * yh),
            "adac1": math.exp(-c[i] * alpha * yh),
            "adac2": c[i] * math.exp(-alpha * yh),
            "asymada": c[i] * math.exp(-alpha * yh),
            "adac3": c[i] * math.exp(-c[i] * alpha * yh),
            "csb0": gamma,
            "csb1": gamma * math.exp(-yh),
            "csb2": gamma * math.exp(-alpha * yh),
            "adacost": math.exp(-beta_i * alpha * yh),
            "adacost_beta2": math.exp(-beta_i * alpha * yh),
        }[name]
        new.append(d[i] * factor)
    total = sum(new)
    return alpha, [v / total for v in new]


def initial(y: list[int], cost: tuple[float, float]) -> list[float]:
    """D^1_i proportional to c(y_i) (Table 1, all variants here)."""
    c = [cost[1] if yi == 1 else cost[0] for yi in y]
    return [v / sum(c) for v in c]


Y6 = [1, 1, -1, -1, -1, -1]
H6 = [1, -1, -1, -1, -1, 1]  # one mistake per class

# alpha_1 for c_fp = 1, c_fn = 3 on (Y6, H6), worked out on paper from Tables 1-2:
# D^1 = [3, 3, 1, 1, 1, 1] / 10 for every variant (AsymAda with M = 2: see below).
# AdaCost, costs / (c_fp + c_fn): c_hat = 3/4 (positives), 1/4 (negatives); beta =
# (1 - c)/2 if right, (1 + c)/2 if wrong: positive right 1/8, positive wrong 7/8,
# negative right 3/8, negative wrong 5/8. r = sum_i D_i beta_i y_i h_i
#   = 0.3 * 1/8 - 0.3 * 7/8 + 3 * 0.1 * 3/8 - 0.1 * 5/8
#   = 0.0375 - 0.2625 + 0.1125 - 0.0625 = -0.175 = -7/40
# (check: (1 - cbar)/2 - eps with cbar = 0.6 * 3/4 + 0.4 * 1/4 = 0.55, eps = 0.4:
# 0.225 - 0.4 = -0.175), alpha = 1/2 log((1 - 7/40) / (1 + 7/40)) = 1/2 log(33/47) < 0.
HAND_ALPHA_1 = {
    "cgada": 0.5 * math.log(3 / 2),  # eps = 3/10 + 1/10
    "adac1": 0.5 * math.log(8 / 7),  # r = (0.3 - 0.3) + (0.1 - 0.1/3) = 1/15
    "adac2": 0.5 * math.log(6 / 5),  # (0.3 + 0.1) / (0.3 + 0.1/3)
    "adac3": 0.5 * math.log(17 / 16),  # S = 22/30, r2 = 1/45
    "asymada": 0.5 * math.log(3 / 2),  # M = 2: D c^{1/2} is proportional to c
    "csb0": 0.5 * math.log(3 / 2),
    "csb1": 0.5 * math.log(3 / 2),
    "csb2": 0.5 * math.log(3 / 2),
    "adacost": 0.5 * math.log(33 / 47),  # r = -7/40 < 0 (above)
    "adacost_beta2": 0.5 * math.log(3 / 2),
}


@pytest.mark.parametrize("name", list(COST_VARIANTS))
def test_first_round_hooks_equal_the_hand_computation(name: str) -> None:
    est = COST_VARIANTS[name](c_fp=1.0, c_fn=3.0, n_estimators=2)
    y, h, sw = np.array(Y6, float), np.array(H6, float), np.ones(6)
    est._setup(y, sw)
    w = est._initial_weights(y, sw)
    cost = scaled(name, 1.0, 3.0, 2)
    np.testing.assert_allclose(w, initial(Y6, cost), rtol=1e-14)
    if name != "asymada":  # AsymAda: D^1 proportional to c^{1/M}
        np.testing.assert_allclose(w, [0.3, 0.3, 0.1, 0.1, 0.1, 0.1], rtol=1e-14)
    alpha = est._alpha(y, h, w)
    assert alpha == pytest.approx(HAND_ALPHA_1[name], rel=1e-12)
    expected_alpha, expected_d2 = tables_round(name, Y6, H6, list(w), cost)
    assert alpha == pytest.approx(expected_alpha, rel=1e-12)
    d2 = est._update_weights(y, h, w, alpha)
    np.testing.assert_allclose(d2 / d2.sum(), expected_d2, rtol=1e-12)


def test_hand_computed_second_distributions() -> None:
    y, h, sw = np.array(Y6, float), np.array(H6, float), np.ones(6)
    e = math.e
    expected = {  # D^2 before normalisation, from D^1 = [.3, .3, .1, .1, .1, .1]
        CSB0: [0.3, 0.9, 0.1, 0.1, 0.1, 0.1],  # gamma = 3 on the positive mistake
        CSB1: [0.3 / e, 0.9 * e, 0.1 / e, 0.1 / e, 0.1 / e, 0.1 * e],
        # alpha = 1/2 log(3/2), so e^{-beta y h alpha} = 1.5^{-beta y h / 2}; beta (costs /
        # (c_fp + c_fn), see HAND_ALPHA_1): positive right 1/8 -> 1.5^{-1/16}, positive wrong
        # 7/8 -> 1.5^{7/16}, negative right 3/8 -> 1.5^{-3/16}, negative wrong 5/8 -> 1.5^{5/16}
        AdaCostBeta2: [0.3 * 1.5 ** (-1 / 16), 0.3 * 1.5 ** (7 / 16)]
        + [0.1 * 1.5 ** (-3 / 16)] * 3
        + [0.1 * 1.5 ** (5 / 16)],
    }
    for cls, d2 in expected.items():
        est = cls(c_fp=1.0, c_fn=3.0)
        est._setup(y, sw)
        w = est._initial_weights(y, sw)
        got = est._update_weights(y, h, w, est._alpha(y, h, w))
        np.testing.assert_allclose(got / got.sum(), np.array(d2) / sum(d2), rtol=1e-12)


@pytest.mark.parametrize("name", [n for n in COST_VARIANTS if n != "adacost"])
def test_fitted_alphas_follow_tables_1_and_2_round_by_round(name: str, noisy: tuple) -> None:
    X, y = noisy
    est = COST_VARIANTS[name](c_fp=1.0, c_fn=2.0, n_estimators=4).fit(X, y)
    yl = [1 if v == est.classes_[1] else -1 for v in y]
    H = est.ensemble_.learner_outputs(X)
    cost = scaled(name, 1.0, 2.0, 4)
    d = initial(yl, cost)
    for t in range(est.n_estimators_):
        alpha, d = tables_round(name, yl, [int(v) for v in H[:, t]], d, cost)
        assert est.estimator_alphas_[t] == pytest.approx(alpha, rel=1e-9, abs=1e-12)


def test_adacost_alphas_follow_the_tables_on_separable_data(easy: tuple) -> None:
    X, y = easy
    est = AdaCost(c_fp=1.0, c_fn=4.0, n_estimators=5).fit(X, y)
    H = est.ensemble_.learner_outputs(X)
    yl = [1 if v == 1 else -1 for v in y]
    cost = scaled("adacost", 1.0, 4.0, 5)
    d = initial(yl, cost)
    for t in range(est.n_estimators_):
        alpha, d = tables_round("adacost", yl, [int(v) for v in H[:, t]], d, cost)
        assert est.estimator_alphas_[t] == pytest.approx(alpha, rel=1e-9)


# ------------------------------------------------------------ c_fp == c_fn cases
@pytest.mark.parametrize("name", REDUCE_TO_ADABOOST)
@pytest.mark.parametrize("cost", [1.0, 3.7])
@pytest.mark.parametrize("learner", ["stump", "tree"])
def test_equal_costs_reduce_to_adaboost(name: str, cost: float, learner: str, noisy: tuple) -> None:
    X, y = noisy
    sw = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    kw: dict[str, Any] = {
        "n_estimators": 25,
        "weak_learner": learner,
        "max_depth": 2,
        "random_state": 0,
    }
    ada = AdaBoost(**kw).fit(X, y, sample_weight=sw)
    est = COST_VARIANTS[name](c_fp=cost, c_fn=cost, **kw).fit(X, y, sample_weight=sw)
    assert est.n_estimators_ == ada.n_estimators_
    np.testing.assert_allclose(est.estimator_alphas_, ada.estimator_alphas_, rtol=1e-10)
    np.testing.assert_array_equal(est.predict(X), ada.predict(X))


def test_asymmetric_adaboost_with_the_positive_share_is_adaboost(noisy: tuple) -> None:
    X, y = noisy
    ada = AdaBoost(n_estimators=20).fit(X, y)
    est = AsymmetricAdaBoost(gamma=float(np.mean(y == 1)), n_estimators=20).fit(X, y)
    np.testing.assert_allclose(est.estimator_alphas_, ada.estimator_alphas_, rtol=1e-10)
    np.testing.assert_array_equal(est.predict(X), ada.predict(X))


def test_csb0_with_equal_costs_never_reweights(noisy: tuple) -> None:
    X, y = noisy
    est = CSB0(c_fp=2.0, c_fn=2.0, n_estimators=6).fit(X, y)
    ada1 = AdaBoost(n_estimators=1).fit(X, y)
    H = est.ensemble_.learner_outputs(X)
    # gamma = 1 everywhere: D^t = D^1, the same stump and the same alpha every round
    assert est.n_estimators_ == 6 and np.all(H[:, :1] == H)
    np.testing.assert_allclose(est.estimator_alphas_, ada1.estimator_alphas_[0])
    np.testing.assert_array_equal(est.predict(X), ada1.predict(X))


def test_csb0_reweights_only_the_misclassified_examples_of_the_costly_class() -> None:
    y, h, sw = np.array(Y6, float), np.array(H6, float), np.ones(6)
    est = CSB0(c_fp=1.0, c_fn=3.0)
    est._setup(y, sw)
    w = est._initial_weights(y, sw)
    d2 = est._update_weights(y, h, w, alpha=123.0)  # alpha plays no role
    assert np.flatnonzero(d2 != w).tolist() == [1]  # the positive (c_FN) mistake only
    assert d2[1] == pytest.approx(3 * w[1])


@pytest.mark.parametrize("name", ["csb1", "adacost_beta2"])
def test_non_reducing_variants_differ_from_adaboost_after_round_one(
    name: str, noisy: tuple
) -> None:
    X, y = noisy
    ada = AdaBoost(n_estimators=10).fit(X, y)
    est = COST_VARIANTS[name](c_fp=1.0, c_fn=1.0, n_estimators=10).fit(X, y)
    assert est.estimator_alphas_[0] == pytest.approx(ada.estimator_alphas_[0])  # same D^1
    assert not np.allclose(est.estimator_alphas_[1:], ada.estimator_alphas_[1:])


def test_adacost_with_equal_costs_trains_but_is_not_adaboost(easy: tuple) -> None:
    # c_hat = 2 / (2 + 2) = 1/2: beta = 1/4 on correct examples, 3/4 on mistakes, so
    # r_1 = (1 - eps_1)/4 - 3 eps_1/4 = 1/4 - eps_1 and alpha_1 = 1/2 log((5/4 - eps_1) /
    # (3/4 + eps_1)), positive iff eps_1 < 1/4. D^1 is uniform as in AdaBoost, so the first
    # learner and eps_1 are AdaBoost's; the update then multiplies mistakes by e^{3 a/4} and
    # correct examples by e^{-a/4} (relative factor e^{a}); AdaBoost's update uses e^{a'} and
    # e^{-a'} with its own alpha a' (relative e^{2a'}), after which AdaBoost's mistakes carry
    # exactly half of D^2, AdaCost's eps_1 e^{a} / (eps_1 e^{a} + 1 - eps_1).
    X, y = easy
    est = AdaCost(c_fp=2.0, c_fn=2.0, n_estimators=10).fit(X, y)
    ada = AdaBoost(n_estimators=10).fit(X, y)
    np.testing.assert_allclose(est.scaled_costs_, [0.5, 0.5])
    assert est.n_estimators_ == 10 and np.all(est.estimator_alphas_ > 0)
    eps = ada.estimator_errors_[0]
    assert 0 < eps < 0.25 and est.estimator_errors_[0] == pytest.approx(eps, rel=1e-12)
    a = 0.5 * math.log((1.25 - eps) / (0.75 + eps))
    assert est.estimator_alphas_[0] == pytest.approx(a, rel=1e-12)
    assert est.estimator_alphas_[0] < ada.estimator_alphas_[0] - 0.1
    yl = np.where(y == 1, 1.0, -1.0)
    h = est.ensemble_.learner_outputs(X)[:, 0]
    np.testing.assert_array_equal(h, ada.ensemble_.learner_outputs(X)[:, 0])
    share = {}
    for name, model in (("adacost", est), ("adaboost", ada)):
        model._setup(yl, np.ones(len(y)))
        w = model._initial_weights(yl, np.ones(len(y)))
        d2 = model._update_weights(yl, h, w, model.estimator_alphas_[0])
        share[name] = float(d2[h != yl].sum() / d2.sum())
    del est._c
    assert share["adaboost"] == pytest.approx(0.5, rel=1e-12)
    expected = eps * math.exp(a) / (eps * math.exp(a) + 1 - eps)
    assert share["adacost"] == pytest.approx(expected, rel=1e-12)
    assert share["adacost"] < 0.45
    assert not np.allclose(est.estimator_alphas_[1:], ada.estimator_alphas_[1:])


@pytest.mark.parametrize("ratio", [0.1, 1.0, 10.0])
def test_adacost_trains_with_stumps_at_every_skew(ratio: float) -> None:
    # section 5 trains AdaCost at skews from 0.009 to 0.99 (Figs. 4-7)
    X, y = make_classification(400, 5, random_state=0)
    est = AdaCost(c_fp=1.0, c_fn=ratio, n_estimators=20, weak_learner="stump").fit(X, y)
    assert est.n_estimators_ >= 1
    assert np.all(np.isfinite(est.estimator_alphas_)) and np.all(est.estimator_alphas_ > 0)
    np.testing.assert_allclose(est.scaled_costs_, [1 / (1 + ratio), ratio / (1 + ratio)])


def test_adacost_without_positive_first_alpha_explains_the_bound() -> None:
    # alternating labels: every stump errs on >= 2 of 5 points, eps_1 = 2/5 < 1/2 (AdaBoost
    # would train) but with equal costs cbar_1 = 1/2, bound (1 - 1/2)/2 = 1/4 and
    # r_1 = 1/4 - 2/5 = -0.15
    X = np.arange(5.0).reshape(-1, 1)
    y = np.array([0, 1, 0, 1, 0])
    with pytest.raises(
        TrainingError,
        match=r"r_1 = -0\.15\b.*eps_1 = 0\.4000 must be below \(1 - cbar_1\)/2 = 0\.25\b",
    ):
        AdaCost(n_estimators=5).fit(X, y)


def test_adacost_alpha_is_positive_iff_eps_below_half_the_mean_cost_complement() -> None:
    # r = sum_i D_i (1 - c_i)/2 - eps (module docstring of models.variants.adacost)
    rng = np.random.default_rng(4)
    for _ in range(200):
        y = np.where(rng.random(30) < 0.5, 1.0, -1.0)
        h = np.where(rng.random(30) < rng.uniform(0.5, 1.0), y, -y)
        est = AdaCost(c_fp=rng.uniform(0.1, 5), c_fn=rng.uniform(0.1, 5))
        est._setup(y, np.ones(30))
        w = rng.dirichlet(np.ones(30))
        bound = 0.5 * (1.0 - float(w @ est._c)) - float(w[h != y].sum())
        alpha = est._alpha(y, h, w)
        assert abs(bound) < 1e-12 or np.sign(alpha) == np.sign(bound)


# ------------------------------------------------- footnote 9, edge cases, params
def test_no_positive_real_alpha_stops_training(noisy: tuple) -> None:
    X, y = noisy
    est = AdaC1(c_fp=1.0, c_fn=5.0, n_estimators=60).fit(X, y)
    assert est.termination_reason_ == "no_positive_alpha"
    assert 0 < est.n_estimators_ < 60 == est.n_estimators
    assert est.ensemble_.alphas.shape == (est.n_estimators_,)
    assert np.all(np.isfinite(est.estimator_alphas_)) and np.all(est.estimator_alphas_ > 0)


@pytest.mark.parametrize("name", list(COST_VARIANTS))
def test_every_kept_alpha_is_a_positive_real(name: str, easy: tuple) -> None:
    X, y = easy
    est = COST_VARIANTS[name](c_fp=1.0, c_fn=4.0, n_estimators=15).fit(X, y)
    assert len(est.estimator_alphas_) == est.n_estimators_ >= 1
    assert np.all(np.isfinite(est.estimator_alphas_)) and np.all(est.estimator_alphas_ > 0)
    assert not hasattr(est, "_c")  # per-fit scratch removed


def test_half_log_ratio_edges() -> None:
    assert half_log_ratio(3.0, 1.0) == pytest.approx(0.5 * math.log(3))
    assert half_log_ratio(1.0, 0.0) == pytest.approx(0.5 * math.log((1 - 1e-10) / 1e-10))
    assert half_log_ratio(1.0, 1.0) == 0.0
    assert half_log_ratio(1.0, 2.0) < 0
    assert math.isnan(half_log_ratio(2.5, -0.5))  # imaginary alpha (footnote 9)
    assert math.isnan(half_log_ratio(0.0, 0.0)) and math.isnan(half_log_ratio(math.inf, 1.0))


def test_perfect_learner_is_kept_and_stops(easy: tuple) -> None:
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    for cls in (CGAda, AdaC1, AdaC2, AdaC3, CSB2):
        est = cls(c_fp=1.0, c_fn=2.0, n_estimators=5).fit(X, y)
        assert est.termination_reason_ == "perfect_fit" and est.n_estimators_ == 1
        np.testing.assert_array_equal(est.predict(X), y)


@pytest.mark.parametrize("field", ["c_fp", "c_fn"])
@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), "2", True, None])
def test_invalid_costs_are_refused(field: str, value: object, noisy: tuple) -> None:
    X, y = noisy
    kwargs: dict[str, Any] = {field: value}
    for cls in COST_VARIANTS.values():
        with pytest.raises(InvalidInput, match=rf"^{field} must be a finite number > 0"):
            cls(**kwargs).fit(X, y)


@pytest.mark.parametrize("gamma", [0, 1, 1.5, -0.2, float("nan"), "0.5", None])
def test_invalid_gamma_is_refused(gamma: Any, noisy: tuple) -> None:
    X, y = noisy
    with pytest.raises(InvalidInput, match=r"gamma must be a number strictly between 0 and 1"):
        AsymmetricAdaBoost(gamma=gamma).fit(X, y)


def test_asymmetric_adaboost_needs_weight_in_both_classes(noisy: tuple) -> None:
    X, y = noisy
    sw = (y == 1).astype(float)
    with pytest.raises(TrainingError, match="negative class has zero total sample weight"):
        AsymmetricAdaBoost(gamma=0.3).fit(X, y, sample_weight=sw)


def test_costs_are_recorded_and_params_cloned(noisy: tuple) -> None:
    X, y = noisy
    est = AdaC3(c_fp=2.0, c_fn=8.0, n_estimators=3)
    assert clone(est).get_params()["c_fn"] == 8.0
    est.fit(X, y)
    np.testing.assert_array_equal(est.training_cost_matrix_, [[0, 2.0], [8.0, 0]])
    np.testing.assert_allclose(est.scaled_costs_, [0.25, 1.0])
    np.testing.assert_allclose(CSB1(c_fp=2.0, c_fn=8.0).fit(X, y).scaled_costs_, [1.0, 4.0])
    asym = AsymAda(c_fp=2.0, c_fn=8.0, n_estimators=4).fit(X, y)
    np.testing.assert_allclose(asym.scaled_costs_, [0.25**0.25, 1.0])
    for cls in (AdaCost, AdaCostBeta2):  # divided by the sum: [2, 8] / 10
        np.testing.assert_allclose(cls(c_fp=2.0, c_fn=8.0).scaled_costs(), [0.2, 0.8])


def test_asymada_is_adac2_with_costs_to_the_power_one_over_m(noisy: tuple) -> None:
    X, y = noisy
    asym = AsymAda(c_fp=1.0, c_fn=9.0, n_estimators=12).fit(X, y)
    adac2 = AdaC2(c_fp=1.0, c_fn=9.0 ** (1 / 12), n_estimators=12).fit(X, y)
    np.testing.assert_allclose(asym.estimator_alphas_, adac2.estimator_alphas_, rtol=1e-10)
    np.testing.assert_array_equal(asym.predict(X), adac2.predict(X))


# ------------------------------------------- asymmetric AdaBoost (gamma) == CGAda
def test_asymmetric_adaboost_equals_cgada_on_balanced_data() -> None:
    X, y = make_classification(800, 6, n_informative=3, flip_y=0.1, random_state=5)
    keep = np.concatenate([np.flatnonzero(y == k)[:350] for k in (0, 1)])
    X, y = X[keep], y[keep]
    for c_fp, c_fn in [(1.0, 3.0), (5.0, 1.0), (2.0, 2.0)]:
        cg = CGAda(c_fp=c_fp, c_fn=c_fn, n_estimators=30).fit(X, y)
        asym = AsymmetricAdaBoost(gamma=c_fn / (c_fn + c_fp), n_estimators=30).fit(X, y)
        np.testing.assert_allclose(asym.estimator_alphas_, cg.estimator_alphas_, rtol=1e-10)
        np.testing.assert_array_equal(asym.predict(X), cg.predict(X))
        # same training skew, so the served decisions agree too
        assert training_skew(asym.training_cost_matrix_) == pytest.approx(
            training_skew(cg.training_cost_matrix_)
        )


def test_asymmetric_adaboost_equals_cgada_on_imbalanced_data() -> None:
    X, y = make_classification(700, 6, weights=[0.8], flip_y=0.05, random_state=2)
    sw = np.random.default_rng(1).uniform(0.2, 3.0, len(y))
    w_pos, w_neg = sw[y == 1].sum(), sw[y == 0].sum()
    c_fp, c_fn = 1.0, 4.0
    cg = CGAda(c_fp=c_fp, c_fn=c_fn, n_estimators=25).fit(X, y, sample_weight=sw)
    gamma = c_fn * w_pos / (c_fn * w_pos + c_fp * w_neg)
    asym = AsymmetricAdaBoost(gamma=gamma, n_estimators=25).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(asym.estimator_alphas_, cg.estimator_alphas_, rtol=1e-10)
    np.testing.assert_array_equal(asym.predict(X), cg.predict(X))


def test_gamma_shifts_errors_towards_the_other_class(noisy: tuple) -> None:
    # Landesa-Vazquez & Alba-Castro, Tables 2-3: larger gamma, fewer false negatives
    X, y = noisy
    fnr = []
    for gamma in (0.2, 0.5, 0.8):
        pred = AsymmetricAdaBoost(gamma=gamma, n_estimators=40).fit(X, y).predict(X)
        fnr.append(np.mean(pred[y == 1] == 0))
    assert fnr[0] > fnr[1] > fnr[2]


# ------------------------------------------------------------ catalog and serving
TABLE_4 = {  # FGD-consistent, cost-consistent, asymmetry-preserving
    "cgada": (True, True, True),
    "asymada": (True, True, True),
    "adac1": (False, True, False),
    "adac2": (True, False, True),
    "adac3": (False, False, False),
    "csb0": (False, False, True),
    "csb1": (False, False, True),
    "csb2": (False, False, True),
    "adacost": (False, False, False),
    "adacost_beta2": (False, False, False),
    "asymmetric_adaboost": (True, True, True),
}


@pytest.mark.parametrize("name", list(TABLE_4))
def test_catalog_entries(name: str) -> None:
    spec = get_algorithm(name)
    assert name in algorithms() and spec.family == "binary" and spec.trains_with_costs
    props = spec.describe()["properties"]
    assert (
        props["fgd_consistent"],
        props["cost_consistent"],
        props["asymmetry_preserving"],
    ) == TABLE_4[name]
    common = {
        "n_estimators": 7,
        "weak_learner": "stump",
        "max_depth": 3,
        "score_kind": "vote",
        "random_state": 0,
    }
    if name == "asymmetric_adaboost":
        params = validate_params(spec, {"gamma": 0.7})
        assert params == {"gamma": 0.7}
    else:
        params = validate_params(spec, {"c_fn": 4})
        assert params == {"c_fp": 1.0, "c_fn": 4.0}
        with pytest.raises(InvalidInput, match=r"params.c_fp: expected a value in \(0, inf\]"):
            validate_params(spec, {"c_fp": 0})
    est = spec.build(common, params)
    assert est.get_params()["n_estimators"] == 7 and not hasattr(est, "ensemble_")
    assert "Eq. 18" in spec.decision_rule or "sign[F(x)]" in spec.decision_rule


def test_catalog_refuses_gamma_one() -> None:
    spec = get_algorithm("asymmetric_adaboost")
    common = {"n_estimators": 5, "weak_learner": "stump", "max_depth": 3}
    with pytest.raises(InvalidInput, match="strictly between 0 and 1"):
        spec.build(common, validate_params(spec, {"gamma": 1.0}))


ALL_ESTIMATORS = [
    *(cls(c_fp=1.0, c_fn=4.0, n_estimators=12) for cls in COST_VARIANTS.values()),
    AsymmetricAdaBoost(gamma=0.7, n_estimators=12),
]


@pytest.mark.parametrize("est", ALL_ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("method", ["none", "platt"])
def test_round_trip_through_artifacts(est: BaseBoosting, method: str, easy: tuple) -> None:
    X, y = easy
    model = CalibratedBoosting(est, method=method, random_state=0).fit(X, y)
    inf = model.to_inference()
    loaded = load_model(dump_model(inf)[0])
    np.testing.assert_array_equal(loaded.predict_proba(X), inf.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    if method == "none":
        booster = model.estimator_
        assert inf.rule == "skew_change"
        np.testing.assert_array_equal(loaded.training_costs, booster.training_cost_matrix_)
        # the served decision under the training costs is the variant's own sign rule
        decided = loaded.decide(X, booster.training_cost_matrix_).labels_index
        f = booster.decision_function(X)
        clear = np.abs(f) > 1e-9 * booster.estimator_alphas_.sum()
        own = np.searchsorted(booster.classes_, booster.predict(X))
        np.testing.assert_array_equal(decided[clear], own[clear])


def test_served_decision_matches_sign_rule_on_noisy_data(noisy: tuple) -> None:
    X, y = noisy
    for cls in (CGAda, AdaC2, CSB2, AdaC3):
        model = CalibratedBoosting(cls(c_fp=1.0, c_fn=3.0, n_estimators=30), method="none")
        model.fit(X, y)
        booster = model.estimator_
        inf = load_model(dump_model(model.to_inference())[0])
        decided = inf.decide(X, np.array([[0.0, 1.0], [3.0, 0.0]])).labels_index
        f = booster.decision_function(X)
        clear = np.abs(f) > 1e-9
        np.testing.assert_array_equal(decided[clear], (booster.predict(X) == 1)[clear])


# ------------------------------------------------------------ scikit-learn checks
@parametrize_with_checks(
    [
        CGAda(c_fp=1.0, c_fn=2.0, n_estimators=5),
        AdaC1(c_fp=1.0, c_fn=2.0, n_estimators=5),
        CSB1(c_fp=2.0, c_fn=1.0, n_estimators=5),
        AsymmetricAdaBoost(gamma=0.4, n_estimators=5),
    ]
)
def test_sklearn_compatible(estimator: object, check: object) -> None:
    check(estimator)  # type: ignore[operator]
