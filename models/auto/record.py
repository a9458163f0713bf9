"""What a fit records about its choice: ``capacity_``, with a validation curve per entry.

The service stores ``capacity_`` on the version (its ``capacity`` plot draws the
curves); the keys and their rounding are part of that record, so they live here, once.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from models.weak import get_weak_learner

__all__ = ["capacity_record", "curve_record"]


def curve_record(
    weak_learner: str,
    depth: int,
    cps: np.ndarray,
    losses: np.ndarray,
    smooth: np.ndarray,
    c_best: int,
    models: list[Any],
) -> dict[str, Any]:
    """One grid entry's validation curve: the loss at each checkpoint, its best rounds
    and smoothed loss, and the rounds each fold model actually fitted (the search adds
    ``seconds``, and ``extended_from``, the grid's rounds, when the curve still falling at
    its cap was refitted with more rounds)."""
    return {
        "weak_learner": weak_learner,
        "max_depth": depth,
        "rounds": cps.tolist(),
        "loss": [round(float(v), 6) for v in losses],
        "best_rounds": int(cps[c_best]),
        "best_loss": round(float(smooth[c_best]), 6),
        "fold_rounds": [int(mod.n_estimators_) for mod in models],
    }


def capacity_record(est: Any, result: Any, started: float) -> dict[str, Any]:
    """``capacity_``: the chosen weak learner, depth and rounds, the loss that chose them,
    how the search ran and stopped, and its curves.

    ``result`` is the :class:`~models.auto.search.SearchResult`; ``started`` the
    monotonic time the fit began (``search_seconds`` counts the final stage too).
    """
    chosen = result.chosen
    wl, depth, _ = result.grid[chosen.index]
    return {
        "weak_learner": wl,
        "max_depth": get_weak_learner(wl).depth(depth),
        "n_estimators": chosen.rounds,
        "metric": est.metric,
        "validation_loss": round(chosen.loss, 6),
        "max_rounds": None if est.max_rounds is None else int(est.max_rounds),
        "search_rows": int(len(result.rows.rows)),
        "search_folds": result.rows.k,
        "stopped": result.stopped,
        "search_seconds": round(time.monotonic() - started, 3),
        "final_estimate_seconds": round(chosen.final_estimate, 6),
        "time_fallback": result.fallback,
        "curves": result.curves,
    }
