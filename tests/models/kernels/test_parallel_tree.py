"""The tree kernel's parallel paths give the bits of its serial path, and the count of
running fits that decides between them (:mod:`models.kernels.cores`)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from models.boosting.crossfit import run_parallel
from models.features.binning import bin_features
from models.kernels import cores
from models.kernels.histogram import MODE_COST, MODE_GINI, PARALLEL_OK, grow_tree


@pytest.mark.skipif(not PARALLEL_OK, reason="no thread-safe numba threading layer")
@pytest.mark.parametrize(("k", "mode"), [(2, MODE_COST), (6, MODE_COST), (6, MODE_GINI)])
def test_parallel_histograms_and_split_searches_grow_the_same_tree(k: int, mode: int) -> None:
    # 20,000 rows x 30 features: the root's histogram (x 6 columns) and the split
    # searches of every node of >= 4,096 rows take the parallel loops
    rng = np.random.default_rng(k)
    n, d = 20_000, 30
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.02] = np.nan
    y = (X[:, 0] > 0).astype(int) + (np.nan_to_num(X[:, 1]) * X[:, 2] > 0) * (k - 2)
    y = np.minimum(y + rng.integers(0, 2, n), k - 1)
    w = rng.random(n)
    H = np.where(np.arange(k)[None, :] != y[:, None], w[:, None], 0.0)
    if mode == MODE_GINI:
        H = np.where(np.arange(k)[None, :] == y[:, None], w[:, None], 0.0)
    b = bin_features(X, 256, None)
    grown = [
        grow_tree(b.codes, H, b.n_thresholds, b.max_bins, 6, mode, parallel)
        for parallel in (False, True)
    ]
    assert grown[0][0].size > 31  # a deep tree: many nodes took both paths
    for serial, parallel in zip(*grown, strict=True):
        np.testing.assert_array_equal(serial, parallel)


def test_fits_are_counted_while_they_run_and_the_caller_lends_its_count() -> None:
    assert cores.running_fits() == 0
    seen: list[int] = []
    both = threading.Barrier(2)

    def task() -> int:
        both.wait(timeout=10)  # both workers inside their task at once
        seen.append(cores.running_fits())
        both.wait(timeout=10)
        return cores.running_fits()

    with cores.fitting():  # the caller is a fit that starts two (as final_fit does)
        assert cores.running_fits() == 1
        run_parallel([task, task], n_jobs=2)
        assert cores.running_fits() == 1
    assert seen == [2, 2]  # the two workers, not the waiting caller
    assert cores.running_fits() == 0
    assert cores.spare_cores() == (cores.cpus() > 0)


def test_a_sequential_run_counts_its_thread_once() -> None:
    out = run_parallel([cores.running_fits, cores.running_fits], n_jobs=1)
    assert out == [1, 1]
    with cores.fitting():
        assert run_parallel([cores.running_fits], n_jobs=1) == [1]  # nested: still one
    assert cores.running_fits() == 0


@pytest.mark.parametrize("parallel", [False, True])
def test_the_error_of_labels_grows_the_tree_of_its_cost_matrix(parallel: bool) -> None:
    # grow_tree_labels sums class weights (one addition a row) where grow_tree sums the
    # K - 1 costs w_i [k != y_i]: the same criterion, so the same trees where no two
    # splits tie exactly (real-valued weights)
    from models.kernels.histogram import grow_tree_labels

    rng = np.random.default_rng(7)
    n, d, k = 6_000, 12, 5
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.03] = np.nan
    y = np.digitize(X[:, 0] + np.nan_to_num(X[:, 1]) * X[:, 2], [-1.0, -0.3, 0.3, 1.0])
    b = bin_features(X, 256, None)
    for depth in (1, 3, 6):
        w = rng.random(n)
        w[rng.random(n) < 0.1] = 0.0  # rows of weight 0 decide nothing
        H = np.where(np.arange(k)[None, :] != y[:, None], w[:, None], 0.0)
        cost = grow_tree(b.codes, H, b.n_thresholds, b.max_bins, depth, MODE_COST, parallel)
        labels = grow_tree_labels(
            b.codes, y.astype(np.int32), w, k, b.n_thresholds, b.max_bins, depth, parallel
        )
        assert cost[0].size > 2**depth  # it split
        for a, c in zip(cost, labels, strict=True):
            np.testing.assert_array_equal(a, c)
