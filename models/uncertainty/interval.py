"""An interval for each row's calibrated probability, from the fold ensemble's spread.

A fold ensemble (:class:`~models.inference.fold_ensemble.FoldEnsembleScorer`, what the
default ``auto`` serves for two classes) holds k boosters ``s_1 .. s_k``, fold booster i
fitted on every training row outside fold i, and one calibration map ``g`` fitted on the
pooled out-of-fold scores. The served probability is ``g(s(x))`` with ``s`` the mean fold
score. How much ``s(x)`` would move with another training sample is estimated from how
much the fold boosters disagree, by the delete-a-group jackknife (Efron and Tibshirani
1993, ch. 11; the k folds are the k deleted groups):

    s_bar = (1/k) sum_i s_i(x),   se(x)^2 = (k - 1)/k * sum_i (s_i(x) - s_bar)^2

The factor ``k - 1`` is what makes the spread of boosters that share (k - 2)/(k - 1) of
their training rows stand for the spread of boosters fitted on independent samples: the
plain spread of the folds (``fold_range``, ``[g(min_i s_i), g(max_i s_i)]``) is several
times too narrow. The interval of method ``fold_jackknife`` is

    [g(s_bar - t se), g(s_bar + t se)],   t = Student's t quantile (1 + level)/2, k - 1 df

mapped, like the served probability, through the calibration map, then through the
model's training-skew removal and deployment prior shift (:meth:`InferenceModel.adjusted
<models.inference.model.InferenceModel.adjusted>`: monotone in ``p1``). Both ends are then
widened, if need be, to contain the served probability (a map that is flat or, for Platt
with a negative slope, decreasing keeps its ends ordered this way).

What the interval covers (measured, ``bench/quality/intervals.py``): the probability that
the same algorithm, trained on an independent sample of the same size, gives the row;
not the row's outcome, and not an unknowable "true" probability. The calibration map
``g`` is one fitted map in every end: its own estimation error is not in the interval.

Only two-class fold ensembles have fold boosters to compare: one booster, a multiclass
fold ensemble (served merged into one booster) and models without probabilities raise
:class:`~models.exceptions.NoInterval` naming what cannot.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.stats import t as student_t

from models.exceptions import NoInterval
from models.inference.fold_ensemble import FoldEnsembleScorer
from models.inference.model import InferenceModel

__all__ = [
    "DEFAULT_METHOD",
    "LEVEL",
    "METHODS",
    "ProbabilityInterval",
    "check_interval_model",
    "fold_scores",
    "probability_interval",
]

METHODS = ("fold_jackknife", "fold_range")
"""``fold_jackknife``: the jackknife t-interval of the mean fold score, mapped;
``fold_range``: the smallest and largest fold booster's score, mapped."""

DEFAULT_METHOD = "fold_jackknife"
"""The method served (chosen by measured coverage and width: docs/api.md, "How sure a decision is")."""

LEVEL = 0.9
"""Nominal level of ``fold_jackknife`` (the t quantile's two-sided level)."""


@dataclass(frozen=True, eq=False)
class ProbabilityInterval:
    """Per row, ``low <= p1 <= high`` with ``p1`` the served probability of ``classes[1]``
    (after any skew removal and prior shift), and the method that gave it."""

    low: np.ndarray  # (n,)
    high: np.ndarray  # (n,)
    method: str


def check_interval_model(model: InferenceModel) -> FoldEnsembleScorer:
    """The model's fold ensemble scorer; :class:`NoInterval` when it has none."""
    if model.rule == "fixed":
        raise NoInterval(
            "this model decides without probabilities (rule fixed): no probability interval"
        )
    scorer = model.scorer
    if not isinstance(scorer, FoldEnsembleScorer) or model.n_classes != 2:
        what = f"{model.n_classes} classes" if model.n_classes != 2 else "one booster"
        algorithm = model.metadata.get("algorithm")
        named = f" (algorithm {algorithm!r})" if algorithm else ""
        raise NoInterval(
            f"this model{named} has {what}: a probability interval needs the k fold "
            "boosters of a two-class fold ensemble, which the default algorithm 'auto' "
            "serves for two classes"
        )
    return scorer


def fold_scores(scorer: FoldEnsembleScorer, X: np.ndarray) -> np.ndarray:
    """Each fold booster's raw score of each row, shape (n, k), in fold order."""
    return np.column_stack([e.score(X, scorer.score_kind) for e in scorer.ensembles])


@lru_cache(maxsize=64)
def t_quantile(level: float, folds: int) -> float:
    """Student's t quantile ``(1 + level) / 2`` with ``folds - 1`` degrees of freedom."""
    return float(student_t.ppf(0.5 + level / 2.0, folds - 1))


def _mapped(model: InferenceModel, scorer: FoldEnsembleScorer, s: np.ndarray, priors: Any) -> Any:
    p1 = np.clip(scorer.calibrator.predict(s), 0.0, 1.0)
    return model.adjusted(np.column_stack([1.0 - p1, p1]), priors)[:, 1]


def probability_interval(
    model: InferenceModel,
    X: np.ndarray,
    served: np.ndarray,
    priors: Any = None,
    *,
    method: str = DEFAULT_METHOD,
    level: float = LEVEL,
) -> ProbabilityInterval:
    """The interval of each row's probability of ``classes[1]``.

    Parameters
    ----------
    model : InferenceModel
        A two-class fold ensemble (else :class:`NoInterval`).
    X : ndarray of shape (n, d)
        Checked float64 rows (:func:`~models.inference.model.check_features`).
    served : ndarray of shape (n,)
        The probability of ``classes[1]`` the decision used: both ends contain it.
    priors : array-like of shape (2,), optional
        Deployment priors, applied to both ends as to the served probability.
    method : {"fold_jackknife", "fold_range"}
    level : float in (0, 1)
        Two-sided level of ``fold_jackknife``'s t quantile.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    scorer = check_interval_model(model)
    s = fold_scores(scorer, X)
    if method == "fold_range":
        lo_s, hi_s = s.min(axis=1), s.max(axis=1)
    else:
        k = s.shape[1]
        mean = s.mean(axis=1)
        se = np.sqrt((k - 1) / k * ((s - mean[:, None]) ** 2).sum(axis=1))
        half = t_quantile(float(level), k) * se
        lo_s, hi_s = mean - half, mean + half
    a = _mapped(model, scorer, lo_s, priors)
    b = _mapped(model, scorer, hi_s, priors)
    p = np.asarray(served, dtype=np.float64)
    low = np.minimum(np.minimum(a, b), p)
    high = np.maximum(np.maximum(a, b), p)
    return ProbabilityInterval(low, high, method)
