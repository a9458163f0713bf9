"""The weak learners of Masnadi-Shirazi & Vasconcelos as the paper states them.

CS-RealBoost with per-feature weighted histograms of the feature response (Eq. 49,
section 4.3: ``weak_learner="histogram"``) and CS-LogitBoost with the linear learner
a phi(x) + b (Eqs. 50-53: ``weak_learner="linear"``), each against a brute-force
reference written from the equations, and the ``"linear"`` ensemble layout that serves
the latter.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from models.exceptions import ArtifactError
from models.inference.ensemble import Ensemble
from models.inference.vote_ensemble import VoteEnsemble
from models.variants.csboost.cs_logitboost import CostSensitiveLogitBoost
from models.variants.csboost.cs_realboost import CostSensitiveRealBoost, histogram_tree
from models.weak.tree import trees_ensemble
from tests.models.variants.csboost.conftest import (
    REFERENCE_CASES,
    binary_data,
    normalized,
    realboost_reference,
)


def _histograms(x: np.ndarray) -> Iterator[list[np.ndarray]]:
    """One candidate per feature: a cell per distinct value (and one for NaN). With fewer
    distinct values than bins, the core's bins are exactly the distinct values."""
    keys = np.where(np.isnan(x), np.inf, x)  # NaN: one cell of its own
    yield [keys == v for v in np.unique(keys)]


@REFERENCE_CASES
def test_histogram_learner_matches_a_brute_force_reference(
    c_fp: float, c_fn: float, nan: float
) -> None:
    X, y = binary_data(n=150, f=3, seed=41, nan=nan)
    model = CostSensitiveRealBoost(5, c_fp=c_fp, c_fn=c_fn, weak_learner="histogram").fit(X, y)
    assert model.n_estimators_ == 5 and model.ensemble_.kind == "trees"
    np.testing.assert_allclose(
        model.decision_function(X),
        realboost_reference(X, y, 5, c_fp, c_fn, _histograms, rtol=1e-12),
        atol=1e-10,
    )


def test_histogram_learner_is_a_step_function_of_one_feature() -> None:
    X, y = binary_data(n=2000, seed=42, nan=0.05)
    m = CostSensitiveRealBoost(1, c_fn=2.0, weak_learner="histogram", max_bins=16).fit(X, y)
    feats = set(m.ensemble_.arrays["node_feature"].tolist()) - {-1}
    assert len(feats) == 1  # one feature per round (Eq. 47 picks phi_k*)
    j = feats.pop()
    leaves = m.ensemble_.arrays["node_feature"] == -1
    assert leaves.sum() == 16  # 15 value bins + the NaN bin
    grid = np.tile(np.nanmedian(X, axis=0), (200, 1))
    grid[:, j] = np.linspace(-4, 4, 200)
    f = m.decision_function(grid)
    assert 2 < len(np.unique(f)) <= 15  # piecewise constant in x_j, more than two cells
    other = grid.copy()
    other[:, (j + 1) % X.shape[1]] = 10.0  # the other features do not matter
    np.testing.assert_array_equal(m.decision_function(other), f)
    nan_row = grid[:1].copy()
    nan_row[0, j] = np.nan
    assert np.isfinite(m.decision_function(nan_row)).all()


def test_histogram_tree_layout() -> None:
    t = histogram_tree(1, np.array([0.0, 1.0, 2.0]), np.array([-1.0, 0.5, 2.0, 3.0]), 7.0)
    ens = trees_ensemble([t], np.ones(1), 2)
    x = np.array([[9.0, -5.0], [9.0, 0.0], [9.0, 0.5], [9.0, 1.0], [9.0, 1.5], [9.0, 3.0]])
    np.testing.assert_array_equal(ens.decision_function(x), [-1.0, -1.0, 0.5, 0.5, 2.0, 3.0])
    assert ens.decision_function(np.array([[0.0, np.nan]]))[0] == 7.0
    one = histogram_tree(0, np.array([]), np.array([0.25]), 0.0)  # a constant feature
    assert trees_ensemble([one], np.ones(1), 1).decision_function(np.zeros((1, 1)))[0] == 0.25


def _logit_reference(
    X: np.ndarray, y: np.ndarray, rounds: int, c_fp: float, c_fn: float
) -> np.ndarray:
    """CS-LogitBoost with a phi + b (Eqs. 50-56; Appendix D weights p_c(1-p_c)): for each
    feature the weighted least-squares fit of z on the raw feature over the rows where it
    is present, the NaN rows their own weighted mean of z; smallest residual wins."""
    c1, c2 = normalized(c_fp, c_fn)
    gamma, eta = (c1 + c2) / 2, 0.5 * np.log(c2 / c1)
    y01 = (y == 1).astype(float)
    F = np.zeros(len(y))
    for _ in range(rounds):
        pc = 1 / (1 + np.exp(-2 * (gamma * F + eta)))
        w = pc * (1 - pc)
        z = (y01 - pc) / w  # Eq. 54
        best: tuple[float, np.ndarray] | None = None
        for j in range(X.shape[1]):
            x = X[:, j]
            ok = ~np.isnan(x)
            A = np.column_stack([x[ok], np.ones(ok.sum())]) * np.sqrt(w[ok])[:, None]
            coef = np.linalg.lstsq(A, z[ok] * np.sqrt(w[ok]), rcond=None)[0]  # Eqs. 50-51
            out = np.empty(len(y))
            out[ok] = coef[0] * x[ok] + coef[1]
            out[~ok] = (w[~ok] * z[~ok]).sum() / w[~ok].sum() if (~ok).any() else 0.0
            resid = float((w * (z - out) ** 2).sum())  # Eq. 56
            if best is None or resid < best[0] * (1 - 1e-9):
                best = (resid, out)
        assert best is not None
        F = F + best[1] / (2 * gamma)  # Eq. 52
    return F


@REFERENCE_CASES
def test_linear_learner_matches_a_brute_force_reference(
    c_fp: float, c_fn: float, nan: float
) -> None:
    X, y = binary_data(n=300, f=4, seed=43, nan=nan)
    X[:, 2] = 1e4 * X[:, 2] + 3e6  # a badly scaled feature: the fit standardises it
    m = CostSensitiveLogitBoost(4, c_fp=c_fp, c_fn=c_fn, weak_learner="linear", z_max=1e6)
    m.fit(X, y)
    assert m.ensemble_.kind == "linear" and m.n_estimators_ == 4
    np.testing.assert_allclose(
        m.decision_function(X), _logit_reference(X, y, 4, c_fp, c_fn), rtol=1e-7, atol=1e-9
    )
    a = m.ensemble_.arrays  # h(x) = slope x_j + intercept on the raw feature
    x0 = np.nan_to_num(X[:5], nan=0.0)
    h = m.ensemble_.learner_outputs(x0)
    np.testing.assert_allclose(h, x0[:, a["feature"]] * a["slope"] + a["intercept"], rtol=1e-12)


def test_linear_step_is_capped_at_z_max_on_the_training_rows() -> None:
    X, y = binary_data(n=400, seed=44)
    X[:, 0] = np.where(y == 1, 3.0, -3.0) + 0.01 * X[:, 0]  # nearly separable: steep fits
    m = CostSensitiveLogitBoost(1, c_fn=2.0, weak_learner="linear", z_max=0.5).fit(X, y)
    f = m.decision_function(X)
    assert np.abs(f).max() == pytest.approx(0.5 / 2.0, rel=1e-9)  # z_max / (2 gamma)


@pytest.mark.parametrize(
    "make",
    [
        lambda c: CostSensitiveRealBoost(30, c_fn=c, weak_learner="histogram", max_bins=32),
        lambda c: CostSensitiveLogitBoost(30, c_fn=c, weak_learner="linear"),
    ],
)
def test_costs_move_the_decisions(make) -> None:  # type: ignore[no-untyped-def]
    X, y = binary_data(n=800, seed=45, nan=0.02)
    rates = [(make(c).fit(X, y).predict(X) == 1).mean() for c in (0.2, 1.0, 5.0)]
    assert rates[0] < rates[1] < rates[2]


def test_linear_ensemble_layout_is_validated() -> None:
    good = {
        "feature": np.array([0, 1], dtype=np.int32),
        "slope": np.array([2.0, -1.0]),
        "intercept": np.array([0.5, 0.0]),
        "value_missing": np.array([0.0, 3.0]),
    }
    ens = Ensemble("linear", np.ones(2), good, 2)
    X = np.array([[1.0, 1.0], [0.0, np.nan]])
    np.testing.assert_allclose(ens.decision_function(X), [2.5 - 1.0, 0.5 + 3.0])
    np.testing.assert_allclose(ens.vote_fraction(X), [0.5, 1.0])
    big = ens.decision_function(np.array([[1e300, -1e300]]))  # absurd inputs stay finite
    assert np.isfinite(big).all()
    back = Ensemble.from_arrays(ens.to_arrays(), "linear", 2)
    np.testing.assert_array_equal(back.decision_function(X), ens.decision_function(X))
    for bad in (
        {**good, "feature": np.array([0, 2], dtype=np.int32)},  # index out of range
        {**good, "slope": np.array([np.inf, 1.0])},  # not finite
        {**good, "slope": np.array([1.0])},  # wrong shape
        {k: v for k, v in good.items() if k != "intercept"},  # missing array
    ):
        with pytest.raises(ArtifactError):
            Ensemble("linear", np.ones(2), bad, 2)
    with pytest.raises(ArtifactError, match="stumps, trees or oblique"):
        VoteEnsemble(ens, 2)  # a multiclass vote has no linear learners
