"""Calibrated AdaBoost that chooses its own capacity: weak learner depth and rounds.

Calibrated AdaMEC (Nikolaou et al. 2016) as in :mod:`models.calibrated` -- plain
AdaBoost (SAMME for more than two classes), its scores calibrated on rows the booster
never saw, decisions by the cost-shifted threshold at request time -- with the two
numbers a user would otherwise have to tune chosen from the data:

* the **weak learner** from a small grid ordered by capacity, from the additive end
  (decision stumps, many rounds: nearly linear or additive data) to deeper trees (data
  with interactions): :data:`DEFAULT_GRID`;
* the **number of rounds** by early stopping on the out-of-fold loss (log loss by
  default, or Brier score) of the *calibrated* probabilities.

How (one search, a bounded number of fits):

1. The cross-fitting folds of the calibration (:mod:`models.crossfit`, stratified,
   ``n_folds``) are fitted once per grid entry with its maximum rounds, concurrently.
   Staged scores of each fold model on its held-out fold give the out-of-fold scores of
   *every* round count for the price of one fit; at each checkpoint the calibration
   map is fitted on them and the calibrated loss computed (the validation curve).
2. Grid entries are tried in order; the search stops at the first entry whose loss is
   clearly worse than the best (:data:`STOP_MARGIN`: more capacity than the data
   supports), and skips entries
   whose estimated time would not fit before the training deadline
   (:func:`models.progress.time_left`, set by the service from
   ``COSTWISE_MAX_TRAINING_SECONDS``) or ``time_budget``. The final stage's time is
   estimated for every entry tried (from its fold fits); when the best entry's would not
   fit in 90% of the time left, the best entry whose does is taken, else the cheapest
   (``capacity_["time_fallback"]``).
3. The (weak learner, rounds) pair of least loss wins (ties: the smaller capacity); the
   loss is the validation curve smoothed over neighbouring checkpoints (:func:`smoothed`).
   Small data (at most ``max_search_rows`` rows): the calibration map is the one
   fitted on the winning checkpoint's out-of-fold scores -- the search *is* the
   cross-fitting -- and (``serve="folds"``, the default) the k fold boosters of the
   winning entry, truncated to the chosen rounds, are served as a fold ensemble: the
   map applied to the mean of their scores (:mod:`models.fold_ensemble`; no further
   fit). More than two classes: the mean of the k SAMME boosters' vote fractions, one
   merged vote ensemble (:class:`~models.fold_ensemble.FoldVoteBoosters`), under the
   multinomial map. With ``serve="refit"`` (and for SAMME's ``"logistic"`` score, which
   has no merged form) one final booster is fitted on all rows instead. Large data: the
   search ran on a stratified subsample of ``max_search_rows`` rows with
   ``min(n_folds, 3)`` folds, and the winner is cross-fitted on all rows with
   ``min(n_folds, 3)`` folds (ample for a two-parameter Platt map at that size);
   ``serve="folds"``: those fold boosters are served as a fold ensemble, without the
   refit on all rows.

The fitted model is a :class:`~models.calibrated.CalibratedBoosting` (or
:class:`~models.multiclass.calibrated.CalibratedMulticlass`) in every respect that
serving sees: same inference object, artifacts and decision rule (a fold ensemble's
scorer is :class:`~models.fold_ensemble.FoldEnsembleScorer`, artifact format 4). ``capacity_`` records
the choice and the validation curve.

References
----------
N. Nikolaou, N. Edakunni, M. Kull, P. Flach, G. Brown. "Cost-sensitive boosting
algorithms: Do we really need them?" Machine Learning 104 (2016): calibrated AdaMEC,
section 4 and Theorem 1. J. Zhu, H. Zou, S. Rosset, T. Hastie (2009): SAMME.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin

from models.adaboost import AdaBoost
from models.binning import is_codes
from models.calibrated import CalibratedBoosting
from models.calibration import make_calibrator
from models.crossfit import (
    OutOfFold,
    _check_n_jobs,
    cross_calibrated,
    cross_fit,
    fold_indices,
    labelled_rows,
    run_parallel,
    stratified_subsample,
)
from models.decisions import Decisions, class_priors
from models.exceptions import InvalidInput, NotFitted
from models.fold_ensemble import FoldBoosters, FoldVoteBoosters
from models.inference import InferenceModel
from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.multinomial import MultinomialCalibrator
from models.multiclass.samme import SAMME
from models.multiclass.scorers import normalise_rows
from models.progress import fit_parts, report, time_left

__all__ = [
    "DEFAULT_GRID",
    "MULTICLASS_GRID",
    "OBLIQUE_MAX_CELLS",
    "AutoCalibrated",
    "AutoCalibratedBoosting",
    "AutoCalibratedMulticlass",
    "checkpoints",
    "smoothed",
]

DEFAULT_GRID: tuple[tuple[str, int, int], ...] = (
    ("stump", 1, 400),
    ("tree", 3, 200),
    ("tree", 6, 100),
    ("oblique", 1, 50),
)
"""(weak_learner, max_depth, maximum rounds), by increasing capacity.

Stumps with many rounds are the additive end (a generalised additive model); depth 3
captures pairwise-to-three-way interactions; depth 6 strong interactions. The round caps
shrink as depth grows so that every entry costs about the same: a histogram tree round
costs roughly one stump round per level.

The last entry, the oblique learner (:mod:`models.weak.oblique`: ``sign(w.x + b)`` of a
weighted ridge logistic regression on all features), is the linear end: a strong learner
that needs few rounds. It is tried only on small data (:data:`OBLIQUE_MAX_CELLS`, raw
values), after the axis-aligned entries and outside their stopping rule, so it cannot
change which of them is best; it is chosen only when its out-of-fold loss is lower.
"""

OBLIQUE_MAX_CELLS = 200_000
"""The oblique entry is offered when the search's rows x features x logistic fits per
round (1 with two classes, K with K > 2: one per class) is at most this (its Newton steps
cost ``O(rows x features^2)`` per fit). Before 2026-11-27 the K was not counted: on
satimage (4,504 search rows x 36 features x 6 classes) the oblique entry then took 106 of
the search's 141 s and was not chosen."""

MULTICLASS_GRID: tuple[tuple[str, int, int], ...] = (
    ("stump", 1, 400),
    ("tree", 3, 200),
    ("tree", 6, 300),
    ("oblique", 1, 50),
)
"""The grid for more than two classes: depth-6 trees get up to 300 rounds. With 100
(:data:`DEFAULT_GRID`) the search chose depth 6 at or next to the cap on every seed of
vehicle, splice and satimage; offered depth 6 with up to 300 rounds (and depth 8 with
200, chosen once) it chose 170 to 300 rounds, and splice went from 1.124 to 1.020 times
the best baseline's cost, vehicle from 1.081 to 1.070
(bench/results/multiclass-calibration-2026-11-25.md)."""

METRICS = ("log_loss", "brier")
STOP_MARGIN = 0.01
"""The search stops at an entry whose best loss is more than 1% above the best so far
(clearly worse: more capacity overfits). An entry about as good as the best does not
stop it: greedy trees can miss interactions at one depth and find them at the next (a
depth-2 tree cannot start an XOR split that a depth-4 tree completes)."""
SEARCH_METHODS = ("platt", "isotonic")
SERVE = ("folds", "refit")
"""What serves a two-class model: the fold boosters (small data: the search's k; large
data: the final cross-fitting's) with the map fitted on their out-of-fold scores
(:mod:`models.fold_ensemble`), or one booster refitted on all rows with that map."""
MULTICLASS_CALIBRATIONS = ("multinomial", "per_class")
"""How :class:`AutoCalibrated` calibrates more than two classes: one softmax map of the
K vote fractions (:mod:`models.multiclass.multinomial`, the default) or one Platt or
isotonic map per class, normalised (``calibration``)."""
MULTINOMIAL_L2 = 0.1
"""Ridge of the multinomial map's K x K weights (bench/bench_multiclass_calibration.py)."""


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


def _unit_cost(weak_learner: str, depth: int) -> float:
    """Relative cost of one round (stump = 1); a histogram tree costs about one per level,
    an oblique learner (a few Newton steps on small data) about two."""
    if weak_learner == "oblique":
        return 2.0
    return float(depth) if weak_learner == "tree" else 1.0


def _loss(metric: str, p: np.ndarray, y_index: np.ndarray, w: np.ndarray | None) -> float:
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


class _AutoCapacity:
    """The capacity search shared by the binary and the multiclass estimator."""

    grid: Any
    n_folds: int
    max_search_rows: int
    max_rounds: int | None
    metric: str
    time_budget: float | None
    random_state: int | None
    n_jobs: int | None
    score_kind: str
    oof_: OutOfFold | None
    search_methods: tuple[str, ...] = SEARCH_METHODS

    # ---- what differs between the families (implemented by the subclasses)
    def _booster(self, weak_learner: str, depth: int, rounds: int) -> Any:
        raise NotImplementedError

    def _staged(self, model: Any, X: Any, cps: np.ndarray) -> np.ndarray:
        """Scores after each checkpoint's rounds: (len(cps), n) or (len(cps), n, K)."""
        raise NotImplementedError

    def _calibrate(self, scores: np.ndarray, y_index: np.ndarray, w: np.ndarray | None) -> Any:
        raise NotImplementedError

    def _probabilities(self, calibrated: Any, scores: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _install(self, booster: Any, calibrated: Any, info: dict[str, Any]) -> None:
        raise NotImplementedError

    def _raw(self, scores: np.ndarray) -> np.ndarray:
        """Raw scores as probabilities (before calibration), (n, K)."""
        raise NotImplementedError

    def provides_out_of_fold(self) -> bool:
        """Always: the search cross-fits (``oof_``, :class:`models.crossfit.OutOfFold`)."""
        return True

    def _out_of_fold(
        self, scores: np.ndarray, y_index: np.ndarray, sw: np.ndarray | None, folds: Any
    ) -> OutOfFold:
        """The out-of-fold calibrated probabilities of every training row."""
        return OutOfFold(
            cross_calibrated(self._calibrate, self._probabilities, scores, y_index, sw, folds),
            self._raw(scores),
            np.arange(len(y_index)),
            {"scheme": "cross-fitted calibration", "n_folds": len(folds)},
        )

    def _calibration_method(self) -> str:
        raise NotImplementedError

    def _serves_folds(self) -> bool:
        """Whether small data is served by the fold boosters (no refit on all rows)."""
        return False

    def _fold_booster(self, models: list[Any], rounds: int) -> Any:
        raise NotImplementedError

    # ---- shared
    def _fit_fold(
        self,
        entry: tuple[str, int, int],
        X: Any,
        y: np.ndarray,
        sw: np.ndarray | None,
        rows: np.ndarray,
    ) -> Any:
        booster = self._booster(*entry)
        return booster.fit(X[rows], y[rows], sample_weight=None if sw is None else sw[rows])

    def _grid(self) -> list[tuple[str, int, int]]:
        grid = [(str(w), int(d), int(m)) for w, d, m in self.grid]
        if self.max_rounds is not None:  # the service's COSTWISE_MAX_ROUNDS bounds every entry
            cap = self.max_rounds
            if isinstance(cap, bool) or not isinstance(cap, int | np.integer) or cap < 1:
                raise InvalidInput(f"max_rounds must be an integer >= 1 or None, got {cap!r}")
            grid = [(w, d, min(m, int(cap))) for w, d, m in grid]
        if not grid:
            raise InvalidInput("grid must hold at least one (weak_learner, max_depth, rounds)")
        for w, d, m in grid:
            if m < 1 or not 1 <= d <= 8:
                raise InvalidInput(f"grid entry {(w, d, m)!r}: rounds >= 1, depth in [1, 8]")
        return grid

    def _check_auto_params(self) -> None:
        if self.metric not in METRICS:
            raise InvalidInput(f"metric must be one of {list(METRICS)}, got {self.metric!r}")
        if self._calibration_method() not in self.search_methods:
            raise InvalidInput(
                f"calibration must be one of {list(self.search_methods)} with automatic capacity "
                f"(the rounds are chosen on calibrated probabilities), got "
                f"{self._calibration_method()!r}"
            )
        k = self.n_folds
        if isinstance(k, bool) or int(k) != k or int(k) < 2:
            raise InvalidInput(f"n_folds must be an integer >= 2, got {k!r}")
        if int(self.max_search_rows) < 100:
            raise InvalidInput(f"max_search_rows must be >= 100, got {self.max_search_rows!r}")
        self._grid()

    def _units(self) -> tuple[list[int], int]:
        """Progress units: per grid entry (its fold fits) and the final stage."""
        grid = self._grid()
        k = int(self.n_folds)
        search = [k * m for _, _, m in grid]
        final = (k + 1) * max(m for _, _, m in grid)
        return search, final

    def progress_total(self, n_classes: int = 2) -> int:
        """The count a fit reports as ``total`` (:mod:`models.progress`), fixed in advance.

        Each grid entry's fold fits count ``n_folds x rounds``; the final stage
        ``(n_folds + 1) x`` the largest round cap. Entries the search skips are counted
        as done at once, so the total is the same whatever the data.
        """
        search, final = self._units()
        return sum(search) + final

    def _budget(self) -> float | None:
        left = time_left()
        if self.time_budget is not None:
            left = float(self.time_budget) if left is None else min(left, float(self.time_budget))
        return left

    def _search_fit(
        self, X: Any, y: np.ndarray, y_index: np.ndarray, sw: np.ndarray | None
    ) -> None:
        started = time.monotonic()
        grid = self._grid()
        k = int(self.n_folds)
        search_units, final_units = self._units()
        total = sum(search_units) + final_units
        n = len(y)
        classes = self.classes_  # type: ignore[attr-defined]
        budget = self._budget()

        # rows of the search: all, or a stratified subsample for large data
        subsample = n > int(self.max_search_rows)
        if subsample:  # StratifiedShuffleSplit's rows (stratified_subsample)
            rows = stratified_subsample(y_index, int(self.max_search_rows), self.random_state)
        else:
            rows = np.arange(n)
        Xs, ys, yis = X[rows], y[rows], y_index[rows]
        sws = None if sw is None else sw[rows]
        # large data: fewer search folds (each still holds max_search_rows / 3 rows)
        k_search = min(k, 3) if subsample else k
        folds = fold_indices(yis, k_search, self.random_state, classes)

        curves: list[dict[str, Any]] = []
        best: tuple[float, int, int] | None = None  # (loss, grid index, rounds)
        candidates: list[tuple[float, int, int, np.ndarray, float, list[Any]]] = []
        stopped = "grid_done"
        offset = 0
        seconds_per_unit: float | None = None
        axis_done = False  # the axis-aligned entries stopped (no_improvement)
        fits = 1 if len(classes) == 2 else len(classes)  # oblique fits per round
        cells = len(rows) * X.shape[1] * fits
        oblique_ok = (not is_codes(X) and cells <= OBLIQUE_MAX_CELLS) or all(
            e[0] == "oblique" for e in grid
        )  # an oblique-only grid is the caller's explicit choice
        for g, (wl, depth, m_max) in enumerate(grid):
            if (wl == "oblique" and not oblique_ok) or (axis_done and wl != "oblique"):
                offset += search_units[g]
                continue
            est_cost = (
                None
                if seconds_per_unit is None
                else seconds_per_unit * search_units[g] * _unit_cost(wl, depth)
            )
            if budget is not None and est_cost is not None:
                elapsed = time.monotonic() - started
                # the final fit costs about one more fold fit at full size
                final_cost = est_cost / k_search * max(1.0, n / len(rows)) * (2 if subsample else 1)
                if elapsed + est_cost + final_cost > 0.8 * budget:
                    stopped = "time_limit"
                    break
            t0 = time.monotonic()
            cps = checkpoints(m_max)
            sizes = [search_units[g] // k_search] * k_search
            sizes[-1] += search_units[g] - sum(sizes)  # k folds' units over k_search fits
            with fit_parts(k_search, sizes=sizes, offset=offset, total=total) as part:
                tasks = [
                    part(i, partial(self._fit_fold, (wl, depth, m_max), Xs, ys, sws, tr))
                    for i, (tr, _) in enumerate(folds)
                ]
                models = run_parallel(tasks, self.n_jobs)
            offset += search_units[g]
            oof: np.ndarray | None = None
            for model, (_, te) in zip(models, folds, strict=True):
                s = self._staged(model, Xs[te], cps)
                if oof is None:
                    oof = np.empty((len(cps), len(ys), *s.shape[2:]), dtype=np.float64)
                oof[:, te] = s
            assert oof is not None
            report(0, 0, "selecting")
            losses = np.array(
                [
                    _loss(
                        self.metric,
                        self._probabilities(self._calibrate(oof[c], yis, sws), oof[c]),
                        yis,
                        sws,
                    )
                    for c in range(len(cps))
                ]
            )
            smooth = smoothed(losses)
            c_best = int(np.argmin(smooth))
            curves.append(
                {
                    "weak_learner": wl,
                    "max_depth": depth,
                    "rounds": cps.tolist(),
                    "loss": [round(float(v), 6) for v in losses],
                    "best_rounds": int(cps[c_best]),
                    "best_loss": round(float(smooth[c_best]), 6),
                    "fold_rounds": [int(mod.n_estimators_) for mod in models],
                }
            )
            spent = time.monotonic() - t0
            seconds_per_unit = spent / (search_units[g] * _unit_cost(wl, depth))
            # wall time of the final stage with this entry, from its fold fits' wall time
            jobs = min(_check_n_jobs(self.n_jobs), k_search)
            per_fit = spent * jobs / k_search * k_search / (k_search - 1) * n / len(rows)
            refits = 0 if self._serves_folds() else 1
            # (large data may run the final folds one at a time, fold_jobs: each fit then
            # has every CPU in its histogram kernel, about the same total wall time)
            stage = per_fit * ((min(k, 3) + refits) / jobs if subsample else float(refits))
            final_est = stage * int(cps[c_best]) / m_max
            candidates.append(
                (float(smooth[c_best]), g, int(cps[c_best]), oof[c_best], final_est, models)
            )
            curves[-1]["seconds"] = round(spent, 3)
            if best is None or smooth[c_best] < best[0]:
                best = (float(smooth[c_best]), g, int(cps[c_best]))
            elif depth > 1 and smooth[c_best] > best[0] * (1.0 + STOP_MARGIN):
                # clearly worse: more capacity overfits (additive depth-1 entries are
                # alternatives of equal capacity and never stop the search); the oblique
                # entry is still tried (it is not more capacity of the same kind)
                stopped = "no_improvement"
                axis_done = True
        assert best is not None and candidates
        if offset < sum(search_units):
            report(sum(search_units), total)  # skipped entries count as done
        # the best entry whose final stage fits in the time left (else the cheapest)
        chosen = min(candidates, key=lambda c: c[0])
        fallback = False
        if budget is not None:
            left = budget - (time.monotonic() - started)
            fits = [c for c in candidates if c[4] <= 0.9 * left]
            if chosen not in fits:
                chosen = (
                    min(fits, key=lambda c: c[0]) if fits else min(candidates, key=lambda c: c[4])
                )
                fallback = True
        best = (chosen[0], chosen[1], chosen[2])
        best_scores, final_estimate, fold_models = chosen[3], chosen[4], chosen[5]
        _, g_best, rounds = best
        wl, depth, _ = grid[g_best]

        info: dict[str, Any]
        # final stage: one booster on all rows (scores already cross-fitted), or cross-fit
        with fit_parts(1, sizes=[final_units], offset=sum(search_units), total=total) as part:
            if not subsample and self._serves_folds():
                # the fold boosters, truncated to the chosen rounds, are the model: the
                # map was fitted on their out-of-fold scores (models.fold_ensemble)
                booster = self._fold_booster(fold_models, rounds)
                report(total, total)  # nothing left to fit
                report(0, 0, "calibrating")
                calibrated = self._calibrate(best_scores, y_index, sw)
                info = {"split": "kfold", "n_folds": k, "n_boost": n, "n_calibration": n,
                        "served": "fold_ensemble"}  # fmt: skip
                oof_scores, oof_folds = best_scores, folds
            elif not subsample:
                booster = run_parallel(
                    [part(0, lambda: self._booster(wl, depth, rounds).fit(X, y, sample_weight=sw))],
                    1,
                )[0]
                report(0, 0, "calibrating")
                calibrated = self._calibrate(best_scores, y_index, sw)
                info = {"split": "kfold", "n_folds": k, "n_boost": n, "n_calibration": n}
                oof_scores, oof_folds = best_scores, folds
            else:
                k_final = min(k, 3)
                folds_served = subsample and self._serves_folds()

                def final() -> Any:
                    return cross_fit(
                        lambda: self._booster(wl, depth, rounds),
                        X, y, y_index, classes, sw,
                        split="kfold", n_folds=k_final, random_state=self.random_state,
                        n_jobs=fold_jobs(self.n_jobs, k_final, n - n // k_final),
                        refit=not folds_served,
                    )  # fmt: skip

                cf = run_parallel([part(0, final)], 1)[0]
                if folds_served:  # the k_final fold boosters, as for small data
                    booster = self._fold_booster(cf.fold_models, rounds)
                    report(total, total)
                else:
                    booster = cf.estimator
                report(0, 0, "calibrating")
                calibrated = self._calibrate(cf.scores, y_index, sw)
                info = dict(cf.info)
                if folds_served:
                    info["served"] = "fold_ensemble"
                oof_scores, oof_folds = cf.scores, cf.folds
        self.oof_ = self._out_of_fold(oof_scores, y_index, sw, oof_folds)
        self.capacity_ = {
            "weak_learner": wl,
            "max_depth": depth if wl == "tree" else 1,
            "n_estimators": rounds,
            "metric": self.metric,
            "validation_loss": round(best[0], 6),
            "max_rounds": None if self.max_rounds is None else int(self.max_rounds),
            "search_rows": int(len(rows)),
            "search_folds": k_search,
            "stopped": stopped,
            "search_seconds": round(time.monotonic() - started, 3),
            "final_estimate_seconds": round(final_estimate, 6),
            "time_fallback": fallback,
            "curves": curves,
        }
        self._install(booster, calibrated, {**info, "capacity": "auto"})


class AutoCalibratedBoosting(_AutoCapacity, CalibratedBoosting):
    """Calibrated AdaMEC (binary) with the weak learner and rounds chosen from the data.

    See the module docstring for the search. Serves like
    :class:`~models.calibrated.CalibratedBoosting` (which it extends).

    Parameters
    ----------
    grid : sequence of (weak_learner, max_depth, max_rounds)
        Candidates by increasing capacity; default :data:`DEFAULT_GRID`.
    method : {"platt", "isotonic"}, default="platt"
        Calibration map (also the one the search's losses are computed with).
    n_folds : int, default=5
        Cross-fitting folds of the search (and of the calibration for small data).
    metric : {"log_loss", "brier"}, default="log_loss"
        Out-of-fold loss of the calibrated probabilities that chooses.
    max_search_rows : int, default=20000
        Above this many rows the search runs on a stratified subsample of this size.
    max_rounds : int or None, default=None
        Caps the rounds of every grid entry (None: the grid's own caps).
    time_budget : float or None
        Seconds the search may plan for (None: only the progress deadline, if any).
    score_kind : {"vote", "logistic"}, default="vote"
        Raw score that is calibrated (Eq. 24 or 25 of Nikolaou et al.).
    random_state : int or None, default=None
        Seeds the folds, the subsample and the tree learners.
    n_jobs : int or None
        Threads for the concurrent fits (None: every CPU).
    serve : {"folds", "refit"}, default="folds"
        Serve the fold boosters as a fold ensemble (no refit: small data, the search's;
        large data, the final cross-fitting's), or refit one booster on all rows
        (:data:`SERVE`).

    Attributes
    ----------
    capacity_ : dict
        ``weak_learner``, ``max_depth``, ``n_estimators`` chosen, ``metric``,
        ``validation_loss``, ``stopped`` (``"grid_done"``, ``"no_improvement"`` or
        ``"time_limit"``) and ``curves`` (per grid entry tried: the loss at each
        checkpoint round count).
    oof_ : models.crossfit.OutOfFold
        Out-of-fold calibrated probabilities of the training rows: the winning
        checkpoint's out-of-fold scores, each fold calibrated by a map fitted on the
        other folds (:func:`models.crossfit.cross_calibrated`).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(600, 6, random_state=0)
    >>> model = AutoCalibratedBoosting(grid=[("stump", 1, 50)], random_state=0).fit(X, y)
    >>> model.capacity_["weak_learner"], 1 <= model.capacity_["n_estimators"] <= 50
    ('stump', True)
    """

    def __init__(
        self,
        grid: Any = DEFAULT_GRID,
        method: str = "platt",
        n_folds: int = 5,
        metric: str = "log_loss",
        max_search_rows: int = 20000,
        max_rounds: int | None = None,
        time_budget: float | None = None,
        score_kind: str = "vote",
        random_state: int | None = None,
        n_jobs: int | None = None,
        serve: str = "folds",
    ) -> None:
        self.grid = grid
        self.method = method
        self.serve = serve
        self.n_folds = n_folds
        self.metric = metric
        self.max_search_rows = max_search_rows
        self.max_rounds = max_rounds
        self.time_budget = time_budget
        self.score_kind = score_kind
        self.random_state = random_state
        self.n_jobs = n_jobs

    # the CalibratedBoosting parameters this estimator fixes
    estimator = None
    split = "kfold"
    calibration_fraction = 1.0 / 3.0

    def _calibration_method(self) -> str:
        return str(self.method)

    def _serves_folds(self) -> bool:
        return self.serve == "folds"

    def _fold_booster(self, models: list[Any], rounds: int) -> FoldBoosters:
        return FoldBoosters.from_boosters(models, rounds)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated class probabilities, shape (n, 2), columns in ``classes_`` order."""
        if isinstance(getattr(self, "estimator_", None), FoldBoosters):
            model = self.to_inference()
            if is_codes(X):  # pre-binned codes stay uint8: the ensembles read 255 as missing
                return model.scorer.proba(np.asarray(X))
            return model.predict_proba(X)
        return CalibratedBoosting.predict_proba(self, X)

    def to_inference(self, feature_names: list[str] | None = None) -> InferenceModel:
        """The numpy-only inference object; a fold ensemble's scorer is
        :class:`~models.fold_ensemble.FoldEnsembleScorer`."""
        self._check_fitted()
        folds = self.estimator_
        if not isinstance(folds, FoldBoosters):
            return CalibratedBoosting.to_inference(self, feature_names)
        return InferenceModel(
            classes=tuple(self.classes_.tolist()),
            feature_names=None if feature_names is None else tuple(feature_names),
            scorer=folds.scorer(self.calibrator_),
            train_priors=np.asarray(self.class_priors_, dtype=np.float64),
            metadata={"served": "fold_ensemble", "n_folds": len(folds.ensembles)},
        )

    def _booster(self, weak_learner: str, depth: int, rounds: int) -> AdaBoost:
        return AdaBoost(
            n_estimators=rounds,
            weak_learner=weak_learner,
            max_depth=depth,
            score_kind=self.score_kind,
            random_state=self.random_state,
        )

    def _staged(self, model: Any, X: Any, cps: np.ndarray) -> np.ndarray:
        ens = model.ensemble_
        h = ens.learner_outputs(X)
        a = ens.alphas
        cols = np.minimum(cps, len(a)) - 1
        if self.score_kind == "vote":
            v = np.cumsum((h > 0) * a, axis=1)[:, cols] / np.cumsum(a)[cols]
            s = np.clip(v, 0.0, 1.0)
        else:
            s = expit(2.0 * np.cumsum(h * a, axis=1)[:, cols])
        return np.ascontiguousarray(s.T)

    def _calibrate(self, scores: np.ndarray, y_index: np.ndarray, w: np.ndarray | None) -> Any:
        return make_calibrator(self.method).fit(scores, y_index, sample_weight=w)

    def _probabilities(self, calibrated: Any, scores: np.ndarray) -> np.ndarray:
        p1 = calibrated.predict(scores)
        return np.column_stack([1.0 - p1, p1])

    def _raw(self, scores: np.ndarray) -> np.ndarray:
        return np.column_stack([1.0 - scores, scores])

    def _out_of_fold(
        self, scores: np.ndarray, y_index: np.ndarray, sw: np.ndarray | None, folds: Any
    ) -> OutOfFold:
        # one column each (OutOfFold.binary): P(y = 1), the second column _probabilities
        # would stack beside 1 - P(y = 1), and the score
        p1 = cross_calibrated(
            self._calibrate, lambda cal, s: cal.predict(s), scores, y_index, sw, folds
        )
        info = {"scheme": "cross-fitted calibration", "n_folds": len(folds)}
        return OutOfFold.binary(p1, scores, info)

    def _install(self, booster: Any, calibrated: Any, info: dict[str, Any]) -> None:
        self.estimator_ = booster
        self.calibrator_ = calibrated
        self.calibration_info_ = {"method": self.method, **info}

    def progress_total(self, n_classes: int = 2) -> int:
        return _AutoCapacity.progress_total(self, n_classes)

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> AutoCalibratedBoosting:
        """Search the capacity and fit the calibrated booster (module docstring).

        Raises
        ------
        InvalidInput
            Invalid settings or malformed data.
        TrainingError
            Not exactly two classes, or a class with fewer rows than folds.
        """
        self._check_auto_params()
        if self.score_kind not in ("vote", "logistic"):
            raise InvalidInput(f"score_kind must be 'vote' or 'logistic', got {self.score_kind!r}")
        if self.serve not in SERVE:
            raise InvalidInput(f"serve must be one of {list(SERVE)}, got {self.serve!r}")
        X, y, classes, y_index, counts = labelled_rows(X, y, two_classes=True)
        self.classes_ = classes
        self.class_priors_ = class_priors(y_index, len(classes), sample_weight)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self._search_fit(X, y, y_index, sw)
        return self


class AutoCalibratedMulticlass(_AutoCapacity, CalibratedMulticlass):
    """SAMME with per-class calibration and the weak learner and rounds chosen from the data.

    The multiclass counterpart of :class:`AutoCalibratedBoosting` (same search, same
    parameters except ``calibration`` for the map); serves like
    :class:`~models.multiclass.calibrated.CalibratedMulticlass`. Raw scores are SAMME's
    vote fractions (``score_kind="vote"``) or the softmax of its votes (``"logistic"``,
    :func:`models.multiclass.scorers.raw_vote_scores`). ``calibration="multinomial"``
    (the default) calibrates them with one softmax map of all K
    (:class:`~models.multiclass.multinomial.MultinomialCalibrator`, ridge
    :data:`MULTINOMIAL_L2`); ``"platt"`` or ``"isotonic"`` with one map per class,
    normalised.
    """

    search_methods = (*SEARCH_METHODS, "multinomial")

    def __init__(
        self,
        grid: Any = MULTICLASS_GRID,
        calibration: str = "multinomial",
        n_folds: int = 5,
        metric: str = "log_loss",
        max_search_rows: int = 20000,
        max_rounds: int | None = None,
        time_budget: float | None = None,
        score_kind: str = "vote",
        random_state: int | None = None,
        n_jobs: int | None = None,
        serve: str = "folds",
    ) -> None:
        self.grid = grid
        self.calibration = calibration
        self.n_folds = n_folds
        self.metric = metric
        self.max_search_rows = max_search_rows
        self.max_rounds = max_rounds
        self.time_budget = time_budget
        self.score_kind = score_kind
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.serve = serve

    estimator = None
    calibration_split = "kfold"

    def _serves_folds(self) -> bool:
        # the mean of the folds' vote fractions is one merged vote ensemble; the softmax
        # of the votes ("logistic") has no such form: those are refitted
        return self.serve == "folds" and self.score_kind == "vote"

    def _fold_booster(self, models: list[Any], rounds: int) -> FoldVoteBoosters:
        return FoldVoteBoosters.from_boosters(models, rounds)

    calibration_fraction = 1.0 / 3.0

    def _calibration_method(self) -> str:
        return str(self.calibration)

    def _booster(self, weak_learner: str, depth: int, rounds: int) -> SAMME:
        return SAMME(
            n_estimators=rounds,
            weak_learner=weak_learner,
            max_depth=depth,
            score_kind=self.score_kind,
            random_state=self.random_state,
        )

    def _staged(self, model: Any, X: Any, cps: np.ndarray) -> np.ndarray:
        ens = model.ensemble_
        h = ens.learner_classes(np.asarray(X, dtype=np.float64))
        b = ens.betas
        cols = np.minimum(cps, len(b)) - 1
        total = np.cumsum(b)[cols]
        votes = np.empty((len(cps), h.shape[0], ens.n_classes))
        for j in range(ens.n_classes):
            votes[:, :, j] = np.cumsum((h == j) * b, axis=1)[:, cols].T
        if self.score_kind == "vote":  # vote fractions (raw_vote_scores, "vote")
            return np.clip(votes / total[:, None, None], 0.0, 1.0)
        z = np.exp(votes - votes.max(axis=2, keepdims=True))  # softmax(V), "logistic"
        return z / z.sum(axis=2, keepdims=True)

    def _calibrate(self, scores: np.ndarray, y_index: np.ndarray, w: np.ndarray | None) -> Any:
        if self.calibration == "multinomial":
            return MultinomialCalibrator("full", MULTINOMIAL_L2).fit(scores, y_index, w)
        return [
            make_calibrator(self.calibration).fit(scores[:, j], (y_index == j).astype(np.int8), w)
            for j in range(scores.shape[1])
        ]

    def _probabilities(self, calibrated: Any, scores: np.ndarray) -> np.ndarray:
        if isinstance(calibrated, MultinomialCalibrator):
            return np.asarray(calibrated.predict_proba(scores))
        p = np.column_stack([c.predict(scores[:, j]) for j, c in enumerate(calibrated)])
        return normalise_rows(p)

    def _raw(self, scores: np.ndarray) -> np.ndarray:
        return normalise_rows(scores)

    def _install(self, booster: Any, calibrated: Any, info: dict[str, Any]) -> None:
        self.estimator_ = booster
        joint = isinstance(calibrated, MultinomialCalibrator)
        self.calibrators_ = [] if joint else list(calibrated)
        self.joint_calibrator_ = calibrated if joint else None
        self.calibration_info_ = {
            "method": self.calibration,
            **info,
            "scheme": "multinomial (softmax) calibration of the K scores"
            if joint
            else "per-class calibration, normalised",
        }
        self._done()

    def progress_total(self, n_classes: int = 3) -> int:
        return _AutoCapacity.progress_total(self, n_classes)

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> AutoCalibratedMulticlass:
        """Search the capacity and fit the calibrated SAMME booster (module docstring)."""
        self._check_auto_params()
        if self.score_kind not in ("vote", "logistic"):
            raise InvalidInput(f"score_kind must be 'vote' or 'logistic', got {self.score_kind!r}")
        if self.serve not in SERVE:
            raise InvalidInput(f"serve must be one of {list(SERVE)}, got {self.serve!r}")
        X, y, classes, y_index, counts = labelled_rows(X, y, two_classes=False)
        self.classes_ = classes
        self.class_priors_ = class_priors(y_index, len(classes), sample_weight)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self._search_fit(X, y, y_index, sw)
        return self


class AutoCalibrated(ClassifierMixin, BaseEstimator):
    """Automatic capacity for any number of classes: the service's default algorithm.

    Two classes: :class:`AutoCalibratedBoosting` (calibrated AdaMEC); more:
    :class:`AutoCalibratedMulticlass` (calibrated SAMME), calibrated per
    ``multiclass_calibration`` (:data:`MULTICLASS_CALIBRATIONS`: ``"multinomial"``, one
    softmax map of the K scores, or ``"per_class"``, one ``calibration`` map per class,
    normalised). Parameters as theirs; ``grid=None`` (the default) is
    :data:`DEFAULT_GRID` for two classes and :data:`MULTICLASS_GRID` for more;
    ``score_kind`` is the raw score calibrated: ``"vote"`` (vote fractions, Eq. 24) or
    ``"logistic"`` (two classes: Eq. 25; more: the softmax of SAMME's votes). ``max_rounds``
    caps every grid entry's rounds (the service passes ``COSTWISE_MAX_ROUNDS``).

    Attributes
    ----------
    model_ : AutoCalibratedBoosting or AutoCalibratedMulticlass
        The fitted estimator.
    capacity_ : dict
        Its choice and validation curves.
    n_estimators_, termination_reason_ : int, str
        Of the served booster.
    oof_ : models.crossfit.OutOfFold
        Out-of-fold calibrated probabilities of the training rows (reported metrics).
    """

    def __init__(
        self,
        grid: Any = None,
        calibration: str = "platt",
        n_folds: int = 5,
        metric: str = "log_loss",
        max_search_rows: int = 20000,
        max_rounds: int | None = None,
        time_budget: float | None = None,
        score_kind: str = "vote",
        random_state: int | None = None,
        n_jobs: int | None = None,
        multiclass_calibration: str = "multinomial",
        serve: str = "folds",
    ) -> None:
        self.grid = grid
        self.calibration = calibration
        self.n_folds = n_folds
        self.metric = metric
        self.max_search_rows = max_search_rows
        self.max_rounds = max_rounds
        self.time_budget = time_budget
        self.score_kind = score_kind
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.multiclass_calibration = multiclass_calibration
        self.serve = serve

    def _for(self, n_classes: int) -> AutoCalibratedBoosting | AutoCalibratedMulticlass:
        default = DEFAULT_GRID if n_classes == 2 else MULTICLASS_GRID
        common: dict[str, Any] = {
            "grid": default if self.grid is None else self.grid,
            "n_folds": self.n_folds,
            "metric": self.metric,
            "max_search_rows": self.max_search_rows,
            "max_rounds": self.max_rounds,
            "time_budget": self.time_budget,
            "random_state": self.random_state,
            "n_jobs": self.n_jobs,
            "serve": self.serve,
        }
        if n_classes == 2:
            return AutoCalibratedBoosting(
                method=self.calibration, score_kind=self.score_kind, **common
            )
        if self.multiclass_calibration not in MULTICLASS_CALIBRATIONS:
            raise InvalidInput(
                f"multiclass_calibration must be one of {list(MULTICLASS_CALIBRATIONS)}, "
                f"got {self.multiclass_calibration!r}"
            )
        per_class = self.multiclass_calibration == "per_class"
        return AutoCalibratedMulticlass(
            calibration=self.calibration if per_class else "multinomial",
            score_kind=self.score_kind,
            **common,
        )

    def provides_out_of_fold(self) -> bool:
        """Always: ``oof_`` holds cross-fitted calibrated probabilities of the training rows."""
        return True

    def progress_total(self, n_classes: int = 2) -> int:
        """The count a fit reports as ``total`` (the same for any number of classes)."""
        return self._for(n_classes).progress_total(n_classes)

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> AutoCalibrated:
        """Fit the binary or the multiclass form, by the number of classes in ``y``."""
        y = np.asarray(y)
        if y.ndim != 1:
            raise InvalidInput(f"y must be 1-D, got shape {y.shape}")
        self.model_ = self._for(len(np.unique(y))).fit(X, y, sample_weight)
        self.classes_ = self.model_.classes_
        self.class_priors_ = self.model_.class_priors_
        self.capacity_ = self.model_.capacity_
        self.calibration_info_ = self.model_.calibration_info_
        self.oof_ = self.model_.oof_
        booster = self.model_.estimator_
        self.n_estimators_ = int(booster.n_estimators_)
        self.termination_reason_ = str(booster.termination_reason_)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise NotFitted(f"{type(self).__name__} is not fitted yet; call fit(X, y) first")

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated class probabilities, shape (n, K)."""
        self._check_fitted()
        return self.model_.predict_proba(X)

    def predict(self, X: Any) -> np.ndarray:
        """Least expected cost under 0-1 costs."""
        self._check_fitted()
        return self.model_.predict(X)

    def decide(self, X: Any, costs: Any, priors: Any = None) -> Decisions:
        """Least-expected-cost decisions under ``costs`` (see :mod:`models.decisions`)."""
        self._check_fitted()
        return self.model_.decide(X, costs, priors=priors)

    def to_inference(self, feature_names: list[str] | None = None) -> InferenceModel:
        """The numpy-only inference object (threshold rule: any request costs)."""
        self._check_fitted()
        return self.model_.to_inference(feature_names)


def _build(common: dict[str, Any], params: dict[str, Any]) -> AutoCalibrated:
    return AutoCalibrated(
        score_kind=common.get("score_kind", "vote"),
        random_state=common.get("random_state"),
        metric=params.get("metric", "log_loss"),
        serve=params.get("serve", "folds"),
    )


def _spec() -> Any:
    from models.algorithm_entry import AlgorithmSpec, ParamSpec

    return AlgorithmSpec(
        name="auto",
        title="Calibrated AdaBoost with automatic capacity (the default)",
        family="any",
        source="Calibrated AdaMEC of Nikolaou et al. (2016) with AdaBoost (two classes) or "
        "SAMME of Zhu et al. (2009) (more classes); weak learner and rounds chosen by "
        "out-of-fold calibrated loss",
        equations="Nikolaou et al. 2016: Eqs. 5-7 (AdaBoost), 24 (score), 20 (decision); "
        "Zhu et al. 2009: SAMME",
        trains_with_costs=False,
        decision_rule="least expected cost over the calibrated probabilities at the "
        "request's costs (two classes: sign[p(y=1|x) - c], Table 3: AdaMEC)",
        build=_build,
        params=(
            ParamSpec(
                "metric",
                "str",
                "log_loss",
                "Out-of-fold loss of the calibrated probabilities that chooses the weak "
                "learner and the rounds.",
                choices=METRICS,
            ),
            ParamSpec(
                "serve",
                "str",
                "folds",
                "What serves the model: 'folds', the cross-fitting boosters together (the "
                "calibration map on the mean of their scores; better decisions, measured), or "
                "'refit', one booster refitted on all rows (the same map; fewer learners per "
                "prediction: a one-row decision of a large multiclass model costs about a "
                "third, see docs/training.md).",
                choices=SERVE,
            ),
        ),
        notes="Chooses the weak learner (stumps with up to 400 rounds, depth-3 trees with up "
        "to 200, depth-6 trees with up to 100, 300 with more than two classes) and the number of rounds by early stopping "
        "on the cross-fitted calibrated log loss; two or more classes (more than two: "
        "SAMME calibrated by one multinomial softmax map of its K vote fractions). "
        "Trained without "
        "costs, so one version serves every cost setting. n_estimators, weak_learner and "
        "max_depth are chosen, not given. Serves the cross-fitting boosters together "
        "(5, or 3 above 20,000 rows; fold ensemble: the map on the mean of their scores, "
        "for more than two classes the mean of their vote fractions), no refit.",
    )


SPEC = _spec()
