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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.exceptions import InvalidInput

__all__ = ["BinnedFeatures", "bin_features", "MAX_BINS"]

MAX_BINS = 256


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
