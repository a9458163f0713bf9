"""The final stage: what serves the chosen capacity, and the map it is served under.

Three cases (:func:`final_fit`):

* small data, ``serve="folds"`` -- the search's k fold boosters of the winning entry,
  truncated to the chosen rounds, are the model (a fold ensemble,
  :mod:`models.inference.fold_ensemble`), under the map fitted on their out-of-fold scores
  and spread for their mean (:mod:`models.calibration.spread`): no further fit;
* small data, ``serve="refit"`` (and SAMME's ``"logistic"`` score, which has no merged
  form) -- one booster fitted on all rows, under that same map;
* large data (the search ran on a subsample) -- the winner is cross-fitted on all rows
  with ``min(n_folds, 3)`` folds (:func:`models.boosting.crossfit.cross_fit`, at most
  :func:`fold_jobs` fits at once); ``serve="folds"`` serves those fold boosters,
  otherwise the refit on all rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from models.boosting.crossfit import _check_n_jobs, cross_fit, run_parallel
from models.boosting.progress import fit_parts, report

__all__ = ["FIT_BYTES_PER_ROW", "FOLD_MEMORY_BUDGET", "FinalFit", "final_fit", "fold_jobs"]

FOLD_MEMORY_BUDGET = 512 * 2**20
"""Bytes of work arrays that the final stage's fold fits running *beside* the first one
may hold (large data: the winner is cross-fitted on all rows, one fit per fold)."""
FIT_BYTES_PER_ROW = 150
"""Work memory of one boosting fit per training row of the fold, measured on pre-binned
codes (depth-3 trees, 1,000,000 rows: the fold's codes, labels, weights, the (n, 2)
histogram input, the tree's row order and leaves, the learner's outputs)."""


def fold_jobs(n_jobs: int | None, k: int, fit_rows: int) -> int:
    """Fold fits to run at once: ``n_jobs`` (None: every CPU), at most ``k``, and only as
    many beyond the first as :data:`FOLD_MEMORY_BUDGET` holds at
    :data:`FIT_BYTES_PER_ROW` x ``fit_rows`` each. Two fits at once double the work
    memory: on 10,000,000 rows (6,666,667 per fold fit, about 950 MiB each) the folds
    run one after another, each still using every CPU in its histogram kernel; the
    results are the same either way (every fit is deterministic and independent)."""
    jobs = min(_check_n_jobs(n_jobs), int(k))
    extra = FOLD_MEMORY_BUDGET // max(1, FIT_BYTES_PER_ROW * int(fit_rows))
    return max(1, min(jobs, 1 + int(extra)))


@dataclass(frozen=True)
class FinalFit:
    """The served booster, its calibration map, the calibration record, and the
    out-of-fold scores (with their folds) that the reported metrics are computed on."""

    booster: Any
    calibrated: Any
    info: dict[str, Any]
    oof_scores: np.ndarray
    oof_folds: Any


def final_fit(
    est: Any,
    X: Any,
    y: np.ndarray,
    y_index: np.ndarray,
    sw: np.ndarray | None,
    result: Any,
) -> FinalFit:
    """The model of the chosen capacity (``result``: the
    :class:`~models.auto.search.SearchResult`), by the module docstring's three cases."""
    k = int(est.n_folds)
    n = len(y)
    chosen = result.chosen
    wl, depth, _ = result.grid[chosen.index]
    rounds = chosen.rounds
    total = result.total
    offset = sum(result.search_units)
    info: dict[str, Any]
    with fit_parts(1, sizes=[result.final_units], offset=offset, total=total) as part:
        if not result.rows.subsample and est._serves_folds():
            # the fold boosters, truncated to the chosen rounds, are the model: the
            # map was fitted on their out-of-fold scores (models.inference.fold_ensemble)
            booster = est._fold_booster(chosen.models, rounds)
            report(total, total)  # nothing left to fit
            report(0, 0, "calibrating")
            calibrated = est._final_map(chosen.scores, y_index, sw, result.rows.folds, booster, X)
            info = {"split": "kfold", "n_folds": k, "n_boost": n, "n_calibration": n,
                    "served": "fold_ensemble"}  # fmt: skip
            return FinalFit(booster, calibrated, info, chosen.scores, result.rows.folds)
        if not result.rows.subsample:
            booster = run_parallel(
                [part(0, lambda: est._booster(wl, depth, rounds).fit(X, y, sample_weight=sw))],
                1,
            )[0]
            report(0, 0, "calibrating")
            calibrated = est._final_map(chosen.scores, y_index, sw, result.rows.folds, None, X)
            info = {"split": "kfold", "n_folds": k, "n_boost": n, "n_calibration": n}
            return FinalFit(booster, calibrated, info, chosen.scores, result.rows.folds)
        k_final = min(k, 3)
        folds_served = est._serves_folds()

        def cross_fitted() -> Any:
            return cross_fit(
                lambda: est._booster(wl, depth, rounds),
                X, y, y_index, est.classes_, sw,
                split="kfold", n_folds=k_final, random_state=est.random_state,
                n_jobs=fold_jobs(est.n_jobs, k_final, n - n // k_final),
                refit=not folds_served,
            )  # fmt: skip

        cf = run_parallel([part(0, cross_fitted)], 1)[0]
        if folds_served:  # the k_final fold boosters, as for small data
            booster = est._fold_booster(cf.fold_models, rounds)
            report(total, total)
        else:
            booster = cf.estimator
        report(0, 0, "calibrating")
        calibrated = est._final_map(
            cf.scores, y_index, sw, cf.folds, booster if folds_served else None, X
        )
        info = dict(cf.info)
        if folds_served:
            info["served"] = "fold_ensemble"
        return FinalFit(booster, calibrated, info, cf.scores, cf.folds)
