"""Per-feature binning of a training matrix, done once per fit.

The weighted decision stump (:mod:`models.weak.stump`) searches every boosting round
over weighted histograms of *binned* features instead of the raw values, which makes a
round cost one sparse matrix-vector product instead of a sort per feature.

Bin layout (per feature ``j``, ``max_bins = B``)
------------------------------------------------

* ``thresholds[j, :n_thresholds[j]]`` are strictly increasing finite cut points
  (the rest of the row is padded with ``+inf``); at most ``B - 2`` of them.
* A non-missing value ``x`` gets the code ``k = #{thresholds < x}``, i.e. value bin ``k``
  holds ``thresholds[k-1] < x <= thresholds[k]``. So ``code <= k`` is *exactly*
  ``x <= thresholds[k]``, the rule the stump applies at prediction time. Value bins use
  codes ``0 .. n_thresholds[j]`` (at most ``B - 1`` of them).
* ``NaN`` gets the reserved missing bin ``B - 1`` (the last code, for every feature).

Thresholds
----------

* A feature with at most ``B - 1`` distinct values gets *exact* thresholds, midway
  between consecutive distinct values (computed as ``a / 2 + b / 2``, and ``a`` if the
  midpoint rounds up to ``b``), as scikit-learn's trees do. On data without ties and
  with at most 255 distinct values per feature, the candidate splits are therefore the
  same as those of ``DecisionTreeClassifier``.
* Otherwise thresholds are the midpoints at the ``B - 1`` quantiles of the values
  (duplicates removed), like the histogram boosters of scikit-learn and LightGBM.
* Only rows with a positive sample weight define the thresholds, so that a row with
  weight 0 changes nothing (as if it were absent); every row gets a code.

Data bigger than memory (pre-binned training)
---------------------------------------------

A matrix too large to hold as float64 is binned *while it is read*, in two passes over
its blocks: :class:`ReservoirSample` keeps a uniform random sample of the rows (Vitter's
Algorithm R, ``sample_rows`` rows, 200,000 by default), :meth:`BinEdges.from_sample` finds
the cut points on it exactly as :func:`bin_features` does on a whole matrix (exact
midpoints for at most 255 distinct sampled values, else sample quantiles), and
:meth:`BinEdges.encode` turns each block into uint8 codes (``code = #{cuts < x}``, NaN
-> 255) written into a :class:`BinnedRows` matrix: one byte per cell, 10,000,000 x 50
in 500 MB instead of 4 GB of float64.

Boosters then train *in code space*: inside :func:`prebinned`, :func:`bin_features`
takes a uint8 matrix as the codes themselves (cut points ``k + 0.5``), and the
predictions made during the fit (out-of-fold scores) read code 255 as missing. Because
``code <= k`` holds exactly when ``x <= cuts[k]``, a fitted stump or tree maps back to
raw feature values without changing a single prediction
(:func:`models.boosting.prebinned.raw_space`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.exceptions import InvalidInput

__all__ = [
    "BinEdges",
    "BinnedFeatures",
    "BinnedRows",
    "MAX_BINS",
    "MISSING_CODE",
    "ReservoirSample",
    "bin_features",
    "prebinned",
    "prebinned_edges",
]

MAX_BINS = 256
MISSING_CODE = MAX_BINS - 1
"""Code of a missing value (NaN) in a pre-binned matrix."""

_PREBINNED: ContextVar[BinEdges | None] = ContextVar("costwise_prebinned", default=None)


@dataclass(frozen=True)
class BinnedFeatures:
    """Binned training matrix (see the module docstring for the layout).

    Attributes
    ----------
    codes : ndarray of uint8, shape (n_features, n_samples)
        Feature-major, C-contiguous bin codes; ``missing_bin`` marks NaN.
    thresholds : ndarray of float64, shape (n_features, max_bins - 2)
        Cut points, row ``j`` valid up to ``n_thresholds[j]``, padded with ``+inf``.
    n_thresholds : ndarray of int64, shape (n_features,)
        Number of valid cut points per feature (0 for a constant or all-NaN feature).
    has_missing : ndarray of bool, shape (n_features,)
        Whether the feature had a NaN in the training rows.
    max_bins : int
        Total number of codes per feature, including the missing bin.
    """

    codes: np.ndarray
    thresholds: np.ndarray
    n_thresholds: np.ndarray
    has_missing: np.ndarray
    max_bins: int

    @property
    def missing_bin(self) -> int:
        """Code of the reserved missing-value bin (``max_bins - 1``)."""
        return self.max_bins - 1

    @property
    def n_features(self) -> int:
        """Number of features."""
        return int(self.codes.shape[0])

    @property
    def n_samples(self) -> int:
        """Number of rows."""
        return int(self.codes.shape[1])


def _midpoints(values: np.ndarray) -> np.ndarray:
    """Midpoints between consecutive sorted distinct values, scikit-learn style."""
    a, b = values[:-1], values[1:]
    mid = a / 2.0 + b / 2.0
    bad = (mid >= b) | ~np.isfinite(mid)
    return np.where(bad, a, mid)


def _feature_thresholds(sorted_valid: np.ndarray, max_values_bins: int) -> np.ndarray:
    """Cut points of one feature from its sorted non-missing (positive weight) values."""
    if sorted_valid.size == 0:
        return np.empty(0)
    change = np.flatnonzero(sorted_valid[1:] != sorted_valid[:-1])
    if change.size + 1 <= max_values_bins:
        distinct = np.concatenate([sorted_valid[change], sorted_valid[-1:]])
        return _midpoints(distinct)
    # Quantile cut points: midpoints between the order statistics around each quantile.
    n = sorted_valid.size
    q = np.linspace(0.0, 1.0, max_values_bins + 1)[1:-1] * (n - 1)
    lo = sorted_valid[np.floor(q).astype(np.intp)]
    hi = sorted_valid[np.ceil(q).astype(np.intp)]
    cuts = np.where(lo == hi, lo, lo / 2.0 + hi / 2.0)
    cuts = np.unique(cuts)
    # A cut equal to the largest value would leave an empty right side.
    return cuts[cuts < sorted_valid[-1]]


def bin_features(
    X: np.ndarray, max_bins: int = MAX_BINS, sample_weight: np.ndarray | None = None
) -> BinnedFeatures:
    """Bin every feature of ``X`` once (quantile or exact thresholds, NaN bin).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite values or NaN (validated by the caller).
    max_bins : int, default=256
        Number of codes per feature including the missing bin, in ``[3, 256]``.
    sample_weight : ndarray of shape (n_samples,), optional
        Rows with weight 0 do not influence the thresholds.

    Returns
    -------
    BinnedFeatures
        Codes, thresholds and bookkeeping; layout in the module docstring.

    References
    ----------
    Nikolaou et al., "Cost-sensitive boosting algorithms: do we really need them?",
    Machine Learning 104 (2016), section 2.2: the weak learner minimises the weighted
    error on every round; binning makes that search a histogram scan.
    """
    if not isinstance(max_bins, int | np.integer) or not 3 <= int(max_bins) <= MAX_BINS:
        raise InvalidInput(f"max_bins must be an integer in [3, {MAX_BINS}], got {max_bins!r}")
    max_bins = int(max_bins)
    edges = _PREBINNED.get()
    if edges is not None and getattr(X, "dtype", None) == np.uint8:
        return _prebinned_features(X, edges, max_bins)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InvalidInput(f"X must be 2-D, got {X.ndim} dimension(s)")
    n_samples, n_features = X.shape
    missing_bin = max_bins - 1
    max_thr = max_bins - 2
    codes = np.empty((n_features, n_samples), dtype=np.uint8)
    thresholds = np.full((n_features, max_thr), np.inf)
    n_thresholds = np.zeros(n_features, dtype=np.int64)
    has_missing = np.zeros(n_features, dtype=bool)
    keep = None if sample_weight is None else np.asarray(sample_weight) > 0
    for j in range(n_features):
        col = X[:, j]
        order = np.argsort(col)  # NaN sorts last
        sorted_col = col[order]
        n_valid = n_samples - int(np.count_nonzero(np.isnan(col)))
        has_missing[j] = n_valid < n_samples
        valid = sorted_col[:n_valid]
        src = valid if keep is None else valid[keep[order[:n_valid]]]
        cuts = _feature_thresholds(src, max_bins - 1)
        n_thresholds[j] = cuts.size
        thresholds[j, : cuts.size] = cuts
        # Codes of the sorted values: value bin k holds cuts[k-1] < x <= cuts[k].
        ends = np.searchsorted(valid, cuts, side="right")
        counts = np.diff(np.concatenate([[0], ends, [n_valid]]))
        sorted_codes = np.empty(n_samples, dtype=np.uint8)
        sorted_codes[:n_valid] = np.repeat(np.arange(cuts.size + 1, dtype=np.uint8), counts)
        sorted_codes[n_valid:] = missing_bin
        codes[j, order] = sorted_codes
    return BinnedFeatures(codes, thresholds, n_thresholds, has_missing, max_bins)


# ----------------------------------------------------------------------------------
# Pre-binned training: data binned while it is read (see the module docstring)


class ReservoirSample:
    """A uniform random sample of at most ``size`` rows of a stream of blocks.

    Vitter's Algorithm R, vectorised per block: row ``i`` (0-based, over the stream)
    past the first ``size`` replaces slot ``j ~ U{0..i}`` when ``j < size``.

    Parameters
    ----------
    size : int
        Rows kept.
    n_features : int
        Columns of every block.
    random_state : int or None
        Seed (the same stream and seed give the same sample).
    """

    def __init__(self, size: int, n_features: int, random_state: int | None = 0) -> None:
        if int(size) < 1:
            raise InvalidInput(f"sample size must be >= 1, got {size!r}")
        self.size = int(size)
        self._rows = np.empty((self.size, int(n_features)), dtype=np.float64)
        self._rng = np.random.default_rng(random_state)
        self.seen = 0

    def add(self, block: np.ndarray) -> None:
        """Offer the rows of ``block`` (shape (rows, n_features)) to the sample."""
        block = np.asarray(block)
        n = block.shape[0]
        if n == 0:
            return
        start = self.seen
        fill = max(0, min(self.size - start, n))
        if fill:
            self._rows[start : start + fill] = block[:fill]
        if fill < n:
            i = np.arange(start + fill, start + n)
            j = (self._rng.random(i.size) * (i + 1)).astype(np.int64)
            keep = np.flatnonzero(j < self.size)
            # in stream order, a later row replacing the same slot wins (as in Algorithm R)
            slots, last = np.unique(j[keep][::-1], return_index=True)
            self._rows[slots] = block[fill + keep[::-1][last]]
        self.seen += n

    @property
    def rows(self) -> np.ndarray:
        """The sampled rows, shape (min(size, seen), n_features)."""
        return self._rows[: min(self.size, self.seen)]


@dataclass(frozen=True)
class BinEdges:
    """Per-feature cut points of a pre-binned matrix (layout of :class:`BinnedFeatures`).

    Attributes
    ----------
    thresholds : ndarray of float64, shape (n_features, max_bins - 2)
        Cut points, row ``j`` valid up to ``n_thresholds[j]``, padded with ``+inf``.
    n_thresholds : ndarray of int64, shape (n_features,)
    max_bins : int
        256: codes ``0 .. 254`` for values, 255 (:data:`MISSING_CODE`) for NaN.
    """

    thresholds: np.ndarray
    n_thresholds: np.ndarray
    max_bins: int = MAX_BINS

    @property
    def n_features(self) -> int:
        """Number of features."""
        return int(self.thresholds.shape[0])

    @classmethod
    def from_sample(
        cls, sample: np.ndarray, exact: list[np.ndarray | None] | None = None
    ) -> BinEdges:
        """Cut points found on ``sample`` (rows, features), as :func:`bin_features` does
        on a whole matrix: exact midpoints for at most 255 distinct values, else quantiles.

        ``exact[j]``, when given and not None, holds *every* distinct non-missing value of
        feature ``j`` in the whole data (at most 255, sorted): its cut points are then the
        midpoints between them, the very cut points :func:`bin_features` finds on the whole
        matrix, whatever the sample missed.
        """
        sample = np.asarray(sample, dtype=np.float64)
        if sample.ndim != 2:
            raise InvalidInput(f"sample must be 2-D, got {sample.ndim} dimension(s)")
        n_features = sample.shape[1]
        thresholds = np.full((n_features, MAX_BINS - 2), np.inf)
        n_thresholds = np.zeros(n_features, dtype=np.int64)
        for j in range(n_features):
            col = sample[:, j]
            known = None if exact is None else exact[j]
            valid = np.sort(col[~np.isnan(col)]) if known is None else np.asarray(known)
            cuts = _feature_thresholds(valid, MAX_BINS - 1)
            n_thresholds[j] = cuts.size
            thresholds[j, : cuts.size] = cuts
        return cls(thresholds, n_thresholds, MAX_BINS)

    def encode(self, block: np.ndarray) -> np.ndarray:
        """uint8 codes of ``block`` (rows, features): ``#{cuts < x}``, NaN -> 255.

        Raises InvalidInput for infinite values (as :func:`bin_features`' callers do).
        """
        block = np.asarray(block)
        if block.ndim != 2 or block.shape[1] != self.n_features:
            raise InvalidInput(
                f"block must be 2-D with {self.n_features} columns, got shape {block.shape}"
            )
        out = np.empty(block.shape, dtype=np.uint8)
        for j in range(self.n_features):
            col = block[:, j]
            if np.isinf(col).any():
                row = int(np.flatnonzero(np.isinf(col))[0])
                raise InvalidInput(f"column {j} holds an infinite value in row {row}")
            k = int(self.n_thresholds[j])
            codes = np.searchsorted(self.thresholds[j, :k], col, side="left")
            codes[np.isnan(col)] = MISSING_CODE
            out[:, j] = codes
        return out

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """float64 values that fall in the bins ``codes`` name (a cut point for value bins
        below the last, just above the last cut for the last bin, NaN for 255): every
        split on these edges answers for them as for the original values."""
        codes = np.asarray(codes)
        out = np.empty(codes.shape, dtype=np.float64)
        for j in range(self.n_features):
            k = int(self.n_thresholds[j])
            cuts = self.thresholds[j, :k]
            top = np.nextafter(cuts[-1], np.inf) if k else 0.0
            values = np.append(cuts, top)
            col = codes[:, j].astype(np.intp)
            missing = col == MISSING_CODE
            out[:, j] = values[np.minimum(col, k)]
            out[missing, j] = np.nan
        return out


class BinnedRows(np.ndarray):
    """A (rows, features) uint8 code matrix stored feature-major (Fortran order).

    Row selection (``X[rows]``, as cross-fitting does) gathers feature by feature into a
    new feature-major matrix, so the subset is the only copy made and
    :func:`bin_features` (inside :func:`prebinned`) uses its transpose without copying.
    """

    @classmethod
    def empty(cls, n_rows: int, n_features: int) -> BinnedRows:
        """An uninitialised matrix to fill block by block (``X[a:b] = codes``)."""
        return np.empty((int(n_rows), int(n_features)), dtype=np.uint8, order="F").view(cls)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, np.ndarray | list) and np.asarray(key).dtype.kind in "iub":
            rows = np.asarray(key)
            if rows.dtype.kind == "b":
                rows = np.flatnonzero(rows)
            base = self.view(np.ndarray)
            out = np.empty((rows.size, base.shape[1]), dtype=np.uint8, order="F")
            feature_major = base.T
            for j in range(base.shape[1]):
                np.take(feature_major[j], rows, out=out[:, j])
            return out.view(BinnedRows)
        return super().__getitem__(key)


@contextlib.contextmanager
def prebinned(edges: BinEdges) -> Iterator[None]:
    """Within this block, uint8 matrices given to the boosters are codes under ``edges``.

    :func:`bin_features` then uses them as they are (no float copy) and the ensembles read
    code 255 as missing. The setting is a context variable: threads started through
    :func:`models.boosting.crossfit.run_parallel` see it.
    """
    if int(edges.max_bins) != MAX_BINS:
        raise InvalidInput(f"pre-binned data needs max_bins={MAX_BINS}, got {edges.max_bins}")
    token = _PREBINNED.set(edges)
    try:
        yield
    finally:
        _PREBINNED.reset(token)


def prebinned_edges() -> BinEdges | None:
    """The edges of the enclosing :func:`prebinned` block, or None."""
    return _PREBINNED.get()


def is_codes(X: Any) -> bool:
    """Whether ``X`` is a uint8 code matrix inside :func:`prebinned`."""
    return _PREBINNED.get() is not None and getattr(X, "dtype", None) == np.uint8


def codes_as_float(X: np.ndarray) -> np.ndarray:
    """float64 view of codes for the ensembles' comparisons: code 255 becomes NaN."""
    out = np.asarray(X, dtype=np.float64)
    out[np.asarray(X) == MISSING_CODE] = np.nan
    return out


def _prebinned_features(X: np.ndarray, edges: BinEdges, max_bins: int) -> BinnedFeatures:
    """:class:`BinnedFeatures` of a code matrix in code space (cut points ``k + 0.5``)."""
    if int(max_bins) != MAX_BINS:
        raise InvalidInput(f"pre-binned data needs max_bins={MAX_BINS}, got {max_bins}")
    if X.ndim != 2 or X.shape[1] != edges.n_features:
        raise InvalidInput(
            f"codes must be 2-D with {edges.n_features} columns, got shape {X.shape}"
        )
    codes = np.ascontiguousarray(np.asarray(X).T)  # no copy for a BinnedRows matrix
    n_thr = edges.n_thresholds.copy()
    thresholds = np.full((edges.n_features, MAX_BINS - 2), np.inf)
    ks = np.arange(MAX_BINS - 2, dtype=np.float64) + 0.5
    for j in range(edges.n_features):
        thresholds[j, : n_thr[j]] = ks[: n_thr[j]]
    has_missing = np.fromiter(
        (bool((codes[j] == MISSING_CODE).any()) for j in range(edges.n_features)),
        dtype=bool,
        count=edges.n_features,
    )
    return BinnedFeatures(codes, thresholds, n_thr, has_missing, MAX_BINS)
