"""Inductive Venn-ABERS calibration: two isotonic fits per score, merged into one probability.

For a new score ``t`` the calibration rows are fitted twice by isotonic regression, once
with the new row added as a negative and once as a positive; the fitted values at ``t``
are ``p0 <= p1``, a multiprobability prediction whose interval is wide where the
calibration data say little (few rows, the ends of the score range). Served as one
probability, the pair is merged as ``p = p1 / (1 - p0 + p1)`` (the minimiser of the
regret of log loss, section 4 of Vovk & Petej 2014). Unlike isotonic regression itself,
``p`` is never 0 or 1 unless the calibration data are: a new score beyond every
calibration score gets ``p1 = 1`` with ``p0`` the fit of its end, not a certainty.

Both fitted values depend on ``t`` only through its rank among the distinct calibration
scores ``x_1 < ... < x_m``: with the new row added as a negative the value is that of its
position counted with ties on the left (``t = x_j`` as just above ``x_j``), as a positive
with ties on the right. All ``2 (m + 1)`` values are computed at once in ``O(m)`` by the
algorithms of Vovk, Petej & Fedorova (2015, Algorithms 1-4): the greatest convex minorant
of the cumulative sum diagram (CSD), updated as the new row's segment moves through it.
The fit therefore stores three arrays -- the thresholds ``x`` and the two step functions
``p0``, ``p1`` (``m + 1`` values each) -- and predicts with two ``np.searchsorted``;
thresholds where neither step function changes are dropped (the same function, fewer
numbers). Row weights scale the CSD's segments; the new row counts as a row of the mean
weight (weight 1 without weights: the classic predictor).

References
----------
.. [1] Vovk, V., Petej, I. (2014). Venn-Abers predictors. UAI, 829-838.
.. [2] Vovk, V., Petej, I., Fedorova, V. (2015). Large-scale probabilistic predictors
   with and without guarantees of validity. NeurIPS 28, 892-900 (Algorithms 1-4).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from models.calibration.inputs import FittedMap, check_scores, fit_rows

__all__ = ["VennAbersCalibrator", "venn_abers_steps"]

_Point = tuple[float, float]


def _turn(o: _Point, a: _Point, b: _Point) -> float:
    """Cross product of ``a - o`` and ``b - a``: > 0 a left turn, < 0 a right turn."""
    return (a[0] - o[0]) * (b[1] - a[1]) - (a[1] - o[1]) * (b[0] - a[0])


def _slope(a: _Point, b: _Point) -> float:
    return (b[1] - a[1]) / (b[0] - a[0])


def _not_below(t: _Point, a: _Point, b: _Point) -> bool:
    return t[1] >= a[1] + _slope(a, b) * (t[0] - a[0])


def _diagram(cw: np.ndarray, cs: np.ndarray) -> dict[int, _Point]:
    pts: dict[int, _Point] = {0: (0.0, 0.0)}
    for i, (a, b) in enumerate(zip(cw.tolist(), cs.tolist(), strict=True)):
        pts[i + 1] = (a, b)
    return pts


def _positive_values(cw: np.ndarray, cs: np.ndarray, wt: float) -> np.ndarray:
    """``f1[j]``, j = 1..m: the fit of a positive new row just below the j-th block
    (Algorithms 1 and 2 of [2]); index 0 unused."""
    m = len(cw)
    pts = _diagram(cw, cs)
    pts[-1] = (-wt, -wt)  # the new row's segment first
    stack = [pts[-1], pts[0]]
    for i in range(1, m + 1):
        while len(stack) > 1 and _turn(stack[-2], stack[-1], pts[i]) <= 0:
            stack.pop()
        stack.append(pts[i])
    rev = stack[::-1]
    f1 = np.zeros(m + 1)
    for i in range(1, m + 1):
        f1[i] = _slope(rev[-1], rev[-2])
        a, b, c = pts[i - 2], pts[i - 1], pts[i]
        pts[i - 1] = (a[0] + c[0] - b[0], a[1] + c[1] - b[1])  # the new row moves right
        if _not_below(pts[i - 1], rev[-1], rev[-2]):
            continue
        rev.pop()
        while len(rev) > 1 and _turn(pts[i - 1], rev[-1], rev[-2]) <= 0:
            rev.pop()
        rev.append(pts[i - 1])
    return f1


def _negative_values(cw: np.ndarray, cs: np.ndarray, wt: float) -> np.ndarray:
    """``f0[j]``, j = 1..m: the fit of a negative new row just above the j-th block
    (Algorithms 3 and 4 of [2]); index 0 unused."""
    m = len(cw)
    pts = _diagram(cw, cs)
    pts[m + 1] = (pts[m][0] + wt, pts[m][1])  # the new row's segment last
    stack = [pts[m + 1], pts[m]]
    for i in range(m - 1, -1, -1):
        while len(stack) > 1 and _turn(stack[-2], stack[-1], pts[i]) >= 0:
            stack.pop()
        stack.append(pts[i])
    rev = stack[::-1]
    f0 = np.zeros(m + 1)
    for i in range(m, 0, -1):
        f0[i] = _slope(rev[-1], rev[-2])
        a, b, c = pts[i - 1], pts[i], pts[i + 1]
        pts[i] = (a[0] + c[0] - b[0], a[1] + c[1] - b[1])  # the new row moves left
        if _not_below(pts[i], rev[-1], rev[-2]):
            continue
        rev.pop()
        while len(rev) > 1 and _turn(pts[i], rev[-1], rev[-2]) >= 0:
            rev.pop()
        rev.append(pts[i])
    return f0


def venn_abers_steps(
    s: np.ndarray, y: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The step functions of a Venn-ABERS predictor fitted on ``(s, y, w)``.

    Returns ``x`` (the distinct scores, increasing, m values), ``p0`` and ``p1`` (m + 1
    values each): a new score ``t`` has ``p0[searchsorted(x, t, "right")]`` and
    ``p1[searchsorted(x, t, "left")]``. Weights are rescaled to mean 1 (the new row's).
    """
    w = w * (len(w) / float(w.sum()))
    x, inv = np.unique(s, return_inverse=True)
    cw = np.cumsum(np.bincount(inv, weights=w))
    cs = np.cumsum(np.bincount(inv, weights=w * y))
    p0 = np.concatenate([[0.0], _negative_values(cw, cs, 1.0)[1:]])  # below x_1: 0
    p1 = np.concatenate([_positive_values(cw, cs, 1.0)[1:], [1.0]])  # above x_m: 1
    np.clip(p0, 0.0, 1.0, out=p0)
    np.clip(p1, 0.0, 1.0, out=p1)
    # drop the thresholds where neither step changes (x_j separates p0[j] / p0[j + 1]
    # and p1[j] / p1[j + 1]): the same functions
    keep = (p0[:-1] != p0[1:]) | (p1[:-1] != p1[1:])
    return x[keep], p0[np.r_[True, keep]], p1[np.r_[keep, True]]


class VennAbersCalibrator(FittedMap):
    """Inductive Venn-ABERS calibration merged into one probability (module docstring).

    ``fit`` computes the step functions ``p0``, ``p1`` of the calibration scores;
    ``predict`` returns ``p1 / (1 - p0 + p1)`` at each score (and
    :meth:`predict_interval` the pair).

    Attributes
    ----------
    x_thresholds_ : ndarray of shape (m,)
        Increasing calibration scores where ``p0`` or ``p1`` changes.
    p0_, p1_ : ndarray of shape (m + 1,)
        The fits with the new row a negative / a positive, per interval of the thresholds.

    References
    ----------
    .. [1] Vovk, V., Petej, I. (2014). Venn-Abers predictors. UAI.
    .. [2] Vovk, V., Petej, I., Fedorova, V. (2015). Large-scale probabilistic predictors
       with and without guarantees of validity. NeurIPS 28.
    """

    method = "venn_abers"
    _fitted_attr = "x_thresholds_"

    def fit(
        self, scores: ArrayLike, y01: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> VennAbersCalibrator:
        """Fit the two step functions (parameters and errors: ``Calibrator.fit``)."""
        s, y, w = fit_rows(scores, y01, sample_weight)
        self.x_thresholds_, self.p0_, self.p1_ = venn_abers_steps(s, y, w)
        return self

    def predict_interval(self, scores: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """``(p0, p1)`` of each score: the isotonic fits with it a negative / a positive."""
        self._check_fitted()
        s = check_scores(scores)
        x = self.x_thresholds_
        return (
            self.p0_[np.searchsorted(x, s, side="right")],
            self.p1_[np.searchsorted(x, s, side="left")],
        )

    def predict(self, scores: ArrayLike) -> np.ndarray:
        """Calibrated ``P(y = 1) = p1 / (1 - p0 + p1)`` (see ``Calibrator.predict``)."""
        p0, p1 = self.predict_interval(scores)
        return p1 / (1.0 - p0 + p1)

    def to_state(self) -> dict[str, Any]:
        """JSON-able state ``{"method": "venn_abers", "x_thresholds": [...], "p0": [...],
        "p1": [...]}`` (``m``, ``m + 1`` and ``m + 1`` numbers)."""
        self._check_fitted()
        return {
            "method": "venn_abers",
            "x_thresholds": [float(v) for v in self.x_thresholds_],
            "p0": [float(v) for v in self.p0_],
            "p1": [float(v) for v in self.p1_],
        }

    def __repr__(self) -> str:
        n = len(self.x_thresholds_) if hasattr(self, "x_thresholds_") else None
        return "VennAbersCalibrator()" if n is None else f"VennAbersCalibrator(n_thresholds={n})"
