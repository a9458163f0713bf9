"""The spread of a fold ensemble's mean score: the noise that averaging removes, put back.

A fold ensemble (:mod:`models.inference.fold_ensemble`) serves ``g(s(x))`` with ``s`` the
mean of its k fold boosters' scores and ``g`` the map fitted on their *out-of-fold*
scores, each a single booster's. Write a single booster's score of a new row as
``s_i(x) = m(x) + u_i(x)``: what the k boosters share (the signal, and the noise of the
training rows they have in common) and noise of their own. Averaging keeps ``m`` and
``1/k`` of the own noise's variance, so the mean score is less spread than one
booster's while carrying the same signal, and a map fitted on single scores is too flat
for it (regression dilution). With ``V`` the variance of the out-of-fold scores and
``C = Var(m)``, the mean score's variance is ``C + (V - C) / k``, and the map that fits
the mean is ``g`` applied to the mean spread about the out-of-fold mean score ``c0``:

    s~(x) = c0 + r (s(x) - c0),      r = V / (C + (V - C) / k)

(exact for a linear signal with Gaussian noise, where ``E[m | s]`` is linear in ``s``).
``C`` is measured without a held-out row: each training row has one out-of-fold score
``s_f`` and k - 1 scores of boosters that saw it; their covariance over the rows is
``Var(m)``, because what the k - 1 took from the row itself -- a pull toward its label,
the label's noise -- is uncorrelated with a score of a booster that never saw it. (The
variance of the k - 1 scores among themselves, the obvious estimate of the own noise,
comes out too small: fitted to the row, they agree more there than on new rows.)
``bench/quality/served_calibration.py`` measures the served calibration slope with and
without the spread.

The served map is ``g`` composed with the spread (:func:`spread_map`), itself a map of
the mean score: Platt's ``A s + B``, isotonic regression's knots and Venn-ABERS's
thresholds take the spread in their own parameters (the same state as before: a saved
model needs nothing new to be read), and a beta map stores it (``"center"``, ``"factor"`` in its state). The raw score
of a fold ensemble stays the mean fold score (what the prediction log stores and a
recalibration fits on).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.calibration.calibrators import (
    BetaCalibrator,
    Calibrator,
    IsotonicCalibrator,
    PlattCalibrator,
)
from models.calibration.venn_abers import VennAbersCalibrator
from models.exceptions import ArtifactError

__all__ = ["MAX_FACTOR", "IDENTITY", "ScoreSpread", "fit", "from_state", "spread_map"]

MAX_FACTOR = 3.0
"""The largest factor fitted: with almost no shared signal (tiny or hopeless data) the
ratio would otherwise spread the scores without bound."""


@dataclass(frozen=True)
class ScoreSpread:
    """``center + factor * (s - center)``: the mean fold score, spread (factor >= 1)."""

    center: float = 0.0
    factor: float = 1.0

    def apply(self, s: np.ndarray) -> np.ndarray:
        """The spread scores (``s`` itself when the factor is 1)."""
        if self.factor == 1.0:
            return s
        out = np.subtract(s, self.center)
        out *= self.factor
        out += self.center
        return out

    def to_state(self) -> dict[str, float]:
        return {"center": float(self.center), "factor": float(self.factor)}


IDENTITY = ScoreSpread()


def fit(
    oof: np.ndarray,
    fold_scores: np.ndarray,
    fold_of_row: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> ScoreSpread:
    """The spread of a k-fold ensemble's mean score (module docstring).

    Parameters
    ----------
    oof : ndarray of shape (n,)
        Each training row's out-of-fold score (the booster of its fold).
    fold_scores : ndarray of shape (n, k)
        Every fold booster's score of every training row.
    fold_of_row : ndarray of shape (n,)
        The fold of each row (the booster that did not see it).
    sample_weight : ndarray of shape (n,), optional
        Row weights of the variances.
    """
    n, k = fold_scores.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    total = float(w.sum())
    if k < 2 or n < 2 or total <= 0:
        return IDENTITY
    seen = np.ones((n, k), dtype=bool)
    seen[np.arange(n), fold_of_row] = False
    others = np.where(seen, fold_scores, 0.0).sum(axis=1) / (k - 1)  # boosters that saw it
    center = float(np.dot(w, oof)) / total
    v = float(np.dot(w, (oof - center) ** 2)) / total
    c = float(np.dot(w, (oof - center) * (others - float(np.dot(w, others)) / total))) / total
    if not v > 0:
        return IDENTITY
    mean_var = min(max(c, 0.0), v) + (v - min(max(c, 0.0), v)) / k
    factor = MAX_FACTOR if mean_var * MAX_FACTOR <= v else v / mean_var
    return ScoreSpread(center, float(min(max(factor, 1.0), MAX_FACTOR)))


def from_state(state: Any) -> ScoreSpread:
    """A spread from :meth:`ScoreSpread.to_state` output, validated (ArtifactError)."""
    if not isinstance(state, dict) or set(state) != {"center", "factor"}:
        raise ArtifactError("score spread: expected an object with 'center' and 'factor'")
    vals = []
    for key in ("center", "factor"):
        v = state[key]
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise ArtifactError(f"score spread field {key!r}: expected a finite number, got {v!r}")
        vals.append(float(v))
    if not 1.0 <= vals[1] <= MAX_FACTOR:
        raise ArtifactError(
            f"score spread field 'factor': expected 1 to {MAX_FACTOR}, got {vals[1]}"
        )
    return ScoreSpread(vals[0], vals[1])


def spread_map(calibrator: Calibrator, spread: ScoreSpread) -> Calibrator:
    """The map ``s -> calibrator(spread(s))``, as a new calibrator of the same method.

    Platt: ``A' = r A``, ``B' = B + A c0 (1 - r)``; isotonic and Venn-ABERS: the knots
    ``x`` become ``c0 + (x - c0) / r`` (the same interpolation or steps, the same ends); beta:
    the spread is kept in the map (``center_``, ``factor_``). Factor 1 (or the identity
    map ``"none"``): the calibrator itself.
    """
    r, c0 = float(spread.factor), float(spread.center)
    if r == 1.0:
        return calibrator
    if isinstance(calibrator, PlattCalibrator):
        out = PlattCalibrator(calibrator.max_iter, calibrator.tol)
        out.A_ = r * calibrator.A_
        out.B_ = calibrator.B_ + calibrator.A_ * c0 * (1.0 - r)
        out.n_iter_, out.targets_ = calibrator.n_iter_, calibrator.targets_
        return out
    if isinstance(calibrator, IsotonicCalibrator):
        iso = IsotonicCalibrator()
        iso.x_thresholds_ = c0 + (calibrator.x_thresholds_ - c0) / r
        iso.y_thresholds_ = calibrator.y_thresholds_.copy()
        return iso
    if isinstance(calibrator, VennAbersCalibrator):
        va = VennAbersCalibrator()
        va.x_thresholds_ = c0 + (calibrator.x_thresholds_ - c0) / r
        va.p0_, va.p1_ = calibrator.p0_.copy(), calibrator.p1_.copy()
        return va
    if isinstance(calibrator, BetaCalibrator):
        beta = BetaCalibrator()
        beta.a_, beta.b_, beta.c_ = calibrator.a_, calibrator.b_, calibrator.c_
        # the map's own spread after this one: c1 + f1 (c0 + r (s - c0) - c1), which is
        # c + f1 r (s - c) with c = (c1 (1 - f1) + f1 c0 (1 - r)) / (1 - f1 r)
        f1, c1 = calibrator.factor_, calibrator.center_
        beta.factor_ = r * f1
        beta.center_ = (
            c1
            if beta.factor_ == 1.0
            else ((c1 * (1.0 - f1) + f1 * c0 * (1.0 - r)) / (1.0 - beta.factor_))
        )
        return beta
    return calibrator
