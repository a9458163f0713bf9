"""Numpy-only inference object: what an artifact loads into and what the service serves.

An :class:`InferenceModel` holds arrays and numbers only (ensemble arrays, the score
kind, the calibration map, the training class priors). It never imports or calls a
class named by an artifact, and predicting needs neither scikit-learn nor the
estimator that produced it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.calibration import Calibrator
from models.decisions import CostMatrix, Decisions, apply_prior_shift, decide
from models.ensemble import Ensemble
from models.exceptions import InvalidInput

Label = int | float | str | bool


def check_features(X: Any, n_features: int) -> np.ndarray:
    """Validate a feature matrix for prediction and return it as C-ordered float64.

    Missing values (NaN, or ``None`` in a list) are allowed: every weak learner has a
    learned direction for them. Infinite values and non-numeric entries are refused.

    Raises
    ------
    InvalidInput
        Wrong number of columns, non-numeric values or infinities; the message names
        the first offending row.
    """
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"features must be numeric (or null for missing): {exc}") from None
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise InvalidInput(f"features must be a 2-D array of rows, got {arr.ndim} dimensions")
    if arr.shape[1] != n_features:
        raise InvalidInput(f"each row must have {n_features} features, got {arr.shape[1]}")
    if not np.isfinite(arr).all():
        bad = np.isinf(arr)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise InvalidInput(
                f"row {int(row)}, feature {int(col)}: infinite values are not allowed "
                "(use null for a missing value)"
            )
    return arr


@dataclass(frozen=True)
class InferenceModel:
    """A calibrated binary scoring model reduced to arrays.

    Parameters
    ----------
    classes : tuple
        The two class labels; ``classes[1]`` is the positive class.
    feature_names : tuple of str or None
        Feature names in column order, when known.
    ensemble : Ensemble
        Boosted weak learners (numpy arrays).
    score_kind : {"vote", "logistic"}
        Raw score fed to the calibrator: s(x) (Eq. 24) or s'(x) (Eq. 25).
    calibrator : Calibrator
        Map from raw score to P(y = classes[1] | x).
    train_priors : ndarray of shape (2,)
        Class frequencies in the training data, for deployment prior shift.
    """

    classes: tuple[Label, ...]
    feature_names: tuple[str, ...] | None
    ensemble: Ensemble
    score_kind: str
    calibrator: Calibrator
    train_priors: np.ndarray
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def n_features(self) -> int:
        return int(self.ensemble.n_features)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated probabilities, shape (n, 2), columns in ``classes`` order."""
        arr = check_features(X, self.n_features)
        p1 = self.calibrator.predict(self.ensemble.score(arr, self.score_kind))
        out = np.empty((arr.shape[0], 2), dtype=np.float64)
        out[:, 1] = p1
        out[:, 0] = 1.0 - p1
        return out

    def shifted_proba(self, X: Any, priors: Any = None) -> np.ndarray:
        """Probabilities under deployment class ``priors`` (None: training priors)."""
        proba = self.predict_proba(X)
        if priors is None:
            return proba
        return apply_prior_shift(proba, self.train_priors, np.asarray(priors, dtype=np.float64))

    def decide(self, X: Any, costs: CostMatrix | np.ndarray, priors: Any = None) -> Decisions:
        """Least-expected-cost decisions for ``costs`` (one matrix or one per row)."""
        return decide(self.shifted_proba(X, priors), costs)
