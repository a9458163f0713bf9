"""Calibration and cost metrics for monitoring a deployed model on labelled traffic.

Pure numpy/scipy functions over labels, probabilities and decisions, for the
monitoring endpoint (per version and time bucket) and for recalibration (before and
after on a held-out part of the rows):

* :func:`reliability` -- reliability bins (equal-width or equal-mass) and the expected
  calibration error (ECE) and maximum calibration error of a binary ``P(y = 1)``;
  :func:`top_label_reliability` and :func:`classwise_ece` for more than two classes.
* :func:`spiegelhalter_z` -- Spiegelhalter's z test of calibration (statistic and
  two-sided p-value).
* :func:`hosmer_lemeshow` -- the Hosmer-Lemeshow goodness-of-fit test over groups of
  equal mass (statistic, degrees of freedom, p-value).
* :func:`cox_calibration` -- Cox's calibration intercept and slope, and the likelihood
  ratio test of "intercept 0 and slope 1" (shifted and mis-scaled probabilities).
* :func:`calibration_alarm` -- the three tests at once with a Bonferroni correction.
* :func:`realised_cost` -- the realised cost of decisions given the labels and one cost
  matrix or one per row (optionally a cost reported by the caller), against the
  expected cost at decision time.
* :func:`calibration_summary` -- the headline numbers at once (Brier, log loss, ECE,
  the tests and the alarm), binary or multiclass.

Brier score and log loss are those of :mod:`models.evaluation.metrics` (binary
:func:`~models.evaluation.metrics.brier_score`, :func:`~models.evaluation.metrics.log_loss`; multiclass
:func:`~models.evaluation.metrics.multiclass_brier_score`, :func:`~models.evaluation.metrics.multiclass_log_loss`).

Conventions (the arguments of every function): binary labels ``y01``, array-like of
shape (n,), are 0/1 with 1 the positive class (``classes[1]``) and ``p1``, array-like of
shape (n,), the estimated ``P(y = 1)`` in ``[0, 1]``; multiclass labels ``y_index``,
array-like of int of shape (n,), are class indices into the columns of ``proba``,
array-like of shape (n, K), the estimated class probabilities (for two classes
``y_index`` is 0/1). Cost matrices follow the project convention
``C[i][j]`` = cost of deciding ``j`` when the truth is ``i``.

References
----------
.. [1] Naeini, M. P., Cooper, G., Hauskrecht, M. (2015). Obtaining well calibrated
   probabilities using Bayesian binning. AAAI (ECE and MCE over bins).
.. [2] Guo, C., Pleiss, G., Sun, Y., Weinberger, K. Q. (2017). On calibration of modern
   neural networks. ICML (top-label reliability diagrams, Eq. 3 ECE).
.. [3] Kull, M., Perello-Nieto, M., Kaengsepp, M., Silva Filho, T., Song, H., Flach, P.
   (2019). Beyond temperature scaling: obtaining well-calibrated multiclass
   probabilities with Dirichlet calibration. NeurIPS (classwise ECE).
.. [4] Spiegelhalter, D. J. (1986). Probabilistic prediction in patient management and
   clinical trials. Statistics in Medicine 5, 421-433 (the z statistic of the Brier score).
.. [5] Hosmer, D. W., Lemeshow, S. (1980). Goodness of fit tests for the multiple
   logistic regression model. Communications in Statistics A 9, 1043-1069; Hosmer,
   Lemeshow, Sturdivant (2013), Applied Logistic Regression, 3rd ed., section 5.2.2.
.. [6] Cox, D. R. (1958). Two further applications of a model for binary regression.
   Biometrika 45, 562-565 (the calibration intercept and slope).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, logit
from scipy.stats import chi2, norm

from models.decisions.rule import CostMatrix
from models.evaluation.metrics import (
    _check_binary,
    _check_multiclass,
    brier_score,
    log_loss,
    multiclass_brier_score,
    multiclass_log_loss,
    row_costs,
)
from models.exceptions import InvalidInput

__all__ = [
    "BIN_STRATEGIES",
    "ALARM_ALPHA",
    "CalibrationAlarm",
    "CalibrationTest",
    "CoxCalibration",
    "HosmerLemeshow",
    "RealisedCost",
    "Reliability",
    "calibration_alarm",
    "calibration_summary",
    "classwise_ece",
    "cox_calibration",
    "hosmer_lemeshow",
    "realised_cost",
    "realised_from_rows",
    "reliability",
    "spiegelhalter_z",
    "top_label_reliability",
]

#: ``"uniform"``: equal-width bins on [0, 1]; ``"quantile"``: equal-mass bins.
BIN_STRATEGIES: tuple[str, ...] = ("uniform", "quantile")


@dataclass(frozen=True, eq=False)
class Reliability:
    """Reliability bins of probability estimates and the calibration errors over them.

    Attributes
    ----------
    edges : ndarray of shape (n_bins + 1,)
        Bin edges, non-decreasing, from 0 to 1 (``"uniform"``) or from the smallest to
        the largest probability (``"quantile"``).
    count : ndarray of shape (n_bins,), int64
        Rows per bin.
    mean_predicted : ndarray of shape (n_bins,)
        Mean estimated probability in each bin (NaN for an empty bin).
    observed : ndarray of shape (n_bins,)
        Observed frequency of the event in each bin (NaN for an empty bin).
    ece : float
        ``sum_b (n_b / n) |observed_b - mean_predicted_b|``, empty bins contributing 0.
    mce : float
        ``max_b |observed_b - mean_predicted_b|`` over non-empty bins.
    """

    edges: np.ndarray
    count: np.ndarray
    mean_predicted: np.ndarray
    observed: np.ndarray
    ece: float
    mce: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; empty bins have ``None`` for their mean and frequency."""

        def nums(a: np.ndarray) -> list[float | None]:
            return [None if not np.isfinite(v) else float(v) for v in a]

        return {
            "edges": [float(v) for v in self.edges],
            "count": [int(v) for v in self.count],
            "mean_predicted": nums(self.mean_predicted),
            "observed": nums(self.observed),
            "ece": self.ece,
            "mce": self.mce,
        }


def _check_bins(n_bins: int, strategy: str) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise InvalidInput(f"n_bins: expected an integer >= 1, got {n_bins!r}")
    if strategy not in BIN_STRATEGIES:
        raise InvalidInput(f"strategy: expected one of {list(BIN_STRATEGIES)}, got {strategy!r}")
    return int(n_bins)


def _bin_index(p: np.ndarray, n_bins: int, strategy: str) -> tuple[np.ndarray, np.ndarray]:
    """Bin of each probability and the edges (see :func:`reliability`)."""
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        return np.minimum((p * n_bins).astype(np.int64), n_bins - 1), edges
    edges = np.quantile(p, np.linspace(0.0, 1.0, n_bins + 1))
    edges[0], edges[-1] = p.min(), p.max()
    # bin b holds edges[b] <= p < edges[b + 1]; the largest value goes to the last bin.
    # Ties at an inner edge all go to the upper bin, so a bin may be empty when many
    # rows share one probability (e.g. isotonic steps).
    idx = np.searchsorted(edges[1:-1], p, side="right")
    return idx.astype(np.int64), edges


def _reliability(event: np.ndarray, p: np.ndarray, n_bins: int, strategy: str) -> Reliability:
    b, edges = _bin_index(p, n_bins, strategy)
    count = np.bincount(b, minlength=n_bins)
    sum_p = np.bincount(b, weights=p, minlength=n_bins)
    sum_y = np.bincount(b, weights=event, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.where(count > 0, sum_p / np.maximum(count, 1), np.nan)
        observed = np.where(count > 0, sum_y / np.maximum(count, 1), np.nan)
    gap = np.abs(sum_y - sum_p)  # n_b |observed_b - mean_b|
    nonempty = count > 0
    mce = float(np.max(gap[nonempty] / count[nonempty]))
    return Reliability(
        edges=edges,
        count=count.astype(np.int64),
        mean_predicted=mean_p,
        observed=observed,
        ece=float(gap.sum() / p.size),
        mce=mce,
    )


def reliability(
    y01: ArrayLike, p1: ArrayLike, n_bins: int = 10, strategy: str = "uniform"
) -> Reliability:
    """Reliability bins and expected calibration error of a binary ``P(y = 1)``.

    ``strategy="uniform"``: bin ``b`` holds ``b / n_bins <= p1 < (b + 1) / n_bins``, the
    last bin also ``p1 = 1`` (the binning of :func:`models.evaluation.metrics.expected_calibration_error`,
    whose value this ECE equals). ``strategy="quantile"`` (equal mass): the edges are the
    ``b / n_bins`` quantiles of ``p1``, so each bin holds about ``n / n_bins`` rows; rows
    tied on an inner edge all go to the upper bin, so with many tied probabilities some
    bins are empty and others larger. Equal-mass bins keep every bin populated when the
    probabilities crowd near 0 (rare events), where equal-width bins leave most empty.

    ``ECE = sum_b (n_b / n) |observed_b - mean_predicted_b|`` (Naeini et al. 2015,
    Guo et al. 2017 Eq. 3), ``MCE = max_b |observed_b - mean_predicted_b|``.

    Parameters
    ----------
    n_bins : int, default 10
        Number of bins.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.

    Returns
    -------
    Reliability

    Raises
    ------
    InvalidInput
        Malformed labels or probabilities, no rows, a bad ``n_bins`` or ``strategy``.

    References
    ----------
    .. [1] Naeini, Cooper, Hauskrecht (2015), AAAI.
    .. [2] Guo, Pleiss, Sun, Weinberger (2017), ICML, Eq. 3.
    """
    nb = _check_bins(n_bins, strategy)
    y, p = _check_binary(y01, p1)
    return _reliability(y, p, nb, strategy)


def top_label_reliability(
    y_index: ArrayLike, proba: ArrayLike, n_bins: int = 10, strategy: str = "uniform"
) -> Reliability:
    """Top-label (confidence) reliability: is ``max_k p_k`` the chance that argmax is right?

    The event of a row is "the class of highest probability is the true class" and its
    probability is that highest probability (Guo et al. 2017). Ties in the argmax go to
    the first class. For two classes this differs from :func:`reliability` of ``p1``: the
    confidence is ``max(p1, 1 - p1)`` in ``[1/2, 1]``. ``n_bins`` and ``strategy`` as in
    :func:`reliability`.

    References
    ----------
    .. [1] Guo, Pleiss, Sun, Weinberger (2017), ICML, section 2 and Eq. 3.
    """
    nb = _check_bins(n_bins, strategy)
    y, p = _check_proba_rows(y_index, proba)
    top = np.argmax(p, axis=1)
    conf = p[np.arange(y.size), top]
    return _reliability((top == y).astype(np.float64), conf, nb, strategy)


def classwise_ece(
    y_index: ArrayLike, proba: ArrayLike, n_bins: int = 10, strategy: str = "uniform"
) -> float:
    """Classwise ECE: the mean over classes ``k`` of the ECE of ``p_k`` for the event ``y = k``.

    Each class's column is binned separately (:func:`reliability` with the same
    ``n_bins`` and ``strategy``), as in Kull et al. (2019). For two classes both columns
    have the same gap in each bin, so it equals the binary ECE of ``p1`` unless some
    ``p1`` lie exactly on an inner bin edge (``1 - p1`` then falls in the other bin).
    ``n_bins`` and ``strategy`` as in :func:`reliability`.

    References
    ----------
    .. [1] Kull et al. (2019), NeurIPS, section 2 (classwise-ECE).
    """
    nb = _check_bins(n_bins, strategy)
    y, p = _check_proba_rows(y_index, proba)
    k = p.shape[1]
    return float(
        np.mean(
            [_reliability((y == c).astype(np.float64), p[:, c], nb, strategy).ece for c in range(k)]
        )
    )


def _check_proba_rows(y_index: ArrayLike, proba: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Class indices and probabilities in [0, 1], at least one row."""
    y, p = _check_multiclass(y_index, proba)
    if y.size == 0:
        raise InvalidInput("y_index: expected at least one row, got 0")
    _check_unit(p)
    return y, p


def _check_unit(p: np.ndarray) -> None:
    bad = ~((p >= 0) & (p <= 1))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InvalidInput(
            f"proba: row {int(r)}, class {int(c)}: expected a probability in [0, 1], got {p[r, c]}"
        )


@dataclass(frozen=True)
class CalibrationTest:
    """A test statistic and its two-sided p-value under "the probabilities are calibrated"."""

    statistic: float
    p_value: float


def spiegelhalter_z(y01: ArrayLike, p1: ArrayLike) -> CalibrationTest:
    """Spiegelhalter's z test: is the Brier score what calibrated probabilities would give?

    Under the hypothesis that every ``y_r`` is Bernoulli(``p_r``) independently,

    ``Z = sum_r (y_r - p_r)(1 - 2 p_r) / sqrt(sum_r (1 - 2 p_r)^2 p_r (1 - p_r))``

    is asymptotically standard normal (Spiegelhalter 1986, Eqs. for ``E[B]`` and
    ``Var[B]`` of the Brier score ``B``); the p-value is two-sided, ``2 (1 - Phi(|Z|))``.
    A small p-value flags miscalibration. The test has no power against
    miscalibration at ``p = 1/2`` (weight ``1 - 2p = 0``).

    Parameters
    ----------

    Returns
    -------
    CalibrationTest
        ``statistic`` (Z) and ``p_value``.

    Raises
    ------
    InvalidInput
        Malformed inputs, or a zero variance (every ``p`` is 0, 1/2 or 1), where Z is
        undefined.

    References
    ----------
    .. [1] Spiegelhalter, D. J. (1986). Statistics in Medicine 5, 421-433.
    """
    y, p = _check_binary(y01, p1)
    w = 1.0 - 2.0 * p
    var = float(np.sum(w * w * p * (1.0 - p)))
    if not var > 0.0:
        raise InvalidInput(
            "spiegelhalter_z: undefined when every probability is 0, 1/2 or 1 (zero variance)"
        )
    z = float(np.sum((y - p) * w) / np.sqrt(var))
    return CalibrationTest(statistic=z, p_value=float(2.0 * norm.sf(abs(z))))


@dataclass(frozen=True)
class HosmerLemeshow:
    """Hosmer-Lemeshow statistic, its degrees of freedom and p-value, and the groups used."""

    statistic: float
    df: int
    p_value: float
    n_groups: int


def hosmer_lemeshow(
    y01: ArrayLike, p1: ArrayLike, n_groups: int = 10, ddof: int = 2
) -> HosmerLemeshow:
    """Hosmer-Lemeshow test over groups of equal mass ("deciles of risk").

    Rows are sorted by ``p1`` and cut into ``n_groups`` groups of (nearly) equal size
    (``numpy.array_split`` of the sorted order; tied probabilities may straddle two
    groups). With observed positives ``O_g``, expected positives ``E_g = sum p`` and
    size ``n_g``::

        H = sum_g (O_g - E_g)^2 / (E_g (1 - E_g / n_g))

    which is chi-squared with ``G - ddof`` degrees of freedom under calibration. A group
    whose variance term is 0 (every ``p`` in it 0 or 1) is certain of its outcomes: when
    they agree (``O_g = E_g``) it carries no randomness, adds nothing and does not count
    in ``G``; when they contradict it, calibration is refuted outright: the statistic is
    infinite and the p-value 0 (such a group still counts in ``G``).

    ``ddof=2`` is the textbook value for a model fitted on the same rows (Hosmer &
    Lemeshow 1980). On rows the model never saw -- monitoring deployed traffic, or a
    held-out part of recalibration rows -- nothing was fitted to them and ``ddof=0``
    (``G`` degrees of freedom) is the usual choice (Hosmer, Lemeshow & Sturdivant
    2013, section 5.2.2).

    Parameters
    ----------
    n_groups : int, default 10
        Number of groups ``G`` (at most ``n``).
    ddof : int, default 2
        Degrees of freedom subtracted from ``G``.

    Returns
    -------
    HosmerLemeshow

    Raises
    ------
    InvalidInput
        Malformed inputs, ``n_groups < 2`` or ``> n``, or fewer than ``ddof + 1`` usable
        groups.

    References
    ----------
    .. [1] Hosmer, D. W., Lemeshow, S. (1980). Communications in Statistics A 9, 1043-1069.
    .. [2] Hosmer, Lemeshow, Sturdivant (2013). Applied Logistic Regression, 3rd ed., 5.2.2.
    """
    y, p = _check_binary(y01, p1)
    if isinstance(n_groups, bool) or not isinstance(n_groups, int | np.integer) or n_groups < 2:
        raise InvalidInput(f"n_groups: expected an integer >= 2, got {n_groups!r}")
    if n_groups > y.size:
        raise InvalidInput(
            f"n_groups: expected at most one group per row ({y.size}), got {n_groups}"
        )
    if isinstance(ddof, bool) or not isinstance(ddof, int | np.integer) or ddof < 0:
        raise InvalidInput(f"ddof: expected an integer >= 0, got {ddof!r}")
    order = np.argsort(p, kind="stable")
    stat, used = 0.0, 0
    for part in np.array_split(order, int(n_groups)):
        n_g = float(part.size)
        e_g = float(p[part].sum())
        o_g = float(y[part].sum())
        v = e_g * (1.0 - e_g / n_g)
        if v <= 0.0:
            if abs(o_g - e_g) > 1e-9 * n_g:  # certain outcomes contradicted
                stat, used = math.inf, used + 1
            continue
        stat += (o_g - e_g) ** 2 / v
        used += 1
    df = used - int(ddof)
    if df < 1:
        raise InvalidInput(
            f"hosmer_lemeshow: {used} usable groups leave {df} degrees of freedom with "
            f"ddof={ddof}; expected at least 1"
        )
    return HosmerLemeshow(statistic=stat, df=df, p_value=float(chi2.sf(stat, df)), n_groups=used)


#: Family-wise false-alarm rate of :func:`calibration_alarm` on calibrated traffic.
ALARM_ALPHA = 0.01

#: Probabilities are kept in ``[_P_CLIP, 1 - _P_CLIP]`` before the logit of Cox's test.
_P_CLIP = 1e-12


@dataclass(frozen=True)
class CoxCalibration:
    """Cox's calibration intercept and slope, and the test of "intercept 0, slope 1".

    ``intercept`` and ``slope`` are ``(a, b)`` of the logistic regression
    ``logit P(y = 1) = a + b logit(p)`` fitted to the outcomes; calibrated probabilities
    give ``(0, 1)``. A shift of the base rate moves ``a``; over-confident probabilities
    give ``b < 1``, under-confident ones ``b > 1``. ``statistic`` is the likelihood
    ratio ``2 (l(a, b) - l(0, 1))``, chi-squared with ``df`` degrees of freedom (2; 1 when
    every ``p`` is the same and only the intercept is tested).
    """

    intercept: float
    slope: float
    statistic: float
    df: int
    p_value: float


def _loglik(y: np.ndarray, eta: np.ndarray) -> float:
    # sum y log(sigmoid(eta)) + (1 - y) log(1 - sigmoid(eta)), computed stably
    return float(-np.sum(np.logaddexp(0.0, eta) - y * eta))


def cox_calibration(y01: ArrayLike, p1: ArrayLike) -> CoxCalibration:
    """Cox's calibration test: fit ``logit P(y = 1) = a + b logit(p)``, test ``(a, b) = (0, 1)``.

    The fit is Newton's method on the log-likelihood, each step halved until the
    likelihood rises; when the outcomes are separated by ``p`` (the maximum lies at
    infinity) the statistic is the one at the last step, a lower bound of the
    supremum. Probabilities of exactly 0 or 1 are kept ``1e-12`` from the ends.

    Parameters
    ----------
    y01 : array-like of shape (n,)
        True labels, 0 or 1.
    p1 : array-like of shape (n,)
        Estimated ``P(y = 1)``, in ``[0, 1]``.

    Returns
    -------
    CoxCalibration

    Raises
    ------
    InvalidInput
        Malformed inputs or fewer than 2 rows.

    References
    ----------
    .. [1] Cox, D. R. (1958). Biometrika 45, 562-565.
    """
    y, p = _check_binary(y01, p1)
    if y.size < 2:
        raise InvalidInput(f"cox_calibration: expected at least 2 rows, got {y.size}")
    x = logit(np.clip(p, _P_CLIP, 1.0 - _P_CLIP))
    slope_free = bool(np.ptp(x) > 0.0)
    design = np.column_stack([np.ones_like(x), x]) if slope_free else np.ones((x.size, 1))
    beta = np.array([0.0, 1.0]) if slope_free else np.array([0.0])
    offset = np.zeros_like(x) if slope_free else x  # intercept only: slope fixed at 1
    null = _loglik(y, x)
    best = _loglik(y, design @ beta + offset)
    for _ in range(100):
        mu = expit(design @ beta + offset)
        grad = design.T @ (y - mu)
        hess = (design * (mu * (1.0 - mu))[:, None]).T @ design
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        for _ in range(30):
            trial = beta + step
            value = _loglik(y, design @ trial + offset)
            if value >= best:
                break
            step = step / 2.0
        else:
            break
        gain = value - best
        beta, best = trial, value
        if gain < 1e-10 * (1.0 + abs(best)):
            break
    stat = max(0.0, 2.0 * (best - null))
    df = 2 if slope_free else 1
    return CoxCalibration(
        intercept=float(beta[0]),
        slope=float(beta[1]) if slope_free else 1.0,
        statistic=stat,
        df=df,
        p_value=float(chi2.sf(stat, df)),
    )


@dataclass(frozen=True)
class CalibrationAlarm:
    """The calibration alarm: which tests ran, their p-values, and whether it fired.

    ``fired`` is true when any p-value is below ``alpha / len(p_values)`` (Bonferroni:
    on calibrated traffic the alarm fires with probability at most ``alpha``, whatever
    the tests' dependence). ``by`` names the tests below that threshold.
    """

    alpha: float
    p_values: dict[str, float]
    fired: bool
    by: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "correction": "bonferroni",
            "p_values": self.p_values,
            "fired": self.fired,
            "by": list(self.by),
        }


def calibration_alarm(
    p_values: Mapping[str, float | None], alpha: float = ALARM_ALPHA
) -> CalibrationAlarm | None:
    """Combine calibration tests into one alarm at a family-wise ``alpha`` (Bonferroni).

    ``p_values`` maps a test's name to its p-value, or to None where the test is
    undefined on the rows (left out: the others share ``alpha``). None when no test is
    defined. :func:`calibration_summary` passes Cox's test (:func:`cox_calibration`: a
    shifted base rate, over- or under-confidence), Spiegelhalter's z
    (:func:`spiegelhalter_z`: the Brier score against its expectation) and
    Hosmer-Lemeshow over 10 groups of equal mass (:func:`hosmer_lemeshow`: any shape,
    groups at 0 and 1 counted). Their power against base-rate shifts and mis-scaling is
    measured by simulation (``python -m bench quality.monitoring_power``).
    """
    if not 0.0 < alpha < 1.0:
        raise InvalidInput(f"alpha: expected a number in (0, 1), got {alpha!r}")
    found = {name: float(pv) for name, pv in p_values.items() if pv is not None}
    if not found:
        return None
    level = alpha / len(found)
    by = tuple(name for name, pv in found.items() if pv < level)
    return CalibrationAlarm(alpha=alpha, p_values=found, fired=bool(by), by=by)


@dataclass(frozen=True, eq=False)
class RealisedCost:
    """Realised cost of decisions against the cost expected when they were made.

    Attributes
    ----------
    per_row : ndarray of shape (n,)
        Realised cost of each decision.
    total : float
        ``per_row.sum()``.
    expected_total : float or None
        Sum of the expected costs at decision time, when given.
    ratio : float or None
        ``total / expected_total``; None without expected costs or when they sum to 0.
    """

    per_row: np.ndarray
    total: float
    expected_total: float | None
    ratio: float | None


def realised_cost(
    y_index: ArrayLike,
    decision_index: ArrayLike,
    costs: CostMatrix | ArrayLike,
    expected_cost: ArrayLike | None = None,
    reported_cost: ArrayLike | None = None,
) -> RealisedCost:
    """Realised cost of labelled decisions, ``C_r[y_r][d_r]`` per row, and its total.

    Each row's cost comes from the cost setting applied when the decision was made: one
    matrix for every row, or one per row (``(n, K, K)``). Where the caller reported the
    realised cost of a row (``reported_cost`` finite), that value replaces the matrix
    entry; NaN means "not reported".

    Parameters
    ----------
    y_index : array-like of int, shape (n,)
        True class indices (the outcomes).
    decision_index : array-like of int, shape (n,)
        Decided class indices.
    costs : CostMatrix, array-like (K, K) or (n, K, K)
        Cost matrices, rows = truth, columns = decision.
    expected_cost : array-like of shape (n,), optional
        Expected cost of each decision when it was made (``sum_i p_i C[i][d]``).
    reported_cost : array-like of shape (n,), optional
        Realised costs reported by the caller, NaN where none; finite values must be >= 0.

    Returns
    -------
    RealisedCost

    Raises
    ------
    InvalidInput, InvalidCostMatrix
        Indices out of range, shapes that disagree, invalid costs (the message names
        the row).
    """
    return realised_from_rows(
        row_costs(y_index, decision_index, costs), expected_cost, reported_cost
    )


def realised_from_rows(
    per_row: np.ndarray,
    expected_cost: ArrayLike | None = None,
    reported_cost: ArrayLike | None = None,
) -> RealisedCost:
    """:func:`realised_cost` of decisions whose cost-matrix entries ``per_row`` (one per
    labelled row) are known: a finite ``reported_cost`` replaces a row's entry, and
    ``expected_cost`` gives the total expected at decision time and the ratio (see
    :func:`realised_cost`; :func:`models.feedback.actions.taken_costs` gives the entries
    of decisions among actions)."""
    n = per_row.size
    if reported_cost is not None:
        r = _float_rows(reported_cost, n, "reported_cost")
        known = np.isfinite(r)
        bad = known & (r < 0)
        if bad.any() or np.isinf(r).any():
            i = int(np.flatnonzero(bad | np.isinf(r))[0])
            raise InvalidInput(f"reported_cost: row {i}: expected a finite cost >= 0, got {r[i]}")
        per_row = np.where(known, r, per_row)
    expected_total: float | None = None
    ratio: float | None = None
    if expected_cost is not None:
        e = _float_rows(expected_cost, n, "expected_cost")
        if not np.all(np.isfinite(e)):
            i = int(np.flatnonzero(~np.isfinite(e))[0])
            raise InvalidInput(f"expected_cost: row {i}: expected a finite number, got {e[i]}")
        expected_total = float(e.sum())
        ratio = float(per_row.sum() / expected_total) if expected_total > 0 else None
    return RealisedCost(
        per_row=per_row, total=float(per_row.sum()), expected_total=expected_total, ratio=ratio
    )


def _float_rows(a: ArrayLike, n: int, name: str) -> np.ndarray:
    try:
        v = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput(f"{name}: expected a 1-D array of numbers") from None
    if v.shape != (n,):
        raise InvalidInput(f"{name}: expected {n} values (one per row), got shape {v.shape}")
    return v


def calibration_summary(
    y_index: ArrayLike,
    proba: ArrayLike,
    n_bins: int = 10,
    strategy: str = "uniform",
    hl_ddof: int = 0,
    alarm_alpha: float = ALARM_ALPHA,
) -> dict[str, Any]:
    """Headline calibration numbers of probabilities against outcomes, JSON-able.

    Binary (``K = 2``): ``brier`` and ``log_loss`` (:mod:`models.evaluation.metrics`), ``ece`` and
    ``reliability`` of ``p1`` (:func:`reliability`), ``spiegelhalter`` (z, p-value) and
    ``hosmer_lemeshow`` (statistic, df, p-value with ``hl_ddof``, default 0 for rows the
    model was not fitted on), ``cox`` (intercept, slope, statistic, df, p-value) and
    ``alarm`` (:func:`calibration_alarm` of the three at ``alarm_alpha``). A test that is
    undefined on these rows (e.g. fewer than 2 rows, zero variance) is ``None``.

    More classes: the multiclass ``brier`` (sum over classes) and ``log_loss``, ``ece`` and
    ``reliability`` of the top label (:func:`top_label_reliability`), ``classwise_ece``;
    the tests and the alarm are binary and ``None``.

    Parameters
    ----------
    n_bins, strategy
        As in :func:`reliability`.
    hl_ddof : int, default 0
    alarm_alpha : float, default ALARM_ALPHA (0.01)

    Returns
    -------
    dict
        ``{"n", "brier", "log_loss", "ece", "classwise_ece", "reliability",
        "spiegelhalter", "hosmer_lemeshow", "cox", "alarm"}``.
    """
    y, p = _check_proba_rows(y_index, proba)
    if p.shape[1] > 2:
        rel = top_label_reliability(y, p, n_bins, strategy)
        return {
            "n": int(y.size),
            "brier": multiclass_brier_score(y, p),
            "log_loss": multiclass_log_loss(y, p),
            "ece": rel.ece,
            "classwise_ece": classwise_ece(y, p, n_bins, strategy),
            "reliability": rel.to_dict(),
            "spiegelhalter": None,
            "hosmer_lemeshow": None,
            "cox": None,
            "alarm": None,
        }
    y01 = y.astype(np.float64)
    p1 = p[:, 1]
    rel = reliability(y01, p1, n_bins, strategy)
    tests = _binary_tests(y01, p1, hl_ddof)
    alarm = calibration_alarm(
        {name: None if t is None else t["p_value"] for name, t in tests.items()}, alarm_alpha
    )
    return {
        "n": int(y.size),
        "brier": brier_score(y01, p1),
        "log_loss": log_loss(y01, p1),
        "ece": rel.ece,
        "classwise_ece": classwise_ece(y, p, n_bins, strategy),
        "reliability": rel.to_dict(),
        **tests,
        "alarm": None if alarm is None else alarm.to_dict(),
    }


def _binary_tests(y01: np.ndarray, p1: np.ndarray, hl_ddof: int) -> dict[str, Any]:
    """Spiegelhalter, Hosmer-Lemeshow and Cox on two-class rows; None where undefined."""
    out: dict[str, Any] = {"spiegelhalter": None, "hosmer_lemeshow": None, "cox": None}
    with contextlib.suppress(InvalidInput):
        t = spiegelhalter_z(y01, p1)
        out["spiegelhalter"] = {"z": t.statistic, "p_value": t.p_value}
    if y01.size >= 2:
        with contextlib.suppress(InvalidInput):
            h = hosmer_lemeshow(y01, p1, n_groups=min(10, int(y01.size)), ddof=hl_ddof)
            out["hosmer_lemeshow"] = {  # JSON has no infinity: null statistic, p-value 0
                "statistic": h.statistic if math.isfinite(h.statistic) else None,
                "df": h.df,
                "p_value": h.p_value,
            }
        c = cox_calibration(y01, p1)
        out["cox"] = {
            "intercept": c.intercept,
            "slope": c.slope,
            "statistic": c.statistic,
            "df": c.df,
            "p_value": c.p_value,
        }
    return out
