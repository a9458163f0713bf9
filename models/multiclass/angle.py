"""Angle-based cost-sensitive multicategory boosting (Yang, Guo and Chang 2020).

Classes are the simplex vertices ``w_k`` of Eq. 1; the model is
``f(x) = sum_m beta_m g_m(x)`` with ``g_m(x) = w_{Phi_m(x)}``, trained on the
angle-based cost-sensitive loss ``sum_t C_{y,t} l(-<f(x), w_t>)`` (Eqs. 5-6) for the
K x K training cost matrix ``C`` (``C[i][j]`` = cost of predicting ``j`` when the truth
is ``i``: the paper's ``C_{i+1,j+1}``, see :mod:`models.decisions.training_costs`), and predicts
with the least-angle rule ``argmax_k <f(x), w_k>`` (section 2.2), which is Fisher
consistent for the cost-sensitive Bayes rule (Eq. 4, Theorem 1). The decisions embody
the training costs, so these models are served with the ``"fixed"`` rule.

* :class:`AngleAdaBoost` -- Algorithm 1, exponential loss ``l(z) = exp(-z)``:
  ``alpha^{(0)}_{i,k} = C_{y_i,k} / sum C`` (step 2); ``Phi`` minimises
  ``sum_i alpha_{i,Phi(x_i)}`` and ``beta = ((K-1)/K)(log((1-eps)/eps) - log(K-1))`` with
  ``eps`` of Eq. 22 (Lemma 1, Eq. 21); ``alpha_{i,k} <- alpha_{i,k} exp(beta <g(x_i), w_k>)``
  and renormalise (steps 6-7), where ``<w_Phi, w_k>`` is 1 if ``k = Phi`` else ``-1/(K-1)``.
* :class:`AngleLogitBoost` -- Algorithm 2, logit loss ``l(z) = log(1 + exp(-z))``:
  ``alpha_{i,k} = C_{y_i,k} sigmoid(<f(x_i), w_k>)`` (step 7, with ``gamma = exp(score)``),
  the same learner criterion (Lemma 2, Eq. 26) and ``beta`` = argmin of Eq. 28.

Numerical choices (the paper is silent on them): ``eps`` is clipped to [1e-10, 1-1e-10];
``beta <= 0`` (``eps >= 1/K``) stops training without the learner; ``eps = 0`` keeps the
learner with the clipped ``eps`` and stops (see :mod:`models.multiclass._base`). Eq. 28
is convex in ``beta``; it is minimised by a safeguarded Newton method started at the
Lemma 1 step (the paper uses BFGS from an unspecified start: same minimiser), on
``(0, beta_max]`` with ``beta_max`` twice Algorithm 1's step at ``eps = 1e-10`` (for K = 2
the logit link ``<f*, w_1> = log(P1/P2)`` is twice the exponential one, section 3.2).
The scores ``<f(x_i), w_k>`` are kept directly, so ``gamma`` never overflows.
``sample_weight`` (not in the paper) multiplies row ``i`` of the loss.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy.special import expit

from models.decisions.training_costs import check_cost_matrix
from models.exceptions import NotFitted, TrainingError
from models.inference.model import InferenceModel
from models.inference.multiclass_scorers import AngleScorer, theorem2_probabilities
from models.inference.simplex import scores_from_votes, simplex_vertices
from models.multiclass._base import EPS_CLIP, MulticlassBoosting, at_chance
from models.specs.estimator_params import declared_init, declared_params

__all__ = ["AngleAdaBoost", "AngleLogitBoost", "lemma1_beta"]


def lemma1_beta(eps: float, n_classes: int) -> float:
    """``beta = ((K-1)/K) [log((1-eps)/eps) - log(K-1)]``, Eq. 21 (eps clipped to 1e-10)."""
    k = int(n_classes)
    e = min(max(float(eps), EPS_CLIP), 1.0 - EPS_CLIP)
    return float((k - 1.0) / k * (np.log((1.0 - e) / e) - np.log(k - 1.0)))


class _AngleBoosting(MulticlassBoosting):
    """Shared parts of Algorithms 1 and 2 (cost matrix, eps of Eq. 22, serving)."""

    loss: ClassVar[str] = ""

    __init__ = declared_init(declared_params(MulticlassBoosting), cost_matrix=None)

    def _check_params(self) -> None:
        super()._check_params()
        if self.cost_matrix is not None:
            check_cost_matrix(self.cost_matrix)

    def _setup(self, y: np.ndarray, sample_weight: np.ndarray) -> None:
        """Validate ``C`` against the classes; ``alpha^{(0)}_{i,k} = C_{y_i,k} / sum C`` (step 2)."""
        k = len(self.classes_)
        c = check_cost_matrix(self.cost_matrix, k)
        self.cost_matrix_ = c
        self.training_cost_matrix_ = c
        cy = c[y] * sample_weight[:, None]
        total = float(cy.sum(axis=1).sum())
        if not total > 0:
            raise TrainingError(
                "cost_matrix: every training row has zero misclassification cost (the rows "
                "of C for the classes present are all 0); nothing to learn"
            )
        self._state_cy = cy / total
        self._state_a = self._state_cy.copy()
        self._state_rows = np.arange(y.size)
        self.calibration_info_ = {
            "method": "none", "split": "none", "n_boost": int(y.size), "n_calibration": 0,
            "note": "angle-based: decisions embody the training cost matrix (rule 'fixed'); "
            "not calibrated",
        }  # fmt: skip

    def _fit_learner(self, trainer: Any) -> tuple[object, np.ndarray]:
        """``Phi = argmin_Phi sum_i alpha_{i,Phi(x_i)}`` (Lemma 1 / Lemma 2)."""
        return trainer.fit_costs(self._state_a)  # type: ignore[no-any-return]

    def _eps(self, phi: np.ndarray) -> float:
        """``eps = sum_i alpha_{i,Phi(x_i)} / sum_{i,k} alpha_{i,k}``, Eq. 22."""
        a = self._state_a
        picked = a[self._state_rows, phi]
        return float(picked[picked != 0].sum() / a.sum(axis=1).sum())

    def _inner(self, phi: np.ndarray) -> np.ndarray:
        """``<g(x_i), w_k> = <w_{Phi(x_i)}, w_k>``: 1 if ``k = Phi(x_i)``, else -1/(K-1)."""
        k = len(self.classes_)
        u = np.full((phi.size, k), -1.0 / (k - 1.0))
        u[self._state_rows, phi] = 1.0
        return u

    # ------------------------------------------------------------- serving
    def scores(self, X: Any) -> np.ndarray:
        """Class scores ``<f(x), w_k>``, shape (n, K); the prediction is their argmax."""
        votes = self.votes(X)
        return scores_from_votes(votes, self.ensemble_.total)

    def decision_function(self, X: Any) -> np.ndarray:
        """:meth:`scores`; for two classes ``<f, w_2> - <f, w_1>``, shape (n,)."""
        return self._binary_1d(self.scores(X))

    def angle_vector(self, X: Any) -> np.ndarray:
        """``f(x)`` in R^{K-1} (Algorithm 1 step 9 / Algorithm 2 step 10), shape (n, K-1)."""
        return self.votes(X) @ simplex_vertices(len(self.classes_))

    def predict_proba(self, X: Any) -> np.ndarray:
        """The paper's plug-in class probabilities (Theorem 2, Eq. 13); NOT calibrated.

        Raises
        ------
        InvalidInput
            If the training cost matrix is not invertible (Eq. 13 needs ``C^{-1}``).
        """
        return theorem2_probabilities(self.scores(X), self.cost_matrix_, self.loss)

    def to_inference(self, feature_names: list[str] | None = None) -> InferenceModel:
        """Numpy-only model served with the ``"fixed"`` rule under ``cost_matrix_``."""
        if not hasattr(self, "ensemble_"):
            raise NotFitted(f"{type(self).__name__} is not fitted yet; call fit(X, y) first")
        names = feature_names
        if names is None and hasattr(self, "feature_names_in_"):
            names = [str(n) for n in self.feature_names_in_]
        return InferenceModel(
            classes=tuple(self.classes_.tolist()),
            feature_names=None if names is None else tuple(names),
            scorer=AngleScorer(self.ensemble_, self.loss, self.cost_matrix_.copy()),
            train_priors=np.asarray(self.class_priors_, dtype=np.float64),
            training_costs=self.cost_matrix_.copy(),
            rule="fixed",
        )


class AngleAdaBoost(_AngleBoosting):
    """Angle-Based Cost-Sensitive Multicategory AdaBoost (Algorithm 1 of Yang et al.).

    Parameters
    ----------
    n_estimators : int, default=100
        Maximum number of rounds M.
    weak_learner : {"stump", "tree"}, default="stump"
        Exact cost-weighted multiclass stump, or a histogram tree of depth ``max_depth``
        whose splits minimise the same cost (the paper's experiments: trees with at most
        4 leaves, i.e. ``max_depth=2``).
    max_depth : int, default=3
        Depth of ``"tree"`` learners, in [1, 8].
    max_bins : int, default=256
        Bins per feature of ``"stump"`` and ``"tree"``.
    random_state : int, RandomState or None, default=None
        Seeds ``"tree"`` learners.
    cost_matrix : array-like of shape (K, K) or None, default=None
        Training costs, ``C[i][j]`` = cost of predicting ``classes_[j]`` when the truth is
        ``classes_[i]``; finite, >= 0, zero diagonal. ``None``: 0-1 costs ``1 - I``.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        Sorted labels (rows/columns of ``cost_matrix_``).
    cost_matrix_, training_cost_matrix_ : ndarray of shape (K, K)
        The validated training cost matrix.
    ensemble_ : VoteEnsemble
        Learners ``Phi_m`` and weights ``beta_m``.
    estimator_alphas_ : ndarray of shape (n_estimators_,)
        ``beta^{(m)}`` of Eq. 21 (the paper's ``alpha`` is the weight matrix).
    estimator_errors_ : ndarray of shape (n_estimators_,)
        ``eps^{(m)}`` of Eq. 22.
    n_estimators_ : int
        Final ensemble size.
    termination_reason_ : str
        As in :mod:`models.multiclass._base`.
    calibration_info_ : dict
        ``{"method": "none", ...}``: these models are never calibrated (for the service's
        version metadata).

    Notes
    -----
    With K = 2 and symmetric costs, ``beta = 1/2 log((1-eps)/eps)`` and the update
    multiplies the weight of a misclassified row by ``e^beta`` and of a correct one by
    ``e^-beta``: this is AdaBoost (Eqs. 5-6 of Nikolaou et al.), with the same predictions.

    References
    ----------
    Y. Yang, Y. Guo, X. Chang. "Angle-Based Cost-Sensitive Multicategory
    Classification" (2020): Eq. 1, Eqs. 5-6, Eqs. 19-23 (Lemma 1), Algorithm 1,
    Theorems 1-2.
    """

    loss: ClassVar[str] = "exponential"

    def _step(self, phi: np.ndarray) -> tuple[float, float]:
        """``eps`` (Eq. 22) and ``beta`` (Eq. 21)."""
        eps = self._eps(phi)
        k = len(self.classes_)
        return eps, 0.0 if at_chance(eps, 1.0 / k) else lemma1_beta(eps, k)

    def _advance(self, phi: np.ndarray, beta: float) -> bool:
        """Steps 6-7: ``alpha_{i,k} exp(beta <g(x_i), w_k>)``, renormalised."""
        a = self._state_a * np.exp(beta * self._inner(phi))
        total = float(a.sum(axis=1).sum())
        if not (np.all(np.isfinite(a)) and np.isfinite(total) and total > 0):
            return False
        self._state_a = a / total
        return True


class AngleLogitBoost(_AngleBoosting):
    """Angle-Based Cost-Sensitive Multicategory LogitBoost (Algorithm 2 of Yang et al.).

    Parameters and attributes as :class:`AngleAdaBoost`; ``estimator_alphas_`` holds the
    ``beta^{(m)}`` minimising Eq. 28 and ``estimator_errors_`` the ``eps`` of Eq. 22
    computed with the LogitBoost weights (``beta > 0`` iff ``eps < 1/K``: the derivative
    of Eq. 28 at 0 is ``(K/(K-1)) sum_i alpha_{i,Phi} - sum alpha / (K-1)``).

    References
    ----------
    Y. Yang, Y. Guo, X. Chang (2020): Eq. 24 (objective), Eqs. 25-27 (Lemma 2),
    Eq. 28 (step length), Algorithm 2, Theorems 1-2.
    """

    loss: ClassVar[str] = "logit"

    def _setup(self, y: np.ndarray, sample_weight: np.ndarray) -> None:
        """Step 2: ``alpha^{(0)}`` proportional to ``C_{y_i,k}``, ``gamma = 1`` (scores 0)."""
        super()._setup(y, sample_weight)
        self._state_s = np.zeros_like(self._state_cy)

    def _step(self, phi: np.ndarray) -> tuple[float, float]:
        """``eps`` (Eq. 22) and ``beta = argmin_beta R(beta)`` of Eq. 28."""
        k = len(self.classes_)
        eps = self._eps(phi)
        if at_chance(eps, 1.0 / k):
            return eps, 0.0  # R'(0) >= 0: no descent direction
        cap = 2.0 * lemma1_beta(EPS_CLIP, k)
        self._state_u = self._inner(phi)
        if eps <= 0:
            return eps, cap
        start = 2.0 * lemma1_beta(eps, k)
        return eps, _newton_line_search(self._state_cy, self._state_s, self._state_u, start, cap)

    def _advance(self, phi: np.ndarray, beta: float) -> bool:
        """Step 7-8: scores ``+= beta <g, w_k>``; ``alpha = C sigmoid(score)``, renormalised."""
        s = self._state_s + beta * self._state_u
        a = self._state_cy * expit(s)
        total = float(a.sum(axis=1).sum())
        if not (np.all(np.isfinite(a)) and np.isfinite(total) and total > 0):
            return False
        self._state_s, self._state_a = s, a / total
        return True


def _newton_line_search(
    cy: np.ndarray, s: np.ndarray, u: np.ndarray, start: float, cap: float, tol: float = 1e-12
) -> float:
    """Minimiser of ``R(beta) = sum cy softplus(s + beta u)`` (Eq. 28) on ``(0, cap]``.

    ``R`` is convex with ``R'(0) < 0``; Newton steps are kept inside the bracket
    ``[lo, hi]`` of the sign change of ``R'`` (bisection otherwise). Returns ``cap`` when
    ``R'(cap) <= 0``.
    """
    cu = cy * u
    cu2 = cu * u

    def deriv(b: float) -> tuple[float, float]:
        p = expit(s + b * u)
        return float((cu * p).sum()), float((cu2 * p * (1.0 - p)).sum())

    if deriv(cap)[0] <= 0:
        return cap
    lo, hi = 0.0, cap
    b = start if 0.0 < start < cap else 0.5 * cap
    for _ in range(200):
        g, h = deriv(b)
        if g == 0:
            return b
        if g > 0:
            hi = b
        else:
            lo = b
        nb = b - g / h if h > 0 else 0.5 * (lo + hi)
        if not lo < nb < hi:
            nb = 0.5 * (lo + hi)
        if abs(nb - b) <= tol * (1.0 + b):
            return nb
        b = nb
    return b


def _build(cls: type[_AngleBoosting]) -> Any:
    def build(common: dict[str, Any], params: dict[str, Any]) -> _AngleBoosting:
        cost = params.get("cost_matrix")
        if cost is not None:
            cost = check_cost_matrix(cost, where="params.cost_matrix").tolist()
        est = cls(
            cost_matrix=cost,
            n_estimators=common.get("n_estimators", 100),
            weak_learner=common.get("weak_learner", "stump"),
            max_depth=common.get("max_depth", 3),
            random_state=common.get("random_state"),
        )
        est._check_params()
        return est

    return build


def _specs() -> list[Any]:
    from models.specs.algorithm import AlgorithmSpec, ParamSpec

    cost = ParamSpec(
        "cost_matrix",
        "matrix",
        None,
        "training cost matrix, C[i][j] = cost of predicting class j when the truth is class "
        "i (classes in sorted order); finite, >= 0, zero diagonal; null = 0-1 costs",
    )
    rule = (
        "least-angle rule argmax_k <f(x), w_k> (Yang et al. section 2.2), Fisher-consistent "
        "for argmin_k sum_j C_jk P_j(x) at the TRAINING cost matrix (Eq. 4, Theorem 1); "
        "requests may use only the training costs (or a positive multiple): other costs are "
        "refused (rule 'fixed')"
    )
    common: dict[str, Any] = {
        "family": "multiclass",
        "source": "Yang, Guo & Chang (2020), Angle-Based Cost-Sensitive Multicategory "
        "Classification",
        "trains_with_costs": True,
        "decision_rule": rule,
        "params": (cost,),
        "calibrated_probabilities": False,
        "weak_learners": ("stump", "tree"),
    }
    return [
        AlgorithmSpec(
            name="angle_adaboost",
            title="Angle-based cost-sensitive multicategory AdaBoost",
            equations="Eq. 1 (simplex), Eqs. 5-6 (loss), Eqs. 19-23 (Lemma 1), Algorithm 1",
            build=_build(AngleAdaBoost),
            notes="Theorem 2 (Eq. 13) plug-in probabilities are available but not calibrated.",
            **common,
        ),
        AlgorithmSpec(
            name="angle_logitboost",
            title="Angle-based cost-sensitive multicategory LogitBoost",
            equations="Eq. 1 (simplex), Eq. 24 (loss), Eqs. 25-27 (Lemma 2), Eq. 28 (step, "
            "safeguarded Newton instead of BFGS), Algorithm 2",
            build=_build(AngleLogitBoost),
            notes="Theorem 2 (Eq. 13) plug-in probabilities are available but not calibrated.",
            **common,
        ),
    ]


SPECS = _specs()
