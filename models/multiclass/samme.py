"""SAMME (Zhu, Zou, Rosset and Hastie 2009), the cost-insensitive multiclass baseline.

Algorithm 2 of Zhu et al. (discrete SAMME):

1. ``w_i = 1/n`` (proportional to ``sample_weight``);
2. for m = 1..M: (a) fit ``T^{(m)}`` to the labels with weights ``w``;
   (b) ``err = sum_i w_i I(y_i != T(x_i)) / sum_i w_i``;
   (c) ``alpha^{(m)} = log((1 - err) / err) + log(K - 1)``;
   (d) ``w_i <- w_i exp(alpha^{(m)} I(y_i != T(x_i)))``, renormalised;
3. ``C(x) = argmax_k sum_m alpha^{(m)} I(T^{(m)}(x) = k)``.

For ``K = 2`` this is AdaBoost with ``alpha^{(m)} = 2 alpha_t`` (Eq. 5 of Nikolaou et
al.), hence the same predictions. ``alpha > 0`` iff ``err < 1 - 1/K`` (errors within a
relative 1e-12 of ``1 - 1/K`` count as chance, :func:`models.multiclass._base.at_chance`);
otherwise training stops without the learner (scikit-learn does the same). With ``err = 0`` the
learner is kept with ``err`` clipped to 1e-10 and training stops (scikit-learn gives it
weight 1 instead; that only changes how much such a perfect learner dominates).

Scores for probabilities (:meth:`SAMME.score_samples`): ``"vote"`` = the vote fractions
``V_k / sum_m alpha_m`` (for K = 2 the s(x) of Eq. 24 of Nikolaou et al.), ``"logistic"``
= ``softmax(V)``: the population minimiser of the multiclass exponential loss has
``f_k = (K-1)(log p_k - mean_j log p_j)`` and SAMME's ``f_k = (K-1) V_k + const``
(``beta = (K-1)^2 alpha / K``), so ``p_k`` is proportional to ``exp(V_k)``; for K = 2 this
is ``1 / (1 + exp(-2 F))``, Eq. 25 of Nikolaou et al. Both are uncalibrated: the
calibrated form is :class:`models.multiclass.calibrated.CalibratedMulticlass`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.boosting.loop import BOOSTING_PARAMS
from models.exceptions import InvalidInput
from models.inference.multiclass_scorers import VOTE_SCORES as SCORES
from models.inference.multiclass_scorers import raw_vote_scores
from models.multiclass._base import EPS_CLIP, MulticlassBoosting, at_chance
from models.specs.estimator_params import declared_init

__all__ = ["SAMME", "SCORES"]


class SAMME(MulticlassBoosting):
    """Discrete SAMME: Algorithm 2 of Zhu et al. (2009).

    Parameters
    ----------
    n_estimators : int, default=100
        Maximum number of rounds M.
    weak_learner : {"stump", "tree", "oblique"}, default="stump"
        Exact multiclass stump over binned features, or a multiclass histogram tree of
        depth ``max_depth`` over the same bins, minimising the weighted error over the K
        classes, leaves the weighted majority class (``"tree"`` with ``max_depth=1`` and
        ``stump_criterion="gini"`` is scikit-learn's SAMME weak learner).
    max_depth : int, default=3
        Depth of ``"tree"`` learners, in [1, 8].
    max_bins : int, default=256
        Bins per feature of ``"stump"`` and ``"tree"``, in [3, 256].
    score_kind : {"vote", "logistic"}, default="vote"
        Raw score of :meth:`score_samples` (module docstring).
    random_state : int, RandomState or None, default=None
        Accepted for compatibility (the weak learners are deterministic).
    stump_criterion : {"error", "gini"}, default="error"
        Split criterion of ``"stump"`` and ``"tree"``: the weighted error that step 2(a) asks to reduce,
        or weighted Gini (scikit-learn's tree criterion).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        Sorted labels.
    ensemble_ : VoteEnsemble
        Numpy-only learners and weights.
    estimator_alphas_ : ndarray of shape (n_estimators_,)
        ``alpha^{(m)}`` (step 2(c)); equal to scikit-learn's ``estimator_weights_``.
    estimator_errors_ : ndarray of shape (n_estimators_,)
        ``err^{(m)}`` (step 2(b)).
    n_estimators_ : int
        Final ensemble size.
    termination_reason_ : str
        "max_rounds", "perfect_fit", "no_positive_alpha" or "non_finite_weights".
    class_priors_ : ndarray of shape (K,)
        Class frequencies of the training labels.

    References
    ----------
    J. Zhu, H. Zou, S. Rosset, T. Hastie. "Multi-class AdaBoost", Statistics and Its
    Interface 2 (2009), 349-360: Algorithm 2 (SAMME). Used as the cost-insensitive
    baseline by Yang, Guo and Chang (2020), section 5.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> SAMME(n_estimators=20).fit(X, y).predict(X[:3]).tolist()
    [0, 0, 0]
    """

    _weighted_rounds = True  # step 2(a) is weighted classification: oblique learners fit

    __init__ = declared_init(BOOSTING_PARAMS)

    def _check_params(self) -> None:
        super()._check_params()
        if self.score_kind not in SCORES:
            raise InvalidInput(f"score_kind must be one of {SCORES}, got {self.score_kind!r}")

    def _setup(self, y: np.ndarray, sample_weight: np.ndarray) -> None:
        """Step 1: ``w_i`` proportional to the sample weights (1/n by default)."""
        self._state_y = y
        self._state_w = sample_weight / sample_weight.sum()

    def _fit_learner(self, trainer: Any) -> tuple[object, np.ndarray]:
        """Step 2(a): a learner fitted to the labels with weights ``w``."""
        return trainer.fit_weighted(self._state_w)  # type: ignore[no-any-return]

    def _step(self, phi: np.ndarray) -> tuple[float, float]:
        """Steps 2(b)-(c): ``err`` and ``alpha = log((1-err)/err) + log(K-1)`` (err clipped)."""
        w = self._state_w
        self._state_wrong = phi != self._state_y
        err = float(w[self._state_wrong].sum() / w.sum())
        k = len(self.classes_)
        if at_chance(err, 1.0 - 1.0 / k):
            return err, 0.0
        e = min(max(err, EPS_CLIP), 1.0 - EPS_CLIP)
        return err, float(np.log((1.0 - e) / e) + np.log(k - 1.0))

    def _advance(self, phi: np.ndarray, beta: float) -> bool:
        """Step 2(d): ``w_i <- w_i exp(alpha I(y_i != T(x_i)))``, renormalised."""
        w = self._state_w * np.exp(beta * self._state_wrong)
        total = float(w.sum())
        if not (np.all(np.isfinite(w)) and np.isfinite(total) and total > 0):
            return False
        self._state_w = w / total
        return True

    def decision_function(self, X: Any) -> np.ndarray:
        """``f_k(x) = sum_m alpha^{(m)} I(T^{(m)}(x) = k)`` (step 3), shape (n, K).

        For two classes ``f_1 - f_0`` (shape (n,), > 0 means ``classes_[1]``), which is
        ``2 F(x)`` of AdaBoost (Eq. 7 of Nikolaou et al.).
        """
        return self._binary_1d(self.votes(X))

    def score_samples(self, X: Any) -> np.ndarray:
        """Uncalibrated class scores per ``score_kind`` (rows sum to 1), shape (n, K)."""
        X = self._check_X(X)
        return raw_vote_scores(self.ensemble_, X, self.score_kind)

    def predict_proba(self, X: Any) -> np.ndarray:
        """UNCALIBRATED scores of :meth:`score_samples`; calibrate them on separate data."""
        return self.score_samples(X)
