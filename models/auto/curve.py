"""The validation curve: where it is evaluated, how it is smoothed, what loss it holds.

For each grid entry the search computes the out-of-fold loss of the calibrated
probabilities at a few round counts (:func:`checkpoints`); the rounds are chosen at the
minimum of the curve smoothed over neighbouring checkpoints (:func:`smoothed`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["checkpoints", "loss", "smoothed"]


def checkpoints(max_rounds: int) -> np.ndarray:
    """Round counts at which the validation curve is evaluated (1 .. max_rounds).

    Geometric near the start (where the loss changes fast) and every ``max_rounds / 40``
    rounds after, so about 50 points whatever ``max_rounds``.
    """
    m = int(max_rounds)
    geo = np.unique(np.round(np.geomspace(1, m, 25)).astype(int))
    step = max(1, m // 40)
    lin = np.arange(step, m + 1, step)
    return np.unique(np.concatenate([geo, lin, [m]])).astype(int)


def smoothed(losses: np.ndarray) -> np.ndarray:
    """Centred 3-point moving average of a validation curve (2 points at the ends).

    The rounds are chosen at the minimum of the smoothed curve: on small data the
    out-of-fold loss at one checkpoint can dip by chance (e.g. 2 rounds of stumps give a
    four-valued score that happens to calibrate well on these folds), and a lone dip is
    not a capacity to trust.
    """
    v = np.asarray(losses, dtype=np.float64)
    if v.size < 3:
        return v.copy()
    padded = np.concatenate([[np.nan], v, [np.nan]])
    windows = np.stack([padded[:-2], padded[1:-1], padded[2:]])
    return np.nanmean(windows, axis=0)


def loss(metric: str, p: np.ndarray, y_index: np.ndarray, w: np.ndarray | None) -> float:
    """Mean (weighted) log loss or Brier score of class probabilities ``p`` (n, K)."""
    n = len(y_index)
    p_true = p[np.arange(n), y_index]
    if metric == "log_loss":
        per_row = -np.log(np.clip(p_true, 1e-15, 1.0))
    else:
        onehot = np.zeros_like(p)
        onehot[np.arange(n), y_index] = 1.0
        per_row = ((p - onehot) ** 2).sum(axis=1)
        if p.shape[1] == 2:
            per_row = per_row / 2.0  # the binary Brier score (p1 - y)^2
    return float(np.average(per_row, weights=w))
