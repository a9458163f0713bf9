"""Cost-sensitive RealBoost (Algorithm 2, Eqs. 46-49) with real-valued stumps."""

from __future__ import annotations

import numpy as np
import pytest

from models.exceptions import InvalidInput, TrainingError
from models.variants.csboost.cs_realboost import CostSensitiveRealBoost
from tests.models.csboost.conftest import binary_data, normalized


def _cells(x: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    nan = np.isnan(x)
    return (x <= t) & ~nan, (x > t) & ~nan, nan


def _reference(
    X: np.ndarray, y: np.ndarray, rounds: int, c_fp: float, c_fn: float, smoothing: float = 0.5
) -> np.ndarray:
    """Brute-force cost-sensitive RealBoost on the training rows: F after ``rounds``.

    Every threshold between consecutive distinct values of every feature, three cells
    (left, right, NaN; an empty NaN cell outputs 0), outputs Eq. 49, selection Eq. 47.
    """
    ys = np.where(y == 1, 1.0, -1.0)
    c1, c2 = normalized(c_fp, c_fn)
    cost = np.where(ys > 0, c1, c2)
    eps = smoothing / len(y)
    F = np.zeros(len(y))
    for _ in range(rounds):
        w = np.exp(-cost * ys * F)
        w /= w.sum()
        best: tuple[float, np.ndarray] | None = None
        for j in range(X.shape[1]):
            v = np.unique(X[~np.isnan(X[:, j]), j])
            for t in (v[1:] + v[:-1]) / 2:
                out, loss = np.zeros(len(y)), 0.0
                for k, cell in enumerate(_cells(X[:, j], t)):
                    wp, wn = w[cell & (ys > 0)].sum(), w[cell & (ys < 0)].sum()
                    if k == 2 and not cell.any():
                        continue  # no NaN in training: output 0
                    g = np.log((wp + eps) * c1 / ((wn + eps) * c2)) / (c1 + c2)  # Eq. 49
                    loss += wp * np.exp(-c1 * g) + wn * np.exp(c2 * g)  # Eq. 47
                    out[cell] = g
                if best is None or loss < best[0]:
                    best = (loss, out)
        assert best is not None
        F = F + best[1]
    return F


@pytest.mark.parametrize(("c_fp", "c_fn"), [(1.0, 1.0), (1.0, 4.0), (3.0, 1.0)])
@pytest.mark.parametrize("nan", [0.0, 0.1])
def test_matches_a_brute_force_reference(c_fp: float, c_fn: float, nan: float) -> None:
    X, y = binary_data(n=150, f=3, seed=11, nan=nan)
    model = CostSensitiveRealBoost(6, c_fp=c_fp, c_fn=c_fn).fit(X, y)
    assert model.n_estimators_ == 6
    np.testing.assert_allclose(
        model.decision_function(X), _reference(X, y, 6, c_fp, c_fn), atol=1e-10
    )
    np.testing.assert_array_equal(model.estimator_alphas_, np.ones(6))


def test_equal_costs_are_realboost_eq27() -> None:
    """C1 = C2: the cell output is 1/2 log(W+ / W-) (Eq. 27), for any common cost."""
    X, y = binary_data(n=400, seed=12)
    a = CostSensitiveRealBoost(1, c_fp=2.0, c_fn=2.0).fit(X, y)
    j, t = int(a.ensemble_.arrays["feature"][0]), float(a.ensemble_.arrays["threshold"][0])
    left = X[:, j] <= t
    eps = 0.5 / len(y)
    w = np.full(len(y), 1.0 / len(y))
    g = 0.5 * np.log((w[left & (y == 1)].sum() + eps) / (w[left & (y == 0)].sum() + eps))
    assert a.ensemble_.arrays["value_left"][0] == pytest.approx(g, rel=1e-12)
    b = CostSensitiveRealBoost(10, c_fp=1.0, c_fn=1.0).fit(X, y)
    c = CostSensitiveRealBoost(10, c_fp=7.0, c_fn=7.0).fit(X, y)
    np.testing.assert_array_equal(b.decision_function(X), c.decision_function(X))


def test_loss_decreases_and_costs_move_decisions() -> None:
    X, y = binary_data(n=800, seed=13)
    rates = []
    for c_fn in (0.2, 1.0, 5.0):
        m = CostSensitiveRealBoost(40, c_fn=c_fn).fit(X, y)
        assert np.all(np.diff(m.train_loss_) < 0)
        rates.append((m.predict(X) == 1).mean())
    assert rates[0] < rates[1] < rates[2]


def test_missing_values() -> None:
    X, y = binary_data(n=600, seed=14, nan=0.1)
    m = CostSensitiveRealBoost(20, c_fn=2.0).fit(X, y)
    arr = m.ensemble_.arrays
    assert np.any(arr["value_missing"] != arr["value_left"])  # NaN is its own cell
    clean, _ = binary_data(n=300, seed=15)
    m2 = CostSensitiveRealBoost(5).fit(clean, (clean[:, 0] > 0).astype(int))
    np.testing.assert_array_equal(m2.ensemble_.arrays["value_missing"], 0.0)  # unseen NaN
    assert np.all(np.isfinite(m2.decision_function(np.full((2, 5), np.nan))))


def test_parameters_are_checked() -> None:
    X, y = binary_data(n=100, seed=16)
    for bad in (
        {"smoothing": 0.0},
        {"weak_learner": "tree"},
        {"score_kind": "vote"},
        {"init_weights": "x"},
        {"c_fp": 0},
    ):
        with pytest.raises(InvalidInput):
            CostSensitiveRealBoost(3, **bad).fit(X, y)  # type: ignore[arg-type]
    with pytest.raises(TrainingError):
        CostSensitiveRealBoost(3).fit(X, np.zeros(len(y)))
