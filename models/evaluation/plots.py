"""Plot data of a fitted model on held-out rows: Brier, reliability, ROC and cost curves, what-if.

Every function takes true labels and probabilities (numpy only) and returns a JSON-able
dict of lists (``None`` where a value is undefined, e.g. an empty reliability bin), so the
service can store and serve it as is. The formulas live in :mod:`models.evaluation.metrics` and
:mod:`models.decisions.rule`; this module only lays out what a picture needs:

* :func:`brier_curve_plot` -- ``Q(z)`` over the paper's 21 cost ratios (Eq. 26 at the
  probabilistic threshold choice), its area, and the all-positive (``Q = z``) and
  all-negative (``Q = 1 - z``) diagonals.
* :func:`reliability_plot` -- equal-width bins of the probabilities before and after
  calibration: mean predicted, fraction positive, count, and the ECE of each.
* :func:`roc_curve` -- ROC points (downsampled, the convex hull kept) and the AUC.
* :func:`cost_curve` -- mean cost per row of the cost-optimal decisions against the cost
  ratio ``c_fn / c_fp`` (``c_fp = 1``) on a log grid, with the trivial classifiers.
* :func:`whatif` -- threshold, confusion matrix and cost of one binary cost setting.
* :func:`capacity_plot` -- the validation curves of the automatic capacity search
  (:mod:`models.auto`): out-of-fold calibrated loss against rounds, per weak learner.

:func:`uncalibrated_proba` gives the scores a model had *before* calibration and
:func:`stratified_sample` picks the capped held-out sample that the service stores.

References
----------
.. [1] Nikolaou, N., Edakunni, N., Kull, M., Flach, P., Brown, G. (2016). Cost-sensitive
   boosting algorithms: Do we really need them? Machine Learning 104, 359-384.
   Section 5.1 (Eqs. 26-28, Brier curves over 21 cost ratios).
.. [2] Hernandez-Orallo, J., Flach, P., Ferri, C. (2011). Brier curves. ICML.
.. [3] Drummond, C., Holte, R. (2000). Explicitly representing expected cost. KDD.
.. [4] Niculescu-Mizil, A., Caruana, R. (2005). Predicting good probabilities with
   supervised learning. ICML (reliability diagrams).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from models.decisions.actions import decide_actions, review_band, review_matrix
from models.decisions.rule import CostMatrix, binary_threshold, decide
from models.evaluation.metrics import (
    PAPER_COST_RATIOS,
    _check_binary,
    _rates,
    _require_both,
    brier_curve,
    cost_confusion_matrix,
    expected_calibration_error,
    probability_bins,
    roc_auc,
    total_cost,
)
from models.exceptions import InvalidCostMatrix, InvalidInput
from models.inference.fold_ensemble import FoldEnsembleScorer
from models.inference.model import InferenceModel, check_features
from models.inference.multiclass_scorers import (
    CalibratedVoteScorer,
    OneVsRestScorer,
    normalise_rows,
    raw_vote_scores,
)
from models.inference.scorers import BinaryScorer

__all__ = [
    "COST_CURVE_RATIOS",
    "brier_curve_plot",
    "capacity_plot",
    "cost_curve",
    "reliability_diagram",
    "reliability_plot",
    "roc_curve",
    "roc_one_vs_rest",
    "stratified_sample",
    "top_label",
    "uncalibrated_proba",
    "whatif",
    "whatif_matrix",
    "whatif_review",
]

#: Default cost-curve range of ``c_fn / c_fp``: that of the paper's 21 cost ratios.
COST_CURVE_RATIOS: tuple[float, float] = (0.01, 100.0)
ROC_MAX_POINTS = 200


def _listed(a: np.ndarray) -> list[Any]:
    """Floats as a list, NaN as None (JSON has no NaN)."""
    return [None if not math.isfinite(v) else v for v in np.asarray(a, dtype=np.float64).tolist()]


# ----------------------------------------------------------------------------- Brier curve


def brier_curve_plot(
    y01: ArrayLike, p1: ArrayLike, ratios: ArrayLike = PAPER_COST_RATIOS
) -> dict[str, Any]:
    """The Brier curve ``Q(z)`` of :func:`models.evaluation.metrics.brier_curve` with its diagonals.

    Parameters
    ----------
    y01 : array-like of shape (n,)
        True labels, 0 or 1 (1 = positive class); both classes must occur.
    p1 : array-like of shape (n,)
        ``P(y = 1)`` as the service decides on it.
    ratios : array-like of float, default PAPER_COST_RATIOS
        Cost ratios ``c_fn / c_fp``.

    Returns
    -------
    dict
        ``z`` (ascending skews), ``q``, ``area`` (trapezoid, as the stored metric
        ``brier_curve_area``), ``all_positive`` (``Q = z``: every row positive, only
        false positives, weighted ``z``), ``all_negative`` (``Q = 1 - z``) and
        ``cost_ratios`` (``c_fn / c_fp`` of each ``z``, i.e. ``(1 - z) / z``).

    References
    ----------
    .. [1] Nikolaou et al. (2016), Eqs. 26-28 and section 5.1.
    """
    curve = brier_curve(y01, p1, ratios)
    r = np.sort(np.asarray(ratios, dtype=np.float64).ravel())[::-1]  # z = 1/(1+r) ascending
    return {
        "z": _listed(curve.z),
        "q": _listed(curve.q),
        "area": curve.area,
        "all_positive": _listed(curve.z),
        "all_negative": _listed(1.0 - curve.z),
        "cost_ratios": _listed(r),
    }


# ----------------------------------------------------------------------- reliability


def reliability_diagram(y01: ArrayLike, p1: ArrayLike, n_bins: int = 10) -> dict[str, Any]:
    """Equal-width bins of ``p1``: mean predicted, fraction positive and count per bin.

    Bins are those of :func:`models.evaluation.metrics.expected_calibration_error` (``b / n_bins <=
    p1 < (b + 1) / n_bins``, the last one closed); an empty bin has count 0 and ``None``
    means. For non-empty bins this is :func:`sklearn.calibration.calibration_curve` with
    ``strategy="uniform"`` (which leaves empty bins out).

    Returns
    -------
    dict
        ``mean_predicted``, ``fraction_positive``, ``count`` (lists of ``n_bins``) and
        ``ece``.
    """
    y, p = _check_binary(y01, p1)
    nb = int(n_bins)
    if nb < 1:
        raise InvalidInput(f"n_bins: expected an integer >= 1, got {n_bins}")
    b = probability_bins(p, nb)
    count = np.bincount(b, minlength=nb)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(b, weights=p, minlength=nb) / count
        frac = np.bincount(b, weights=y, minlength=nb) / count
    return {
        "mean_predicted": _listed(mean_p),
        "fraction_positive": _listed(frac),
        "count": count.tolist(),
        "ece": expected_calibration_error(y, p, nb),
    }


def reliability_plot(
    y01: ArrayLike,
    p_after: ArrayLike,
    p_before: ArrayLike | None = None,
    n_bins: int = 10,
    *,
    y_before: ArrayLike | None = None,
) -> dict[str, Any]:
    """Reliability diagrams of the probabilities after and (if given) before calibration.

    ``y_before`` (default ``y01``) are the outcomes of ``p_before`` when they differ, as
    for a top-label diagram (:func:`top_label`), where the top label itself may change.

    Returns
    -------
    dict
        ``bins`` (the ``n_bins + 1`` edges), ``before`` and ``after`` (each from
        :func:`reliability_diagram`, without its ECE; ``before`` is None without
        ``p_before``), ``ece_before`` and ``ece_after``.
    """
    after = reliability_diagram(y01, p_after, n_bins)
    y_b = y01 if y_before is None else y_before
    before = None if p_before is None else reliability_diagram(y_b, p_before, n_bins)
    return {
        "bins": _listed(np.linspace(0.0, 1.0, int(n_bins) + 1)),
        "before": None if before is None else {k: v for k, v in before.items() if k != "ece"},
        "after": {k: v for k, v in after.items() if k != "ece"},
        "ece_before": None if before is None else before["ece"],
        "ece_after": after["ece"],
    }


def top_label(proba: ArrayLike, y_index: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Multiclass -> binary for a top-label reliability diagram.

    The top label is the 0-1-cost decision of :func:`models.decisions.rule.decide` (ties go
    to the higher class index, as the service decides).

    Returns
    -------
    correct : ndarray of shape (n,), 0/1
        Whether the top label is the true class.
    confidence : ndarray of shape (n,)
        The probability of the top label.
    """
    p = np.asarray(proba, dtype=np.float64)
    k = p.shape[1] if p.ndim == 2 else 0
    labels = decide(p, 1.0 - np.eye(k)).labels_index
    confidence = p[np.arange(len(labels)), labels]
    return (labels == np.asarray(y_index)).astype(np.int8), confidence


# ------------------------------------------------------------------------------- ROC


def _upper_hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the upper convex hull of points sorted by ``x`` (monotone chain)."""
    hull: list[int] = []
    for i in range(len(x)):
        while len(hull) >= 2:
            o, a = hull[-2], hull[-1]
            if (x[a] - x[o]) * (y[i] - y[o]) - (y[a] - y[o]) * (x[i] - x[o]) >= 0:
                hull.pop()  # a lies on or below the chord o -> i
            else:
                break
        hull.append(i)
    return np.asarray(hull, dtype=np.intp)


def _thin(x: np.ndarray, y: np.ndarray, max_points: int) -> np.ndarray:
    """At most ``max_points`` indices: the convex hull plus points even in arc length."""
    n = len(x)
    if n <= max_points:
        return np.arange(n)
    hull = _upper_hull(x, y)
    if len(hull) >= max_points:
        return hull[np.unique(np.linspace(0, len(hull) - 1, max_points).round().astype(np.intp))]
    arc = np.concatenate(([0.0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))))
    spare = max_points - len(hull)
    even = np.searchsorted(arc, np.linspace(0.0, arc[-1], spare)).clip(0, n - 1)
    return np.union1d(hull, even)[:max_points]


def roc_curve(y01: ArrayLike, p1: ArrayLike, max_points: int = ROC_MAX_POINTS) -> dict[str, Any]:
    """ROC points of "positive iff ``p1 >= t``" over every distinct ``t``, and the AUC.

    The full curve has one point per distinct score (plus ``(0, 0)``); when it has more
    than ``max_points`` points it is thinned to its convex hull (every vertex kept, so the
    ROC convex hull and the cost-optimal operating points are exact) plus points evenly
    spaced along the curve. ``auc`` is :func:`models.evaluation.metrics.roc_auc` on all rows.

    Returns
    -------
    dict
        ``fpr``, ``tpr`` (ascending, from (0, 0) to (1, 1)) and ``auc``.
    """
    y, p = _check_binary(y01, p1)
    _require_both(y, "roc_curve")
    auc = roc_auc(y, p)  # first, and each row-sized array freed once used: on large data
    order = np.argsort(-p, kind="stable")  # the work arrays, not the curve, take the memory
    ps = p[order]
    last = np.concatenate((np.flatnonzero(np.diff(ps)), [len(ps) - 1]))  # end of each tie run
    del ps
    ys = y[order]
    del order
    tps = np.cumsum(ys)[last]
    del ys
    fps = (last + 1) - tps
    del last
    tpr = np.concatenate(([0.0], tps / tps[-1]))
    fpr = np.concatenate(([0.0], fps / fps[-1]))
    del tps, fps
    keep = _thin(fpr, tpr, max(int(max_points), 3))
    return {"fpr": _listed(fpr[keep]), "tpr": _listed(tpr[keep]), "auc": auc}


def roc_one_vs_rest(
    y_index: ArrayLike, proba: ArrayLike, classes: list[Any], max_points: int = ROC_MAX_POINTS
) -> dict[str, Any]:
    """One ROC curve per class (that class against the rest) and their mean AUC.

    Classes absent from ``y_index`` (or present in every row) have no curve.
    """
    y = np.asarray(y_index)
    p = np.asarray(proba, dtype=np.float64)
    curves = [
        {"label": label, **roc_curve((y == k).astype(np.int8), p[:, k], max_points)}
        for k, label in enumerate(classes)
        if 0 < int(np.count_nonzero(y == k)) < len(y)
    ]
    aucs = [c["auc"] for c in curves]
    return {"curves": curves, "auc": float(np.mean(aucs)) if aucs else None}


# ------------------------------------------------------------------------ cost curve


def _check_range(ratio_min: float, ratio_max: float) -> tuple[float, float]:
    for name, v in (("ratio_min", ratio_min), ("ratio_max", ratio_max)):
        if not (isinstance(v, int | float | np.number) and math.isfinite(v) and v > 0):
            raise InvalidInput(f"{name}: expected a finite cost ratio c_fn/c_fp > 0, got {v!r}")
    if not ratio_min < ratio_max:
        raise InvalidInput(
            f"ratio_max: expected a ratio above ratio_min ({ratio_min}), got {ratio_max}"
        )
    return float(ratio_min), float(ratio_max)


def cost_curve(
    y01: ArrayLike,
    p1: ArrayLike,
    ratio_min: float = COST_CURVE_RATIOS[0],
    ratio_max: float = COST_CURVE_RATIOS[1],
    n_points: int = 101,
) -> dict[str, Any]:
    """Mean cost per row at the cost-optimal decision, for ``c_fp = 1`` and ``c_fn = r``.

    For each ratio ``r`` on a log grid from ``ratio_min`` to ``ratio_max`` the decision is
    positive iff ``p1 >= binary_threshold(1, r) = 1 / (1 + r)`` (Eq. 20), and the cost is
    ``(#FP + r #FN) / n`` -- what :func:`whatif` (and the service's evaluate) gives at
    ``c_fp = 1, c_fn = r``. The trivial classifiers: all positive costs ``#neg / n`` (a
    flat line), all negative ``r #pos / n``.

    Raises
    ------
    InvalidInput
        A ratio not finite and > 0, ``ratio_min >= ratio_max`` (the message names the
        field), or labels of one class only.

    Returns
    -------
    dict
        ``ratios``, ``mean_cost``, ``all_positive``, ``all_negative``, ``ratio_min``,
        ``ratio_max``.
    """
    lo, hi = _check_range(ratio_min, ratio_max)
    y, p = _check_binary(y01, p1)
    _require_both(y, "cost_curve")
    ratios = np.geomspace(lo, hi, int(n_points))
    thresholds = np.array([binary_threshold(1.0, float(r)) for r in ratios])
    fnr, fpr = _rates(y, p, thresholds)
    n, n_pos = float(y.size), float(np.count_nonzero(y))
    n_neg = n - n_pos
    return {
        "ratios": _listed(ratios),
        "mean_cost": _listed((fpr * n_neg + ratios * fnr * n_pos) / n),
        "all_positive": _listed(np.full(ratios.size, n_neg / n)),
        "all_negative": _listed(ratios * n_pos / n),
        "ratio_min": lo,
        "ratio_max": hi,
    }


# --------------------------------------------------------------------------- what-if


def whatif(
    y01: ArrayLike,
    p1: ArrayLike,
    c_fp: float,
    c_fn: float,
    c_tp: float = 0.0,
    c_tn: float = 0.0,
) -> dict[str, Any]:
    """Decide held-out rows under one binary cost setting and count what it costs.

    The decision is :func:`models.decisions.rule.decide` on ``[1 - p1, p1]`` (positive iff
    ``p1 >= t``), exactly what the predict endpoint does for these probabilities.

    Returns
    -------
    dict
        ``threshold``, ``confusion_matrix`` ``[[tn, fp], [fn, tp]]`` (rows = truth),
        ``total_cost``, ``mean_cost``, ``accuracy`` and ``n``. ``total_cost`` is None
        when the total exceeds the largest float64 (costs near 1e308 on many rows);
        ``mean_cost`` is always finite (then computed as ``sum_ij (n_ij / n) C[i][j]``,
        which is at most the largest cost).

    Raises
    ------
    InvalidCostMatrix
        Invalid costs (message names the cost, as :meth:`CostMatrix.from_binary`).
    """
    costs = CostMatrix.from_binary(c_fp, c_fn, c_tp, c_tn)
    y, p = _check_binary(y01, p1)
    decided = decide(np.column_stack([1.0 - p, p]), costs).labels_index
    return {"threshold": costs.threshold, **_decided_at(y.astype(np.int64), decided, costs, 2)}


def _decided_at(y: np.ndarray, decided: np.ndarray, costs: CostMatrix, k: int) -> dict[str, Any]:
    """What the ``decided`` class indices cost on labels ``y`` (K = ``k`` classes): the
    confusion matrix, total and mean cost, accuracy and ``n`` of :func:`whatif` and
    :func:`whatif_matrix`."""
    confusion = cost_confusion_matrix(y, decided, k)
    with np.errstate(over="ignore"):
        total: float | None = total_cost(y, decided, costs)
    if total is not None and math.isfinite(total):
        mean = total / y.size
    else:  # overflow: the mean from the shares of each cell (each term <= its cost)
        total = None
        shares = confusion.astype(np.float64) / y.size
        mean = min(float(np.sum(shares * costs.matrix)), float(np.max(costs.matrix)))
    return {
        "confusion_matrix": confusion.tolist(),
        "total_cost": total,
        "mean_cost": mean,
        "accuracy": float(np.trace(confusion) / y.size),
        "n": int(y.size),
    }


def whatif_review(
    y01: ArrayLike,
    p1: ArrayLike,
    c_fp: float,
    c_fn: float,
    c_review: float,
    c_tp: float = 0.0,
    c_tn: float = 0.0,
) -> dict[str, Any]:
    """Decide held-out rows among negative, positive and review (``c_review`` whatever the
    truth), as predict does with ``costs.c_review``, and count what it costs.

    The decision is :func:`models.decisions.actions.decide_actions` on ``[1 - p1, p1]``
    under ``[[c_tn, c_fp, c_review], [c_fn, c_tp, c_review]]``.

    Returns
    -------
    dict
        ``c_review``; ``band``: ``[low, high]``, the probabilities of ``classes[1]``
        between which rows go to review (:func:`models.decisions.actions.review_band`),
        or None when none can; ``confusion_matrix`` (2 x 3: rows = truth, columns =
        negative, positive, review), ``reviewed`` (rows) and ``reviewed_share``,
        ``total_cost`` (None past the largest float64) and ``mean_cost``.

    Raises
    ------
    InvalidCostMatrix
        Invalid costs (the message names the cost, ``c_review`` included).
    """
    binary = CostMatrix.from_binary(c_fp, c_fn, c_tp, c_tn).matrix
    matrix = review_matrix(binary, c_review)
    y, p = _check_binary(y01, p1)
    y_index = y.astype(np.int64)
    taken = decide_actions(np.column_stack([1.0 - p, p]), matrix, validated=True).action_index
    counts = np.bincount(y_index * 3 + taken, minlength=6).reshape(2, 3)
    with np.errstate(over="ignore"):
        total: float | None = float(matrix[y_index, taken].sum())
    if total is not None and math.isfinite(total):
        mean = total / y.size
    else:
        total = None
        mean = min(float(np.sum(counts / y.size * matrix)), float(np.max(matrix)))
    band = review_band(c_fp, c_fn, float(c_review), c_tp, c_tn)
    reviewed = int(counts[:, 2].sum())
    return {
        "c_review": float(c_review),
        "band": None if band is None else list(band),
        "confusion_matrix": counts.tolist(),
        "reviewed": reviewed,
        "reviewed_share": reviewed / y.size,
        "total_cost": total,
        "mean_cost": mean,
    }


def whatif_matrix(y_index: ArrayLike, proba: ArrayLike, cost_matrix: ArrayLike) -> dict[str, Any]:
    """Decide held-out rows of K classes under one ``(K, K)`` cost matrix and count the cost.

    Each row is decided by least expected cost, ``argmin_j sum_i p_i C[i][j]``
    (:func:`models.decisions.rule.decide`, as predict does with ``cost_matrix``).

    Returns
    -------
    dict
        ``confusion_matrix`` (K x K, rows = truth, columns = decision), ``total_cost``
        (None past the largest float64), ``mean_cost``, ``accuracy`` and ``n``.

    Raises
    ------
    InvalidCostMatrix
        Not a valid ``(K, K)`` matrix for these probabilities' K classes.
    InvalidInput
        Labels and probabilities that do not fit together.

    Examples
    --------
    >>> out = whatif_matrix([0, 1, 2], [[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]],
    ...                     [[0, 1, 1], [1, 0, 1], [5, 5, 0]])
    >>> out["confusion_matrix"], out["total_cost"]
    ([[1, 0, 0], [0, 1, 0], [0, 0, 1]], 0.0)
    """
    p = np.asarray(proba, dtype=np.float64)
    y = np.asarray(y_index)
    if p.ndim != 2 or y.ndim != 1 or p.shape[0] != y.shape[0] or not y.size:
        raise InvalidInput(
            f"expected n labels and (n, K) probabilities, got {y.shape} and {p.shape}"
        )
    k = p.shape[1]
    if not np.issubdtype(y.dtype, np.integer) or y.min() < 0 or y.max() >= k:
        raise InvalidInput(f"labels must be class indices 0..{k - 1}")
    costs = CostMatrix(np.asarray(cost_matrix, dtype=np.float64))
    if costs.matrix.shape[0] != k:
        raise InvalidCostMatrix(
            f"cost matrix: the version has {k} classes, so the matrix must be {k} x {k}; "
            f"got {costs.matrix.shape[0]} x {costs.matrix.shape[1]}"
        )
    return _decided_at(y.astype(np.int64), decide(p, costs).labels_index, costs, k)


# ------------------------------------------------------------- held-out predictions


def uncalibrated_proba(model: InferenceModel, X: Any) -> np.ndarray | None:
    """Class probabilities *before* calibration, or None when there is no such step.

    The mapping (the very input of the calibration map, so nothing is invented):

    * binary boosters (:class:`~models.inference.scorers.BinaryScorer`): the raw score
      ``s(x)`` in ``[0, 1]`` per ``score_kind`` -- the weighted vote fraction of
      Eq. 24 (``"vote"``) or ``1 / (1 + exp(-2 F(x)))`` of Eq. 25 (``"logistic"``) --
      as ``[1 - s, s]``; fold ensembles
      (:class:`~models.inference.fold_ensemble.FoldEnsembleScorer`): the mean of the folds' ``s(x)``;
    * SAMME (:class:`~models.inference.multiclass_scorers.CalibratedVoteScorer`): the raw class
      scores (vote fractions or softmax of the votes), rows normalised;
    * one-vs-rest: each member's raw score ``s_k(x)``, rows normalised.

    JOUS-Boost and the angle-based models have no calibration step: None.
    """
    scorer = model.scorer
    X = check_features(X, model.n_features)
    if isinstance(scorer, BinaryScorer | FoldEnsembleScorer):
        s = scorer.raw_score(X)
        return np.column_stack([1.0 - s, s])
    if isinstance(scorer, CalibratedVoteScorer):
        return normalise_rows(raw_vote_scores(scorer.ensemble, X, scorer.score_kind))
    if isinstance(scorer, OneVsRestScorer):
        raw = [m.ensemble.score(X, m.score_kind) for m in scorer.members]
        return normalise_rows(np.column_stack(raw))
    return None


def stratified_sample(y: ArrayLike, cap: int, seed: int = 0) -> np.ndarray:
    """Sorted indices of at most ``cap`` rows, each class in proportion (deterministic).

    All rows when there are at most ``cap``. Otherwise each class gets its share of
    ``cap`` by largest remainder (at least one row), drawn without replacement by a
    generator seeded with ``seed``.
    """
    labels = np.asarray(y)
    n = labels.shape[0]
    if n <= cap:
        return np.arange(n)
    _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    share = cap * counts / n
    quota = np.floor(share).astype(np.int64)
    quota[np.argsort(quota - share, kind="stable")[: cap - int(quota.sum())]] += 1
    quota = np.maximum(quota, 1)
    quota[np.argmax(quota)] -= max(0, int(quota.sum()) - cap)
    rng = np.random.default_rng(seed)
    picked = [
        rng.choice(np.flatnonzero(inverse == k), size=int(q), replace=False)
        for k, q in enumerate(quota)
    ]
    return np.sort(np.concatenate(picked))


def capacity_plot(capacity: dict[str, Any]) -> dict[str, Any]:
    """Plot data of an automatic capacity search (``capacity_`` of :mod:`models.auto`).

    One curve per weak learner tried: the out-of-fold loss of the calibrated
    probabilities (``metric``) at each checkpoint round count, and the chosen point.
    Unlike the other plots it is not computed on the held-out evaluation rows but on
    the training rows' cross-fitting folds, which chose the model.
    """
    curves = []
    for c in capacity.get("curves", []):
        wl = c["weak_learner"]
        label = {"stump": "stumps", "tree": f"depth-{c['max_depth']} trees"}.get(wl, wl)
        curves.append(
            {
                "label": label,
                "weak_learner": c["weak_learner"],
                "max_depth": c["max_depth"],
                "rounds": list(c["rounds"]),
                "loss": list(c["loss"]),
                "best_rounds": c["best_rounds"],
                "best_loss": c["best_loss"],
            }
        )
    return {
        "metric": capacity.get("metric", "log_loss"),
        "chosen": {
            k: capacity.get(k)
            for k in ("weak_learner", "max_depth", "n_estimators", "validation_loss")
        },
        "stopped": capacity.get("stopped"),
        "search_rows": capacity.get("search_rows"),
        "search_folds": capacity.get("search_folds"),
        "curves": curves,
    }
