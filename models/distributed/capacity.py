"""The number of rounds chosen on a Dask cluster: the single-machine rule, reduced to sums.

A distributed training that does not fix ``n_estimators`` grows every booster up to a
round cap and chooses the rounds as :mod:`models.auto` chooses them for its stump entry
(:mod:`models.auto.search`): at the checkpoints :func:`models.auto.curve.checkpoints`
of the cap, the out-of-fold scores of every row (each row scored by the fold booster that
never saw it, truncated to the checkpoint's rounds) are calibrated and their loss
(``log_loss`` or ``brier``, :func:`models.auto.curve.loss`) computed; the rounds are the
minimum of that validation curve smoothed over neighbouring checkpoints
(:func:`models.auto.curve.smoothed`, the first on ties). The cap is the stump entry's
rounds in the default grid (:func:`models.auto.grid.default_grid`: 400), lowered by
``max_rounds``.

What differs, and why (the reduced form):

* **Stumps only.** The single-machine search also tries deeper trees and the oblique
  learner; the distributed training grows stumps (one histogram per booster a round).
* **Every row searches.** The single-machine search runs on a subsample of
  ``max_search_rows`` rows for large data; here the fold boosters already grow in the
  same passes over every row, so their out-of-fold scores cost one more pass.
* **The search's map is Platt's**, whatever the served map (as ``calibration="auto"``
  searches with Platt's): Platt's fit needs only sums over the rows, isotonic
  regression would need the sorted scores on one machine.
* **No scores travel.** Each worker keeps its rows' staged out-of-fold scores
  (:func:`staged_out_of_fold`, one float64 per row and checkpoint) and the Platt fits of
  every checkpoint run *together* on the driver as Newton's method of
  :class:`~models.calibration.calibrators.PlattCalibrator` (same start, targets,
  ridge, Armijo line search and tolerance), each of its evaluations one pass in which
  every partition returns eight sums per checkpoint (:func:`platt_sums`: objective,
  gradient, Hessian, loss at the point); those are added in a tree of tasks. A pass
  sends ``8 x checkpoints`` floats to the driver, whatever the rows.

The curve is the single machine's up to summation order (the sums are added per
partition, then across partitions): the tests find the same losses within 1e-9 and the
same rounds as :func:`models.auto.search.entry_losses` on the same bins and folds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.auto.curve import smoothed
from models.auto.grid import default_grid
from models.auto.params import METRICS
from models.calibration.calibrators import PlattCalibrator
from models.exceptions import InvalidInput, TrainingError

__all__ = [
    "N_SUMS",
    "Curve",
    "platt_curve",
    "platt_sums",
    "platt_targets",
    "round_cap",
    "staged_out_of_fold",
]

N_SUMS = 8
"""Sums per checkpoint and pass: objective, g1, g2, h11, h21, h22, log loss, Brier."""

_SIGMA, _MIN_STEP, _ARMIJO = 1e-12, 1e-10, 1e-4  # PlattCalibrator.fit's constants
_PLATT = PlattCalibrator()


def round_cap(max_rounds: int | None) -> int:
    """The rounds every booster grows to while the rounds are searched: the stump entry's
    rounds in the two-class default grid, at most ``max_rounds``."""
    cap = max(rounds for wl, _, rounds in default_grid(2) if wl == "stump")
    return cap if max_rounds is None else min(cap, int(max_rounds))


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise InvalidInput(f"metric must be one of {list(METRICS)}, got {metric!r}")
    return metric


# ---------------------------------------------------------------------- worker tasks


def staged_out_of_fold(
    part: Any,
    fold_stumps: list[list[tuple[int, int, float, float, float, float]]],
    cps: np.ndarray,
) -> np.ndarray:
    """Task: each row of ``part`` (a :class:`~models.distributed.partitions.Partition`):
    its vote fraction s(x) (Eq. 24) by its fold's booster after each
    checkpoint's rounds, shape (len(cps), n) float64.

    ``fold_stumps[b]`` is fold booster ``b``'s stumps in bin terms, ``(feature, bin, left,
    right, missing, alpha)`` (``bin == -1``: the constant ``left``); a booster that stopped
    before a checkpoint keeps its last score, as the single-machine staged scores do
    (:class:`models.auto.estimators.AutoCalibratedBoosting`: running sums of
    ``alpha [h > 0]`` over the rounds, divided by the running sum of the alphas, clipped
    to [0, 1]; the same operations in the same order).
    """
    from models.features.binning import MISSING_CODE

    codes, fold = part.codes, part.fold
    out = np.empty((len(cps), fold.size))
    for b, stumps in enumerate(fold_stumps):
        rows = np.flatnonzero(fold == b)
        if not rows.size:
            continue
        alphas = np.array([s[5] for s in stumps], dtype=np.float64)
        total = np.cumsum(alphas)
        cols = np.minimum(cps, len(stumps)) - 1
        v = np.zeros(rows.size)
        for t, (feature, split_bin, left, right, missing, alpha) in enumerate(stumps):
            if split_bin < 0:
                positive = np.full(rows.size, left > 0)
            else:
                c = codes[feature, rows]
                h = np.where(c <= split_bin, left, right)
                h[c == MISSING_CODE] = missing
                positive = h > 0
            v += positive * alpha
            for ci in np.flatnonzero(cols == t):
                out[ci, rows] = np.clip(v / total[t], 0.0, 1.0)
    return out


def platt_sums(
    staged: np.ndarray, part: Any, points: np.ndarray, targets: tuple[float, float]
) -> np.ndarray:
    """Task: at each point ``(checkpoint, A, B)`` of ``points`` (m, 3), the partition's
    sums (m, :data:`N_SUMS`) of Platt's objective, gradient and Hessian (without the
    ridge) and of the log loss and Brier score of ``P(y = 1) = 1 / (1 + exp(A s + B))``,
    the formulas of :class:`~models.calibration.calibrators.PlattCalibrator` and
    :func:`models.auto.curve.loss` row by row (``part``: the partition's ``y_index``)."""
    lo, hi = targets
    y = np.asarray(part.y_index)
    t = np.where(y == 1, hi, lo)
    onehot1 = y.astype(np.float64)
    onehot0 = 1.0 - onehot1
    out = np.empty((len(points), N_SUMS))
    for i, (ci, a, b) in enumerate(points):
        s = staged[int(ci)]
        f = np.multiply(a, s)
        f += b
        softplus = np.logaddexp(0.0, f)
        obj = float((softplus - (1.0 - t) * f).sum())
        p = np.exp(-softplus)  # P(y = 1)
        d2 = p * (1.0 - p)
        d1 = t - p
        p_true = np.where(y == 1, p, 1.0 - p)
        log_loss = float((-np.log(np.clip(p_true, 1e-15, 1.0))).sum())
        brier = float(((((1.0 - p) - onehot0) ** 2 + (p - onehot1) ** 2) / 2.0).sum())
        # products summed without BLAS: a dot product's threads spin for nothing on a
        # worker's small arrays (8 ms for 50,000 rows on a loaded 2-CPU machine)
        d2s = d2 * s
        out[i] = (obj, float((d1 * s).sum()), float(d1.sum()), float((d2s * s).sum()),
                  float(d2s.sum()), float(d2.sum()), log_loss, brier)  # fmt: skip
    return out


# ---------------------------------------------------------------------- the driver


@dataclass
class _Fit:
    """One checkpoint's Newton state (PlattCalibrator.fit's variables)."""

    a: float
    b: float
    fval: float = math.nan
    grad: tuple[float, float] = (math.nan, math.nan)
    hess: tuple[float, float, float] = (math.nan, math.nan, math.nan)
    n_iter: int = 0
    direction: tuple[float, float, float] = (0.0, 0.0, 0.0)  # da, db, gd
    losses: tuple[float, float] = (math.nan, math.nan)  # log loss and Brier sums at (a, b)


@dataclass(frozen=True)
class Curve:
    """The validation curve of a distributed search and its choice.

    ``losses``: the loss per checkpoint (mean over the rows); ``smooth``: smoothed;
    ``best``: the index of the chosen checkpoint; ``maps``: each checkpoint's Platt
    ``(A, B)``; ``passes``: Newton evaluations (passes over the data).
    """

    cps: np.ndarray
    losses: np.ndarray
    smooth: np.ndarray
    best: int
    maps: list[tuple[float, float]]
    passes: int

    @property
    def rounds(self) -> int:
        return int(self.cps[self.best])


def platt_curve(
    evaluate: Callable[[np.ndarray], np.ndarray],
    cps: np.ndarray,
    n_pos: int,
    n_neg: int,
    metric: str,
) -> Curve:
    """Fit Platt's map at every checkpoint by the Newton's method of
    :class:`~models.calibration.calibrators.PlattCalibrator` (defaults ``max_iter`` and
    ``tol``), all checkpoints at once; return the curve of ``metric`` and its choice.

    ``evaluate(points)`` returns the sums of :func:`platt_sums` over every row at the
    points ``(checkpoint, A, B)`` with the targets of :func:`platt_targets` (one pass
    over the data). A Newton iteration first tries the full step; when Armijo's test
    refuses it, the next pass evaluates every halved step down to the smallest at once
    and takes the first accepted, as the sequential line search would (the same points:
    at most two passes an iteration instead of up to 34).
    """
    n = n_pos + n_neg
    b0 = math.log((n_neg + 1.0) / (n_pos + 1.0))
    fits = [_Fit(0.0, b0) for _ in cps]
    max_iter, tol_total = int(_PLATT.max_iter), float(_PLATT.tol) * n
    # the first pass: objective, gradient and Hessian at the start (step 0)
    pending: dict[int, list[float]] = {i: [0.0] for i in range(len(cps))}
    passes = 0
    while pending:
        order = sorted(pending)
        points = np.array(
            [(i, *_point(fits[i], step)) for i in order for step in pending[i]], dtype=np.float64
        )
        sums = iter(evaluate(points))
        passes += 1
        tried, pending = pending, {}
        for i in order:
            fit, steps = fits[i], tried[i]
            rows = [next(sums) for _ in steps]
            if steps != [0.0]:
                accepted = _accepted(fit, steps, rows)
                if accepted is None:
                    if steps == [1.0]:
                        pending[i] = _LADDER  # every halved step, next pass
                    continue  # (else the line search failed: (A, B) as good as it gets)
                rows = [accepted]
            obj, g1, g2, h11, h21, h22, ll, br = (float(v) for v in rows[0])
            fit.fval, fit.grad, fit.hess, fit.losses = obj, (g1, g2), (h11, h21, h22), (ll, br)
            if _next_direction(fit, max_iter, tol_total):
                pending[i] = [1.0]
    for fit in fits:
        if not (math.isfinite(fit.a) and math.isfinite(fit.b)):  # pragma: no cover
            raise TrainingError(f"Platt scaling diverged (A={fit.a}, B={fit.b})")
    column = 0 if metric == "log_loss" else 1
    losses = np.array([fit.losses[column] / n for fit in fits])
    smooth = smoothed(losses)
    return Curve(
        np.asarray(cps), losses, smooth, int(np.argmin(smooth)),
        [(fit.a, fit.b) for fit in fits], passes,
    )  # fmt: skip


def _halvings() -> list[float]:
    steps, step = [], 0.5
    while step >= _MIN_STEP:
        steps.append(step)
        step /= 2.0
    return steps


_LADDER = _halvings()
"""The line search's steps after the full one: 1/2, 1/4, ... while at least 1e-10."""


def _point(fit: _Fit, step: float) -> tuple[float, float]:
    """The point ``step`` along the fit's Newton direction (0: the current point)."""
    if step == 0.0:
        return fit.a, fit.b
    da, db, _ = fit.direction
    return fit.a + step * da, fit.b + step * db


def _accepted(fit: _Fit, steps: list[float], rows: list[np.ndarray]) -> np.ndarray | None:
    """The sums at the first step Armijo's test accepts (the fit moved there), or None."""
    _, _, gd = fit.direction
    for step, row in zip(steps, rows, strict=True):
        if float(row[0]) < fit.fval + _ARMIJO * step * gd:
            fit.a, fit.b = _point(fit, step)
            return row
    return None


def _next_direction(fit: _Fit, max_iter: int, tol_total: float) -> bool:
    """Start the next Newton iteration at the current point: False when converged or out
    of iterations, else True with its direction set (the line search's first step: 1)."""
    fit.n_iter += 1
    if fit.n_iter > max_iter:
        return False
    g1, g2 = fit.grad
    if max(abs(g1), abs(g2)) <= tol_total:
        return False
    h11, h21, h22 = fit.hess
    h11, h22 = h11 + _SIGMA, h22 + _SIGMA
    det = h11 * h22 - h21 * h21
    da = -(h22 * g1 - h21 * g2) / det
    db = -(-h21 * g1 + h11 * g2) / det
    fit.direction = (da, db, g1 * da + g2 * db)
    return True


def platt_targets(n_pos: int, n_neg: int) -> tuple[float, float]:
    """Platt's targets ``(1 / (N- + 2), (N+ + 1) / (N+ + 2))`` (PlattCalibrator's)."""
    return 1.0 / (n_neg + 2.0), (n_pos + 1.0) / (n_pos + 2.0)
