"""Cost-sensitive RealBoost (Algorithm 2, Eqs. 46-49) with real-valued stumps."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from models.exceptions import InvalidInput, TrainingError
from models.variants.csboost.cs_realboost import CostSensitiveRealBoost
from tests.models.variants.csboost.conftest import (
    REFERENCE_CASES,
    binary_data,
    realboost_reference,
)


def _stumps(x: np.ndarray) -> Iterator[list[np.ndarray]]:
    """Every threshold between consecutive distinct values: three cells (left, right,
    NaN; an empty NaN cell outputs 0)."""
    nan = np.isnan(x)
    v = np.unique(x[~nan])
    for t in (v[1:] + v[:-1]) / 2:
        yield [(x <= t) & ~nan, (x > t) & ~nan, nan]


@REFERENCE_CASES
def test_matches_a_brute_force_reference(c_fp: float, c_fn: float, nan: float) -> None:
    X, y = binary_data(n=150, f=3, seed=11, nan=nan)
    model = CostSensitiveRealBoost(6, c_fp=c_fp, c_fn=c_fn).fit(X, y)
    assert model.n_estimators_ == 6
    np.testing.assert_allclose(
        model.decision_function(X), realboost_reference(X, y, 6, c_fp, c_fn, _stumps), atol=1e-10
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
