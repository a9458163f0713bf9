"""The histogram tree weak learner (models/weak/tree.py on models/kernels/histogram.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedAdaMEC
from models.catalog.algorithms import algorithms, validate_params
from models.exceptions import InvalidInput
from models.inference.artifacts import dump_model, load_model
from models.inference.ensemble import Ensemble
from models.multiclass.samme import SAMME
from models.weak import StumpTrainer, TreeTrainer
from models.weak.multiclass import MulticlassTreeTrainer


def _data(
    n: int = 600, d: int = 6, seed: int = 0, nan: float = 0.1
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.5 * X[:, 2] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    X[rng.random(X.shape) < nan] = np.nan
    return X, y


@pytest.mark.parametrize("depth", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("criterion", ["error", "gini"])
def test_training_outputs_equal_the_assembled_ensemble(depth: int, criterion: str) -> None:
    X, y = _data(seed=depth)
    w = np.random.default_rng(depth).random(y.size)
    tr = TreeTrainer(X, y, max_depth=depth, criterion=criterion)
    trees, outs = zip(*(tr.fit_round(w * (1 + t * (y > 0))) for t in range(3)), strict=True)
    ens = tr.assemble(list(trees), np.ones(3))
    np.testing.assert_array_equal(ens.learner_outputs(X), np.stack(outs, axis=1))
    for tree, out in zip(trees, outs, strict=True):
        assert set(np.unique(out)) <= {-1.0, 1.0}
        leaves = tree.feature == -1
        assert leaves.sum() <= 2**depth
        assert np.all(tree.left[~leaves] > np.flatnonzero(~leaves))  # children after parents


def test_leaves_hold_the_weighted_majority_and_error_is_minimal_at_depth_one() -> None:
    X, y = _data(seed=3)
    w = np.random.default_rng(3).random(y.size)
    tr = TreeTrainer(X, y, max_depth=3)
    tree, h = tr.fit_round(w)
    ens = tr.assemble([tree], np.ones(1))
    marked = ens.to_arrays()
    marked["node_value"] = np.arange(tree.value.size, dtype=np.float64)
    del marked["alphas"]
    leaf = Ensemble("trees", np.ones(1), marked, X.shape[1]).learner_outputs(X)[:, 0]
    for node in np.unique(leaf).astype(int):
        rows = leaf == node
        pos, neg = w[rows & (y > 0)].sum(), w[rows & (y < 0)].sum()
        assert tree.value[node] == (1.0 if pos > neg else -1.0)


def _unique_stump_optimum(st: StumpTrainer, w: np.ndarray) -> bool:
    hist = st.histogram(w)
    s_left, s_right, _ = st._split_scores(hist)
    best = np.minimum(s_left, s_right)
    return int(np.sum(best <= best.min() + 1e-12)) == 1


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("criterion", ["error", "gini"])
def test_depth_one_tree_is_the_stump(seed: int, criterion: str) -> None:
    X, y = _data(n=400, seed=seed)
    w = np.random.default_rng(seed).random(y.size)
    st = StumpTrainer(X, y, criterion=criterion)
    stump, hs = st.fit_round(w)
    tree, ht = TreeTrainer(X, y, max_depth=1, criterion=criterion).fit_round(w)
    # Both minimise the same criterion over the same bins: equal weighted error always.
    assert w[hs != y].sum() == pytest.approx(w[ht != y].sum(), rel=1e-12, abs=1e-12)
    if criterion == "gini" or _unique_stump_optimum(st, w):
        if tree.feature[0] == -1:  # constant tree
            assert stump.left == stump.right == stump.missing == tree.value[0]
        else:
            assert (tree.feature[0], tree.threshold[0]) == (stump.feature, stump.threshold)
            assert (tree.value[tree.left[0]], tree.value[tree.right[0]]) == (
                stump.left, stump.right,
            )  # fmt: skip
            miss = tree.left[0] if tree.missing_left[0] else tree.right[0]
            assert tree.value[miss] == stump.missing
        np.testing.assert_array_equal(hs, ht)


def test_equal_errors_are_broken_by_gini() -> None:
    # Feature 0 splits 6 P / 2 N into (3 P, 1 N) | (3 P, 1 N), feature 1 into
    # (4 P) | (2 P, 2 N), feature 2 into (3 P, 2 N) | (3 P): all leave a weighted error
    # of 2 (the stump, ties to the first feature, takes feature 0); the purest split
    # wins the tie, and one level deeper feature 2 makes the tree exact.
    y = np.array([1, 1, 1, 1, 1, 1, -1, -1], dtype=float)
    X = np.array(
        [[0, 0, 1], [0, 0, 1], [0, 0, 1], [1, 0, 0], [1, 1, 0], [1, 1, 0], [0, 1, 1], [1, 1, 1]],
        dtype=float,
    )
    w = np.full(8, 1 / 8)
    stump, hs = StumpTrainer(X, y).fit_round(w)
    tree, ht = TreeTrainer(X, y, max_depth=1).fit_round(w)
    assert stump.feature == 0 and tree.feature[0] == 1
    assert w[hs != y].sum() == w[ht != y].sum() == 0.25
    _, h2 = TreeTrainer(X, y, max_depth=2).fit_round(w)
    np.testing.assert_array_equal(h2, y)


def test_nan_goes_to_the_learned_side_and_unseen_nan_to_the_heavier_child() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=1000)
    y = np.where(x > 0.5, 1.0, -1.0)
    nan_rows = rng.random(1000) < 0.2
    y[nan_rows] = 1.0  # missing means positive
    X = np.stack([np.where(nan_rows, np.nan, x), rng.normal(size=1000)], axis=1)
    w = np.full(1000, 1e-3)
    tree, h = TreeTrainer(X, y, max_depth=1).fit_round(w)
    assert tree.feature[0] == 0
    miss = tree.left[0] if tree.missing_left[0] else tree.right[0]
    assert tree.value[miss] == 1.0
    assert np.all(h[nan_rows] == 1.0)
    # feature 1 has no NaN in training: NaN at prediction goes to the heavier child
    X2 = np.stack([rng.normal(size=1000), x], axis=1)
    tree2, _ = TreeTrainer(X2, np.where(x > 1.0, 1.0, -1.0), max_depth=1).fit_round(w)
    assert tree2.feature[0] == 1
    heavier_left = (x <= tree2.threshold[0]).sum() >= (x > tree2.threshold[0]).sum()
    assert tree2.missing_left[0] == int(heavier_left)
    ens = TreeTrainer(X2, y, max_depth=1).assemble([tree2], np.ones(1))
    out = ens.learner_outputs(np.array([[0.0, np.nan]]))[0, 0]
    assert out == tree2.value[tree2.left[0] if heavier_left else tree2.right[0]]


@pytest.mark.parametrize("criterion", ["error", "gini"])
def test_rows_of_weight_zero_change_nothing(criterion: str) -> None:
    X, y = _data(n=500, seed=7)
    rng = np.random.default_rng(7)
    w = rng.random(y.size)
    extra, ye = _data(n=200, seed=8)
    Xa, ya = np.concatenate([X, extra]), np.concatenate([y, ye])
    wa = np.concatenate([w, np.zeros(200)])
    # zero rows interleaved (not only appended), the other rows kept in their order
    perm = np.argsort(np.concatenate([np.arange(500), rng.uniform(0, 500, 200)]), kind="stable")
    tree, h = TreeTrainer(X, y, 6, criterion=criterion, sample_weight=w).fit_round(w)
    tree_a, h_a = TreeTrainer(
        Xa[perm], ya[perm], 6, criterion=criterion, sample_weight=wa[perm]
    ).fit_round(wa[perm])
    for a, b in zip(tree, tree_a, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(h, h_a[np.argsort(perm)][:500])


def test_predictions_are_batch_invariant_to_the_last_bit() -> None:
    X, y = _data(n=3000, d=8, seed=2)
    model = AdaBoost(n_estimators=60, weak_learner="tree", max_depth=6).fit(X, y)
    Xt, _ = _data(n=100_000, d=8, seed=3)
    f = model.decision_function(Xt)
    s = model.score_samples(Xt)
    for i in (0, 1, 4095, 4096, 50_000, 99_999):
        assert model.decision_function(Xt[i : i + 1])[0] == f[i]
        assert model.score_samples(Xt[i : i + 1])[0] == s[i]
    np.testing.assert_array_equal(model.decision_function(Xt[:777]), f[:777])


def test_artifact_round_trip_of_deep_trees() -> None:
    X, y = _data(n=1500, seed=4)
    clf = CalibratedAdaMEC(
        AdaBoost(n_estimators=30, weak_learner="tree", max_depth=8), random_state=0
    ).fit(X, y)
    blob, sha = dump_model(clf.to_inference([f"f{i}" for i in range(X.shape[1])]))
    model = load_model(blob, expected_sha256=sha)
    np.testing.assert_array_equal(model.predict_proba(X), clf.predict_proba(X))


def test_threads_fit_the_same_trees() -> None:
    X, y = _data(n=30_000, d=40, seed=5)  # root histogram above the parallel threshold

    def fit(_: int) -> np.ndarray:
        model = AdaBoost(n_estimators=4, weak_learner="tree", max_depth=4).fit(X, y)
        return model.decision_function(X)

    with ThreadPoolExecutor(3) as pool:
        outs = list(pool.map(fit, range(3)))
    for out in outs[1:]:
        np.testing.assert_array_equal(out, outs[0])


@pytest.mark.parametrize("bad", [0, 9, 2.0, True])
def test_depth_and_criterion_validated(bad: object) -> None:
    X, y = _data(n=50)
    with pytest.raises(InvalidInput, match="max_depth"):
        TreeTrainer(X, y, max_depth=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="criterion"):
        TreeTrainer(X, y, criterion="entropy")


# ------------------------------------------------------------------ multiclass
def test_multiclass_tree_leaves_are_the_weighted_majority_class() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(900, 4))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int) * (X[:, 0] <= 0) * 2
    w = rng.random(y.size)
    tr = MulticlassTreeTrainer(X, y, 3, max_depth=3)
    tree, phi = tr.fit_weighted(w)
    leaves = tr._leaves(tree)
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        sums = np.bincount(y[rows], weights=w[rows], minlength=3)
        assert phi[rows][0] == np.argmax(sums) == tree.value[leaf]
    assert w[phi != y].sum() / w.sum() < 0.05
    single = tr.assemble([tree], np.ones(1))
    np.testing.assert_array_equal(single.ensemble.learner_outputs(X)[:, 0], phi)


def test_samme_with_trees_beats_samme_with_stumps_on_interactions() -> None:
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(3000, 4))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int) + (X[:, 2] > 0.5)
    Xt = rng.uniform(-1, 1, size=(3000, 4))
    yt = ((Xt[:, 0] > 0) ^ (Xt[:, 1] > 0)).astype(int) + (Xt[:, 2] > 0.5)
    stumps = SAMME(40).fit(X, y)
    trees = SAMME(40, weak_learner="tree", max_depth=5).fit(X, y)
    assert np.mean(trees.predict(Xt) == yt) > np.mean(stumps.predict(Xt) == yt) + 0.2


# --------------------------------------------------------------------- catalog
def test_every_algorithm_fits_the_weak_learners_its_catalog_entry_lists() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y2 = (X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=300) > 0).astype(int)
    y3 = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.5, 0.5])
    for name, spec in algorithms().items():
        y = y3 if spec.family == "multiclass" else y2
        for wl in ("stump", "tree", "logistic", "oblique"):
            common = {"n_estimators": 5, "weak_learner": wl, "max_depth": 3,
                      "score_kind": "vote", "random_state": 0}  # fmt: skip
            if wl in spec.weak_learners:
                est = spec.build(common, validate_params(spec, {})).fit(X, y)
                assert est.predict(X).shape == (300,), name
            else:
                with pytest.raises(InvalidInput, match="weak_learner"):
                    spec.build(common, validate_params(spec, {})).fit(X, y)
        assert "tree" in spec.weak_learners or name in ("cs_realboost", "cs_logitboost")
        assert spec.describe()["weak_learners"] == list(spec.weak_learners)


def test_kernel_modes_match_and_serving_does_not_import_numba() -> None:
    import subprocess
    import sys

    from models.kernels import histogram
    from models.weak import tree

    assert (tree.MODE_COST, tree.MODE_GINI) == (histogram.MODE_COST, histogram.MODE_GINI)
    code = (
        "import sys, models.inference.artifacts, models.boosting.calibrated, models.weak, models.weak.multiclass; "
        "print('numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # kernels load on the first fit or tree-vote prediction


def test_importing_the_kernels_starts_the_threading_layer() -> None:
    """A cached function that calls the parallel histogram carries the parallel region
    in its own machine code: loaded from the cache as a process's first numba call, it
    ran before any thread of the layer was started and the process died (SIGSEGV; seen
    with a cache a test run had written, then a fresh process training). Importing the
    kernel module starts the layer first."""
    import subprocess
    import sys

    code = (
        "import models.kernels.histogram as h; from numba.np.ufunc import parallel; "
        "print(h.PARALLEL_OK, parallel._is_initialized)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    ok, started = out.stdout.split()
    assert started == ok  # started whenever the kernel may run in parallel
