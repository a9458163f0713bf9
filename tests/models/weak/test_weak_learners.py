"""Tests of the weak learners (stump search, sklearn tree export, univariate logistic)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from models.exceptions import InvalidInput
from models.weak import LogisticTrainer, StumpTrainer, TreeTrainer
from models.weak.base import stumps_ensemble


def _data(n: int = 200, f: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f))
    y = np.where(X[:, 0] + 0.7 * X[:, 1] + rng.normal(scale=0.8, size=n) > 0, 1.0, -1.0)
    return X, y


def _brute_force_error(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    best = np.inf
    for j in range(X.shape[1]):
        v = np.unique(X[:, j])
        for t in (v[:-1] + v[1:]) / 2:
            left = X[:, j] <= t
            err = 0.0
            for side in (left, ~left):
                pos, neg = w[side & (y > 0)].sum(), w[side & (y < 0)].sum()
                err += min(pos, neg)
            best = min(best, err)
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_error_stump_is_optimal(seed: int) -> None:
    X, y = _data(seed=seed)
    w = np.random.default_rng(seed).random(y.size)
    stump, h = StumpTrainer(X, y).fit_round(w)
    assert np.isclose(w[h != y].sum(), _brute_force_error(X, y, w))
    ens = stumps_ensemble([stump], np.ones(1), X.shape[1])
    np.testing.assert_array_equal(ens.learner_outputs(X)[:, 0], h)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gini_stump_equals_sklearn_stump(seed: int) -> None:
    X, y = _data(seed=seed)
    w = np.random.default_rng(seed).random(y.size)
    stump, h = StumpTrainer(X, y, criterion="gini").fit_round(w)
    tree = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y, sample_weight=w)
    assert stump.feature == tree.tree_.feature[0]
    assert np.isclose(stump.threshold, tree.tree_.threshold[0])
    np.testing.assert_array_equal(h, tree.predict(X))
    Xt, _ = _data(seed=seed + 10)
    ens = stumps_ensemble([stump], np.ones(1), X.shape[1])
    np.testing.assert_array_equal(ens.learner_outputs(Xt)[:, 0], tree.predict(Xt))


def test_stump_nan_follows_learned_direction() -> None:
    X, y = _data(n=300)
    X[:40, 0] = np.nan
    y[:40] = 1.0  # every NaN row is positive
    w = np.full(y.size, 1 / y.size)
    stump, h = StumpTrainer(X, y).fit_round(w)
    assert stump.feature == 0 and stump.missing == 1.0
    assert np.all(h[:40] == 1.0)


def test_stump_without_nan_sends_nan_to_heavier_side() -> None:
    X, y = _data(n=300)
    w = np.full(y.size, 1 / y.size)
    stump, _ = StumpTrainer(X, y).fit_round(w)
    x = X[:, stump.feature]
    heavier_left = (x <= stump.threshold).sum() >= (x > stump.threshold).sum()
    assert stump.missing == (stump.left if heavier_left else stump.right)


def test_stump_all_constant_features_gives_constant_learner() -> None:
    X = np.ones((10, 2))
    y = np.array([1.0] * 7 + [-1.0] * 3)
    stump, h = StumpTrainer(X, y).fit_round(np.full(10, 0.1))
    assert stump.left == stump.right == stump.missing == 1.0
    assert np.all(h == 1.0)


def test_stump_criterion_validated() -> None:
    X, y = _data()
    with pytest.raises(InvalidInput, match="criterion"):
        StumpTrainer(X, y, criterion="entropy")


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_gini_tree_matches_sklearn(depth: int) -> None:
    # At most 255 distinct values per feature: the binning's thresholds are exact, so the
    # histogram tree with the Gini criterion grows scikit-learn's tree. (Deeper, nodes of
    # a few rows have exactly tied splits, which scikit-learn breaks by a random feature
    # order and the histogram tree by the lowest feature index.)
    rng = np.random.default_rng(depth)
    X = np.round(rng.normal(size=(400, 5)), 1)  # float32-friendly grid, < 255 values
    y = np.where(X[:, 0] * X[:, 1] + X[:, 2] > 0, 1.0, -1.0)
    X[rng.random(X.shape) < 0.1] = np.nan
    w = rng.random(y.size)
    trainer = TreeTrainer(X, y, max_depth=depth, criterion="gini")
    tree, h = trainer.fit_round(w)
    ref = DecisionTreeClassifier(max_depth=depth, random_state=0)
    ref.fit(X.astype(np.float32), y, sample_weight=w)
    np.testing.assert_array_equal(h, ref.predict(X))
    Xt = rng.normal(size=(500, 5))  # off-grid: no test value sits on a threshold
    Xt[rng.random(Xt.shape) < 0.1] = np.nan
    ens = trainer.assemble([tree], np.ones(1))
    np.testing.assert_array_equal(ens.learner_outputs(Xt)[:, 0], ref.predict(Xt))


def test_tree_nan_unseen_goes_to_heavier_child() -> None:
    X, y = _data(n=300)
    trainer = TreeTrainer(X, y, max_depth=1)
    tree, _ = trainer.fit_round(np.full(y.size, 1 / y.size))
    x = X[:, tree.feature[0]]
    heavier_left = (x <= tree.threshold[0]).sum() >= (x > tree.threshold[0]).sum()
    assert tree.missing_left[0] == int(heavier_left)


@pytest.mark.parametrize("bad", [0, 9, 2.0, True])
def test_tree_depth_validated(bad: object) -> None:
    X, y = _data()
    with pytest.raises(InvalidInput, match="max_depth"):
        TreeTrainer(X, y, max_depth=bad)  # type: ignore[arg-type]


def test_logistic_learner_matches_sklearn_logistic_regression() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 3))
    p = 1 / (1 + np.exp(-(0.5 + 2.0 * X[:, 1])))
    y = np.where(rng.random(2000) < p, 1.0, -1.0)
    w = rng.random(2000)
    stump, h = LogisticTrainer(X, y).fit_round(w)
    assert stump.feature == 1
    ref = LogisticRegression(C=1e6).fit(X[:, [1]], y, sample_weight=w)
    thr = -ref.intercept_[0] / ref.coef_[0, 0]
    assert abs(stump.threshold - thr) < 1e-3
    assert (stump.left, stump.right) == (-1.0, 1.0)  # b1 > 0: positive right of threshold
    np.testing.assert_array_equal(h, np.where(X[:, 1] <= stump.threshold, -1.0, 1.0))


def test_logistic_learner_negative_slope_and_nan() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1000, 2))
    y = np.where(X[:, 0] < 0.3, 1.0, -1.0)
    X[:100, 0] = np.nan
    y[:100] = -1.0
    stump, h = LogisticTrainer(X, y).fit_round(np.full(1000, 1e-3))
    assert stump.feature == 0
    assert (stump.left, stump.right, stump.missing) == (1.0, -1.0, -1.0)
    assert np.all(h[:100] == -1.0)
    assert abs(stump.threshold - 0.3) < 0.1


def test_logistic_constant_features() -> None:
    X = np.ones((20, 2))
    y = np.array([1.0] * 15 + [-1.0] * 5)
    stump, h = LogisticTrainer(X, y).fit_round(np.full(20, 0.05))
    assert stump.left == stump.right == 1.0 and np.all(h == 1.0)


def _reference_logistic_round(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[int, float]:
    """Per feature, row by row: Newton to convergence on the standardised present values,
    threshold -b0/b1 back on the raw scale, then the brute-force weighted error of the
    resulting stump (NaN rows on their better side); the feature with the lowest error."""
    lam, best = 1e-8, (np.inf, -1, 0.0)
    for j in range(X.shape[1]):
        x, ok = X[:, j], ~np.isnan(X[:, j])
        mu = x[ok].mean() if ok.any() else 0.0
        sd = x[ok].std() if ok.any() and x[ok].std() > 0 else 1.0
        z, t, wn = (x[ok] - mu) / sd, (y[ok] > 0).astype(float), w[ok] / w.sum()
        b = np.zeros(2)
        for _ in range(60):
            p = 1 / (1 + np.exp(-(b[0] + b[1] * z)))
            g = np.array([wn @ (p - t), wn @ ((p - t) * z) + lam * b[1]])
            s = wn * p * (1 - p)
            H = np.array([[s.sum() + lam, s @ z], [s @ z, s @ (z * z) + lam]])
            b = b - np.linalg.solve(H, g)
        if b[1] == 0:
            continue
        thr = mu - b[0] * sd / b[1]
        left, right = (-1.0, 1.0) if b[1] > 0 else (1.0, -1.0)
        h = np.where(x <= thr, left, right)
        err = w[ok & (h != y)].sum() + min(w[~ok & (y != left)].sum(), w[~ok & (y != right)].sum())
        if err < best[0] - 1e-12:
            best = (err, j, thr)
    return best[1], best[2]


@pytest.mark.parametrize("seed", range(6))
def test_logistic_learner_matches_a_row_by_row_reference(seed: int) -> None:
    """The trainer sums over (feature, distinct value) groups; the reference over rows.
    Discrete columns (few distinct values, many repeats), continuous ones, NaN cells, a
    constant column: same chosen feature, same threshold, same outputs."""
    rng = np.random.default_rng(seed)
    n = 600
    X = np.column_stack([
        rng.integers(0, 3, n), rng.integers(0, 12, n), rng.normal(size=n),
        rng.exponential(size=n).round(1), np.full(n, 2.0), rng.normal(size=n),
    ]).astype(float)  # fmt: skip
    X[rng.random((n, 6)) < 0.05] = np.nan
    score = 0.8 * np.nan_to_num(X[:, seed % 4]) + 0.3 * np.nan_to_num(X[:, 5])
    y = np.where(score + rng.normal(size=n) > np.nanmedian(score), 1.0, -1.0)
    w = rng.random(n) ** 2
    stump, h = LogisticTrainer(X, y).fit_round(w)
    feature, thr = _reference_logistic_round(X, y, w)
    assert stump.feature == feature
    assert stump.threshold == pytest.approx(thr, rel=1e-7, abs=1e-9)
    x = X[:, feature]
    expected = np.where(
        np.isnan(x), stump.missing, np.where(x <= stump.threshold, stump.left, stump.right)
    )
    np.testing.assert_array_equal(h, expected)
