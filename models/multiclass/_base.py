"""The boosting loop shared by SAMME and the angle-based algorithms.

:class:`MulticlassBoosting` validates the data, builds the weak-learner trainer and runs
the rounds; a subclass supplies four small pieces:

* ``_setup(y, sample_weight)`` -- initial state (weights or the cost matrix ``alpha``);
* ``_fit_learner(trainer)`` -- one learner ``Phi`` and its outputs on the training rows;
* ``_step(phi)`` -- the weighted error ``eps`` and the learner weight ``beta``;
* ``_advance(phi, beta)`` -- the state update; False if it became non-finite.

Termination (``termination_reason_``), in the order of :mod:`models.boosting.loop`:
``"no_positive_alpha"`` (``beta`` not a positive real, i.e. a weighted error at chance
level within a relative 1e-12 (:func:`at_chance`): the learner is not added; on the
first round :class:`TrainingError`), ``"perfect_fit"`` (``eps == 0``: the learner is
kept with a finite weight from the clipped ``eps``, then training stops),
``"non_finite_weights"`` (the round is dropped) and ``"max_rounds"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target

from models.boosting.loop import EPS_CLIP, LEARNER_PARAMS, run_rounds
from models.decisions.rule import class_priors
from models.exceptions import InvalidInput, TrainingError
from models.features.checks import check_fit_data, check_predict_X
from models.inference.vote_ensemble import VoteEnsemble
from models.specs.estimator_params import declared_init
from models.weak.multiclass import STUMP_CRITERIA
from models.weak.registry import (
    WEAK_LEARNERS,
    multiclass_learner,
    multiclass_names,
    multiclass_trainer,
)

__all__ = ["MulticlassBoosting", "EPS_CLIP", "CHANCE_RTOL", "at_chance"]

CHANCE_RTOL = 1e-12


def at_chance(err: float, chance: float) -> bool:
    """Whether a weighted error is at (or worse than) chance level ``chance``.

    Within a relative ``1e-12`` of chance counts as chance: a constant learner on
    balanced classes has error exactly ``chance`` mathematically, but a float sum may
    land a few ulps below and would otherwise get a meaningless positive weight.
    """
    return err >= chance * (1.0 - CHANCE_RTOL)


class MulticlassBoosting(ClassifierMixin, BaseEstimator):
    """Discrete multiclass boosting loop over class-valued weak learners.

    Parameters
    ----------
    n_estimators : int, default=100
        Maximum number of rounds M.
    weak_learner : {"stump", "tree"}, default="stump"
        Exact multiclass stump over binned features, or a histogram tree of depth
        ``max_depth`` (see :mod:`models.weak.multiclass`).
    max_depth : int, default=3
        Depth of ``"tree"`` learners, in [1, 8].
    max_bins : int, default=256
        Bins per feature for ``"stump"`` (including the NaN bin), in [3, 256].
    random_state : int, RandomState or None, default=None
        Seeds the ``"tree"`` learners.

    References
    ----------
    Zhu et al., "Multi-class AdaBoost" (2009), Algorithm 2 (SAMME); Yang, Guo and Chang,
    "Angle-Based Cost-Sensitive Multicategory Classification" (2020), Algorithms 1-2.
    """

    _stump_criterion = "error"

    n_estimators: int
    weak_learner: str
    max_depth: int
    max_bins: int
    random_state: int | np.random.RandomState | None

    __init__ = declared_init(LEARNER_PARAMS, random_state=None)

    # ----------------------------------------------------------------- hooks
    def _setup(self, y: np.ndarray, sample_weight: np.ndarray) -> None:
        raise NotImplementedError

    def _fit_learner(self, trainer: Any) -> tuple[object, np.ndarray]:
        raise NotImplementedError

    def _step(self, phi: np.ndarray) -> tuple[float, float]:
        raise NotImplementedError

    def _advance(self, phi: np.ndarray, beta: float) -> bool:
        raise NotImplementedError

    def _criterion(self) -> str:
        return str(getattr(self, "stump_criterion", self._stump_criterion))

    # ------------------------------------------------------------ validation
    def _check_params(self) -> None:
        n = self.n_estimators
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise InvalidInput(f"n_estimators must be an integer >= 1, got {n!r}")
        learner = multiclass_learner(self.weak_learner)
        if not learner.cost_rounds and not getattr(self, "_weighted_rounds", False):
            fits = [n for n in multiclass_names() if WEAK_LEARNERS[n].cost_rounds]
            raise InvalidInput(
                f"weak_learner {learner.name!r} fits SAMME's weighted classification rounds "
                f"only; {type(self).__name__} needs one of {fits}"
            )
        if self._criterion() not in STUMP_CRITERIA:
            raise InvalidInput(
                f"stump_criterion must be one of {STUMP_CRITERIA}, got {self._criterion()!r}"
            )

    def _validate_fit(
        self, X: Any, y: Any, sample_weight: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X, y, sw = check_fit_data(self, X, y, sample_weight)
        if type_of_target(y, input_name="y") not in ("binary", "multiclass"):
            raise InvalidInput("y must hold class labels (binary or multiclass)")
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise TrainingError(
                f"{type(self).__name__} needs at least two classes, got {classes.size} class: "
                f"{classes.tolist()}"
            )
        self.classes_ = classes
        return X, y_idx.astype(np.intp), sw

    # ------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> MulticlassBoosting:
        """Run the boosting rounds on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric features; NaN allowed (missing), infinity not.
        y : array-like of shape (n_samples,)
            At least two distinct labels; ``classes_`` is their sorted order.
        sample_weight : array-like of shape (n_samples,), optional
            Finite, non-negative, positive sum.

        Returns
        -------
        self

        Raises
        ------
        InvalidInput
            Malformed inputs or hyper-parameters.
        TrainingError
            Fewer than two classes, zero total weight or no usable first learner.
        """
        self._check_params()
        X, y, sw = self._validate_fit(X, y, sample_weight)
        self._setup(y, sw)
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        trainer = multiclass_trainer(
            self.weak_learner, X, y, len(self.classes_), max_depth=self.max_depth,
            max_bins=self.max_bins, criterion=self._criterion(), seed=seed, sample_weight=sw,
        )  # fmt: skip
        phi = np.empty(0)

        def fit_round() -> tuple[object, float, float]:
            nonlocal phi
            learner, phi = self._fit_learner(trainer)
            eps, beta = self._step(phi)
            return learner, eps, beta

        learners, betas, errors, reason = run_rounds(
            int(self.n_estimators),
            fit_round,
            lambda beta: self._advance(phi, beta),
            name="beta",
            noun="weight",
        )
        self._teardown()
        self.ensemble_: VoteEnsemble = trainer.assemble(learners, np.asarray(betas))
        self.estimator_alphas_ = np.asarray(betas, dtype=np.float64)
        self.estimator_errors_ = np.asarray(errors, dtype=np.float64)
        self.n_estimators_ = len(betas)
        self.termination_reason_ = reason
        self.class_priors_ = class_priors(y, len(self.classes_), sw)
        return self

    def _teardown(self) -> None:
        """Drop the per-fit state (large arrays) after training."""
        for name in [n for n in vars(self) if n.startswith("_state_")]:
            delattr(self, name)

    # --------------------------------------------------------------- predict
    def _check_X(self, X: Any) -> np.ndarray:
        return check_predict_X(self, X)

    def votes(self, X: Any) -> np.ndarray:
        """Weighted votes ``V_k(x) = sum_m beta_m I(Phi_m(x) = k)``, shape (n, K)."""
        X = self._check_X(X)
        return self.ensemble_.votes(X)

    @staticmethod
    def _binary_1d(scores: np.ndarray) -> np.ndarray:
        """scikit-learn's convention: for two classes, ``score_1 - score_0``, shape (n,)."""
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[argmax_k V_k(x)]`` (ties: the lower class index)."""
        votes = self.votes(X)
        return self.classes_[np.argmax(votes, axis=1)]

    def staged_predict(self, X: Any) -> Any:
        """Labels of the ensembles of the first m learners, m = 1..n_estimators_."""
        X = self._check_X(X)
        for v in self.ensemble_.staged_votes(X):
            yield self.classes_[np.argmax(v, axis=1)]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
