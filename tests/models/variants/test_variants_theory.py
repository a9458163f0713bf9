"""Section 3 of Nikolaou et al. (2016) checked numerically on the variants of Tables 1-2:
FGD-consistency (Eqs. 11-12 with the Table 3 losses) and asymmetry preservation (section
3.3, ratio r_L(m) of the Table 3 losses)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp
from sklearn.datasets import make_classification

from models.variants import CSB0, CSB1, CSB2, AdaC1, AdaC2, AdaC3, AdaCost, AsymAda, CGAda
from models.variants._common import CostSensitiveBoosting, MarginLoss


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X, y = make_classification(400, 5, n_informative=3, flip_y=0.15, random_state=7)
    sw = np.random.default_rng(7).uniform(0.5, 1.5, len(y))
    return X, np.where(y == 1, 1.0, -1.0), sw


def replay(est: CostSensitiveBoosting, X: np.ndarray, y: np.ndarray, sw: np.ndarray) -> tuple:
    """Learner outputs H (n, T), margins before each round and the distributions D^1..D^{T+1}
    obtained by re-running the fitted variant's hooks on its own learners."""
    H = est.ensemble_.learner_outputs(X)
    est._setup(y, sw)
    w = est._initial_weights(y, sw)
    dists = [w]
    for t in range(H.shape[1]):
        alpha = est._alpha(y, H[:, t], w)
        assert alpha == est.estimator_alphas_[t]  # the replay is the training run
        w = est._update_weights(y, H[:, t], w, alpha)
        w = w / w.sum()
        dists.append(w)
    del est._c
    F = np.concatenate([np.zeros((len(y), 1)), np.cumsum(H * est.estimator_alphas_, axis=1)], 1)
    return H, F, dists


def line_search(
    loss: MarginLoss, y: np.ndarray, sw: np.ndarray, f: np.ndarray, h: np.ndarray
) -> float:
    """alpha* = argmin_alpha sum_i s_i L(y_i, y_i (F_{t-1}(x_i) + alpha h_t(x_i))), Eq. 12."""

    def risk(alpha: float) -> float:  # log of the empirical risk: same minimiser
        return float(logsumexp(loss.log_loss(y, y * (f + alpha * h)), b=sw))

    res = minimize_scalar(risk, bracket=(0.0, 0.5), method="brent", options={"xtol": 1e-12})
    return float(res.x)


def line_search_k1(
    log_k1: np.ndarray, y: np.ndarray, sw: np.ndarray, f: np.ndarray, h: np.ndarray
) -> float:
    """Eq. 12 for the per-example loss K1_i e^{-m} (K1 given per example)."""

    def risk(alpha: float) -> float:
        return float(logsumexp(log_k1 - y * (f + alpha * h), b=sw))

    return float(
        minimize_scalar(risk, bracket=(0.0, 0.5), method="brent", options={"xtol": 1e-12}).x
    )


FGD_CONSISTENT = {
    "cgada": lambda: CGAda(c_fp=1.0, c_fn=2.5, n_estimators=8),
    "asymada": lambda: AsymAda(c_fp=1.0, c_fn=2.5, n_estimators=8),
    "adac2": lambda: AdaC2(c_fp=1.0, c_fn=1.5, n_estimators=8),
}


@pytest.mark.parametrize("name", list(FGD_CONSISTENT))
def test_fgd_consistent_alpha_is_the_line_search_minimiser(name: str, data: tuple) -> None:
    X, y, sw = data
    est = FGD_CONSISTENT[name]().fit(X, y, sample_weight=sw)
    assert est.n_estimators_ >= 5
    H, F, dists = replay(est, X, y, sw)
    for t in range(1, est.n_estimators_ + 1):
        loss = est.table3_loss(t)
        alpha_star = line_search(loss, y, sw, F[:, t - 1], H[:, t - 1])
        assert est.estimator_alphas_[t - 1] == pytest.approx(alpha_star, abs=1e-7)
        # ... and D^{t+1} is the normalised negative gradient of the same loss at F_t (Eq. 11)
        g = sw * loss.weight(y, y * F[:, t])
        np.testing.assert_allclose(dists[t], g / g.sum(), rtol=1e-9)


@pytest.mark.parametrize("cls", [AdaC1, AdaC3])
def test_fgd_inconsistent_alpha_is_not_the_line_search_minimiser(cls: type, data: tuple) -> None:
    X, y, sw = data
    est = cls(c_fp=1.0, c_fn=2.5, n_estimators=8).fit(X, y, sample_weight=sw)
    H, F, dists = replay(est, X, y, sw)
    gaps = []
    for t in range(1, est.n_estimators_ + 1):
        loss = est.table3_loss(t)
        # the weights do follow the loss of Table 3 (Eq. 11) ...
        g = sw * loss.weight(y, y * F[:, t])
        np.testing.assert_allclose(dists[t], g / g.sum(), rtol=1e-9)
        # ... but the closed-form alpha is not its line-search minimiser (Eq. 12)
        gaps.append(
            abs(est.estimator_alphas_[t - 1] - line_search(loss, y, sw, F[:, t - 1], H[:, t - 1]))
        )
    assert min(gaps) > 1e-3


def test_csb2_update_and_alpha_come_from_different_losses(data: tuple) -> None:
    X, y, sw = data
    est = CSB2(c_fp=1.0, c_fn=2.5, n_estimators=8).fit(X, y, sample_weight=sw)
    H, F, dists = replay(est, X, y, sw)
    hat = np.where(y > 0, *est.scaled_costs()[::-1])
    q = np.zeros(len(y))
    gaps = []
    for t in range(1, est.n_estimators_ + 1):
        q_next = q + (H[:, t - 1] != y)
        # D^{t+1} is the gradient of c^{1+q} e^{-m} with q counted after round t ...
        k1 = hat ** (1 + q_next)
        g = sw * k1 * np.exp(-y * F[:, t])
        np.testing.assert_allclose(dists[t], g / g.sum(), rtol=1e-9)

        # ... but alpha_t (Eq. 5 on D^t) minimises the loss with q counted before round t
        f, h = F[:, t - 1], H[:, t - 1]
        before = line_search_k1(np.log(hat) * (1 + q), y, sw, f, h)
        after = line_search_k1(np.log(k1), y, sw, f, h)
        assert est.estimator_alphas_[t - 1] == pytest.approx(before, abs=1e-6)
        gaps.append(abs(est.estimator_alphas_[t - 1] - after))
        q = q_next
    assert max(gaps) > 1e-3


# --------------------------------------------------------- asymmetry preservation
MARGINS = np.linspace(-20.0, 20.0, 4001)
COSTS = [(1.0, 1.5), (1.0, 2.0), (1.0, 10.0), (100.0, 1.0), (1.0, 100.0), (3.0, 3.0)]
ROUNDS = [1, 2, 5, 50]


def important_label(c_fp: float, c_fn: float) -> int:
    return 1 if c_fn >= c_fp else -1


@pytest.mark.parametrize("cls", [CGAda, AsymAda, AdaC2, CSB2])
@pytest.mark.parametrize("costs", COSTS)
def test_preserving_losses_keep_ratio_at_least_one(cls: type, costs: tuple) -> None:
    est = cls(c_fp=costs[0], c_fn=costs[1], n_estimators=50)
    imp = important_label(*costs)
    for t in ROUNDS:
        for q in (0, 1, 4):
            r = est.table3_loss(t, q).ratio(MARGINS, imp)
            assert np.all(r >= 1.0 - 1e-12), (t, q)


@pytest.mark.parametrize("costs", [c for c in COSTS if c[0] != c[1]])
def test_adac1_swaps_for_every_positive_margin(costs: tuple) -> None:
    est = AdaC1(c_fp=costs[0], c_fn=costs[1])
    r = est.table3_loss().ratio(MARGINS, important_label(*costs))
    assert np.all(r[MARGINS > 0] < 1.0) and np.all(r[MARGINS < 0] > 1.0)


@pytest.mark.parametrize("costs", [c for c in COSTS if c[0] != c[1]])
@pytest.mark.parametrize("t", ROUNDS)
def test_adac3_swaps_beyond_the_margin_of_fig_2(costs: tuple, t: int) -> None:
    est = AdaC3(c_fp=costs[0], c_fn=costs[1])
    lo, hi = sorted(est.scaled_costs())
    # Fig. 2: swapping once y F > ((t - 1) / (c_FN - c_FP)) log(c_FN / c_FP); the cost
    # exponent t - 1 there is the exponent f - 1 = t of our round t
    crossing = t / (hi - lo) * np.log(hi / lo)
    m = np.linspace(-5.0, crossing + 5.0, 2001)
    r = est.table3_loss(t).ratio(m, important_label(*costs))
    assert np.all(r[m > crossing + 1e-9] < 1.0) and np.all(r[m < crossing - 1e-9] > 1.0)


@pytest.mark.parametrize("cls", [CSB0, CSB1])
@pytest.mark.parametrize("costs", [c for c in COSTS if c[0] != c[1]])
def test_csb0_csb1_updates_never_lower_the_costly_class(cls: type, costs: tuple) -> None:
    # no loss of the margin (Table 3); section 3.3: their weight updates can only raise
    # the relative importance of the costly class
    est = cls(c_fp=costs[0], c_fn=costs[1])
    imp = important_label(*costs)
    y = np.array([imp, -imp] * 2, dtype=float)
    h = np.array([imp, -imp, -imp, imp], dtype=float)  # both right, then both wrong
    est._setup(y, np.ones(4))
    w = np.full(4, 0.25)
    for alpha in (0.01, 0.5, 3.0):
        d = est._update_weights(y, h, w, alpha)
        assert d[0] >= d[1] and d[2] >= d[3]


def test_adacost_weights_are_a_function_of_the_margin() -> None:
    # module note: D^{t+1} proportional to c exp(c A_t / 2) exp(-y F_t / 2), A_t = sum alpha
    Xe, ye = make_classification(
        400, 5, n_informative=2, n_redundant=0, n_clusters_per_class=1, class_sep=2.0,
        random_state=0,
    )  # fmt: skip
    y = np.where(ye == 1, 1.0, -1.0)
    sw = np.ones(len(y))
    est = AdaCost(c_fp=1.0, c_fn=4.0, n_estimators=6).fit(Xe, y)
    _, F, dists = replay(est, Xe, y, sw)
    c = np.where(y > 0, *est.scaled_costs()[::-1])
    a = np.concatenate([[0.0], np.cumsum(est.estimator_alphas_)])
    for t in range(est.n_estimators_ + 1):
        g = c * np.exp(c * a[t] / 2 - y * F[:, t] / 2)
        np.testing.assert_allclose(dists[t], g / g.sum(), rtol=1e-9)


def test_table3_loss_forms() -> None:
    # c_hat = [c_fp, c_fn] / max = [0.25, 1] (CSB: / min = [1, 4]); f = t + 1
    t, q, m = 3, 2, 10
    assert CGAda(c_fp=1.0, c_fn=4.0).table3_loss(t) == MarginLoss((0.25, 1.0), (1.0, 1.0))
    assert AdaC1(c_fp=1.0, c_fn=4.0).table3_loss(t) == MarginLoss((1.0, 1.0), (0.25, 1.0))
    assert AdaC2(c_fp=1.0, c_fn=4.0).table3_loss(t) == MarginLoss((0.25**4, 1.0), (1.0, 1.0))
    assert AdaC3(c_fp=1.0, c_fn=4.0).table3_loss(t) == MarginLoss((0.25**3, 1.0), (0.25, 1.0))
    asym = AsymAda(c_fp=1.0, c_fn=4.0, n_estimators=m).table3_loss(t)
    assert asym == MarginLoss((0.25 ** (4 / m), 1.0), (1.0, 1.0))
    assert CSB2(c_fp=1.0, c_fn=4.0).table3_loss(t, q) == MarginLoss((1.0, 4.0**3), (1.0, 1.0))
    for cls in (CSB0, CSB1, AdaCost):
        with pytest.raises(NotImplementedError, match="function of the margin"):
            cls(c_fp=1.0, c_fn=4.0).table3_loss(t)
    loss = CGAda(c_fp=1.0, c_fn=4.0).table3_loss()
    np.testing.assert_allclose(
        loss(np.array([1.0, -1.0]), np.array([0.5, 0.5])), [np.exp(-0.5), 0.25 * np.exp(-0.5)]
    )
