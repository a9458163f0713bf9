"""Champion against challenger: is the difference in realised cost real?

Two versions decided the same kind of traffic; the outcomes came later. The question is
whether version ``b`` (the challenger) decides more cheaply than version ``a`` (the
champion) under the costs each row carried, and whether the difference is more than
noise. Every figure here is a pure function of labelled rows (numpy and scipy only).

Paired rows (a shadow: both versions decided the *same* requests, joined on the
prediction id): :func:`paired_cost_difference` takes the per-row difference
``d_r = C_r[y_r][b_r] - C_r[y_r][a_r]`` (negative: ``b`` cheaper) and gives its mean with
a **paired t interval** ``mean(d) +- t_{1-alpha/2, n-1} * sd(d) / sqrt(n)``.

Assumptions, stated once: the rows are independent draws of the traffic (no row
influences another; repeated requests of one customer are treated as independent), and
``n`` is large enough for the central limit theorem to make ``mean(d)`` nearly normal.
Per-row costs are often heavy-tailed (a missed fraud costs its amount) and most
differences are exactly zero (both versions decided alike), so below a few hundred
labelled pairs the t interval can be too narrow or too wide; a **paired bootstrap**
(resample rows, recompute ``mean(d)``, take percentiles) is the alternative that drops
the normality assumption (not the independence one), at the cost of thousands of
recomputations. The t interval is what is computed here: it is exact arithmetic,
reproducible and cheap.

Unpaired rows (split traffic: each request decided by one version only):
:func:`welch_cost_difference` compares the two means with **Welch's t** interval
(unequal variances, Welch-Satterthwaite degrees of freedom), under the same
independence and CLT assumptions and, in addition, that the two arms saw the same
traffic (a random split).

How many rows would settle it: at the observed mean difference and spread, the interval
excludes zero once ``n >= (z * sd / mean)^2`` pairs (``z`` the normal quantile of the
confidence; per arm for Welch: ``n >= z^2 (sd_a^2 + sd_b^2) / mean^2``):
:attr:`CostDifference.needed_rows`. It is a planning figure at the observed effect, not
a guarantee (the effect estimate itself is noisy).

References
----------
Student (1908). The probable error of a mean. Biometrika 6(1).
Welch, B. L. (1947). The generalization of "Student's" problem when several different
population variances are involved. Biometrika 34(1/2).
Efron, B. and Tibshirani, R. (1993). An Introduction to the Bootstrap, ch. 13 (the
paired bootstrap, the alternative named above).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import norm
from scipy.stats import t as student_t

from models.exceptions import InvalidInput

__all__ = [
    "CostDifference",
    "Disagreement",
    "disagreement",
    "paired_cost_difference",
    "welch_cost_difference",
]

PAIRED_METHOD = "paired t interval on per-row cost differences (b - a)"
WELCH_METHOD = "Welch's t interval on the difference of mean costs (b - a)"


@dataclass(frozen=True)
class CostDifference:
    """Mean realised cost of ``b`` minus that of ``a``, with a confidence interval.

    ``low``/``high`` bound ``mean_difference`` at ``confidence``; ``excludes_zero`` says
    whether the interval lies wholly on one side of zero (``high < 0``: ``b`` is cheaper
    with that confidence). ``needed_rows``: labelled pairs (per arm for Welch) at which
    an interval at this effect and spread would exclude zero (None when the observed
    difference is exactly zero: no number of rows would). ``sd`` is the standard
    deviation of the per-row differences (paired) or None (Welch: ``sd_a``, ``sd_b``).
    """

    method: str
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    mean_difference: float
    low: float
    high: float
    confidence: float
    df: float
    standard_error: float
    sd: float | None
    sd_a: float
    sd_b: float
    excludes_zero: bool
    needed_rows: int | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _costs(values: ArrayLike, name: str) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 1:
        raise InvalidInput(f"{name}: expected a 1-d array of per-row costs, got shape {a.shape}")
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        raise InvalidInput(f"{name}[{bad[0]}]: expected a finite cost, got {a[bad[0]]}")
    return a


def _check_confidence(confidence: float) -> float:
    if not 0.5 <= confidence < 1.0:
        raise InvalidInput(f"confidence: expected a value in [0.5, 1), got {confidence}")
    return float(confidence)


def _needed(z: float, spread2: float, mean: float) -> int | None:
    """Rows at which ``z * sqrt(spread2 / n) < |mean|``: ``(z^2 spread2) / mean^2``."""
    if mean == 0.0:
        return None
    return max(2, math.ceil(z * z * spread2 / (mean * mean)))


def paired_cost_difference(
    cost_a: ArrayLike, cost_b: ArrayLike, confidence: float = 0.95
) -> CostDifference:
    """Paired t interval on ``cost_b - cost_a`` (one pair per row; see the module doc).

    Parameters
    ----------
    cost_a, cost_b : array-like of shape (n,)
        Realised cost of each row's decision by ``a`` and by ``b`` (same rows, same order).
    confidence : float, default 0.95

    Raises
    ------
    InvalidInput
        Fewer than two pairs, lengths that differ, non-finite costs.
    """
    a, b = _costs(cost_a, "cost_a"), _costs(cost_b, "cost_b")
    level = _check_confidence(confidence)
    if a.shape != b.shape:
        raise InvalidInput(f"cost_b: expected {a.size} costs (one per pair), got {b.size}")
    n = a.size
    if n < 2:
        raise InvalidInput(f"cost_a: a paired interval needs at least 2 pairs, got {n}")
    d = b - a
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    se = sd / math.sqrt(n)
    return _t_interval(
        PAIRED_METHOD,
        a,
        b,
        mean=mean,
        se=se,
        df=float(n - 1),
        level=level,
        variance=sd * sd,
        sd=sd,
        sd_a=float(a.std(ddof=1)),
        sd_b=float(b.std(ddof=1)),
    )


def _t_interval(
    method: str,
    a: np.ndarray,
    b: np.ndarray,
    *,
    mean: float,
    se: float,
    df: float,
    level: float,
    variance: float,
    sd: float | None,
    sd_a: float,
    sd_b: float,
) -> CostDifference:
    """The t interval ``mean`` ± t(df) ``se`` on ``mean(b) - mean(a)``, with the rows per
    side that would exclude 0 given the per-row ``variance`` of the difference."""
    half = float(student_t.ppf(0.5 + level / 2, df)) * se
    z = float(norm.ppf(0.5 + level / 2))
    low, high = mean - half, mean + half
    return CostDifference(
        method=method,
        n_a=int(a.size),
        n_b=int(b.size),
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        mean_difference=mean,
        low=low,
        high=high,
        confidence=level,
        df=df,
        standard_error=se,
        sd=sd,
        sd_a=sd_a,
        sd_b=sd_b,
        excludes_zero=bool(high < 0 or low > 0),
        needed_rows=_needed(z, variance, mean),
    )


def welch_cost_difference(
    cost_a: ArrayLike, cost_b: ArrayLike, confidence: float = 0.95
) -> CostDifference:
    """Welch's t interval on ``mean(cost_b) - mean(cost_a)`` (independent samples).

    Raises
    ------
    InvalidInput
        Fewer than two rows on either side, non-finite costs.
    """
    a, b = _costs(cost_a, "cost_a"), _costs(cost_b, "cost_b")
    level = _check_confidence(confidence)
    for name, x in (("cost_a", a), ("cost_b", b)):
        if x.size < 2:
            raise InvalidInput(f"{name}: Welch's interval needs at least 2 rows, got {x.size}")
    va, vb = float(a.var(ddof=1)), float(b.var(ddof=1))
    qa, qb = va / a.size, vb / b.size
    se = math.sqrt(qa + qb)
    mean = float(b.mean() - a.mean())
    if se > 0:
        df = (qa + qb) ** 2 / (
            (qa * qa / (a.size - 1) if qa else 0.0) + (qb * qb / (b.size - 1) if qb else 0.0)
        )
    else:
        df = float(a.size + b.size - 2)
    return _t_interval(
        WELCH_METHOD,
        a,
        b,
        mean=mean,
        se=se,
        df=float(df),
        level=level,
        variance=va + vb,
        sd=None,
        sd_a=math.sqrt(va),
        sd_b=math.sqrt(vb),
    )


@dataclass(frozen=True)
class Disagreement:
    """Rows where ``a`` and ``b`` decided differently, and what they cost each side.

    ``cost_a``/``cost_b``: the realised cost of ``a``'s and of ``b``'s decisions on
    those rows (where they agree the costs are equal, so the whole difference in total
    cost is ``cost_b - cost_a`` here)."""

    n_rows: int
    n_differ: int
    share: float
    cost_a: float
    cost_b: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def disagreement(
    decision_a: ArrayLike, decision_b: ArrayLike, cost_a: ArrayLike, cost_b: ArrayLike
) -> Disagreement:
    """Share of rows decided differently by ``a`` and ``b`` and their costs there."""
    da, db = np.asarray(decision_a), np.asarray(decision_b)
    a, b = _costs(cost_a, "cost_a"), _costs(cost_b, "cost_b")
    if not da.shape == db.shape == a.shape == b.shape:
        raise InvalidInput(
            "decision_a, decision_b, cost_a, cost_b: expected one value per row each, got "
            f"{da.shape}, {db.shape}, {a.shape}, {b.shape}"
        )
    differ = da != db
    n = int(da.size)
    k = int(differ.sum())
    return Disagreement(
        n_rows=n,
        n_differ=k,
        share=k / n if n else 0.0,
        cost_a=float(a[differ].sum()),
        cost_b=float(b[differ].sum()),
    )
