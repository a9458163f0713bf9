"""Metrics for probability estimates and cost-sensitive decisions.

Probability quality: :func:`brier_score`, :func:`log_loss`,
:func:`expected_calibration_error`, :func:`roc_auc`. Cost-sensitive performance: the
skew ``z`` (Eqs. 27-28), the normalised cost-sensitive loss ``Q`` (Eq. 26), the Brier
curve over the paper's 21 cost ratios with its area (section 5.1), and the confusion
matrix / total / mean cost of a set of decisions.

The arguments every metric of a kind takes are described here once:

* binary: ``y01``, array-like of shape (n,), the true labels 0 or 1 (1 = positive,
  ``classes_[1]``), and ``p1``, array-like of shape (n,), the estimated ``P(y = 1)`` in
  ``[0, 1]``;
* multiclass: ``y_index``, array-like of int of shape (n,), the true class indices (into
  ``classes_``), and ``proba``, array-like of shape (n, K), the estimated class
  probabilities;
* costs of decisions: ``y_index`` and ``decision_index``, array-like of int of shape
  (n,), the true and decided class indices, and ``costs``, a
  :class:`~models.decisions.rule.CostMatrix` or an array-like (K, K) or (n, K, K), one
  cost matrix or one per row (validated as in :mod:`models.decisions.rule`).

Everything is vectorised numpy.

References
----------
.. [1] Nikolaou, N., Edakunni, N., Kull, M., Flach, P., Brown, G. (2016). Cost-sensitive
   boosting algorithms: Do we really need them? Machine Learning 104, 359-384.
   Section 5.1, Eqs. 26-28.
.. [2] Hernandez-Orallo, J., Flach, P., Ferri, C. (2011). Brier curves: a new cost-based
   visualisation of classifier performance. ICML.
.. [3] Drummond, C., Holte, R. (2000). Explicitly representing expected cost. KDD.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import rankdata

from models.decisions.rule import CostMatrix, _check_stack, validate_cost_matrix
from models.exceptions import InvalidCostMatrix, InvalidInput, InvalidPriors

__all__ = [
    "PAPER_COST_RATIOS",
    "BrierCurve",
    "brier_curve",
    "brier_score",
    "class_balanced_brier_score",
    "cost_confusion_matrix",
    "expected_calibration_error",
    "log_loss",
    "mean_cost",
    "normalized_cost_loss",
    "probability_bins",
    "roc_auc",
    "row_costs",
    "skew",
    "skew_change",
    "summarize",
    "total_cost",
]

#: The 21 cost ratios ``c_fn / c_fp`` of section 5.1 of the paper, in the paper's order.
PAPER_COST_RATIOS: tuple[float, ...] = (
    100.0, 50.0, 25.0, 20.0, 15.0, 10.0, 5.0, 2.5, 2.0, 1.5, 1.0,
    1 / 1.5, 1 / 2, 1 / 2.5, 1 / 5, 1 / 10, 1 / 15, 1 / 20, 1 / 25, 1 / 50, 1 / 100,
)  # fmt: skip


def _check_binary(y01: ArrayLike, p1: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    try:
        y = np.asarray(y01, dtype=np.float64)
        p = np.asarray(p1, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput("y01 and p1: expected 1-D arrays of numbers") from None
    if y.ndim != 1 or p.ndim != 1:
        raise InvalidInput(f"y01 and p1: expected 1-D arrays, got shapes {y.shape} and {p.shape}")
    if y.shape != p.shape:
        raise InvalidInput(f"p1: expected {y.size} values (one per label), got {p.size}")
    if y.size == 0:
        raise InvalidInput("y01: expected at least one row, got 0")
    bad = (y != 0) & (y != 1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise InvalidInput(f"y01: row {r}: expected a label 0 or 1, got {y[r]}")
    bad = ~((p >= 0) & (p <= 1))  # also catches NaN
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise InvalidInput(f"p1: row {r}: expected a probability in [0, 1], got {p[r]}")
    return y, p


def _require_both(y: np.ndarray, what: str) -> None:
    n_pos = int(np.count_nonzero(y == 1))
    if n_pos == 0 or n_pos == y.size:
        only = "negative (0)" if n_pos == 0 else "positive (1)"
        raise InvalidInput(f"{what}: y01 has only {only} labels; it needs both classes")


def brier_score(y01: ArrayLike, p1: ArrayLike) -> float:
    """Brier score ``mean((p1 - y01)^2)`` (lower is better; equals scikit-learn's).

    References
    ----------
    .. [1] Nikolaou et al. (2016), section 5.1 (area under the Brier curve and the BS).
    """
    y, p = _check_binary(y01, p1)
    return float(np.mean((p - y) ** 2))


def log_loss(y01: ArrayLike, p1: ArrayLike, eps: float = 1e-15) -> float:
    """Mean negative log-likelihood, with ``p1`` clipped to ``[eps, 1 - eps]`` before the log.

    Parameters
    ----------
    eps : float, default 1e-15
        Clipping bound that keeps the loss finite for ``p1`` of exactly 0 or 1.

    """
    y, p = _check_binary(y01, p1)
    p = np.clip(p, eps, 1.0 - eps)
    return float(-np.mean(y * np.log(p) + (1.0 - y) * np.log1p(-p)))


def probability_bins(p1: np.ndarray, n_bins: int) -> np.ndarray:
    """Index of the equal-width bin of each probability: ``b / n_bins <= p1 < (b + 1) / n_bins``.

    The last bin also holds ``p1 = 1``. Used by :func:`expected_calibration_error` and the
    reliability diagram (:func:`models.evaluation.plots.reliability_diagram`), so both bin alike.
    """
    return np.minimum((np.asarray(p1) * n_bins).astype(np.int64), n_bins - 1)


def expected_calibration_error(y01: ArrayLike, p1: ArrayLike, n_bins: int = 10) -> float:
    """Expected calibration error over equal-width bins of ``p1``.

    Bin ``b`` holds ``b / n_bins <= p1 < (b + 1) / n_bins`` (the last bin also holds
    ``p1 = 1``); ``ECE = sum_b (n_b / n) |mean(y01 in b) - mean(p1 in b)|``; empty bins
    contribute nothing.

    Parameters
    ----------
    n_bins : int, default 10
        Number of equal-width bins on ``[0, 1]``.

    Returns
    -------
    float
        In ``[0, 1]``; 0 for a perfectly calibrated estimate on the sample.
    """
    y, p = _check_binary(y01, p1)
    if int(n_bins) < 1:
        raise InvalidInput(f"n_bins: expected an integer >= 1, got {n_bins}")
    nb = int(n_bins)
    b = probability_bins(p, nb)
    # (n_b / n) |sum_b(y) / n_b - sum_b(p) / n_b| = |sum_b(y) - sum_b(p)| / n
    gap = np.abs(np.bincount(b, weights=y, minlength=nb) - np.bincount(b, weights=p, minlength=nb))
    return float(gap.sum() / y.size)


def roc_auc(y01: ArrayLike, p1: ArrayLike) -> float:
    """Area under the ROC curve by the rank-sum (Mann-Whitney) formula, ties counted as 1/2.

    Equals :func:`sklearn.metrics.roc_auc_score`.

    Raises
    ------
    InvalidInput
        If ``y01`` holds one class only (AUC undefined).
    """
    y, p = _check_binary(y01, p1)
    _require_both(y, "roc_auc")
    ranks = rankdata(p)  # average ranks for ties
    n_pos = float(np.count_nonzero(y == 1))
    n_neg = float(y.size) - n_pos
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def skew(c_fp: float, c_fn: float, pi_pos: float = 0.5) -> float:
    """Skew ``z = pi_- c_fp / (pi_- c_fp + pi_+ c_fn)`` (Eq. 27); ``c_fp / (c_fp + c_fn)`` if balanced (Eq. 28).

    Parameters
    ----------
    c_fp, c_fn : float
        Costs of a false positive and a false negative (finite, >= 0, not both 0).
    pi_pos : float, default 0.5
        Prior of the positive class, ``pi_+``; ``pi_- = 1 - pi_pos``.

    Returns
    -------
    float
        ``z`` in ``[0, 1]``; ``z > 0.5`` means negatives matter more (false positives cost more).

    Raises
    ------
    InvalidCostMatrix
        A cost negative or non-finite, or both zero.
    InvalidPriors
        ``pi_pos`` outside ``[0, 1]``, or a zero denominator.

    References
    ----------
    .. [1] Nikolaou et al. (2016), Eqs. 27 and 28.
    """
    for name, v in (("c_fp", c_fp), ("c_fn", c_fn)):
        if not (isinstance(v, int | float | np.number) and math.isfinite(v) and v >= 0):
            raise InvalidCostMatrix(f"{name}: cost must be finite and >= 0, got {v!r}")
    if not (isinstance(pi_pos, int | float | np.number) and 0.0 <= pi_pos <= 1.0):
        raise InvalidPriors(f"pi_pos: expected a prior in [0, 1], got {pi_pos!r}")
    num = (1.0 - pi_pos) * c_fp
    den = num + pi_pos * c_fn
    if den <= 0:
        raise InvalidCostMatrix(
            f"skew undefined: (1 - pi_pos) * c_fp + pi_pos * c_fn must be > 0 "
            f"(c_fp={c_fp}, c_fn={c_fn}, pi_pos={pi_pos})"
        )
    return float(num / den)


def skew_change(z_dep: float, z_tr: float = 0.5) -> float:
    """Change in skew ``z'`` from training skew ``z_tr`` to deployment skew ``z_dep``.

    Inverts ``z_dep = z_tr z' / (z_tr z' + (1 - z_tr)(1 - z'))`` (section 5.1), i.e.
    ``z' = z_dep (1 - z_tr) / (z_dep (1 - z_tr) + (1 - z_dep) z_tr)``. Under the
    probabilistic threshold choice the decision threshold is ``theta = z'``; for
    cost-insensitive training (``z_tr = 0.5``, as AdaMEC) ``z' = z_dep``.

    Parameters
    ----------
    z_dep : float
        Skew in deployment, in ``[0, 1]``.
    z_tr : float, default 0.5
        Skew the model was trained under, in ``(0, 1)``.

    Returns
    -------
    float
        ``z'``, the threshold of the probabilistic threshold choice.

    References
    ----------
    .. [1] Nikolaou et al. (2016), section 5.1; Hernandez-Orallo et al. (2011).
    """
    if not (0.0 <= z_dep <= 1.0) or not (0.0 < z_tr < 1.0):
        raise InvalidInput(
            f"skew_change: expected z_dep in [0, 1], z_tr in (0, 1); got {z_dep}, {z_tr}"
        )
    a = z_dep * (1.0 - z_tr)
    return float(a / (a + (1.0 - z_dep) * z_tr))


def _rates(y: np.ndarray, p: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """FNR and FPR of "positive iff p >= theta" for each theta (vectorised by sorting)."""
    pos = np.sort(p[y == 1])
    neg = np.sort(p[y == 0])
    fnr = np.searchsorted(pos, thresholds, side="left") / pos.size  # positives with p < theta
    fpr = 1.0 - np.searchsorted(neg, thresholds, side="left") / neg.size  # negatives p >= theta
    return fnr, fpr


def normalized_cost_loss(
    y01: ArrayLike, p1: ArrayLike, z: float, threshold: float | None = None
) -> float:
    """Normalised cost-sensitive loss ``Q = FNR(theta) (1 - z) + FPR(theta) z`` (Eq. 26).

    Predictions are positive iff ``p1 >= theta``; ``theta`` defaults to ``z``, the
    probabilistic threshold choice for a model trained cost-insensitively (section 5.1).
    Note: with Eq. 26 the all-negatives classifier has ``Q = 1 - z`` and the
    all-positives one ``Q = z`` (the paper's text names these diagonals the other way
    round).

    Parameters
    ----------
    z : float
        Skew (Eq. 27) in ``[0, 1]``.
    threshold : float, optional
        Decision threshold ``theta``; defaults to ``z``.

    Returns
    -------
    float
        ``Q`` in ``[0, 1]``.

    Raises
    ------
    InvalidInput
        Malformed inputs, ``z`` outside ``[0, 1]``, or one class only (FNR/FPR undefined).

    References
    ----------
    .. [1] Nikolaou et al. (2016), Eq. 26.
    """
    y, p = _check_binary(y01, p1)
    _require_both(y, "normalized_cost_loss")
    if not (0.0 <= float(z) <= 1.0):
        raise InvalidInput(f"z: expected a skew in [0, 1], got {z}")
    theta = float(z) if threshold is None else float(threshold)
    fnr, fpr = _rates(y, p, np.array([theta]))
    return float(fnr[0] * (1.0 - z) + fpr[0] * z)


class BrierCurve(NamedTuple):
    """Points ``(z, q)`` of a Brier curve (sorted by ``z``) and the area under it."""

    z: np.ndarray
    q: np.ndarray
    area: float


def brier_curve(y01: ArrayLike, p1: ArrayLike, ratios: ArrayLike = PAPER_COST_RATIOS) -> BrierCurve:
    """Brier curve ``Q(z)`` vs ``z`` over cost ratios ``c_fn / c_fp``, and its area.

    For each ratio ``r`` the skew with balanced priors is ``z = 1 / (1 + r)`` (Eq. 28)
    and ``Q(z)`` is Eq. 26 at threshold ``theta = z`` (probabilistic threshold choice).
    The area is the trapezoid rule over the points sorted by ``z`` plus the endpoints
    ``(0, 0)`` and ``(1, 0)`` (at ``z = 0`` nothing is lost; at ``z = 1`` only a
    negative with ``p1 = 1`` would be, a set of measure zero).

    Exactly, ``int_0^1 Q(z) dz = 0.5 * (mean_pos (1 - p)^2 + mean_neg p^2)``, the
    class-balanced Brier score (:func:`class_balanced_brier_score`), which equals the
    Brier score when classes are balanced; the trapezoid area converges to it as the
    ``z`` grid gets dense and uniform. With the paper's 21 non-uniform ratios the area
    is only an approximation (footnote 6 of [1]_).

    Parameters
    ----------
    ratios : array-like of float, default PAPER_COST_RATIOS
        Cost ratios ``c_fn / c_fp`` (finite, > 0). For a uniform grid of skews ``z``
        pass ``(1 - z) / z``.

    Returns
    -------
    BrierCurve
        ``z`` (ascending), ``q = Q(z)`` and the trapezoid ``area``.

    Raises
    ------
    InvalidInput
        Malformed inputs, one class only, or a ratio not finite and > 0.

    References
    ----------
    .. [1] Nikolaou et al. (2016), section 5.1 (Eqs. 26-28, Brier curves, footnote 6).
    .. [2] Hernandez-Orallo, Flach, Ferri (2011). Brier curves. ICML.
    """
    y, p = _check_binary(y01, p1)
    _require_both(y, "brier_curve")
    r = np.asarray(ratios, dtype=np.float64).ravel()
    if r.size == 0 or not np.all(np.isfinite(r) & (r > 0)):
        raise InvalidInput("ratios: expected a non-empty list of finite cost ratios c_fn/c_fp > 0")
    z = np.sort(1.0 / (1.0 + r))
    fnr, fpr = _rates(y, p, z)
    q = fnr * (1.0 - z) + fpr * z
    zz = np.concatenate(([0.0], z, [1.0]))
    qq = np.concatenate(([0.0], q, [0.0]))
    area = float(np.sum((zz[1:] - zz[:-1]) * (qq[1:] + qq[:-1])) / 2.0)
    return BrierCurve(z=z, q=q, area=area)


def class_balanced_brier_score(y01: ArrayLike, p1: ArrayLike) -> float:
    """``0.5 * (mean over positives of (1 - p)^2 + mean over negatives of p^2)``.

    The exact area under the Brier curve (see :func:`brier_curve`); equals
    :func:`brier_score` when both classes have the same number of rows.

    References
    ----------
    .. [1] Hernandez-Orallo, Flach, Ferri (2011). Brier curves. ICML.
    .. [2] Nikolaou et al. (2016), section 5.1 and footnote 6.
    """
    y, p = _check_binary(y01, p1)
    _require_both(y, "class_balanced_brier_score")
    return float(0.5 * (np.mean((1.0 - p[y == 1]) ** 2) + np.mean(p[y == 0] ** 2)))


def _check_indices(
    y_index: ArrayLike, decision_index: ArrayLike, k: int
) -> tuple[np.ndarray, np.ndarray]:
    out = []
    for name, v in (("y_index", y_index), ("decision_index", decision_index)):
        a = np.asarray(v)
        if a.ndim != 1 or not (np.issubdtype(a.dtype, np.integer) or a.size == 0):
            raise InvalidInput(
                f"{name}: expected a 1-D array of class indices, got {a.dtype} {a.shape}"
            )
        bad = (a < 0) | (a >= k)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise InvalidInput(
                f"{name}: row {r}: expected a class index in [0, {k - 1}], got {a[r]}"
            )
        out.append(a.astype(np.int64))
    if out[0].shape != out[1].shape:
        raise InvalidInput(f"decision_index: expected {out[0].size} values, got {out[1].size}")
    return out[0], out[1]


def cost_confusion_matrix(
    y_index: ArrayLike, decision_index: ArrayLike, n_classes: int
) -> np.ndarray:
    """Confusion matrix of the (cost-optimal) decisions, ``M[i][j]`` = #(truth i, decided j).

    Rows = truth, like the cost matrix, so the total cost is ``sum(M * C)``.

    Parameters
    ----------
    y_index : array-like of int, shape (n,)
        True class indices (into ``classes_``).
    decision_index : array-like of int, shape (n,)
        Decided class indices, e.g. ``decide(...).labels_index``.
    n_classes : int
        ``K``.

    Returns
    -------
    ndarray of shape (K, K), int64
    """
    k = int(n_classes)
    y, d = _check_indices(y_index, decision_index, k)
    return np.bincount(y * k + d, minlength=k * k).reshape(k, k)


def _row_costs(y: np.ndarray, d: np.ndarray, costs: CostMatrix | ArrayLike) -> np.ndarray:
    if isinstance(costs, CostMatrix):
        c = costs.matrix
    else:
        try:
            c = np.asarray(costs, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidCostMatrix(
                "costs: expected a (K, K) or (n, K, K) array of numbers"
            ) from None
        if c.ndim == 2:
            c = validate_cost_matrix(c, c.shape[0])
    if c.ndim == 2:
        y, d = _check_indices(y, d, c.shape[0])
        return c[y, d]
    if c.ndim == 3 and c.shape[1] == c.shape[2] and c.shape[1] >= 2:
        y, d = _check_indices(y, d, c.shape[1])
        if c.shape[0] != y.size:
            raise InvalidCostMatrix(
                f"costs: got {c.shape[0]} per-row cost matrices for {y.size} rows; expected one per row"
            )
        _check_stack(c, "rows")
        return c[np.arange(y.size), y, d]
    raise InvalidCostMatrix(f"costs: expected shape (K, K) or (n, K, K), got {c.shape}")


def row_costs(
    y_index: ArrayLike, decision_index: ArrayLike, costs: CostMatrix | ArrayLike
) -> np.ndarray:
    """Realised cost of each decision, ``C_r[y_r][d_r]`` (one matrix or one per row).

    Returns
    -------
    ndarray of shape (n,), float64
    """
    return _row_costs(np.asarray(y_index), np.asarray(decision_index), costs).astype(np.float64)


def total_cost(
    y_index: ArrayLike, decision_index: ArrayLike, costs: CostMatrix | ArrayLike
) -> float:
    """Total realised cost ``sum_r C_r[y_r][d_r]``."""
    y = np.asarray(y_index)
    return float(_row_costs(y, np.asarray(decision_index), costs).sum())


def mean_cost(
    y_index: ArrayLike, decision_index: ArrayLike, costs: CostMatrix | ArrayLike
) -> float:
    """Mean realised cost per row (see :func:`total_cost`); 0 rows raise InvalidInput."""
    c = _row_costs(np.asarray(y_index), np.asarray(decision_index), costs)
    if c.size == 0:
        raise InvalidInput("mean_cost: expected at least one row, got 0")
    return float(c.mean())


def summarize(y01: ArrayLike, p1: ArrayLike) -> dict[str, float | None]:
    """Headline probability metrics: brier, log_loss, ece, auc, brier_curve_area.

    ``auc`` and ``brier_curve_area`` (over :data:`PAPER_COST_RATIOS`) are ``None`` when
    ``y01`` holds one class only, since both are undefined then.

    Returns
    -------
    dict
        ``{"brier", "log_loss", "ece", "auc", "brier_curve_area"}`` -> float or None.
    """
    y, p = _check_binary(y01, p1)
    both = 0 < int(np.count_nonzero(y == 1)) < y.size
    return {
        "brier": brier_score(y, p),
        "log_loss": log_loss(y, p),
        "ece": expected_calibration_error(y, p),
        "auc": roc_auc(y, p) if both else None,
        "brier_curve_area": brier_curve(y, p).area if both else None,
    }


def _check_multiclass(y_index: ArrayLike, proba: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2:
        raise InvalidInput(f"proba: expected an (n, K) array with K >= 2, got shape {p.shape}")
    y, _ = _check_indices(y_index, y_index, p.shape[1])
    if y.size != p.shape[0]:
        raise InvalidInput(f"proba: expected {y.size} rows (one per label), got {p.shape[0]}")
    return y, p


def multiclass_brier_score(y_index: ArrayLike, proba: ArrayLike) -> float:
    """Multiclass Brier score ``mean_r sum_k (p_rk - [y_r = k])^2`` (Brier's original form).

    Returns
    -------
    float
        In ``[0, 2]``; twice :func:`brier_score` for ``K = 2``.
    """
    y, p = _check_multiclass(y_index, proba)
    onehot = np.zeros_like(p)
    onehot[np.arange(y.size), y] = 1.0
    return float(((p - onehot) ** 2).sum(axis=1).mean())


def multiclass_log_loss(y_index: ArrayLike, proba: ArrayLike, eps: float = 1e-15) -> float:
    """Mean negative log probability of the true class, ``-mean_r log p_r[y_r]``.

    The picked probabilities are clipped to ``[eps, 1]`` before the log.

    Parameters
    ----------
    eps : float, default 1e-15
        Floor of the probability of the true class.

    """
    y, p = _check_multiclass(y_index, proba)
    picked = np.clip(p[np.arange(y.size), y], eps, 1.0)
    return float(-np.log(picked).mean())


def cost_loss_of_decisions(confusion: ArrayLike, z: float) -> float:
    """Normalised cost-sensitive loss ``Q = FNR (1 - z) + FPR z`` (Eq. 26) of decisions made.

    Where :func:`normalized_cost_loss` thresholds probabilities, this takes the binary
    confusion matrix of decisions already made (e.g. by :func:`models.decisions.rule.decide`).

    Parameters
    ----------
    confusion : array-like of shape (2, 2)
        ``M[i][j]`` = number of rows of truth ``i`` decided ``j`` (see
        :func:`cost_confusion_matrix`); both rows must be non-empty.
    z : float
        Skew (Eq. 27) in ``[0, 1]``.

    Returns
    -------
    float
        ``Q`` in ``[0, 1]``.

    References
    ----------
    .. [1] Nikolaou et al. (2016), Eq. 26.
    """
    m = np.asarray(confusion, dtype=np.float64)
    if m.shape != (2, 2):
        raise InvalidInput(f"confusion: expected a (2, 2) matrix, got shape {m.shape}")
    if not (0.0 <= float(z) <= 1.0):
        raise InvalidInput(f"z: expected a skew in [0, 1], got {z}")
    if m[0].sum() <= 0 or m[1].sum() <= 0:
        raise InvalidInput("confusion: both classes must occur (FNR/FPR undefined)")
    fnr = m[1, 0] / m[1].sum()
    fpr = m[0, 1] / m[0].sum()
    return float(fnr * (1.0 - z) + fpr * z)
