"""The one boosting loop shared by AdaBoost and its cost-sensitive variants.

:class:`BaseBoosting` runs the reweighting loop of section 2.2 of Nikolaou et al. and
delegates the variant-specific pieces to small overridable methods:

* :meth:`BaseBoosting._setup` -- once per fit, before anything else (e.g. per-example
  costs ``c(y_i)`` from ``c_fp``/``c_fn`` parameters);
* :meth:`BaseBoosting._initial_weights` -- D^1 (default: the sample weights normalised,
  i.e. 1/N without sample weights);
* :meth:`BaseBoosting._alpha` -- alpha_t from labels, learner outputs and weights
  (default: Eq. 5 with eps clipped to [1e-10, 1 - 1e-10]);
* :meth:`BaseBoosting._update_weights` -- unnormalised D^{t+1} (default: Eq. 6).

Termination (``termination_reason_``), checked in this order every round t:

* ``"no_positive_alpha"`` -- alpha_t is not a positive real number (for AdaBoost: eps_t
  >= 1/2); the learner is *not* added and training stops (paper footnotes 1 and 9).
  On the first round there is no model at all, so :class:`TrainingError` is raised.
* ``"perfect_fit"`` -- eps_t == 0: the learner is kept with alpha computed from the
  clipped eps (1e-10, alpha ~ 11.5) and training stops: it already classifies every
  training example (with positive weight) correctly.
* ``"non_finite_weights"`` -- the updated weights contain NaN/inf or sum to <= 0: the
  round is dropped (learner not added) and training stops (TrainingError on round 1).
* ``"max_rounds"`` -- ``n_estimators`` learners were added.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin

from models.boosting.progress import report
from models.exceptions import InvalidInput, TrainingError
from models.features.binning import is_codes
from models.features.checks import binary_classes, check_fit_data, check_predict_X
from models.inference.ensemble import Ensemble
from models.specs.estimator_params import declared_init
from models.weak import STUMP_CRITERIA
from models.weak.registry import binary_names, binary_trainer

__all__ = [
    "BOOSTING_PARAMS",
    "LEARNER_PARAMS",
    "BaseBoosting",
    "EPS_CLIP",
    "Rounds",
    "TERMINATION_REASONS",
    "run_rounds",
]

EPS_CLIP = 1e-10
TERMINATION_REASONS = ("max_rounds", "perfect_fit", "no_positive_alpha", "non_finite_weights")
SCORES = ("vote", "logistic")


def step_verdict(
    t: int, eps: float, step: float, *, name: str = "alpha", noun: str = "alpha"
) -> str | None:
    """The termination rules every boosting loop shares (see the module docstring).

    Returns ``"no_positive_alpha"`` when ``step`` is not a positive real number (the
    learner is not added; on round 0 :class:`TrainingError` is raised instead),
    ``"perfect_fit"`` when ``eps == 0`` (the learner is kept, training stops), else None.
    """
    if not (np.isfinite(step) and step > 0):
        if t == 0:
            raise TrainingError(
                f"the first weak learner has no positive {noun} (weighted error {eps:.4f}, "
                f"{name} {step!r}): no better-than-chance learner exists"
            )
        return "no_positive_alpha"
    if eps <= 0:
        return "perfect_fit"
    return None


def non_finite_stop(t: int) -> str:
    """Stop after weights became non-finite: TrainingError on round 0, else a warning."""
    if t == 0:
        raise TrainingError("weights became non-finite after the first round")
    warnings.warn(
        f"boosting stopped at round {t + 1}: weights became non-finite",
        RuntimeWarning,
        stacklevel=4,  # the caller of fit (fit -> run_rounds -> here)
    )
    return "non_finite_weights"


class Rounds(NamedTuple):
    """What :func:`run_rounds` kept: the learners, their steps and errors, and why it stopped."""

    learners: list[object]
    steps: list[float]
    errors: list[float]
    reason: str


def run_rounds(
    n_rounds: int,
    fit_round: Callable[[], tuple[object, float, float]],
    advance: Callable[[float], bool],
    *,
    name: str = "alpha",
    noun: str = "alpha",
) -> Rounds:
    """The rounds of a discrete boosting loop, with the termination rules of the module.

    Each round ``fit_round()`` fits a learner and returns ``(learner, eps, step)``
    (the weighted error and the learner's weight, ``alpha`` or ``beta``); unless the
    round ends training (:func:`step_verdict`), ``advance(step)`` updates the weights
    and returns False if they became non-finite (the round is dropped). Reports
    progress each round (:func:`models.boosting.progress.report`, which may raise
    ``TrainingCancelled``).
    """
    learners: list[object] = []
    steps: list[float] = []
    errors: list[float] = []
    for t in range(n_rounds):
        report(t, n_rounds)
        learner, eps, step = fit_round()
        verdict = step_verdict(t, eps, step, name=name, noun=noun)
        if verdict == "no_positive_alpha":
            return Rounds(learners, steps, errors, verdict)
        if verdict is None:
            with np.errstate(over="ignore", invalid="ignore"):
                ok = advance(step)
            if not ok:
                return Rounds(learners, steps, errors, non_finite_stop(t))
        learners.append(learner)
        steps.append(step)
        errors.append(eps)
        if verdict == "perfect_fit":
            return Rounds(learners, steps, errors, verdict)
    return Rounds(learners, steps, errors, "max_rounds")


#: The rounds and their weak learner: the run of parameters every booster starts with
#: (binary, multiclass, JOUS), in order (:func:`models.specs.estimator_params.declared_init`).
LEARNER_PARAMS: dict[str, Any] = {
    "n_estimators": 100,
    "weak_learner": "stump",
    "max_depth": 3,
    "max_bins": 256,
}
#: The parameters of :class:`BaseBoosting` and their defaults, in order: the run that
#: the cost-sensitive variants, SAMME and one-vs-rest extend.
BOOSTING_PARAMS: dict[str, Any] = {
    **LEARNER_PARAMS,
    "score_kind": "vote",
    "random_state": None,
    "stump_criterion": "error",
}


class BaseBoosting(ClassifierMixin, BaseEstimator):
    """Discrete boosting loop with overridable initial weights, alpha and weight update.

    Parameters
    ----------
    n_estimators : int, default=100
        Maximum number of rounds M.
    weak_learner : str, default="stump"
        Weak learner family: a name of :data:`models.weak.WEAK_LEARNERS` with a
        two-class trainer (``"stump"``, ``"tree"``, ``"logistic"``, ``"oblique"``, ...).
    max_depth : int, default=3
        Depth of ``"tree"`` learners, in [1, 8]; ignored otherwise.
    max_bins : int, default=256
        Bins per feature for ``"stump"`` and ``"tree"`` (including the NaN bin), in [3, 256].
    score_kind : {"vote", "logistic"}, default="vote"
        Raw score of :meth:`score_samples` / :meth:`predict_proba`: s(x) (Eq. 24) or
        s'(x) (Eq. 25).
    random_state : int, RandomState or None, default=None
        Accepted for compatibility: every weak learner is deterministic.
    stump_criterion : {"error", "gini"}, default="error"
        Split criterion of ``"stump"`` and ``"tree"``: weighted error (section 2.2) or
        weighted Gini (scikit-learn's ``DecisionTreeClassifier``).

    References
    ----------
    Nikolaou et al., "Cost-sensitive boosting algorithms: do we really need them?",
    Machine Learning 104 (2016): section 2.2 (Eqs. 5-7), section 4 (Eqs. 24-25),
    footnotes 1 and 9 (termination without a positive alpha).
    """

    n_estimators: int
    weak_learner: str
    max_depth: int
    max_bins: int
    score_kind: str
    random_state: int | np.random.RandomState | None
    stump_criterion: str

    __init__ = declared_init(BOOSTING_PARAMS)

    # ----------------------------------------------------------------- hooks
    def _setup(self, y: np.ndarray, sample_weight: np.ndarray) -> None:
        """Per-fit preparation before the first round (default: nothing)."""

    def _initial_weights(self, y: np.ndarray, sample_weight: np.ndarray) -> np.ndarray:
        """D^1: the sample weights normalised to sum 1 (uniform 1/N by default)."""
        return sample_weight / sample_weight.sum()

    def _alpha(self, y: np.ndarray, h: np.ndarray, w: np.ndarray) -> float:
        """alpha_t = 1/2 log((1 - eps_t) / eps_t), Eq. 5, eps clipped to [1e-10, 1 - 1e-10].

        Parameters
        ----------
        y : ndarray of shape (n,)
            Labels in {-1, +1}.
        h : ndarray of shape (n,)
            Outputs of the round's learner on the training rows.
        w : ndarray of shape (n,)
            Current distribution D^t (sums to 1).
        """
        eps = float(np.clip(w[h != y].sum() / w.sum(), EPS_CLIP, 1.0 - EPS_CLIP))
        return 0.5 * float(np.log((1.0 - eps) / eps))

    def _update_weights(
        self, y: np.ndarray, h: np.ndarray, w: np.ndarray, alpha: float
    ) -> np.ndarray:
        """Unnormalised D^{t+1}_i = D^t_i exp(-alpha_t y_i h_t(x_i)), Eq. 6.

        Computed in one work array (the same operations in the same order as
        ``w * np.exp(-alpha * y * h)``, so the same bits) instead of three temporaries:
        on 10,000,000 rows each float64 vector is 76 MiB.
        """
        out = np.multiply(-alpha, y)
        out *= h
        np.exp(out, out=out)
        out *= w
        return out

    # ------------------------------------------------------------ validation
    def _check_params(self) -> None:
        n = self.n_estimators
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise InvalidInput(f"n_estimators must be an integer >= 1, got {n!r}")
        for name, allowed in (
            ("weak_learner", binary_names()),
            ("score_kind", SCORES),
            ("stump_criterion", STUMP_CRITERIA),
        ):
            if getattr(self, name) not in allowed:
                raise InvalidInput(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")

    def _validate_fit(
        self, X: Any, y: Any, sample_weight: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # pre-binned codes (models.features.binning.prebinned) stay uint8: no float copy
        dtype = np.uint8 if is_codes(X) else np.float64
        X, y, sw = check_fit_data(self, X, y, sample_weight, dtype)
        classes, y_idx = binary_classes(self, y)
        self.classes_ = classes
        return X, np.where(y_idx == 1, 1.0, -1.0), sw

    def _make_trainer(self, X: np.ndarray, y: np.ndarray, sw: np.ndarray) -> Any:
        """The trainer of ``weak_learner`` (:data:`models.weak.WEAK_LEARNERS`)."""
        settings = {
            "max_depth": self.max_depth,
            "max_bins": self.max_bins,
            "criterion": getattr(self, "stump_criterion", "error"),  # csboost has no such field
            "seed": 0,
        }
        return binary_trainer(self.weak_learner, X, y, sw, settings)

    # ------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> BaseBoosting:
        """Run the boosting loop of section 2.2 on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric features; NaN allowed (missing), infinity not.
        y : array-like of shape (n_samples,)
            Exactly two distinct labels; ``classes_[1]`` is the positive class.
        sample_weight : array-like of shape (n_samples,), optional
            Finite, non-negative, positive sum; D^1 is proportional to it.

        Returns
        -------
        self

        Raises
        ------
        InvalidInput
            Malformed X, y or sample_weight, or invalid hyper-parameters.
        TrainingError
            Not exactly two classes, zero total weight, or no usable first learner.
        """
        self._check_params()
        X, y, sw = self._validate_fit(X, y, sample_weight)
        self._setup(y, sw)
        w = np.asarray(self._initial_weights(y, sw), dtype=np.float64)
        trainer = self._make_trainer(X, y, sw)
        del sw  # only D^1 and the trainer's binning needed it: one float64 vector less
        h = np.empty(0)  # the round's learner outputs on the training rows

        def fit_round() -> tuple[object, float, float]:
            nonlocal h
            learner, h = trainer.fit_round(w)
            eps = float(w[h != y].sum() / w.sum())
            return learner, eps, float(self._alpha(y, h, w))

        def advance(alpha: float) -> bool:
            nonlocal w, h
            w_new = np.asarray(self._update_weights(y, h, w, alpha), dtype=np.float64)
            total = float(w_new.sum())
            if not (np.all(np.isfinite(w_new)) and np.isfinite(total) and total > 0):
                return False
            w_new /= total  # in place: the same bits as w_new / total
            w, h = w_new, np.empty(0)  # one float64 vector alive between rounds
            return True

        learners, alphas, errors, reason = run_rounds(int(self.n_estimators), fit_round, advance)
        self.ensemble_: Ensemble = trainer.assemble(learners, np.asarray(alphas))
        self.estimator_alphas_ = np.asarray(alphas, dtype=np.float64)
        self.estimator_errors_ = np.asarray(errors, dtype=np.float64)
        self.n_estimators_ = len(alphas)
        self.termination_reason_ = reason
        return self

    # --------------------------------------------------------------- predict
    def _check_X(self, X: Any) -> np.ndarray:
        """Fast validation for numpy input; full scikit-learn validation otherwise."""
        return check_predict_X(self, X)

    def decision_function(self, X: Any) -> np.ndarray:
        """F(x) = sum_t alpha_t h_t(x) (the argument of the sign in Eq. 7), shape (n,)."""
        X = self._check_X(X)
        return self.ensemble_.decision_function(X)

    def score_samples(self, X: Any) -> np.ndarray:
        """Raw score in [0, 1]: s(x) (Eq. 24) or s'(x) (Eq. 25) per ``score_kind``; shape (n,)."""
        X = self._check_X(X)
        return self.ensemble_.score(X, self.score_kind)

    def predict_proba(self, X: Any) -> np.ndarray:
        """UNCALIBRATED ``[1 - s, s]`` with s the raw score; shape (n, 2).

        Boosting scores are systematically distorted (Theorem 2 and section 4 of the
        paper); calibrate them on separate data before using them as probabilities.
        """
        s = self.score_samples(X)
        return np.stack([1.0 - s, s], axis=1)

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where F(x) >= 0, else ``classes_[0]`` (sign rule, Eq. 7).

        A tie ``F(x) = 0`` goes to the positive class, the rule every decision in the
        package uses (``p >= threshold``; :func:`models.decisions.rule.binary_threshold`).
        """
        f = self.decision_function(X)
        return self.classes_[(f >= 0).astype(np.intp)]

    # ---------------------------------------------------------------- staged
    def _staged_sums(self, X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X = self._check_X(X)
        h = self.ensemble_.learner_outputs(X)
        a = self.ensemble_.alphas
        return np.cumsum(h * a, axis=1), np.cumsum((h > 0) * a, axis=1), np.cumsum(a)

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """F_t(x) after each round t = 1..n_estimators_."""
        f, _, _ = self._staged_sums(X)
        for t in range(f.shape[1]):
            yield f[:, t].copy()

    def staged_score_samples(self, X: Any) -> Iterator[np.ndarray]:
        """Raw score (per ``score_kind``) of the ensemble of the first t learners."""
        f, v, a = self._staged_sums(X)
        for t in range(f.shape[1]):
            if self.score_kind == "vote":
                yield np.clip(v[:, t] / a[t], 0.0, 1.0)
            else:
                yield expit(2.0 * f[:, t])  # 1/(1+exp(-2F)) without overflow warnings

    def staged_predict_proba(self, X: Any) -> Iterator[np.ndarray]:
        """UNCALIBRATED ``[1 - s_t, s_t]`` after each round."""
        for s in self.staged_score_samples(X):
            yield np.stack([1.0 - s, s], axis=1)

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """Sign-rule labels (Eq. 7) after each round."""
        for f in self.staged_decision_function(X):
            yield self.classes_[(f >= 0).astype(np.intp)]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.classifier_tags.multi_class = False
        return tags
