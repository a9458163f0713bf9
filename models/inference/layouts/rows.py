"""Row blocks and fixed-order row sums shared by every ensemble layout."""

from __future__ import annotations

import numpy as np

from models.exceptions import ArtifactError
from models.features.binning import codes_as_float

__all__ = ["CHUNK", "block", "check_one_per_learner", "row_sums"]

CHUNK = 4096  # rows per block: keeps the (rows, M) temporaries in cache


def block(X: np.ndarray, i: int) -> np.ndarray:
    """Rows ``i .. i + CHUNK`` as float64 (pre-binned codes: 255 -> NaN)."""
    xc = X[i : i + CHUNK]
    return codes_as_float(xc) if xc.dtype == np.uint8 else xc


def row_sums(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``values @ weights`` computed row by row in a fixed order (batch-invariant).

    A BLAS matrix-vector product may sum a row in a different order depending on how
    many rows the batch holds (and on the CPU), so one row scored alone could differ in
    the last bit from the same row scored in a batch. Multiplying and reducing along the
    contiguous last axis sums every row with the same pairwise scheme whatever the batch,
    at about 0.15 us per row more for 100 learners.
    """
    return np.multiply(values, weights).sum(axis=1)


def check_one_per_learner(arrays: dict[str, np.ndarray], m: int, n_features: int) -> None:
    """Every array has one entry per learner and ``feature`` holds column indices."""
    for name, a in arrays.items():
        if a.shape != (m,):
            raise ArtifactError(f"array {name!r} must have shape ({m},), got {a.shape}")
    feat = arrays["feature"]
    if np.any((feat < 0) | (feat >= n_features)):
        raise ArtifactError(
            f"array 'feature' must hold indices in [0, {n_features}), got {feat.tolist()}"
        )
