"""The default algorithm for any number of classes: :class:`AutoCalibrated`.

It takes the same parameters as the two families (:mod:`models.auto.params`), plus
``multiclass_calibration``, and at ``fit`` builds the binary or the multiclass
estimator of :mod:`models.auto.estimators` from the number of classes in ``y``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from models.auto.estimators import (
    SEARCH_PARAMS,
    AutoCalibratedBoosting,
    AutoCalibratedMulticlass,
    Vocabulary,
    vocabulary_init,
)
from models.auto.grid import default_grid
from models.auto.params import MULTICLASS_CALIBRATIONS
from models.decisions.rule import Decisions
from models.exceptions import InvalidInput, NotFitted
from models.inference.model import InferenceModel

__all__ = ["AutoCalibrated"]


class AutoCalibrated(Vocabulary, ClassifierMixin, BaseEstimator):
    """Automatic capacity for any number of classes: the service's default algorithm.

    Two classes: :class:`~models.auto.estimators.AutoCalibratedBoosting` (calibrated
    AdaMEC); more: :class:`~models.auto.estimators.AutoCalibratedMulticlass` (calibrated
    SAMME), calibrated per ``multiclass_calibration``
    (:data:`~models.auto.params.MULTICLASS_CALIBRATIONS`: ``"multinomial"``, one softmax
    map of the K scores, or ``"per_class"``, one ``calibration`` map per class,
    normalised). Parameters as theirs (``calibration``'s former name ``method`` is
    accepted too); ``grid=None`` (the default) is :data:`~models.auto.DEFAULT_GRID` for
    two classes and :data:`~models.auto.MULTICLASS_GRID` for more; ``score_kind`` is the
    raw score calibrated: ``"vote"`` (vote fractions, Eq. 24) or ``"logistic"`` (two
    classes: Eq. 25; more: the softmax of SAMME's votes). ``max_rounds`` caps every grid
    entry's rounds (the service passes ``COSTWISE_MAX_ROUNDS``).

    Attributes
    ----------
    model_ : AutoCalibratedBoosting or AutoCalibratedMulticlass
        The fitted estimator.
    capacity_ : dict
        Its choice and validation curves.
    n_estimators_, termination_reason_ : int, str
        Of the served booster.
    oof_ : models.boosting.crossfit.OutOfFold
        Out-of-fold calibrated probabilities of the training rows (reported metrics).
    """

    __init__ = vocabulary_init(
        {"grid": None, "calibration": "platt"},
        SEARCH_PARAMS,
        multiclass_calibration="multinomial",
        serve="folds",
    )

    def _for(self, n_classes: int) -> AutoCalibratedBoosting | AutoCalibratedMulticlass:
        common: dict[str, Any] = {
            "grid": default_grid(n_classes) if self.grid is None else self.grid,
            "n_folds": self.n_folds,
            "metric": self.metric,
            "max_search_rows": self.max_search_rows,
            "max_rounds": self.max_rounds,
            "time_budget": self.time_budget,
            "score_kind": self.score_kind,
            "random_state": self.random_state,
            "n_jobs": self.n_jobs,
            "serve": self.serve,
        }
        if n_classes == 2:
            return AutoCalibratedBoosting(calibration=self.calibration, **common)
        if self.multiclass_calibration not in MULTICLASS_CALIBRATIONS:
            raise InvalidInput(
                f"multiclass_calibration must be one of {list(MULTICLASS_CALIBRATIONS)}, "
                f"got {self.multiclass_calibration!r}"
            )
        per_class = self.multiclass_calibration == "per_class"
        return AutoCalibratedMulticlass(
            calibration=self.calibration if per_class else "multinomial", **common
        )

    def provides_out_of_fold(self) -> bool:
        """Always: ``oof_`` holds cross-fitted calibrated probabilities of the training rows."""
        return True

    def progress_total(self, n_classes: int = 2) -> int:
        """The count a fit reports as ``total`` (the same for any number of classes)."""
        return self._for(n_classes).progress_total(n_classes)

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> AutoCalibrated:
        """Fit the binary or the multiclass form, by the number of classes in ``y``."""
        y = np.asarray(y)
        if y.ndim != 1:
            raise InvalidInput(f"y must be 1-D, got shape {y.shape}")
        self.model_ = self._for(len(np.unique(y))).fit(X, y, sample_weight)
        self.classes_ = self.model_.classes_
        self.class_priors_ = self.model_.class_priors_
        self.capacity_ = self.model_.capacity_
        self.calibration_info_ = self.model_.calibration_info_
        self.oof_ = self.model_.oof_
        booster = self.model_.estimator_
        self.n_estimators_ = int(booster.n_estimators_)
        self.termination_reason_ = str(booster.termination_reason_)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise NotFitted(f"{type(self).__name__} is not fitted yet; call fit(X, y) first")

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated class probabilities, shape (n, K)."""
        self._check_fitted()
        return self.model_.predict_proba(X)

    def predict(self, X: Any) -> np.ndarray:
        """Least expected cost under 0-1 costs."""
        self._check_fitted()
        return self.model_.predict(X)

    def decide(self, X: Any, costs: Any, priors: Any = None) -> Decisions:
        """Least-expected-cost decisions under ``costs`` (see :mod:`models.decisions.rule`)."""
        self._check_fitted()
        return self.model_.decide(X, costs, priors=priors)

    def to_inference(self, feature_names: list[str] | None = None) -> InferenceModel:
        """The numpy-only inference object (threshold rule: any request costs)."""
        self._check_fitted()
        return self.model_.to_inference(feature_names)
