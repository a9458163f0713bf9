"""Pre-binned training: sample, edges, codes, fitting in code space, mapping back."""

from __future__ import annotations

import numpy as np
import pytest

from models.auto import AutoCalibratedBoosting
from models.boosting.adaboost import AdaBoost
from models.boosting.prebinned import fit_prebinned, raw_space, raw_space_model
from models.exceptions import InvalidInput
from models.features.binning import (
    MISSING_CODE,
    BinEdges,
    BinnedRows,
    ReservoirSample,
    bin_features,
    prebinned,
)
from models.inference.ensemble import Ensemble


def _data(n: int = 3000, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 3] = rng.integers(0, 4, size=n)  # few distinct values: exact cut points
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n) > 0).astype(int)
    X[rng.random((n, d)) < 0.05] = np.nan
    return X, y


def _codes(X: np.ndarray, edges: BinEdges, block: int = 700) -> BinnedRows:
    codes = BinnedRows.empty(*X.shape)
    for i in range(0, len(X), block):
        codes[i : i + block] = edges.encode(X[i : i + block])
    return codes


def test_reservoir_sample_is_uniform_and_reproducible() -> None:
    stream = np.arange(100_000, dtype=np.float64)[:, None]
    means = []
    for seed in range(5):
        s = ReservoirSample(1000, 1, random_state=seed)
        for i in range(0, len(stream), 3333):
            s.add(stream[i : i + 3333])
        assert s.rows.shape == (1000, 1) and s.seen == 100_000
        assert len(np.unique(s.rows)) == 1000  # rows, not repeats
        means.append(s.rows.mean())
    assert abs(np.mean(means) - 50_000) < 2_000  # not the first 1000 rows (mean 500)
    again = ReservoirSample(1000, 1, random_state=0)
    for i in range(0, len(stream), 3333):
        again.add(stream[i : i + 3333])
    first = ReservoirSample(1000, 1, random_state=0)
    for i in range(0, len(stream), 3333):
        first.add(stream[i : i + 3333])
    np.testing.assert_array_equal(again.rows, first.rows)
    small = ReservoirSample(10, 1)
    small.add(stream[:4])
    np.testing.assert_array_equal(small.rows, stream[:4])


def test_edges_and_codes_match_bin_features_on_the_whole_matrix() -> None:
    X, _ = _data()
    b = bin_features(X)
    edges = BinEdges.from_sample(X)
    np.testing.assert_array_equal(edges.thresholds, b.thresholds)
    np.testing.assert_array_equal(edges.n_thresholds, b.n_thresholds)
    codes = _codes(X, edges)
    np.testing.assert_array_equal(np.asarray(codes).T, b.codes)
    assert (np.asarray(codes)[np.isnan(X)] == MISSING_CODE).all()
    with pytest.raises(InvalidInput, match="infinite"):
        edges.encode(np.full((1, X.shape[1]), np.inf))


def test_row_subsets_stay_feature_major() -> None:
    X, _ = _data()
    codes = _codes(X, BinEdges.from_sample(X))
    rows = np.array([5, 1, 2999, 7])
    sub = codes[rows]
    assert isinstance(sub, BinnedRows) and sub.flags["F_CONTIGUOUS"]
    np.testing.assert_array_equal(np.asarray(sub), np.asarray(codes)[rows])
    mask = np.zeros(len(X), dtype=bool)
    mask[[3, 4]] = True
    np.testing.assert_array_equal(np.asarray(codes[mask]), np.asarray(codes)[[3, 4]])


@pytest.mark.parametrize("weak_learner", ["stump", "tree"])
def test_code_space_boosting_is_float_boosting_mapped_back(weak_learner: str) -> None:
    X, y = _data()
    edges = BinEdges.from_sample(X)  # the cut points the float fit finds
    codes = _codes(X, edges)
    on_floats = AdaBoost(n_estimators=25, weak_learner=weak_learner).fit(X, y)
    on_codes = fit_prebinned(AdaBoost(n_estimators=25, weak_learner=weak_learner), codes, y, edges)
    mapped = raw_space(on_codes.ensemble_, edges)
    np.testing.assert_array_equal(
        mapped.decision_function(X), on_floats.ensemble_.decision_function(X)
    )
    # and the code-space model answers on codes as the mapped one on values
    with prebinned(edges):
        in_code_space = on_codes.decision_function(np.asarray(codes))
    np.testing.assert_array_equal(in_code_space, mapped.decision_function(X))
    # values decoded from the codes land in the same bins: the same answers
    np.testing.assert_array_equal(
        mapped.decision_function(edges.decode(np.asarray(codes))), mapped.decision_function(X)
    )


def test_auto_on_sampled_edges_serves_what_it_measured() -> None:
    X, y = _data(4000)
    sample = ReservoirSample(1500, X.shape[1], random_state=1)
    for i in range(0, len(X), 512):
        sample.add(X[i : i + 512])
    edges = BinEdges.from_sample(sample.rows)
    codes = _codes(X, edges)
    est = fit_prebinned(AutoCalibratedBoosting(random_state=0, n_jobs=1), codes, y, edges)
    model = raw_space_model(est.to_inference(None), edges)
    with prebinned(edges):
        measured = est.predict_proba(np.asarray(codes))
    np.testing.assert_array_equal(model.predict_proba(X), measured)
    assert est.oof_ is not None and est.oof_.proba.shape == (len(X), 2)
    auc_like = np.mean(model.predict_proba(X)[y == 1, 1]) - np.mean(
        model.predict_proba(X)[y == 0, 1]
    )
    assert auc_like > 0.3


def test_auto_binned_equals_auto_on_the_binned_values() -> None:
    """The whole search and its final cross-fitting (n > max_search_rows) in code space
    give the model that the float path gives on values standing for the same bins,
    missing values included (their out-of-fold scores once read code 255 as a number)."""
    X, y = _data(4000)
    edges = BinEdges.from_sample(X)
    codes = _codes(X, edges)
    params = {"random_state": 0, "n_jobs": 1, "max_search_rows": 1000}
    binned = fit_prebinned(AutoCalibratedBoosting(**params), codes, y, edges)
    values = edges.decode(np.asarray(codes))
    floats = AutoCalibratedBoosting(**params).fit(values, y)
    served = raw_space_model(binned.to_inference(None), edges)
    # (between two cuts the float model splits at midpoints: compare on the values)
    np.testing.assert_array_equal(served.predict_proba(values), floats.predict_proba(values))
    keys = ("weak_learner", "max_depth", "n_estimators")  # (search folds: see docs/data.md)
    assert [binned.capacity_[k] for k in keys] == [floats.capacity_[k] for k in keys]


def test_uint8_outside_prebinned_is_still_numbers() -> None:
    X, y = _data()
    Xi = np.nan_to_num(X[:, :3] * 10 + 100).clip(0, 255).astype(np.uint8)
    a = AdaBoost(n_estimators=10).fit(Xi, y)
    b = AdaBoost(n_estimators=10).fit(Xi.astype(np.float64), y)
    np.testing.assert_array_equal(a.decision_function(Xi), b.decision_function(Xi))


def test_unsupported_models_are_refused() -> None:
    X, y = _data()
    edges = BinEdges.from_sample(X)
    stumps = AdaBoost(n_estimators=3).fit(X, y).ensemble_
    arrays = {
        "feature": stumps.arrays["feature"],
        "slope": np.ones(stumps.n_learners),
        "intercept": np.zeros(stumps.n_learners),
        "value_missing": np.zeros(stumps.n_learners),
    }
    linear = Ensemble("linear", stumps.alphas, arrays, stumps.n_features)
    with pytest.raises(InvalidInput, match="linear"):
        raw_space(linear, edges)
    # cuts outside the codes map to the extreme floats (all left / all right)
    edge = Ensemble(
        "stumps",
        np.ones(2),
        {
            "feature": np.array([0, 1], dtype=np.int32),
            "threshold": np.array([-3.0, 300.0]),
            "value_left": np.array([1.0, 1.0]),
            "value_right": np.array([-1.0, -1.0]),
            "value_missing": np.array([0.0, 0.0]),
        },
        X.shape[1],
    )
    np.testing.assert_array_equal(
        raw_space(edge, edges).learner_outputs(np.nan_to_num(X)),
        np.tile([-1.0, 1.0], (len(X), 1)),
    )
    with pytest.raises(InvalidInput, match="uint8"):
        fit_prebinned(AdaBoost(), X, y, edges)
    with pytest.raises(InvalidInput, match="max_bins"):
        fit_prebinned(AdaBoost(max_bins=64), _codes(X, edges), y, edges)
