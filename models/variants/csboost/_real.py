"""The boosting loop for real-valued stumps (cost-sensitive RealBoost and LogitBoost).

:class:`~models.boosting.loop.BaseBoosting` adds alpha_t h_t with a discrete h_t and a scalar
alpha_t; Algorithms 2 and 3 of Masnadi-Shirazi & Vasconcelos add a real-valued function
G_m(x) instead (Eqs. 46 and 52: a value per cell of a partition, no separate step). This
loop keeps BaseBoosting's estimator API (validation, ``decision_function``,
``score_samples``, ``predict_proba``, ``staged_*``, ``ensemble_``) and exports the model
as an :class:`~models.inference.ensemble.Ensemble` of kind ``"stumps"`` whose ``value_left``,
``value_right`` and ``value_missing`` are the real outputs of each cell and whose alphas
are all 1, so F(x) = sum_m G_m(x) (Eq. 17).

A stump here has three cells on feature j at threshold index k: the value bins up to k,
the value bins above k, and the NaN bin (its own cell, with its own output, when the
feature had NaN in training; output 0 otherwise, i.e. an unseen NaN does not move F).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from models.boosting.loop import BaseBoosting
from models.boosting.progress import report
from models.exceptions import InvalidInput, TrainingError
from models.inference.ensemble import Ensemble
from models.variants.csboost._common import CostSensitiveMixin
from models.variants.csboost._histogram import BinnedHistogram, SplitSums, first_minimum
from models.weak.base import Stump, stumps_ensemble

__all__ = ["RealValuedBoosting", "catalog_build", "cell_sums", "pick_stump"]


def catalog_build(
    cls: type[RealValuedBoosting], name: str
) -> Callable[[dict[str, Any], dict[str, Any]], RealValuedBoosting]:
    """The catalog's build of ``cls`` (entry ``name``): the rounds and one of the
    real-valued learners it fits (``cls._weak_learners``; another is InvalidInput); the
    other common settings (depth, score, seed) do not apply to it."""

    def build(common: dict[str, Any], params: dict[str, Any]) -> RealValuedBoosting:
        wl = common.get("weak_learner", "stump")
        allowed = cls._weak_learners
        if wl not in allowed:
            raise InvalidInput(
                f"weak_learner: {name} fits {' or '.join(allowed)} learners, got {wl!r}"
            )
        return cls(n_estimators=common["n_estimators"], weak_learner=str(wl), **params)

    return build


def cell_sums(s: SplitSums, has_nan: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(left, right, missing) sums per split, shapes (F, B-2, 2), (F, B-2, 2), (F, 1, 2);
    the missing cell is zeroed for features without NaN in training."""
    miss = np.where(has_nan[:, None, None], s.missing, 0.0)
    return s.left, s.right, miss


def pick_stump(
    hist: BinnedHistogram,
    score: np.ndarray,
    values: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[Stump, np.ndarray] | None:
    """The split of smallest ``score`` (F, B-2) and its three cell values (left, right
    of shape (F, B-2), missing of shape (F, 1)); None if no feature can be split."""
    score = np.where(hist.valid, score, np.inf)
    if not np.isfinite(score).any():
        return None
    j, k = first_minimum(score)
    left, right, miss = values
    vl, vr, vm = float(left[j, k]), float(right[j, k]), float(miss[j, 0])
    if not hist.binned.has_missing[j]:
        vm = 0.0
    stump = Stump(j, hist.threshold(j, k), vl, vr, vm)
    return stump, hist.outputs(j, k, vl, vr, vm)


class RealValuedBoosting(CostSensitiveMixin, BaseBoosting):
    """Base class: fit loop adding one real-valued stump G_m per round (alphas = 1).

    Subclasses implement :meth:`_start` (per-fit state) and :meth:`_round` (the learner
    of round m from the current F on the training rows) and :meth:`_loss` (the empirical
    loss of F, recorded in ``train_loss_``).

    Termination: ``"max_rounds"``; ``"no_positive_alpha"`` when no learner is left (the
    subclass returns None: zero gradient) or, if ``_require_decrease``, when the best
    learner does not lower the loss (the analogue, for a fixed unit step, of footnote 9
    of Nikolaou et al.; :class:`TrainingError` on the first round);
    ``"non_finite_weights"`` when F or the loss becomes non-finite (the round is
    dropped).

    References
    ----------
    Masnadi-Shirazi & Vasconcelos (2007), Eq. 17 and Algorithms 2-3.
    """

    n_estimators: int
    max_bins: int
    weak_learner: str
    # stop ("no_positive_alpha") when the chosen learner does not lower the loss
    _require_decrease: ClassVar[bool] = True
    # the weak_learner values of the subclass ("stump": three-cell real-valued stumps)
    _weak_learners: ClassVar[tuple[str, ...]] = ("stump",)

    def _check_params(self) -> None:
        n = self.n_estimators
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise InvalidInput(f"n_estimators must be an integer >= 1, got {n!r}")
        if self.weak_learner not in self._weak_learners:
            raise InvalidInput(
                f"{type(self).__name__}: weak_learner must be one of "
                f"{list(self._weak_learners)}, got {self.weak_learner!r}"
            )
        if self.score_kind != "logistic":
            raise InvalidInput(
                f"{type(self).__name__} outputs real values: score_kind must be 'logistic' "
                f"(s'(x) = 1/(1+exp(-2F))), got {self.score_kind!r}"
            )
        self._set_costs()

    def _start(self, y: np.ndarray, sw: np.ndarray) -> None:
        """Per-fit state before round 1."""

    def _round(
        self, hist: BinnedHistogram, y: np.ndarray, sw: np.ndarray, F: np.ndarray
    ) -> tuple[Any, np.ndarray] | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _prepare(self, X: np.ndarray, hist: BinnedHistogram) -> None:
        """Per-fit state that needs the training matrix (e.g. the linear learner's)."""

    def _export(self, learners: list[Any], n_features: int) -> Ensemble:
        """The fitted learners as an :class:`Ensemble` with unit alphas (stumps here)."""
        return stumps_ensemble(learners, np.ones(len(learners)), n_features)

    def _loss(self, y: np.ndarray, sw: np.ndarray, F: np.ndarray) -> float:  # pragma: no cover
        raise NotImplementedError

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> RealValuedBoosting:
        """Fit up to ``n_estimators`` real-valued learners; arguments, result and errors as
        :meth:`BaseBoosting.fit <models.boosting.loop.BaseBoosting.fit>` (``classes_[1]``,
        the positive class, is the one whose miss costs ``c_fn``; ``sample_weight``
        weights the empirical loss)."""
        self._check_params()
        X, y, sw = self._validate_fit(X, y, sample_weight)
        self._start(y, sw)
        hist = BinnedHistogram(X, y, self.max_bins, sw)
        self._prepare(X, hist)
        F = np.zeros(y.shape[0])
        learners: list[Any] = []
        losses: list[float] = []
        loss = self._loss(y, sw, F)
        reason = "max_rounds"
        for t in range(int(self.n_estimators)):
            report(t, int(self.n_estimators))  # may raise TrainingCancelled
            found = self._round(hist, y, sw, F)
            F_new = None if found is None else F + found[1]
            new_loss = np.inf if F_new is None else self._loss(y, sw, F_new)
            if F_new is not None and not (np.all(np.isfinite(F_new)) and np.isfinite(new_loss)):
                reason = "non_finite_weights"
                if t == 0:
                    raise TrainingError("the model became non-finite after the first round")
                warnings.warn(
                    f"boosting stopped at round {t + 1}: the model became non-finite",
                    RuntimeWarning,
                    stacklevel=2,
                )
                break
            stalled = self._require_decrease and not new_loss < loss
            if found is None or F_new is None or stalled:
                reason = "no_positive_alpha"
                if t == 0:
                    raise TrainingError(
                        "the first weak learner does not lower the loss: no informative split"
                    )
                break
            learners.append(found[0])
            losses.append(new_loss)
            F, loss = F_new, new_loss
        m = len(learners)
        self.ensemble_ = self._export(learners, hist.n_features)
        self.estimator_alphas_ = np.ones(m)
        self.train_loss_ = np.asarray(losses, dtype=np.float64)
        self.n_estimators_ = m
        self.termination_reason_ = reason
        return self
