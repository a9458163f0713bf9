"""Weighted histograms over the core's bins, shared by the cost-sensitive stump learners.

The features are binned once per fit by :func:`models.features.binning.bin_features` (the same
bins, thresholds and NaN bin as the core's :class:`~models.weak.stump.StumpTrainer`).
Every round, the weighted histogram of (feature, bin, label) of any per-example vector
is one sparse matrix-vector product with a 0/1 matrix built once here; cumulative sums
over the bins then give the weights left and right of every threshold of every feature.

Cells of a stump on feature j at threshold index k (see :mod:`models.features.binning`): *left*
holds the codes ``<= k`` (``x <= thresholds[j, k]``), *right* the other value codes,
*missing* the NaN bin.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from models.features.binning import BinnedFeatures, bin_features

__all__ = ["BinnedHistogram", "SplitSums", "first_minimum", "TIE_RTOL"]

TIE_RTOL = 1e-12


def first_minimum(score: np.ndarray) -> tuple[int, int]:
    """(j, k) of the first entry (row-major) within a relative 1e-12 of the minimum.

    Histogram sums depend on the order of the rows in the last bits; treating scores
    that close as ties keeps the choice independent of row order (and of weights versus
    repeated rows).
    """
    best = float(score.min())
    near = score <= best + TIE_RTOL * abs(best)
    j, k = np.unravel_index(int(np.argmax(near)), score.shape)
    return int(j), int(k)


@dataclass(frozen=True)
class SplitSums:
    """Per-label sums of one weight vector for every split.

    ``left`` has shape (F, B - 2, 2) (codes ``<= k``), ``values`` (F, 1, 2) (all value
    bins) and ``missing`` (F, 1, 2) (the NaN bin); the last axis is (negatives,
    positives). ``right = values - left``.

    References
    ----------
    Masnadi-Shirazi & Vasconcelos (2007): the class-wise weighted errors b, d (Eqs. 44-45)
    and the weighted histograms of Eq. 49 are sums of this kind.
    """

    left: np.ndarray
    values: np.ndarray
    missing: np.ndarray

    @property
    def right(self) -> np.ndarray:
        return self.values - self.left


class BinnedHistogram:
    """Binned training matrix with a per-(feature, bin, label) histogram operator.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite values or NaN.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    max_bins : int
        Codes per feature including the NaN bin (:func:`models.features.binning.bin_features`).
    sample_weight : ndarray, optional
        Rows with weight 0 do not define thresholds.

    Attributes
    ----------
    binned : BinnedFeatures
        Codes and thresholds.
    valid : ndarray of bool, shape (n_features, max_bins - 2)
        Which threshold indices exist for each feature.

    References
    ----------
    Masnadi-Shirazi & Vasconcelos (2007), section 4.3: posteriors of Eq. 49 "obtained with
    weighted histograms of feature responses"; Algorithm 1 (thresholds of the stumps).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        max_bins: int,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        self.binned: BinnedFeatures = bin_features(X, max_bins, sample_weight)
        n_features, n = self.binned.codes.shape
        self.n_features = n_features
        self.nb = self.binned.max_bins
        label = (np.asarray(y) > 0).astype(np.uint16)
        # Row (j * B + code) * 2 + label; columns = examples (CSR, one pass per feature).
        indices = np.empty(n_features * n, dtype=np.int32)
        counts = np.empty((n_features, self.nb * 2), dtype=np.int64)
        for j in range(n_features):
            local = self.binned.codes[j].astype(np.uint16) * 2 + label
            indices[j * n : (j + 1) * n] = np.argsort(local, kind="stable")
            counts[j] = np.bincount(local, minlength=self.nb * 2)
        indptr = np.zeros(n_features * self.nb * 2 + 1, dtype=np.int64)
        np.cumsum(counts.ravel(), out=indptr[1:])
        self._A = sp.csr_matrix(
            (np.ones(indices.size), indices, indptr), shape=(indptr.size - 1, n)
        )
        k = np.arange(self.nb - 2)
        self.valid = k[None, :] < self.binned.n_thresholds[:, None]

    def hist(self, v: np.ndarray) -> np.ndarray:
        """Sums of ``v`` per (feature, bin, label), shape (F, B, 2)."""
        return (self._A @ v).reshape(self.n_features, self.nb, 2)

    def split_sums(self, v: np.ndarray) -> SplitSums:
        """Left / all-values / missing sums of ``v`` for every threshold of every feature."""
        h = self.hist(v)
        nb = self.nb
        return SplitSums(
            left=np.cumsum(h[:, : nb - 2], axis=1),
            values=h[:, : nb - 1].sum(axis=1, keepdims=True),
            missing=h[:, nb - 1 :],
        )

    def cells(self, j: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Boolean masks (left, missing) of the training rows for the stump (j, k)."""
        c = self.binned.codes[j]
        missing = c == self.nb - 1
        return (c <= k) & ~missing, missing

    def outputs(self, j: int, k: int, left: float, right: float, missing: float) -> np.ndarray:
        """Training-row outputs of the stump (j, k) with the given cell values."""
        is_left, is_missing = self.cells(j, k)
        h = np.where(is_left, left, right)
        h[is_missing] = missing
        return h

    def threshold(self, j: int, k: int) -> float:
        """Cut point of threshold index k of feature j (``x <= t`` goes left)."""
        return float(self.binned.thresholds[j, k])
