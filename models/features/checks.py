"""Checking a feature matrix handed to a fitted estimator for prediction."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data

from models.exceptions import InvalidInput, NotFitted
from models.features.binning import is_codes

__all__ = ["check_predict_X"]


def check_predict_X(estimator: Any, X: Any) -> np.ndarray:
    """Validate ``X`` for prediction by a fitted ``estimator`` (learned ``ensemble_``).

    Plain numeric numpy arrays take a fast path (shape and infinity checks only);
    anything else goes through scikit-learn's ``validate_data``. NaN is allowed: every
    weak learner has a learned direction for missing values.
    """
    if not hasattr(estimator, "ensemble_"):
        raise NotFitted(f"This {type(estimator).__name__} instance is not fitted yet; call fit.")
    if is_codes(X):  # pre-binned training: the ensemble converts chunk by chunk
        X = np.asarray(X)  # (a BinnedRows subset is a view, not a copy)
        if X.ndim != 2 or X.shape[1] != estimator.n_features_in_:
            raise InvalidInput(
                f"X has shape {X.shape}, but {type(estimator).__name__} is expecting "
                f"{estimator.n_features_in_} features as input"
            )
        return X
    if type(X) is np.ndarray and X.dtype.kind in "biuf" and X.ndim == 2:
        if hasattr(estimator, "feature_names_in_"):
            warnings.warn(
                f"X does not have valid feature names, but {type(estimator).__name__} was "
                "fitted with feature names",
                UserWarning,
                stacklevel=4,
            )
        if X.shape[1] != estimator.n_features_in_:
            raise InvalidInput(
                f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
                f"{estimator.n_features_in_} features as input"
            )
        X = X.astype(np.float64, copy=False)
        if np.isinf(X).any():
            raise InvalidInput("Input X contains infinity; only finite values or NaN allowed")
        return X
    if sp.issparse(X):
        raise TypeError(f"{type(estimator).__name__} needs dense data, got a sparse matrix")
    try:
        return validate_data(
            estimator, X, reset=False, ensure_all_finite="allow-nan", dtype=np.float64
        )
    except ValueError as e:
        raise InvalidInput(str(e)) from e
