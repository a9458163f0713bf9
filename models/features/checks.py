"""Checking what an estimator is handed: the training data of ``fit`` and the feature
matrix of a prediction."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, validate_data

from models.exceptions import InvalidInput, NotFitted, TrainingError
from models.features.binning import is_codes

__all__ = ["binary_classes", "check_fit_data", "check_predict_X", "validate_predict_X"]


def check_fit_data(
    estimator: Any, X: Any, y: Any, sample_weight: Any, dtype: Any = np.float64
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, sample_weight)`` of a classifier's ``fit``, validated (NaN allowed in X).

    ``sample_weight`` (None: ones) must be finite and >= 0 (:class:`InvalidInput`) with a
    positive sum (:class:`TrainingError`); ``dtype`` is the dtype X is converted to.
    """
    try:
        X, y = validate_data(estimator, X, y, ensure_all_finite="allow-nan", dtype=dtype)
        check_classification_targets(y)
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, allow_all_zero_weights=True)
    except ValueError as e:  # keep TypeError (wrong Python types, sparse input)
        raise InvalidInput(str(e)) from e
    if not np.all(np.isfinite(sw)):
        raise InvalidInput("sample_weight must be finite")
    if np.any(sw < 0):
        row = int(np.flatnonzero(sw < 0)[0])
        raise InvalidInput(f"sample_weight must be >= 0, got {float(sw[row])} in row {row}")
    if not sw.sum() > 0:
        raise TrainingError("sample_weight must have a positive sum, got all zeros")
    return X, y, sw


def binary_classes(estimator: Any, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, index of each label in classes)`` of a binary classifier's ``y``.

    Raises :class:`TrainingError` unless ``y`` holds exactly two classes.
    """
    name = type(estimator).__name__
    classes, y_idx = np.unique(y, return_inverse=True)
    y_type = type_of_target(y, input_name="y")
    if classes.size > 2 or y_type not in ("binary", "multiclass"):
        raise TrainingError(
            f"Only binary classification is supported. The type of the target is {y_type} "
            f"({classes.size} classes); {name} needs exactly two classes"
        )
    if classes.size != 2:
        raise TrainingError(
            f"{name} is a binary classifier: y must contain exactly two "
            f"classes, got {classes.size} class(es): {classes.tolist()[:10]}"
        )
    return classes, y_idx


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
    return validate_predict_X(estimator, X)


def validate_predict_X(estimator: Any, X: Any) -> np.ndarray:
    """scikit-learn's validation of ``X`` for a fitted ``estimator`` (float64, NaN allowed;
    its ValueError as :class:`InvalidInput`)."""
    try:
        return validate_data(
            estimator, X, reset=False, ensure_all_finite="allow-nan", dtype=np.float64
        )
    except ValueError as e:
        raise InvalidInput(str(e)) from e
