"""The cross-fitted search with early stopping: which (weak learner, rounds) wins.

One search, a bounded number of fits (the package docstring tells the whole method):

1. :func:`search_rows` -- the rows searched on (all, or a stratified subsample of
   ``max_search_rows`` for large data, then ``min(n_folds, 3)`` folds) and their folds.
2. Per grid entry, in order: :func:`fit_entry` fits the folds once with the entry's
   maximum rounds, concurrently, and stages each fold model's scores on its held-out fold
   (the out-of-fold scores of every checkpoint for the price of one fit);
   :func:`entry_losses` calibrates each checkpoint's scores and computes the loss (the
   validation curve). With :data:`EXTEND_MAX_FACTOR` above 1 (not the default), an
   entry whose curve is still falling at its cap (:func:`still_falling`, within
   :data:`STOP_MARGIN` of the best so far) is refitted with twice the rounds while it
   falls, up to that factor times its grid rounds and ``max_rounds``, when the budget
   allows.
3. The search stops at an entry clearly worse than the best (:data:`STOP_MARGIN`), skips
   the oblique entry on large data and any entry whose estimated time would not fit the
   budget (:func:`over_budget`), and estimates each entry's final stage
   (:func:`final_stage_seconds`).
4. :func:`choose` takes the entry of least smoothed loss whose final stage fits the time
   left (else the cheapest: ``time_fallback``).

The estimator supplies what differs between two and more classes (``_booster``,
``_staged``, ``_calibrate``, ``_probabilities``, ``_serves_folds``); this module knows
nothing of the families.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from models.auto.curve import checkpoints, loss, smoothed
from models.auto.grid import Entry, offers_oblique, progress_units, small_data_only, unit_cost
from models.auto.record import curve_record
from models.boosting.crossfit import (
    Folds,
    _check_n_jobs,
    fold_indices,
    run_parallel,
    stratified_subsample,
)
from models.boosting.progress import fit_parts, report
from models.calibration.multinomial import one_blas_thread

__all__ = [
    "EXTEND_MAX_FACTOR",
    "EXTEND_TAIL",
    "STOP_MARGIN",
    "Candidate",
    "SearchResult",
    "SearchRows",
    "search",
]

STOP_MARGIN = 0.01
"""The search stops at an entry whose best loss is more than 1% above the best so far
(clearly worse: more capacity overfits). An entry about as good as the best does not
stop it: greedy trees can miss interactions at one depth and find them at the next (a
depth-2 tree cannot start an XOR split that a depth-4 tree completes)."""


EXTEND_TAIL = 0.1
"""An entry's validation curve is still falling at its cap when its smoothed minimum lies
in the last 10% of its rounds and a fold model ran every round (none stopped early)."""

EXTEND_MAX_FACTOR = 1
"""An entry still falling at its cap is refitted with twice the rounds, while it still
falls, up to this factor of its grid rounds (and ``max_rounds``); only an entry within
:data:`STOP_MARGIN` of the best so far, and only when the time budget allows. 1 (the
default): never. Read at call time, so a caller may raise it. Measured with 2 and 4
against 1 (docs/training.md, "Measured: rounds beyond the cap",
``bench/results/quality/auto_grid-extend*.json``): no better on the 19 small tasks over
3 seeds, mixed on splice and satimage (some tasks 4-8% worse), 2-5x the training time
where it extends: not adopted."""


def still_falling(cps: np.ndarray, c_best: int, models: list[Any]) -> bool:
    """Whether the smoothed minimum is at the tail of the curve (:data:`EXTEND_TAIL`) and
    some fold model fitted every round of the entry."""
    m = int(cps[-1])
    at_tail = int(cps[c_best]) >= (1.0 - EXTEND_TAIL) * m
    return at_tail and any(int(mod.n_estimators_) >= m for mod in models)


@dataclass(frozen=True)
class SearchRows:
    """The rows the search fits on (``rows`` of the training rows) and their folds."""

    rows: np.ndarray
    X: Any
    y: np.ndarray
    y_index: np.ndarray
    sw: np.ndarray | None
    subsample: bool
    k: int
    """Folds of the search (``n_folds``, or at most 3 on a subsample)."""
    folds: Folds


@dataclass(eq=False)
class Candidate:
    """A grid entry tried: its best smoothed loss at its best rounds, the out-of-fold
    scores there, the estimated seconds of its final stage and its fold models."""

    loss: float
    index: int
    rounds: int
    scores: np.ndarray
    final_estimate: float
    models: list[Any]


@dataclass(frozen=True)
class SearchResult:
    """What the search found: the chosen candidate and everything recorded about it."""

    grid: list[Entry]
    rows: SearchRows
    curves: list[dict[str, Any]]
    chosen: Candidate
    stopped: str
    fallback: bool
    search_units: list[int]
    final_units: int

    @property
    def total(self) -> int:
        """Progress units of the whole fit."""
        return sum(self.search_units) + self.final_units


def fit_fold(
    est: Any, entry: Entry, X: Any, y: np.ndarray, sw: np.ndarray | None, rows: np.ndarray
) -> Any:
    """One fold model of ``entry``, fitted on ``rows``."""
    booster = est._booster(*entry)
    return booster.fit(X[rows], y[rows], sample_weight=None if sw is None else sw[rows])


def search_rows(
    est: Any, X: Any, y: np.ndarray, y_index: np.ndarray, sw: np.ndarray | None, classes: Any
) -> SearchRows:
    """All rows, or a stratified subsample of ``max_search_rows`` for large data (then
    fewer folds: each still holds ``max_search_rows / 3`` rows), and their folds."""
    n = len(y)
    k = int(est.n_folds)
    subsample = n > int(est.max_search_rows)
    if subsample:  # StratifiedShuffleSplit's rows (stratified_subsample)
        rows = stratified_subsample(y_index, int(est.max_search_rows), est.random_state)
    else:
        rows = np.arange(n)
    yis = y_index[rows]
    k_search = min(k, 3) if subsample else k
    folds = fold_indices(yis, k_search, est.random_state, classes)
    sws = None if sw is None else sw[rows]
    return SearchRows(rows, X[rows], y[rows], yis, sws, subsample, k_search, folds)


def fit_entry(
    est: Any, entry: Entry, s: SearchRows, cps: np.ndarray, units: int, offset: int, total: int
) -> tuple[list[Any], np.ndarray]:
    """The fold models of ``entry`` (fitted concurrently) and their out-of-fold scores at
    each checkpoint: ``(len(cps), rows)`` or ``(len(cps), rows, K)``."""
    k = s.k
    sizes = [units // k] * k
    sizes[-1] += units - sum(sizes)  # k folds' units over k_search fits
    with fit_parts(k, sizes=sizes, offset=offset, total=total) as part:
        tasks = [
            part(i, partial(fit_fold, est, entry, s.X, s.y, s.sw, tr))
            for i, (tr, _) in enumerate(s.folds)
        ]
        models = run_parallel(tasks, est.n_jobs)
    oof: np.ndarray | None = None
    for model, (_, te) in zip(models, s.folds, strict=True):
        scores = est._staged(model, s.X[te], cps)
        if oof is None:
            oof = np.empty((len(cps), len(s.y), *scores.shape[2:]), dtype=np.float64)
        oof[:, te] = scores
    assert oof is not None
    return models, oof


def entry_losses(est: Any, oof: np.ndarray, s: SearchRows) -> np.ndarray:
    """The validation curve: the loss of the calibrated out-of-fold scores per checkpoint.

    The calibration fits run on one BLAS thread (:func:`one_blas_thread`): the 100,000-row
    two-class default spent 12.9 s here on two OpenBLAS threads and 1.5 s on one (bench
    training.default_training --threads 1 2, a loaded 2-core machine)."""
    with one_blas_thread():
        return _losses(est, oof, s)


def _losses(est: Any, oof: np.ndarray, s: SearchRows) -> np.ndarray:
    """Each checkpoint's map starts from the previous checkpoint's (``start``): the scores
    of neighbouring checkpoints differ little, so an iterative map (the multinomial one)
    needs fewer Newton steps to the same optimum (6-7 from the prior, 3-5 warm: 20,000
    x 6 classes); the chain runs in checkpoint order whatever the threads."""
    out = np.empty(len(oof))
    previous = None
    for c in range(len(oof)):
        previous = est._calibrate(oof[c], s.y_index, s.sw, start=previous)
        out[c] = loss(est.metric, est._probabilities(previous, oof[c]), s.y_index, s.sw)
    return out


def over_budget(
    est_cost: float | None, budget: float | None, started: float, s: SearchRows, n: int
) -> bool:
    """Whether an entry estimated at ``est_cost`` seconds, plus the final fit it implies
    (about one more fold fit at full size), would pass 80% of the budget."""
    if budget is None or est_cost is None:
        return False
    elapsed = time.monotonic() - started
    final_cost = est_cost / s.k * max(1.0, n / len(s.rows)) * (2 if s.subsample else 1)
    return elapsed + est_cost + final_cost > 0.8 * budget


def final_stage_seconds(est: Any, spent: float, s: SearchRows, n: int) -> float:
    """Wall time of the final stage with an entry at its maximum rounds, from the wall
    time ``spent`` on its fold fits."""
    k_search = s.k
    jobs = min(_check_n_jobs(est.n_jobs), k_search)
    per_fit = spent * jobs / k_search * k_search / (k_search - 1) * n / len(s.rows)
    refits = 0 if est._serves_folds() else 1
    # (large data may run the final folds one at a time, fold_jobs: each fit then
    # has every CPU in its histogram kernel, about the same total wall time)
    k = int(est.n_folds)
    return per_fit * ((min(k, 3) + refits) / jobs if s.subsample else float(refits))


def choose(
    candidates: list[Candidate], budget: float | None, started: float
) -> tuple[Candidate, bool]:
    """The candidate of least loss (ties: the first, the smaller capacity) whose final
    stage fits in 90% of the time left; else the best that does, else the cheapest.
    Returns it and whether the time decided (``time_fallback``)."""
    chosen = min(candidates, key=lambda c: c.loss)
    if budget is None:
        return chosen, False
    left = budget - (time.monotonic() - started)
    fits = [c for c in candidates if c.final_estimate <= 0.9 * left]
    if chosen in fits:
        return chosen, False
    if fits:
        return min(fits, key=lambda c: c.loss), True
    return min(candidates, key=lambda c: c.final_estimate), True


def search(
    est: Any,
    grid: list[Entry],
    X: Any,
    y: np.ndarray,
    y_index: np.ndarray,
    sw: np.ndarray | None,
    started: float,
    budget: float | None,
) -> SearchResult:
    """Try the grid's entries in order and choose one (the module docstring's steps)."""
    classes = est.classes_
    search_units, final_units = progress_units(grid, int(est.n_folds))
    total = sum(search_units) + final_units
    n = len(y)
    s = search_rows(est, X, y, y_index, sw, classes)

    curves: list[dict[str, Any]] = []
    best: float | None = None  # the least smoothed loss so far
    candidates: list[Candidate] = []
    stopped = "grid_done"
    offset = 0
    seconds_per_unit: float | None = None
    axis_done = False  # the axis-aligned entries stopped (no_improvement)
    oblique_ok = offers_oblique(grid, X, len(s.rows), len(classes))
    for g, (wl, depth, m_max) in enumerate(grid):
        if (small_data_only(wl) and not oblique_ok) or (axis_done and not small_data_only(wl)):
            offset += search_units[g]
            continue
        est_cost = (
            None
            if seconds_per_unit is None
            else seconds_per_unit * search_units[g] * unit_cost(wl, depth)
        )
        if over_budget(est_cost, budget, started, s, n):
            stopped = "time_limit"
            break
        t0 = time.monotonic()
        cps = checkpoints(m_max)
        models, oof = fit_entry(est, (wl, depth, m_max), s, cps, search_units[g], offset, total)
        offset += search_units[g]
        report(0, 0, "selecting")
        losses = entry_losses(est, oof, s)
        smooth = smoothed(losses)
        c_best = int(np.argmin(smooth))
        spent = time.monotonic() - t0
        rounds_cap = m_max * EXTEND_MAX_FACTOR
        if est.max_rounds is not None:
            rounds_cap = min(rounds_cap, int(est.max_rounds))
        extended_from = m_max
        while (
            still_falling(cps, c_best, models)
            and 2 * int(cps[-1]) <= rounds_cap
            and (best is None or smooth[c_best] <= best * (1.0 + STOP_MARGIN))
            and not over_budget(2 * spent, budget, started, s, n)
        ):
            # the best rounds are at the cap and the curve is still falling: refit the
            # folds with twice the rounds (progress pauses: no units of their own)
            m_ext = 2 * int(cps[-1])
            t1 = time.monotonic()
            cps = checkpoints(m_ext)
            models, oof = fit_entry(est, (wl, depth, m_ext), s, cps, 0, offset, total)
            report(0, 0, "selecting")
            losses = entry_losses(est, oof, s)
            smooth = smoothed(losses)
            c_best = int(np.argmin(smooth))
            spent += time.monotonic() - t1
        curves.append(curve_record(wl, depth, cps, losses, smooth, c_best, models))
        if int(cps[-1]) != extended_from:
            curves[-1]["extended_from"] = extended_from
        m_max = int(cps[-1])
        seconds_per_unit = spent / (search_units[g] * unit_cost(wl, depth))
        final_est = final_stage_seconds(est, spent, s, n) * int(cps[c_best]) / m_max
        candidates.append(
            Candidate(float(smooth[c_best]), g, int(cps[c_best]), oof[c_best], final_est, models)
        )
        curves[-1]["seconds"] = round(spent, 3)
        if best is None or smooth[c_best] < best:
            best = float(smooth[c_best])
        elif depth > 1 and smooth[c_best] > best * (1.0 + STOP_MARGIN):
            # clearly worse: more capacity overfits (additive depth-1 entries are
            # alternatives of equal capacity and never stop the search); the oblique
            # entry is still tried (it is not more capacity of the same kind)
            stopped = "no_improvement"
            axis_done = True
    assert best is not None and candidates
    if offset < sum(search_units):
        report(sum(search_units), total)  # skipped entries count as done
    chosen, fallback = choose(candidates, budget, started)
    return SearchResult(grid, s, curves, chosen, stopped, fallback, search_units, final_units)
