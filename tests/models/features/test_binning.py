"""Tests of models.features.binning (layout, exact and quantile thresholds, NaN bin)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from models.exceptions import InvalidInput
from models.features.binning import bin_features


def _codes_match_thresholds(X: np.ndarray, b) -> None:
    for j in range(X.shape[1]):
        x = X[:, j]
        ok = ~np.isnan(x)
        thr = b.thresholds[j, : b.n_thresholds[j]]
        expected = np.searchsorted(thr, x[ok], side="left")
        np.testing.assert_array_equal(b.codes[j, ok], expected)
        for k in range(thr.size):  # code <= k  <=>  x <= thresholds[k]
            np.testing.assert_array_equal(b.codes[j, ok] <= k, x[ok] <= thr[k])
        assert np.all(b.codes[j, ~ok] == b.missing_bin)


def test_layout_dtype_and_shape() -> None:
    X = np.random.default_rng(0).normal(size=(300, 4))
    b = bin_features(X)
    assert b.codes.dtype == np.uint8 and b.codes.shape == (4, 300)
    assert b.codes.flags.c_contiguous
    assert b.max_bins == 256 and b.missing_bin == 255
    assert b.thresholds.shape == (4, 254)
    _codes_match_thresholds(X, b)


def test_exact_midpoints_for_few_distinct_values() -> None:
    x = np.array([3.0, 1.0, 2.0, 2.0, 10.0, 1.0])[:, None]
    b = bin_features(x)
    assert b.n_thresholds[0] == 3
    np.testing.assert_array_equal(b.thresholds[0, :3], [1.5, 2.5, 6.5])
    np.testing.assert_array_equal(b.codes[0], [2, 0, 1, 1, 3, 0])
    assert np.all(np.isinf(b.thresholds[0, 3:]))


def test_255_distinct_values_are_exact_and_match_sklearn_candidates() -> None:
    rng = np.random.default_rng(1)
    x = rng.permutation(np.arange(255, dtype=np.float64) * 0.5)
    b = bin_features(x[:, None])
    assert b.n_thresholds[0] == 254
    np.testing.assert_array_equal(b.thresholds[0], np.arange(254) * 0.5 + 0.25)
    # scikit-learn's stump threshold is one of our candidates
    y = (x > 40.2).astype(int)
    tree = DecisionTreeClassifier(max_depth=1).fit(x[:, None], y)
    assert tree.tree_.threshold[0] in set(b.thresholds[0])


def test_quantile_bins_for_many_values() -> None:
    x = np.random.default_rng(2).normal(size=(20_000, 1))
    b = bin_features(x)
    assert 200 <= b.n_thresholds[0] <= 254
    counts = np.bincount(b.codes[0], minlength=256)[: b.n_thresholds[0] + 1]
    assert counts.max() < 3 * 20_000 / 255  # roughly equal-frequency bins
    _codes_match_thresholds(x, b)


def test_small_max_bins() -> None:
    x = np.arange(100, dtype=float)[:, None]
    b = bin_features(x, max_bins=5)
    assert b.n_thresholds[0] <= 3 and b.codes.max() <= 3
    _codes_match_thresholds(x, b)


def test_nan_goes_to_reserved_bin() -> None:
    X = np.array([[1.0, np.nan], [np.nan, np.nan], [2.0, np.nan], [3.0, np.nan]])
    b = bin_features(X)
    np.testing.assert_array_equal(b.has_missing, [True, True])
    assert b.codes[0, 1] == 255 and np.all(b.codes[1] == 255)
    assert b.n_thresholds[1] == 0
    _codes_match_thresholds(X, b)


def test_constant_feature_has_no_threshold() -> None:
    b = bin_features(np.ones((10, 1)))
    assert b.n_thresholds[0] == 0 and np.all(b.codes == 0)


def test_zero_weight_rows_do_not_define_thresholds() -> None:
    x = np.array([1.0, 2.0, 3.0, 100.0])[:, None]
    b = bin_features(x, sample_weight=np.array([1.0, 1.0, 1.0, 0.0]))
    np.testing.assert_array_equal(b.thresholds[0, : b.n_thresholds[0]], [1.5, 2.5])
    assert b.codes[0, 3] == 2  # still coded, in the last value bin


@pytest.mark.parametrize("bad", [2, 257, 3.5, "256"])
def test_max_bins_validated(bad: object) -> None:
    with pytest.raises(InvalidInput, match="max_bins"):
        bin_features(np.zeros((3, 1)), max_bins=bad)  # type: ignore[arg-type]
