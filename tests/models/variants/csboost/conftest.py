"""Shared data and references for the tests of models.variants.csboost."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from scipy.stats import norm


def binary_data(
    n: int = 600, f: int = 5, seed: int = 0, nan: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """A noisy non-linear binary problem; ``nan`` is the share of missing entries."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    if nan:
        X[rng.random(X.shape) < nan] = np.nan
    return X, y


def gaussians(n: int = 10_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The paper's synthetic problem (section 5.1): N(+1, 1) (y = 1), N(-1, 1) (y = 0)."""
    rng = np.random.default_rng(seed)
    x = np.r_[rng.normal(1.0, 1.0, n), rng.normal(-1.0, 1.0, n)][:, None]
    return x, np.r_[np.ones(n, dtype=int), np.zeros(n, dtype=int)]


GRID = np.linspace(-4.0, 2.0, 6001)


def boundary_and_excess_risk(model: object, c1: float, c2: float = 1.0) -> tuple[float, float]:
    """Effective boundary of a 1-D model and its excess cost risk over the Bayes rule.

    The learned decision region {x: F(x) >= 0} may have several crossings; the effective
    boundary is the threshold t whose rule 1[x >= t] disagrees least with it (disagreement
    measured under the true mixture density). The risk is C1 P(miss) + C2 P(false
    positive) under the true Gaussians (priors 1/2), relative to the Bayes rule at
    x* = -1/2 log(C1/C2) (Eq. 57-58).
    """
    dx = GRID[1] - GRID[0]
    pos = model.decision_function(GRID[:, None]) >= 0  # type: ignore[attr-defined]
    dens = 0.5 * (norm.pdf(GRID - 1) + norm.pdf(GRID + 1))
    mass_pos_below = np.r_[0.0, np.cumsum(pos * dens)[:-1]] * dx
    mass_neg_above = (((~pos) * dens).sum() - np.r_[0.0, np.cumsum((~pos) * dens)[:-1]]) * dx
    boundary = float(GRID[np.argmin(mass_pos_below + mass_neg_above)])
    risk = (c1 * 0.5 * norm.pdf(GRID - 1) * ~pos + c2 * 0.5 * norm.pdf(GRID + 1) * pos).sum() * dx
    xs = -0.5 * np.log(c1 / c2)
    bayes = c1 * 0.5 * norm.cdf(xs - 1) + c2 * 0.5 * (1 - norm.cdf(xs + 1))
    return boundary, float(risk / bayes - 1.0)


def normalized(c_fp: float, c_fn: float) -> tuple[float, float]:
    """(C1, C2) with C1 + C2 = 2 (see models.variants.csboost._common)."""
    return 2 * c_fn / (c_fp + c_fn), 2 * c_fp / (c_fp + c_fn)


#: The costs and the shares of missing entries every brute-force reference is checked at.
REFERENCE_CASES = pytest.mark.parametrize(
    ("c_fp", "c_fn", "nan"),
    [(*costs, nan) for costs in [(1.0, 1.0), (1.0, 4.0), (3.0, 1.0)] for nan in (0.0, 0.1)],
)


def realboost_reference(
    X: np.ndarray,
    y: np.ndarray,
    rounds: int,
    c_fp: float,
    c_fn: float,
    partitions: Callable[[np.ndarray], Iterator[list[np.ndarray]]],
    smoothing: float = 0.5,
    rtol: float = 0.0,
) -> np.ndarray:
    """Brute-force cost-sensitive RealBoost on the training rows: F after ``rounds``.

    ``partitions(x)`` yields the candidate learners of one feature column ``x``, each as
    its cells (boolean masks); every cell outputs Eq. 49 (an empty one adds nothing) and
    the candidate of smallest loss (Eq. 47) is kept, a later one only if its loss is
    smaller by more than ``rtol`` (relative).
    """
    ys = np.where(y == 1, 1.0, -1.0)
    c1, c2 = normalized(c_fp, c_fn)
    cost = np.where(ys > 0, c1, c2)
    eps = smoothing / len(y)
    F = np.zeros(len(y))
    for _ in range(rounds):
        w = np.exp(-cost * ys * F)
        w /= w.sum()
        best: tuple[float, np.ndarray] | None = None
        for j in range(X.shape[1]):
            for cells in partitions(X[:, j]):
                out, loss = np.zeros(len(y)), 0.0
                for cell in cells:
                    wp, wn = w[cell & (ys > 0)].sum(), w[cell & (ys < 0)].sum()
                    g = np.log((wp + eps) * c1 / ((wn + eps) * c2)) / (c1 + c2)  # Eq. 49
                    loss += wp * np.exp(-c1 * g) + wn * np.exp(c2 * g)  # Eq. 47
                    out[cell] = g
                if best is None or loss < best[0] * (1 - rtol):
                    best = (loss, out)
        assert best is not None
        F = F + best[1]
    return F


def cheap_and_dear_misses(
    cls: Callable[..., Any], rounds: int, seed: int, weak_learner: str
) -> tuple[Any, Any]:
    """``cls`` fitted with misses four times cheaper and four times dearer than false
    positives; the dearer misses must predict more positives."""
    X, y = binary_data(n=500, seed=seed)
    lo = cls(rounds, c_fn=0.25, weak_learner=weak_learner, random_state=0).fit(X, y)
    hi = cls(rounds, c_fn=4.0, weak_learner=weak_learner, random_state=0).fit(X, y)
    assert (lo.predict(X) == 1).mean() < (hi.predict(X) == 1).mean()
    return lo, hi
