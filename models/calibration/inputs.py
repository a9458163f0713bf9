"""The checked inputs of a calibration map's fit and predict, and its not-fitted check.

Shared by every calibrator (:mod:`models.calibration.calibrators`,
:mod:`models.calibration.venn_abers`): scores finite and 1-D, labels 0 or 1, weights
non-negative, both classes present with positive weight; each error names the row.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from models.exceptions import InvalidInput, NotFitted, TrainingError

__all__ = ["FittedMap", "check_scores", "fit_rows"]


class FittedMap:
    """The not-fitted check of a calibrator whose fit sets ``_fitted_attr``."""

    _fitted_attr: str

    def _check_fitted(self) -> None:
        if not hasattr(self, self._fitted_attr):
            raise NotFitted(f"{type(self).__name__} is not fitted yet; call fit() first")


def check_scores(scores: ArrayLike, name: str = "scores") -> np.ndarray:
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{name}: expected a 1-D array of numbers ({exc})") from None
    if s.ndim != 1:
        raise InvalidInput(f"{name}: expected a 1-D array, got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        bad = int(np.flatnonzero(~np.isfinite(s))[0])
        raise InvalidInput(f"{name}: row {bad}: expected a finite number, got {s[bad]}")
    return s


def _check_fit_data(
    scores: ArrayLike, y01: ArrayLike, sample_weight: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s = check_scores(scores)
    y = check_scores(y01, "y01")
    if y.shape != s.shape:
        raise InvalidInput(f"y01: expected {s.shape[0]} labels (one per score), got {y.shape[0]}")
    if s.size == 0:
        raise TrainingError("calibration data is empty: cannot fit a calibrator on 0 rows")
    if not np.all((y == 0) | (y == 1)):
        bad = int(np.flatnonzero((y != 0) & (y != 1))[0])
        raise InvalidInput(f"y01: row {bad}: expected a label 0 or 1, got {y[bad]}")
    if sample_weight is None:
        w = np.ones_like(s)
    else:
        w = check_scores(sample_weight, "sample_weight")
        if w.shape != s.shape:
            raise InvalidInput(
                f"sample_weight: expected {s.shape[0]} weights (one per score), got {w.shape[0]}"
            )
        if np.any(w < 0):
            bad = int(np.flatnonzero(w < 0)[0])
            raise InvalidInput(f"sample_weight: row {bad}: expected a weight >= 0, got {w[bad]}")
    n_pos = int(np.count_nonzero(y[w > 0] == 1))
    n_neg = int(np.count_nonzero(y[w > 0] == 0))
    if n_pos == 0 or n_neg == 0:
        only = "negative (0)" if n_pos == 0 else "positive (1)"
        raise TrainingError(
            f"calibration data has only {only} labels (with positive weight): a calibrator "
            "needs both classes; use more calibration data or a stratified split"
        )
    return s, y, w


def fit_rows(
    scores: ArrayLike, y01: ArrayLike, sample_weight: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The checked rows of positive weight (:func:`_check_fit_data`); no copies when every
    row counts (same values)."""
    s, y, w = _check_fit_data(scores, y01, sample_weight)
    keep = w > 0
    if keep.all():
        return s, y, w
    return s[keep], y[keep], w[keep]
