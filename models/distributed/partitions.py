"""What a Dask worker holds and computes for one partition while boosting.

Every function here is a Dask task on one partition (or a reduction of their results).
They are pure: a task never changes its inputs (a retried or recomputed task gives the
same result), so the weights of round ``t + 1`` are a new array, not the old one changed.

A partition's boosters: ``B = k + 1`` weight vectors, one per fold booster (zero on the
fold's own rows, which it never sees) and one for the served booster (every row). One
histogram pass over the codes serves all of them: its ``2 B`` columns are each booster's
weights of negative and of positive rows, summed per (feature, bin) in row order by the
compiled kernel of the single-machine stump (:func:`models.kernels.histogram.histogram_all`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from models.distributed.rows import Summary, fold_of_rows, read_part, row_keys, summarize
from models.features.binning import MISSING_CODE, BinEdges, codes_as_float
from models.inference.ensemble import Ensemble

__all__ = [
    "HistSum",
    "Partition",
    "Update",
    "add",
    "encode_part",
    "fold_counts",
    "out_of_fold",
    "start_weights",
    "step",
    "summarize_part",
]

Update = tuple[int, int, float, float, float, float, float]
"""One booster's last round, sent to the workers: ``(feature, bin, left, right, missing,
alpha, total)`` (``bin == -1``: the constant ``left``) and the global total of the
weights the round was chosen on (the next weights are ``w / total * exp(-alpha y h)``)."""


@dataclass(frozen=True)
class Partition:
    """A partition's rows in code space, held by a worker for the whole training.

    Attributes
    ----------
    codes : ndarray of uint8, shape (d, n)
        Feature-major bin codes under the training's edges (255: missing).
    y : ndarray of float64, shape (n,)
        Labels in {-1, +1}.
    y_index : ndarray of uint8, shape (n,)
        Class index (0 or 1).
    fold : ndarray of int8, shape (n,)
        Fold of each row (:func:`models.distributed.rows.fold_of_rows`).
    """

    codes: np.ndarray
    y: np.ndarray
    y_index: np.ndarray
    fold: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.y.size)


def summarize_part(source: Any, features: list[str], label: str, sample_rows: int) -> Summary:
    """Task: the :class:`~models.distributed.rows.Summary` of one partition (first pass)."""
    X, y = read_part(source, features, label)
    return summarize(X, y, sample_rows)


def encode_part(
    source: Any,
    features: list[str],
    label: str,
    edges: BinEdges,
    classes: list[Any],
    n_folds: int,
    offsets: tuple[int, int] = (0, 0),
) -> Partition:
    """Task: read one partition again and keep it as codes, labels and folds (second pass);
    ``offsets``: rows of each class in the partitions before it (the stratified folds of
    :func:`~models.distributed.rows.fold_of_rows`)."""
    X, labels = read_part(source, features, label)
    y_index = (labels == classes[1]).astype(np.uint8)
    fold = fold_of_rows(row_keys(X), y_index, n_folds, offsets)
    codes = np.ascontiguousarray(edges.encode(X).T)
    del X
    return Partition(codes, np.where(y_index == 1, 1.0, -1.0), y_index, fold)


def summary_labels(summary: Summary) -> dict[Any, int]:
    """Task: a partition's rows per label (from its first-pass summary)."""
    return dict(summary.labels)


def fold_counts(part: Partition, n_folds: int) -> np.ndarray:
    """Task: rows per (fold, class), shape (n_folds, 2) int64."""
    out = np.zeros((n_folds, 2), dtype=np.int64)
    np.add.at(out, (part.fold.astype(np.intp), part.y_index.astype(np.intp)), 1)
    return out


def start_weights(part: Partition, inverse_rows: list[float]) -> np.ndarray:
    """Task: D^1 of the ``B`` boosters, shape (B, n): ``1 / n_b`` on booster ``b``'s rows.

    Fold booster ``b < k`` trains on the rows outside fold ``b``; booster ``k`` on all.
    """
    n_folds = len(inverse_rows) - 1
    W = np.empty((n_folds + 1, part.n_rows))
    for b in range(n_folds):
        W[b] = np.where(part.fold != b, inverse_rows[b], 0.0)
    W[n_folds] = inverse_rows[n_folds]
    return W


def outputs(part: Partition, feature: int, split_bin: int, left: float, right: float,
            missing: float) -> np.ndarray:  # fmt: skip
    """h(x) of a stump in bin terms on the partition's rows (``split_bin == -1``: constant)."""
    if split_bin < 0:
        return np.full(part.n_rows, left)
    c = part.codes[feature]
    h = np.where(c <= split_bin, left, right)
    h[c == MISSING_CODE] = missing
    return h


def step(
    part: Partition,
    previous: np.ndarray | tuple[np.ndarray, np.ndarray],
    updates: list[Update | None],
) -> tuple[np.ndarray, np.ndarray]:
    """Task: apply every booster's last round, then histogram the new weights.

    ``previous`` is the weights (B, n) of :func:`start_weights` or the previous step's
    result. Returns ``(W_next, hist)``, ``hist`` of shape (d, 256, 2 B): columns ``2 b``
    and ``2 b + 1`` are booster ``b``'s weights of the negative and the positive rows per
    (feature, bin). A booster without an update (round 0, or stopped) keeps its weights.
    The next step and the reduction (:func:`add`) take this pair as it is, so a round is
    one task per partition plus the reduction's.
    """
    from models.kernels.histogram import PARALLEL_OK, histogram_all  # numba: lazily

    W = (previous[0] if isinstance(previous, tuple) else previous).copy()  # inputs stay as they are
    for b, u in enumerate(updates):
        if u is None:
            continue
        feature, split_bin, left, right, missing, alpha, total = u
        w = W[b]
        w /= total  # D^t: the weights the round was chosen on, normalised
        out = np.multiply(-alpha, part.y)  # D^{t+1} = D^t exp(-alpha y h), Eq. 6
        out *= outputs(part, feature, split_bin, left, right, missing)
        np.exp(out, out=out)
        out *= w
        W[b] = out
    H = np.empty((part.n_rows, 2 * W.shape[0]))
    positive = part.y > 0
    for b in range(W.shape[0]):
        np.multiply(W[b], ~positive, out=H[:, 2 * b])
        np.multiply(W[b], positive, out=H[:, 2 * b + 1])
    return W, histogram_all(part.codes, H, PARALLEL_OK)


@dataclass(frozen=True)
class HistSum:
    """A sum of histograms in double-double: ``hi + lo`` holds it to about 106 bits, and
    ``hi`` is that rounded to float64 (``lo`` is below half an ulp of ``hi``).

    The reduction tree's shape depends on which worker holds which partition, and float64
    addition is not associative: summed plainly, two trainings on the same partitions
    could differ in the last bit of a histogram and, where two splits nearly tie, choose
    different stumps. Summed with error-free transformations (Knuth's TwoSum), ``hi`` is
    the sum of the partition histograms rounded once, whatever the grouping and order
    (short of an exact sum within about 2**-100 of a rounding boundary), so the same
    partitions give the same model on any cluster.
    """

    hi: np.ndarray
    lo: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.hi.nbytes + self.lo.nbytes)


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s = fl(a + b)`` and the exact rounding error ``e`` (``a + b == s + e``)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def add(*items: np.ndarray | tuple[np.ndarray, np.ndarray] | HistSum) -> HistSum:
    """Task: the sum of histograms (a node of the reduction tree): of :func:`step` results
    (their second item), plain histograms or other sums, as a :class:`HistSum`."""
    hi: np.ndarray | None = None
    lo: np.ndarray | None = None
    for item in items:
        if isinstance(item, HistSum):
            h, h_lo = item.hi, item.lo
        else:
            h, h_lo = (item[1] if isinstance(item, tuple) else item), None
        if hi is None or lo is None:
            hi, lo = h.copy(), (np.zeros_like(h) if h_lo is None else h_lo.copy())
            continue
        hi, err = _two_sum(hi, h)
        lo += err
        if h_lo is not None:
            lo += h_lo
    assert hi is not None and lo is not None
    hi, lo = _two_sum(hi, lo)  # renormalise: hi = fl(hi + lo)
    return HistSum(hi, lo)


def out_of_fold(part: Partition, fold_ensembles: list[Ensemble], score_kind: str) -> tuple[
    np.ndarray, np.ndarray, np.ndarray
]:  # fmt: skip
    """Task: each row's raw score by the booster of its fold (which never saw it).

    Returns ``(scores float64 (n,), y_index uint8 (n,), fold int8 (n,))``. The ensembles are
    in code space (cut points ``k + 0.5``), the codes read as floats with 255 as NaN, as the
    single-machine pre-binned fit scores its folds.
    """
    scores = np.empty(part.n_rows)
    for i, ensemble in enumerate(fold_ensembles):
        rows = np.flatnonzero(part.fold == i)
        if rows.size:
            X = codes_as_float(part.codes[:, rows].T)
            scores[rows] = ensemble.score(X, score_kind)
    return scores, part.y_index, part.fold
