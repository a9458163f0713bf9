"""Multiclass weak learners: exactness of the cost criterion, consistency with serving."""

from __future__ import annotations

import numpy as np
import pytest

from models.exceptions import InvalidInput
from models.weak import StumpTrainer
from models.weak.multiclass import MulticlassStumpTrainer, MulticlassTreeTrainer
from models.weak.registry import multiclass_trainer


def _data(n: int = 80, d: int = 3, k: int = 3, seed: int = 0, nan: bool = False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, k, size=n)
    cost = rng.uniform(0, 1, size=(n, k))
    if nan:
        X[rng.random(size=X.shape) < 0.1] = np.nan
    return X, y, cost


def _brute_force(X: np.ndarray, cost: np.ndarray, thresholds: np.ndarray, n_thr: np.ndarray):
    best = np.inf
    for j in range(X.shape[1]):
        for t in thresholds[j, : n_thr[j]]:
            left = X[:, j] <= t
            best = min(best, cost[left].sum(0).min() + cost[~left].sum(0).min())
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stump_minimises_the_cost_criterion_exactly(seed: int) -> None:
    X, y, cost = _data(seed=seed)
    tr = MulticlassStumpTrainer(X, y, 3)
    stump, phi = tr.fit_costs(cost)
    got = cost[np.arange(len(y)), phi].sum()
    b = tr.binned
    assert got == pytest.approx(_brute_force(X, cost, b.thresholds, b.n_thresholds), rel=1e-12)
    # the leaves hold the cheapest class of their side (Lemma 1: argmin sum alpha_{i,Phi})
    left = X[:, stump.feature] <= stump.threshold
    assert stump.left == np.argmin(cost[left].sum(0))
    assert stump.right == np.argmin(cost[~left].sum(0))


@pytest.mark.parametrize("learner", ["stump", "tree"])
@pytest.mark.parametrize("mode", ["costs", "weighted"])
def test_training_outputs_equal_the_served_ensemble(learner: str, mode: str) -> None:
    X, y, cost = _data(n=200, d=4, k=4, seed=3, nan=True)
    tr = multiclass_trainer(learner, X, y, 4, max_depth=3, seed=0)
    learners, outputs = [], []
    rng = np.random.default_rng(1)
    for _ in range(5):
        w = rng.uniform(size=len(y))
        learner_, phi = tr.fit_costs(cost * w[:, None]) if mode == "costs" else tr.fit_weighted(w)
        learners.append(learner_)
        outputs.append(phi)
    vote = tr.assemble(learners, np.ones(5))
    np.testing.assert_array_equal(vote.learner_classes(X), np.column_stack(outputs))


def test_two_class_stump_equals_the_core_stump() -> None:
    X, y, _ = _data(n=150, d=4, k=2, seed=4, nan=True)
    w = np.random.default_rng(0).uniform(size=len(y))
    ypm = np.where(y == 1, 1.0, -1.0)
    for criterion in ("error", "gini"):
        core, h = StumpTrainer(X, ypm, 256, criterion).fit_round(w)
        ours, phi = MulticlassStumpTrainer(X, y, 2, 256, criterion).fit_weighted(w)
        assert (core.feature, core.threshold) == (ours.feature, ours.threshold)
        assert [(v + 1) / 2 for v in (core.left, core.right, core.missing)] == [
            ours.left, ours.right, ours.missing,
        ]  # fmt: skip
        np.testing.assert_array_equal((h > 0).astype(int), phi)


def test_tree_leaves_hold_the_exact_cheapest_class() -> None:
    X, y, cost = _data(n=300, d=4, k=3, seed=5)
    tr = MulticlassTreeTrainer(X, y, 3, max_depth=3)
    tree, phi = tr.fit_costs(cost)
    leaves = tr._leaves(tree)
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        assert phi[rows][0] == np.argmin(cost[rows].sum(0))
    # no worse than the best constant learner
    assert cost[np.arange(len(y)), phi].sum() <= cost.sum(0).min()


def test_tree_with_nothing_to_split_on_is_constant() -> None:
    X, y, _ = _data(n=30, k=3)
    cost = np.zeros((30, 3))
    cost[:, 1] = 1.0  # every row: class 1 costs 1, the others 0 -> only label 0/2 rows
    cost[:, 2] = 1.0
    tree, phi = MulticlassTreeTrainer(X, y, 3, max_depth=2).fit_costs(cost)
    assert tree.feature.tolist() == [-1]
    assert np.all(phi == 0)


def test_unknown_learners_and_criteria_are_refused() -> None:
    X, y, _ = _data()
    with pytest.raises(InvalidInput, match="binary only"):
        multiclass_trainer("logistic", X, y, 3)
    with pytest.raises(InvalidInput, match="stump_criterion"):
        MulticlassStumpTrainer(X, y, 3, criterion="entropy")
    with pytest.raises(InvalidInput, match="max_depth"):
        MulticlassTreeTrainer(X, y, 3, max_depth=0)
