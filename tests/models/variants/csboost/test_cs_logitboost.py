"""Cost-sensitive LogitBoost (Algorithm 3, Eqs. 52-56) with regression stumps."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from models.exceptions import InvalidInput
from models.variants.csboost.cs_logitboost import CostSensitiveLogitBoost
from tests.models.variants.csboost.conftest import binary_data, normalized


def _reference(
    X: np.ndarray,
    y: np.ndarray,
    rounds: int,
    c_fp: float,
    c_fn: float,
    weights: str,
    z_max: float = 4.0,
) -> np.ndarray:
    """Brute-force Algorithm 3 on the training rows (working responses formed explicitly).

    z = (y' - p_c) / (p_c (1 - p_c)) (Eq. 54); w = p_c (1 - p_c) ("link") or p (1 - p)
    (Eq. 55); per-cell weighted means of z (the least-squares stump), selection by the
    weighted residual (Eq. 56), G = fit / (2 gamma) with the fit capped at z_max (Eq. 52).
    F starts at 0, so p = 1/2 and p_c = C2 / (C1 + C2).
    """
    c1, c2 = normalized(c_fp, c_fn)
    gamma, eta = (c1 + c2) / 2, 0.5 * np.log(c2 / c1)
    y01 = (y == 1).astype(float)
    F = np.zeros(len(y))
    for _ in range(rounds):
        pc = expit(2 * (gamma * F + eta))
        p = expit(2 * F)
        z = (y01 - pc) / (pc * (1 - pc))
        w = pc * (1 - pc) if weights == "link" else p * (1 - p)
        best: tuple[float, np.ndarray] | None = None
        for j in range(X.shape[1]):
            x = X[:, j]
            nan = np.isnan(x)
            v = np.unique(x[~nan])
            for t in (v[1:] + v[:-1]) / 2:
                fit, out = np.zeros(len(y)), np.zeros(len(y))
                for cell in ((x <= t) & ~nan, (x > t) & ~nan, nan):
                    if cell.any():
                        fit[cell] = (w[cell] * z[cell]).sum() / w[cell].sum()
                        out[cell] = np.clip(fit[cell], -z_max, z_max) / (2 * gamma)
                resid = float((w * (z - fit) ** 2).sum())  # Eq. 56
                if best is None or resid < best[0] - 1e-12 * abs(best[0]):
                    best = (resid, out)
        assert best is not None
        F = F + best[1]
    return F


@pytest.mark.parametrize("weights", ["link", "symmetric"])
@pytest.mark.parametrize(
    ("c_fp", "c_fn", "nan"), [(1.0, 1.0, 0.0), (1.0, 4.0, 0.1), (5.0, 1.0, 0.0)]
)
def test_matches_a_brute_force_reference(
    weights: str, c_fp: float, c_fn: float, nan: float
) -> None:
    X, y = binary_data(n=150, f=3, seed=21, nan=nan)
    model = CostSensitiveLogitBoost(6, c_fp=c_fp, c_fn=c_fn, weights=weights).fit(X, y)
    np.testing.assert_allclose(
        model.decision_function(X), _reference(X, y, 6, c_fp, c_fn, weights), atol=1e-9
    )


def test_equal_costs_are_logitboost_for_both_weightings() -> None:
    """C1 = C2 = 1: gamma = 1, eta = 0, p_c = p: Friedman et al.'s LogitBoost."""
    X, y = binary_data(n=500, seed=22)
    link = CostSensitiveLogitBoost(25, c_fp=3.0, c_fn=3.0).fit(X, y)
    sym = CostSensitiveLogitBoost(25, c_fp=3.0, c_fn=3.0, weights="symmetric").fit(X, y)
    np.testing.assert_allclose(link.decision_function(X), sym.decision_function(X), atol=1e-12)
    Xs, ys = X[:150, :3], y[:150]
    small = CostSensitiveLogitBoost(5, weights="symmetric").fit(Xs, ys)
    np.testing.assert_allclose(
        small.decision_function(Xs), _reference(Xs, ys, 5, 1, 1, "link"), atol=1e-9
    )


def test_first_round_is_the_newton_step_from_the_consistent_start() -> None:
    """Round 1 at F = 0: p_c = C2/(C1+C2) (Eq. 35, not 1/2) and each cell's output is the
    Newton step gradient / Hessian of the loss (34) (Appendix D) over 2 gamma."""
    X, y = binary_data(n=400, seed=23)
    c_fp, c_fn = 1.0, 3.0
    m = CostSensitiveLogitBoost(1, c_fp=c_fp, c_fn=c_fn).fit(X, y)
    c1, c2 = normalized(c_fp, c_fn)
    pc = c2 / (c1 + c2)
    j, t = int(m.ensemble_.arrays["feature"][0]), float(m.ensemble_.arrays["threshold"][0])
    for cell, key in (((X[:, j] <= t), "value_left"), ((X[:, j] > t), "value_right")):
        newton = ((y[cell] == 1) - pc).sum() / (cell.sum() * pc * (1 - pc))
        assert m.ensemble_.arrays[key][0] == pytest.approx(np.clip(newton, -4, 4) / 2, rel=1e-10)


def test_loss_falls_and_costs_move_decisions() -> None:
    X, y = binary_data(n=800, seed=24, nan=0.05)
    rates = []
    for c_fn in (0.2, 1.0, 5.0):
        m = CostSensitiveLogitBoost(40, c_fn=c_fn).fit(X, y)
        assert m.train_loss_[-1] < m.train_loss_[0] < np.log(2) + 1
        assert np.mean(np.diff(m.train_loss_) < 0) > 0.9
        rates.append((m.predict(X) == 1).mean())
    assert rates[0] < rates[1] < rates[2]


def test_parameters_are_checked() -> None:
    X, y = binary_data(n=100, seed=25)
    for bad in (
        {"weights": "newton"},
        {"z_max": 0.0},
        {"weak_learner": "tree"},
        {"score_kind": "vote"},
        {"c_fn": -2.0},
    ):
        with pytest.raises(InvalidInput):
            CostSensitiveLogitBoost(3, **bad).fit(X, y)  # type: ignore[arg-type]
