"""Row keys, folds and mergeable summaries (no cluster): merging the summaries of any
partitioning gives the summary of all rows, so the edges do not depend on it."""

from __future__ import annotations

import numpy as np
import pytest

from models.distributed import edges_of, fold_of_rows, merge, row_keys, summarize
from models.exceptions import InvalidInput
from models.features.binning import bin_features


def _X(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 1] = rng.integers(0, 5, n)
    X[rng.random(n) < 0.2, 2] = np.nan
    return X


def test_a_row_key_depends_on_the_values_only() -> None:
    X = _X(1_000)
    keys = row_keys(X)
    perm = np.random.default_rng(1).permutation(len(X))
    np.testing.assert_array_equal(row_keys(X[perm]), keys[perm])
    assert len(np.unique(keys)) == len(X)
    # every NaN and both zeros hash alike; the column a value sits in matters
    other_nan = np.frombuffer(np.uint64(0x7FF8000000000001).tobytes(), dtype=np.float64)[0]
    a = np.array([[0.0, np.nan], [-0.0, other_nan]])
    assert row_keys(a)[0] == row_keys(a)[1]
    assert row_keys(np.array([[1.0, 2.0]]))[0] != row_keys(np.array([[2.0, 1.0]]))[0]


def _stratified(folds: np.ndarray, y: np.ndarray, k: int) -> None:
    """Every fold holds n_c / k rows of each class c, rounded down or up."""
    for c in (0, 1):
        counts = np.bincount(folds[y == c], minlength=k)
        n_c = int((y == c).sum())
        assert counts.min() >= n_c // k and counts.max() <= -(-n_c // k), (c, counts)


def test_folds_are_stratified_and_follow_the_rows() -> None:
    X = _X(50_000)
    y = (X[:, 0] > 0).astype(np.int64)
    folds = fold_of_rows(row_keys(X), y, 5)
    _stratified(folds, y, 5)
    perm = np.random.default_rng(2).permutation(len(X))
    np.testing.assert_array_equal(fold_of_rows(row_keys(X[perm]), y[perm], 5), folds[perm])
    with pytest.raises(InvalidInput, match="n_folds"):
        fold_of_rows(row_keys(X), y, 1)


def test_a_rare_class_is_stratified_across_partitions() -> None:
    """23 positives among 5,000 rows in 3 partitions of unequal size: each partition
    continues the turns where the rows before it left off (offsets), so each of 5 folds
    holds 4 or 5 positives (the plain hash of the row, mix(key ^ class) % k, put
    4, 5, 4, 6, 4 on this data: binomial counts, not stratified)."""
    X = _X(5_000)
    y = np.zeros(5_000, dtype=np.int64)
    y[np.random.default_rng(3).choice(5_000, 23, replace=False)] = 1
    keys = row_keys(X)
    folds, seen = [], [0, 0]
    for a, b in ((0, 700), (700, 3_100), (3_100, 5_000)):
        folds.append(fold_of_rows(keys[a:b], y[a:b], 5, (seen[0], seen[1])))
        seen = [seen[0] + int((y[a:b] == 0).sum()), seen[1] + int((y[a:b] == 1).sum())]
    _stratified(np.concatenate(folds), y, 5)


@pytest.mark.parametrize("sample_rows", [500, 100_000])
def test_merged_summaries_are_the_summary_of_all_rows(sample_rows: int) -> None:
    X = _X(20_000)
    y = np.where(X[:, 0] > 0.5, "fraud", "ok")
    whole = summarize(X, y, sample_rows)
    cuts = [0, 3_000, 3_001, 11_000, 20_000]  # uneven, one partition of one row
    parts = [summarize(X[a:b], y[a:b], sample_rows) for a, b in zip(cuts, cuts[1:], strict=False)]
    merged = merge(merge(parts[2], parts[0]), merge(parts[3], parts[1]))  # any order
    np.testing.assert_array_equal(merged.priority, whole.priority)
    np.testing.assert_array_equal(merged.sample, whole.sample)
    assert (
        merged.labels
        == whole.labels
        == {"fraud": int((y == "fraud").sum()), "ok": int((y == "ok").sum())}
    )
    assert merged.n_rows == 20_000
    assert [v is None for v in merged.distinct] == [True, False, True, True]
    np.testing.assert_array_equal(merged.distinct[1], np.arange(5.0))
    edges = edges_of(merged)
    binned = bin_features(X)
    # a feature of 5 values: exact cut points; with every row sampled, all are exact
    np.testing.assert_array_equal(edges.thresholds[1], binned.thresholds[1])
    if sample_rows >= len(X):
        np.testing.assert_array_equal(edges.thresholds, binned.thresholds)
    else:
        assert edges.n_thresholds[0] == min(254, sample_rows - 1)


def test_hive_keys_are_typed_as_the_reader_types_them(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pyarrow as pa
    import pyarrow.parquet as pq

    from models.distributed.rows import hive_keys, read_part

    files = []
    for day, region in ((1, "north"), (2, "south")):
        folder = tmp_path / f"day={day}" / f"region={region}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"x": [0.5, 1.5], "y": [0, 1]}), folder / "p.parquet")
        files.append(str(folder / "p.parquet"))
    keys = hive_keys(str(tmp_path), files)
    assert keys == [{"day": 1, "region": "north"}, {"day": 2, "region": "south"}]
    X, labels = read_part((files[1], keys[1]), ["x", "day"], "y")
    np.testing.assert_array_equal(X, [[0.5, 2.0], [1.5, 2.0]])
    np.testing.assert_array_equal(labels, [0, 1])
    X, labels = read_part((files[0], keys[0]), ["x"], "region")  # a key as the label
    assert labels.tolist() == ["north", "north"]
    with pytest.raises(InvalidInput, match="not numeric"):
        read_part((files[0], keys[0]), ["region"], "y")
    with pytest.raises(
        InvalidInput, match=r"no column 'month' \(columns: \['day', 'region', 'x', 'y'\]\)"
    ):
        read_part((files[0], keys[0]), ["month"], "y")
    assert hive_keys(str(tmp_path / "day=1"), files[:1]) == [{"region": "north"}]


def test_histogram_sums_do_not_depend_on_the_grouping() -> None:
    """The reduction's sum is the partition histograms' exact sum rounded once, whatever
    the tree: bit-identical for any grouping and order (where plain float64 sums are not)."""
    import math

    from models.distributed.partitions import add

    rng = np.random.default_rng(5)
    hists = [rng.random((3, 8, 4)) * 10.0 ** rng.integers(-12, 3, (3, 8, 4)) for _ in range(9)]
    exact = np.array([math.fsum(v) for v in np.stack(hists).reshape(9, -1).T]).reshape(3, 8, 4)
    groupings = [
        add(*hists),
        add(add(*hists[:4]), add(*hists[4:])),
        add(add(hists[8], hists[0]), add(*hists[5:8][::-1]), add(*hists[1:5])),
        add(*[add(h) for h in hists[::-1]]),
    ]
    for total in groupings:
        np.testing.assert_array_equal(total.hi, exact)
    plain = [sum(hists), sum(hists[::-1]), sum(hists[4:]) + sum(hists[:4])]
    assert any(not np.array_equal(p, plain[0]) for p in plain[1:])  # the order matters there
