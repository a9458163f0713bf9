"""Rows of a partitioned data set: reading, hashing, mergeable summaries and bin edges.

What runs on a Dask worker for one partition (a Parquet file or a pandas DataFrame) and
what the summaries of several partitions merge into. Nothing here talks to Dask.

Row keys
--------
:func:`row_keys` hashes each row's feature values (float64 bits, every NaN the same and
``-0.0`` as ``0.0``) with the SplitMix64 finaliser, column after column. A row's key
depends on its values only, never on the partition it sits in or the order of the
partitions, so any reader finds the same key for the same row. Two uses:

* the fold of a row (:func:`fold_of_rows`), stratified: within a partition, the rows of
  each class in the order of ``mix(key ^ class)`` take the folds in turn, starting where
  the previous partitions' rows of that class left off (``offsets``: their counts). So
  every fold holds ``n_c / k`` rows of each class ``c``, rounded down or up, as
  scikit-learn's ``StratifiedKFold`` gives, whatever the partitioning; which rows share
  a fold is the hash's choice (a row's fold depends on its values and on the rows of its
  class before it in the partition order, never on the order of rows within a partition
  or on where the summaries were merged);
* the priority of a row in the bin-edge sample, ``mix(key ^ SALT)`` (:func:`summarize`).

Bin edges from merged summaries
-------------------------------
A partition's :class:`Summary` holds its rows count, its labels and their counts, every
feature's distinct values while there are at most 255 of them, and its ``sample_rows``
rows of lowest priority (a *bottom-k sample*). Summaries merge exactly: the union of the
distinct values, the ``sample_rows`` lowest priorities of the union. So whatever the
partitioning and the order of the merges, the merged summary is the one :func:`summarize`
finds on the whole data set at once, and the edges (:func:`edges_of`) are:

* for a feature with at most 255 distinct values in the whole data set: the midpoints
  between them, exactly the cut points :func:`models.features.binning.bin_features` finds
  on the whole matrix in memory;
* otherwise the quantile cut points of the sample, a uniform sample without replacement
  of ``sample_rows`` rows (the priorities are a hash, independent of the values' order).
  The rank error of its empirical distribution is bounded by the
  Dvoretzky-Kiefer-Wolfowitz inequality: ``P(sup |F_k - F| > e) <= 2 exp(-2 k e^2)``, so
  with the default 200,000 rows every cut point sits within 0.5 % of the rows of its
  quantile with probability above 0.9999 (the bound of the single-machine pre-binned
  reader, which draws its 200,000 rows by reservoir sampling instead). With at most
  ``sample_rows`` rows in all, the sample is every row and the edges are exactly
  :func:`~models.features.binning.bin_features`' edges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.exceptions import InvalidInput
from models.features.binning import BinEdges

__all__ = [
    "DEFAULT_SAMPLE_ROWS",
    "Summary",
    "edges_of",
    "fold_of_rows",
    "merge",
    "read_part",
    "row_keys",
    "summarize",
]

DEFAULT_SAMPLE_ROWS = 200_000
MAX_DISTINCT = 255  # value bins of a pre-binned matrix (code 255 is the missing bin)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_SALT = np.uint64(0x5DEECE66D2545F49)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a uint64 array (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def row_keys(X: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's values, shape (n,) uint64 (see the module docstring)."""
    X = np.asarray(X, dtype=np.float64)
    h = np.full(X.shape[0], _GOLDEN, dtype=np.uint64)
    for j in range(X.shape[1]):
        col = X[:, j] + 0.0  # a copy; -0.0 + 0.0 is +0.0
        col[np.isnan(col)] = np.nan  # one NaN pattern
        h = _mix((h + _GOLDEN) ^ col.view(np.uint64))
    return h


def fold_of_rows(
    keys: np.ndarray, y_index: np.ndarray, n_folds: int, offsets: tuple[int, int] = (0, 0)
) -> np.ndarray:
    """Stratified fold of each row of a partition, int8 in ``[0, n_folds)`` (module docstring).

    ``keys``: :func:`row_keys`; ``y_index``: class index 0 or 1; ``offsets``: rows of
    class 0 and of class 1 in the partitions before this one (0, 0 for the first or only
    one). The rows of class ``c`` sorted by ``mix(key ^ class)`` (stable: equal keys keep
    their order) get folds ``(offsets[c] + 0, 1, 2, ...) mod n_folds``.
    """
    if not 2 <= int(n_folds) <= 127:
        raise InvalidInput(f"n_folds must be an integer in [2, 127], got {n_folds!r}")
    y = np.asarray(y_index)
    z = _mix(keys ^ (y.astype(np.uint64) + np.uint64(1)) * _GOLDEN)
    fold = np.empty(y.size, dtype=np.int8)
    for c in (0, 1):
        rows = np.flatnonzero(y == c)
        order = rows[np.argsort(z[rows], kind="stable")]
        fold[order] = (int(offsets[c]) + np.arange(order.size)) % int(n_folds)
    return fold


def hive_keys(base: str, files: Sequence[str]) -> list[dict[str, Any]]:
    """The Hive partition keys of each of ``files`` below directory ``base``
    (``day=3/part-0.parquet`` -> ``{"day": 3}``), typed as pyarrow's discovery types them
    (integers when every value of a key is one, else strings): the columns the
    single-machine reader adds for the same folders. ``{}`` for a file in no such folder.
    """
    import pyarrow.dataset as pads  # lazily: only readers of Parquet directories need it

    found = pads.dataset(
        list(files), format="parquet", partitioning="hive", partition_base_dir=base
    )
    keys = {f.path: pads.get_partition_keys(f.partition_expression) for f in found.get_fragments()}
    return [dict(keys.get(f, {})) for f in files]


def read_part(source: Any, features: list[str], label: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X float64 (n, d), labels (n,))`` of one partition: a Parquet file, a pair
    ``(file, hive keys)`` (see :func:`hive_keys`: a key names a column of constant value
    for the file's rows) or a DataFrame.

    Nulls in a feature become NaN (missing); a missing column, a column that is not
    numeric or a null label raises InvalidInput naming it.
    """
    columns = [*features, label]
    if isinstance(source, tuple):
        source, keys = source
    else:
        keys = {}
    if isinstance(source, str):
        import pyarrow.parquet as pq  # lazily: only workers reading Parquet need it

        names = set(pq.read_schema(source).names)
        in_file = [c for c in columns if c in names]
        absent = [c for c in columns if c not in names and c not in keys]
        if absent:
            known = sorted(names | set(keys))
            raise InvalidInput(f"{source}: no column {absent[0]!r} (columns: {known})")
        table = pq.read_table(source, columns=in_file)
        cols = {c: table.column(c).to_numpy(zero_copy_only=False) for c in in_file}
        for c in columns:
            if c not in cols:
                cols[c] = np.full(table.num_rows, keys[c])
    else:  # a pandas DataFrame (a partition of a Dask DataFrame)
        absent = [c for c in columns if c not in source.columns]
        if absent:
            raise InvalidInput(f"partition has no column {absent[0]!r}")
        cols = {c: source[c].to_numpy() for c in columns}
    n = len(cols[label])
    X = np.empty((n, len(features)), dtype=np.float64)
    for j, name in enumerate(features):
        try:
            X[:, j] = np.asarray(cols[name], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"column {name!r} is not numeric: {exc}") from None
    y = np.asarray(cols[label])
    if y.dtype == object and any(v is None for v in y):
        raise InvalidInput(f"label column {label!r} holds a null")
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise InvalidInput(f"label column {label!r} holds a null")
    return X, y


@dataclass
class Summary:
    """What a partition (or a merge of partitions) tells about its rows; see the module docstring.

    Attributes
    ----------
    n_rows : int
    priority : ndarray of uint64, shape (m,)
        The sampled rows' priorities, ascending (``m <= sample_rows``).
    sample : ndarray of float64, shape (m, d)
        The sampled rows, in priority order.
    distinct : list of (ndarray or None)
        Per feature, its sorted distinct non-missing values, or None past 255 of them.
    labels : dict
        Label -> rows.
    sample_rows : int
    """

    n_rows: int
    priority: np.ndarray
    sample: np.ndarray
    distinct: list[np.ndarray | None]
    labels: dict[Any, int] = field(default_factory=dict)
    sample_rows: int = DEFAULT_SAMPLE_ROWS


def _bottom(priority: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(priority, kind="stable")[:k]
    return priority[order], rows[order]


def summarize(X: np.ndarray, y: np.ndarray, sample_rows: int = DEFAULT_SAMPLE_ROWS) -> Summary:
    """The :class:`Summary` of rows ``X`` (n, d) with labels ``y``."""
    X = np.asarray(X, dtype=np.float64)
    priority, sample = _bottom(_mix(row_keys(X) ^ _SALT), X, int(sample_rows))
    distinct: list[np.ndarray | None] = []
    for j in range(X.shape[1]):
        col = X[:, j]
        values = np.unique(col[~np.isnan(col)])
        distinct.append(values if values.size <= MAX_DISTINCT else None)
    labels, counts = np.unique(np.asarray(y), return_counts=True)
    return Summary(
        int(X.shape[0]),
        priority,
        sample,
        distinct,
        {
            lab.item() if isinstance(lab, np.generic) else lab: int(c)
            for lab, c in zip(labels, counts, strict=True)
        },
        int(sample_rows),
    )


def merge(*parts: Summary) -> Summary:
    """One summary of the rows of ``parts`` (the same as summarizing them together)."""
    first = parts[0]
    # the lowest priorities of the union, gathered from each part (no copy of all rows)
    order = np.argsort(np.concatenate([p.priority for p in parts]), kind="stable")
    order = order[: first.sample_rows]
    starts = np.cumsum([0] + [len(p.priority) for p in parts])
    owner = np.searchsorted(starts, order, side="right") - 1
    priority = np.empty(order.size, dtype=np.uint64)
    sample = np.empty((order.size, first.sample.shape[1]))
    for i, p in enumerate(parts):
        mine = np.flatnonzero(owner == i)
        rows = order[mine] - starts[i]
        priority[mine] = p.priority[rows]
        sample[mine] = p.sample[rows]
    distinct: list[np.ndarray | None] = []
    for j in range(len(first.distinct)):
        column = [v for p in parts if (v := p.distinct[j]) is not None]
        if len(column) < len(parts):
            distinct.append(None)
            continue
        values: np.ndarray = np.unique(np.concatenate(column))
        distinct.append(values if values.size <= MAX_DISTINCT else None)
    labels: dict[Any, int] = {}
    for p in parts:
        for lab, c in p.labels.items():
            labels[lab] = labels.get(lab, 0) + c
    return Summary(
        sum(p.n_rows for p in parts), priority, sample, distinct, labels, first.sample_rows
    )


def edges_of(summary: Summary) -> BinEdges:
    """The bin edges of a merged summary (exact or sampled per feature; module docstring)."""
    return BinEdges.from_sample(summary.sample, exact=summary.distinct)
