"""The step-size solvers of cost-sensitive AdaBoost (Eq. 41) and AdaDB (its polynomial)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from models.boosting.loop import EPS_CLIP
from models.variants.csboost._alpha import (
    alpha_eq41,
    alpha_loss_many,
    alpha_polynomial,
    bracket,
    loss_eq40,
)

COSTS = [(1.0, 1.0), (5 / 3, 1 / 3), (1 / 3, 5 / 3), (40 / 21, 2 / 21), (2000 / 1001, 2 / 1001)]


def _cases(seed: int = 0, n: int = 60) -> list[tuple[float, float, float, float]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        tp = float(rng.uniform(0.02, 0.98))
        tn = 1.0 - tp
        scale = rng.choice([0.0, 1e-9, 1e-3, 0.1, 0.5, 1.0], size=2)
        out.append(
            (float(rng.uniform(0, tp) * scale[0]), float(rng.uniform(0, tn) * scale[1]), tp, tn)
        )
    return out


def _derivative(a: float, b: float, d: float, tp: float, tn: float, c1: float, c2: float) -> float:
    """Left minus right side of Eq. 41, written exactly as printed (with cosh)."""
    lhs = 2 * c1 * b * np.cosh(c1 * a) + 2 * c2 * d * np.cosh(c2 * a)
    return float(lhs - c1 * tp * np.exp(-c1 * a) - c2 * tn * np.exp(-c2 * a))


@pytest.mark.parametrize(("c1", "c2"), COSTS)
def test_three_solvers_agree_and_minimise_the_loss(c1: float, c2: float) -> None:
    for b, d, tp, tn in _cases():
        a = alpha_eq41(b, d, tp, tn, c1, c2)
        a_poly = alpha_polynomial(b, d, tp, tn, c1, c2)
        a_many, loss_many = alpha_loss_many(np.array([b]), np.array([d]), tp, tn, c1, c2)
        assert a >= 0
        assert a_poly == pytest.approx(a, abs=1e-8)  # Newton, tol 1e-6 on the step
        assert a_many[0] == pytest.approx(a, abs=1e-10)
        if b + d > 0 and a > 0:  # (b = d = 0 is clipped, see test_perfect_learner...)
            loss = float(loss_eq40(a, b, d, tp, tn, c1, c2))
            assert loss_many[0] == pytest.approx(loss, rel=1e-12)
            if max(c1, c2) * a < 30:  # the root of Eq. 41 as printed (cosh form)
                scale = (c1 * tp + c2 * tn) * np.exp(max(c1, c2) * a)
                assert abs(_derivative(a, b, d, tp, tn, c1, c2)) < 1e-9 * scale
            # ... is the line-search minimiser of the loss (40)
            res = minimize_scalar(
                lambda x, b=b, d=d, tp=tp, tn=tn: float(loss_eq40(x, b, d, tp, tn, c1, c2)),
                bounds=(0.0, 2 * a + 1),
                method="bounded",
                options={"xatol": 1e-12},
            )
            assert float(loss_eq40(a, b, d, tp, tn, c1, c2)) <= res.fun + 1e-12
            lo, hi, ok = bracket(np.array(b), np.array(d), tp, tn, c1, c2)
            assert bool(ok) and float(lo) - 1e-12 <= a <= float(hi) + 1e-12


def test_equal_costs_give_adaboost_alpha_eq24() -> None:
    for b, d, tp, tn in _cases(seed=1):
        err = b + d
        if not 0 < err < 0.5:
            continue
        expected = 0.5 * np.log((1 - err) / err)
        assert alpha_eq41(b, d, tp, tn, 1.0, 1.0) == pytest.approx(expected, rel=1e-13)
        # any common cost C divides the step by C (cost-scale invariance)
        assert alpha_eq41(b, d, tp, tn, 3.0, 3.0) == pytest.approx(expected / 3, rel=1e-13)


def test_perfect_learner_gets_adaboosts_clipped_step() -> None:
    expected = 0.5 * np.log((1 - EPS_CLIP) / EPS_CLIP)  # ~11.5, as models.boosting.loop
    assert alpha_eq41(0.0, 0.0, 0.4, 0.6, 1.0, 1.0) == pytest.approx(expected, rel=1e-12)
    assert alpha_polynomial(0.0, 0.0, 0.4, 0.6, 1.0, 1.0) == pytest.approx(expected, rel=1e-9)
    assert np.isfinite(alpha_eq41(0.0, 0.0, 0.4, 0.6, 1.98, 0.02))


@pytest.mark.parametrize(("c1", "c2"), COSTS)
def test_no_positive_step(c1: float, c2: float) -> None:
    # L'(0) = C1 (2b - T+) + C2 (2d - T-) >= 0: every positive step raises the loss
    b, d, tp, tn = 0.3, 0.3, 0.5, 0.5
    assert alpha_eq41(b, d, tp, tn, c1, c2) == 0.0
    assert alpha_polynomial(b, d, tp, tn, c1, c2) == 0.0
    a, loss = alpha_loss_many(np.array([b]), np.array([d]), tp, tn, c1, c2)
    assert a[0] == 0.0 and loss[0] == pytest.approx(tp + tn)


def test_polynomial_has_one_positive_root() -> None:
    # Descartes: coefficients ordered by exponent change sign once
    c1, c2, b, d, tp, tn = 5 / 3, 1 / 3, 0.05, 0.2, 0.5, 0.5
    beta = np.exp(np.linspace(-5, 5, 20001))
    poly = (
        c1 * b * beta ** (2 * c1 + c2)
        + c2 * d * beta ** (c1 + 2 * c2)
        - c1 * (tp - b) * beta**c2
        - c2 * (tn - d) * beta**c1
    )
    changes = np.flatnonzero(np.sign(poly[1:]) != np.sign(poly[:-1]))
    assert changes.size == 1
    root = np.log(beta[changes[0]])
    assert alpha_polynomial(b, d, tp, tn, c1, c2) == pytest.approx(root, abs=1e-3)
