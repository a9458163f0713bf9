"""Calibrated AdaBoost of a fixed capacity trained on a Dask cluster (the driver's side).

:func:`fit_calibrated_adaboost` is the one entry point; the module docstring of
:mod:`models.distributed` says what travels where and why.

The rounds follow :class:`models.boosting.loop.BaseBoosting` (Eqs. 5-6, its stopping
rules by :func:`models.boosting.loop.step_verdict`) with one difference: a booster's
weights are updated at the start of the next round, so non-finite weights drop the
round before (as the loop does) except after the last round, whose weights are never
computed.
"""

from __future__ import annotations

import glob
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from types import SimpleNamespace
from typing import Any

import numpy as np

from models.auto.curve import checkpoints
from models.auto.record import curve_record
from models.boosting.calibrated import out_of_fold_binary
from models.boosting.crossfit import Folds, OutOfFold
from models.boosting.loop import EPS_CLIP, step_verdict
from models.boosting.prebinned import raw_space
from models.boosting.progress import report
from models.calibration.calibrators import make_calibrator
from models.decisions.rule import class_priors
from models.distributed import capacity, partitions
from models.distributed.capacity import check_metric, round_cap
from models.distributed.rows import DEFAULT_SAMPLE_ROWS, Summary, edges_of, hive_keys
from models.exceptions import ClusterUnavailable, InvalidInput, TrainingError
from models.features.binning import MAX_BINS, BinEdges
from models.inference.ensemble import Ensemble
from models.inference.model import InferenceModel
from models.inference.scorers import BinaryScorer
from models.weak.base import CRITERIA, Stump, stumps_ensemble
from models.weak.stump import StumpChoice, choose_stump, valid_splits

__all__ = ["DistributedFit", "fit_calibrated_adaboost", "parquet_parts"]

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = "10s"
POLL_SECONDS = 1.0  # how often a wait checks that the cluster still has workers
FAN_IN = 8  # partition histograms summed per task of the reduction tree


@dataclass
class DistributedFit:
    """What :func:`fit_calibrated_adaboost` trained.

    Attributes
    ----------
    model : InferenceModel
        The served model: the booster fitted on every row (raw feature values), its vote
        fraction s(x) (Eq. 24) and the calibration map fitted on the out-of-fold scores;
        the object the service stores as an artifact.
    oof : OutOfFold
        Cross-calibrated out-of-fold probabilities of every row (partition order), as
        :class:`models.boosting.calibrated.CalibratedBoosting` gives with ``split="kfold"``.
    edges : BinEdges
        The bin edges every worker encoded its rows with.
    fold_ensembles : list of Ensemble
        The ``k`` fold boosters (code space), whose scores the calibration map was fitted on.
    info : dict
        Provenance: rows, partitions, folds, rounds and stop reason per booster, which
        features have exact edges, bytes per round, seconds.
    y_index : ndarray of shape (n,)
        Each row's class index in ``model.classes`` (partition order, as ``oof``): the
        labels the out-of-fold metrics are measured against.
    """

    model: InferenceModel
    oof: OutOfFold
    edges: BinEdges
    fold_ensembles: list[Ensemble]
    info: dict[str, Any] = field(default_factory=dict)
    y_index: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.intp))


def parquet_parts(path: str) -> list[str]:
    """The Parquet files of a partitioned data set (a directory, searched recursively, or
    one file), sorted by path: the partition order of the training."""
    if os.path.isfile(path):
        return [path]
    files = sorted(glob.glob(os.path.join(path, "**", "*.parquet"), recursive=True))
    if not files:
        raise InvalidInput(f"no Parquet file under {path!r}")
    return files


class _Booster:
    """The driver's record of one booster: kept stumps (bin terms), alphas, stop reason."""

    def __init__(self) -> None:
        self.choices: list[StumpChoice] = []
        self.alphas: list[float] = []
        self.errors: list[float] = []
        self.reason: str | None = None

    def ensemble(self, n_features: int, rounds: int | None = None) -> Ensemble:
        """The booster's first ``rounds`` stumps (all by default) in code space."""
        m = len(self.alphas) if rounds is None else min(rounds, len(self.alphas))
        stumps = [
            Stump(0, 0.0, c.left, c.left, c.left)
            if c.bin < 0
            else Stump(c.feature, c.bin + 0.5, c.left, c.right, c.missing)
            for c in self.choices[:m]
        ]
        return stumps_ensemble(stumps, np.asarray(self.alphas[:m]), n_features)

    def stumps(self) -> list[tuple[int, int, float, float, float, float]]:
        """``(feature, bin, left, right, missing, alpha)`` of every kept stump (the tasks' form)."""
        return [
            (c.feature, c.bin, c.left, c.right, c.missing, a)
            for c, a in zip(self.choices, self.alphas, strict=True)
        ]


def _error(hist: np.ndarray, c: StumpChoice) -> float:
    """Weight of the rows the stump misclassifies, from the histogram (n_features, bins, 2)."""
    if c.bin < 0:
        return float(hist[0, :, 1 if c.left < 0 else 0].sum())
    P, N = hist[c.feature, :, 1], hist[c.feature, :, 0]
    miss = hist.shape[1] - 1
    wrong_left = P if c.left < 0 else N
    wrong_right = P if c.right < 0 else N
    err = wrong_left[: c.bin + 1].sum() + wrong_right[c.bin + 1 : miss].sum()
    err += (wrong_left if c.missing_left else wrong_right)[miss]
    return float(err)


def _alpha(eps: float) -> float:
    """alpha = 1/2 log((1 - eps) / eps), Eq. 5, eps clipped as the single-machine loop does."""
    e = float(np.clip(eps, EPS_CLIP, 1.0 - EPS_CLIP))
    return 0.5 * float(np.log((1.0 - e) / e))


def _tree_sum(client: Any, futures: list[Any], groups: list[tuple[str | None, list[int]]]) -> Any:
    """The sum of the partition histograms: first on each worker over the partitions it
    holds (``groups``: worker address and partition numbers), so that one histogram per
    worker travels, then across workers in a tree of ``FAN_IN``."""
    sums = [
        client.submit(
            partitions.add,
            *[futures[i] for i in rows],
            workers=None if worker is None else [worker],
            allow_other_workers=True,
        )  # fmt: skip
        for worker, rows in groups
    ]
    while len(sums) > 1:
        sums = [
            client.submit(partitions.add, *sums[i : i + FAN_IN])
            for i in range(0, len(sums), FAN_IN)
        ]
    return sums[0]


def _groups(client: Any, parts: list[Any]) -> list[tuple[str | None, list[int]]]:
    """Partition numbers by the worker holding them (where their rounds run); called once
    the partitions are computed (their fold counts gathered)."""
    holders = client.who_has(parts)
    by_worker: dict[str | None, list[int]] = {}
    for i, p in enumerate(parts):
        where = sorted(holders.get(p.key, ()))
        by_worker.setdefault(where[0] if where else None, []).append(i)
    return sorted(by_worker.items(), key=lambda item: item[1][0])


def _merge_summaries(client: Any, futures: list[Any]) -> Any:
    from models.distributed.rows import merge

    while len(futures) > 1:
        futures = [
            client.submit(merge, *futures[i : i + FAN_IN]) for i in range(0, len(futures), FAN_IN)
        ]
    return futures[0]


def _connect(client: Any) -> tuple[Any, bool]:
    if not isinstance(client, str):
        return client, False
    import distributed  # lazily: only distributed training needs it

    try:
        return distributed.Client(client, timeout=CONNECT_TIMEOUT, set_as_default=False), True
    except (OSError, TimeoutError) as exc:
        raise ClusterUnavailable(f"cannot reach the Dask scheduler at {client}: {exc}") from None


def _gather(client: Any, futures: Any, what: str, no_worker_seconds: float) -> Any:
    """The result of a future (or the results of a list of them).

    A lost worker or scheduler that Dask does not recover from becomes a ClusterUnavailable
    saying so; so does a cluster left without any worker for ``no_worker_seconds``
    (Dask itself would wait for a worker for ever).
    """
    single = not isinstance(futures, list)
    out = []
    try:
        for f in [futures] if single else futures:
            idle = 0.0
            while True:
                try:
                    out.append(f.result(timeout=POLL_SECONDS))
                    break
                except TimeoutError:
                    if client.scheduler_info().get("workers"):
                        idle = 0.0
                        continue
                    idle += POLL_SECONDS
                    if idle >= no_worker_seconds:
                        raise ClusterUnavailable(
                            f"distributed training failed while {what}: the Dask cluster has "
                            f"had no worker for {idle:.0f} s; nothing was kept, train again"
                        ) from None
    except (InvalidInput, TrainingError):
        raise
    except Exception as exc:
        name = type(exc).__name__
        if name in ("KilledWorker", "CommClosedError", "FutureCancelledError",
                    "CancelledError", "OSError"):  # fmt: skip
            raise ClusterUnavailable(
                f"distributed training failed while {what}: the Dask cluster lost a worker "
                f"or the scheduler ({name}: {exc}); nothing was kept, train again"
            ) from None
        raise
    return out[0] if single else out


def fit_calibrated_adaboost(
    client: Any,
    source: Any,
    features: list[str],
    label: str,
    *,
    n_estimators: int | None = None,
    n_folds: int = 5,
    method: str = "platt",
    criterion: str = "error",
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    on_round: Callable[[int, dict[str, Any]], None] | None = None,
    no_worker_seconds: float = 60.0,
    max_rounds: int | None = None,
    metric: str = "log_loss",
) -> DistributedFit:
    """Calibrated AdaMEC (AdaBoost of stumps, k-fold calibrated) on Dask; the number of
    rounds given or chosen (:mod:`models.distributed.capacity`).

    Parameters
    ----------
    client : distributed.Client or str
        A connected client, or the scheduler's address (a client is opened and closed).
    source : str, list of str, or dask.dataframe.DataFrame
        A partitioned Parquet data set (a directory, one file, or a list of files; each
        file is one partition, in sorted path order) or a Dask DataFrame (its partitions).
        Workers read it: the paths must be readable on every worker. Below a directory,
        Hive-style folders (``day=3/``) add their keys as columns, as the single-machine
        reader does (:func:`~models.distributed.rows.hive_keys`); a list may give them as
        ``(file, keys)`` pairs.
    features, label : column names
        Numeric feature columns (null = missing), and the label column (two classes;
        the larger label is the positive class, as ``np.unique`` sorts them).
    n_estimators : int or None
        Rounds of every booster. None (the default): chosen by the out-of-fold calibrated
        ``metric`` at the checkpoints of :func:`models.auto.curve.checkpoints`, the rule of
        :mod:`models.auto`'s stump entry, every booster grown to the cap
        (:func:`~models.distributed.capacity.round_cap`: 400, at most ``max_rounds``) and
        truncated to the rounds chosen; ``info["capacity"]`` records the search as
        ``capacity_`` records it (:mod:`models.auto.record`).
    n_folds : int
        Folds of the cross-fitted calibration, stratified, by a hash of the row (2 to 127;
        :func:`models.distributed.rows.fold_of_rows`).
    method : {"platt", "isotonic"}
        The calibration map, fitted on the driver from the out-of-fold scores.
    criterion : {"error", "gini"}
        The stump's split criterion (:func:`models.weak.stump.choose_stump`).
    sample_rows : int
        Rows of the sample that places the quantile cut points (module docstring of
        :mod:`models.distributed.rows`).
    on_round : callable, optional
        ``on_round(t, facts)`` after each round's histograms are reduced (benchmarks).
    no_worker_seconds : float
        How long the training waits while the cluster has no worker at all before it
        fails (a lost worker is otherwise recomputed on the others).
    max_rounds : int or None
        Caps the searched rounds (the service passes ``COSTWISE_MAX_ROUNDS``); unused
        with a given ``n_estimators``.
    metric : {"log_loss", "brier"}
        The loss that chooses the rounds (:data:`models.auto.params.METRICS`).

    Returns
    -------
    DistributedFit

    Raises
    ------
    InvalidInput
        Bad parameters, a missing column, a non-numeric feature, an infinite value.
    TrainingError
        Not exactly two classes, a fold without both classes among its training rows,
        no better-than-chance first stump.
    ClusterUnavailable
        (a TrainingError) The scheduler cannot be reached, or a worker or the scheduler
        was lost for good.
    """
    n_rounds = _check(n_estimators, n_folds, method, criterion, sample_rows, features, max_rounds)
    check_metric(metric)
    search = n_estimators is None
    client, own = _connect(client)
    started = time.perf_counter()
    try:
        gather = partial(_gather, client, no_worker_seconds=float(no_worker_seconds))
        return _fit(client, gather, source, list(features), label, n_rounds, int(n_folds),
                    method, criterion, int(sample_rows), on_round, started,
                    (metric, max_rounds) if search else None)  # fmt: skip
    finally:
        if own:
            client.close()


def _check(n_estimators: Any, n_folds: Any, method: str, criterion: str, sample_rows: Any,
           features: list[str], max_rounds: Any) -> int:  # fmt: skip
    """The checked parameters; the rounds every booster grows to."""
    if max_rounds is not None and (
        isinstance(max_rounds, bool) or not isinstance(max_rounds, int | np.integer)
        or max_rounds < 1
    ):  # fmt: skip
        raise InvalidInput(f"max_rounds must be an integer >= 1 or None, got {max_rounds!r}")
    if n_estimators is None:
        n_estimators = round_cap(None if max_rounds is None else int(max_rounds))
    if isinstance(n_estimators, bool) or not isinstance(n_estimators, int | np.integer):
        raise InvalidInput(f"n_estimators must be an integer >= 1, got {n_estimators!r}")
    if n_estimators < 1:
        raise InvalidInput(f"n_estimators must be an integer >= 1, got {n_estimators!r}")
    if isinstance(n_folds, bool) or not isinstance(n_folds, int | np.integer):
        raise InvalidInput(f"n_folds must be an integer in [2, 127], got {n_folds!r}")
    if not 2 <= n_folds <= 127:
        raise InvalidInput(f"n_folds must be an integer in [2, 127], got {n_folds!r}")
    if method not in ("platt", "isotonic"):
        raise InvalidInput(f"method must be 'platt' or 'isotonic', got {method!r}")
    if criterion not in CRITERIA:
        raise InvalidInput(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    if isinstance(sample_rows, bool) or not isinstance(sample_rows, int) or sample_rows < 1:
        raise InvalidInput(f"sample_rows must be an integer >= 1, got {sample_rows!r}")
    if not features:
        raise InvalidInput("features must name at least one column")
    return int(n_estimators)


def _sources(client: Any, source: Any, columns: list[str]) -> tuple[list[Any], int]:
    """Per-partition sources for the tasks (file paths, or futures of DataFrame partitions)."""
    if isinstance(source, str):
        files = parquet_parts(source)
        if os.path.isfile(source):
            return list(files), len(files)
        keys = hive_keys(source, files)
        return [(f, k) if k else f for f, k in zip(files, keys, strict=True)], len(files)
    if isinstance(source, list | tuple):  # files, or (file, hive keys) pairs
        return [(str(s[0]), dict(s[1])) if isinstance(s, tuple) else str(s) for s in source], len(
            source
        )
    if hasattr(source, "to_delayed"):
        parts = client.compute(source[columns].to_delayed())
        return list(parts), len(parts)
    raise InvalidInput("source must be a Parquet path, a list of Parquet files or a Dask DataFrame")


def _fit(client: Any, gather: Callable[..., Any], source: Any, features: list[str],
         label: str, n_rounds: int, k: int, method: str, criterion: str, sample_rows: int,
         on_round: Callable[[int, dict[str, Any]], None] | None,
         started: float, search: tuple[str, int | None] | None) -> DistributedFit:  # fmt: skip
    srcs, n_parts = _sources(client, source, [*features, label])
    # pass 1: summaries merged on the workers -> edges, labels and rows to the driver
    summaries = [
        client.submit(partitions.summarize_part, s, features, label, sample_rows) for s in srcs
    ]
    merged = _merge_summaries(client, summaries)
    part_labels = [client.submit(partitions.summary_labels, s) for s in summaries]
    del summaries
    # the edges are found on a worker: the sampled rows never reach the driver
    edges, labels, n, exact = gather(client.submit(_conclude, merged), "reading the data")
    del merged
    classes = sorted(labels)
    if len(classes) != 2:
        raise TrainingError(
            f"labels must hold exactly two classes, got {len(classes)}: {classes[:10]}"
        )
    # pass 2: every worker encodes its partitions; they stay there as codes. The folds
    # are stratified: a partition's rows continue the turns of the partitions before it
    offsets = _offsets(gather(part_labels, "reading the data"), classes)
    del part_labels
    parts = [
        client.submit(partitions.encode_part, s, features, label, edges, classes, k, o)
        for s, o in zip(srcs, offsets, strict=True)
    ]
    del srcs
    counts = sum(gather([client.submit(partitions.fold_counts, p, k) for p in parts], "binning"))
    _check_folds(np.asarray(counts), classes)
    rows_per_booster = [int(n - counts[b].sum()) for b in range(k)] + [n]
    inverse = [1.0 / r for r in rows_per_booster]
    weights = [client.submit(partitions.start_weights, p, inverse) for p in parts]
    groups = _groups(client, parts)

    boosters = [_Booster() for _ in range(k + 1)]
    valid = valid_splits(edges.n_thresholds, MAX_BINS)
    updates: list[partitions.Update | None] = [None] * (k + 1)
    hist_bytes = 0
    for t in range(n_rounds):
        report(t, n_rounds)
        # the step results (weights, histogram) feed the next step and the reduction
        weights = [
            client.submit(partitions.step, p, w, updates)
            for p, w in zip(parts, weights, strict=True)
        ]
        summed = gather(_tree_sum(client, weights, groups), f"boosting round {t + 1}")
        hist, hist_bytes = summed.hi, summed.nbytes
        updates = _choose(t, hist, boosters, updates, valid, criterion)
        if on_round is not None:
            on_round(t, {"hist_bytes": hist_bytes})
        if all(b.reason is not None for b in boosters):
            break
    for b in boosters:
        b.reason = b.reason or "max_rounds"
    del weights  # the rounds' weights are no longer needed on the workers
    chosen = None
    rounds = n_rounds
    if search is not None:
        report(0, 0, "selecting")
        n_pos = int(counts[:, 1].sum())
        chosen = _search_rounds(client, gather, parts, groups, boosters, n_rounds,
                                  (n_pos, n - n_pos), *search)  # fmt: skip
        rounds = int(chosen["n_estimators"])
        for b in boosters:
            if len(b.alphas) > rounds:
                b.reason = "max_rounds"
    d = len(features)
    fold_ensembles = [b.ensemble(d, rounds) for b in boosters[:k]]
    final = boosters[k].ensemble(d, rounds)
    # out-of-fold scores (n floats) to the driver, for the calibration map
    report(0, 0, "calibrating")
    oof_parts = gather(
        [client.submit(partitions.out_of_fold, p, fold_ensembles, "vote") for p in parts],
        "scoring the folds",
    )
    scores = np.concatenate([s for s, _, _ in oof_parts])
    y_index = np.concatenate([y for _, y, _ in oof_parts]).astype(np.intp)
    fold_of_row = np.concatenate([f for _, _, f in oof_parts])
    del oof_parts, parts
    calibrator = make_calibrator(method).fit(scores, y_index, sample_weight=None)
    oof = out_of_fold_binary(method, scores, y_index, None, Folds(fold_of_row, k))
    assert oof is not None
    model = InferenceModel(
        classes=tuple(classes),
        feature_names=tuple(features),
        scorer=BinaryScorer(raw_space(final, edges), "vote", calibrator),
        train_priors=class_priors(y_index, 2, None),
    )
    info = {
        "distributed": True,
        "algorithm": "adaboost",
        "weak_learner": "stump",
        "criterion": criterion,
        "n_estimators": rounds,
        "method": method,
        "split": "kfold",
        "folds": f"{k} stratified folds by a hash of the row",
        "n_folds": k,
        "n_rows": n,
        "n_partitions": n_parts,
        "n_workers": len(client.nthreads()),
        "rounds": [min(len(b.alphas), rounds) for b in boosters],
        "termination_reasons": [str(b.reason) for b in boosters],
        "exact_edges_features": len(exact),
        "sample_rows": sample_rows,
        "hist_bytes_per_round": hist_bytes,
        "seconds": round(time.perf_counter() - started, 3),
    }
    if chosen is not None:
        info["capacity"] = chosen
    return DistributedFit(model, oof, edges, fold_ensembles, info, y_index)


def _search_rounds(
    client: Any,
    gather: Callable[..., Any],
    parts: list[Any],
    groups: list[tuple[str | None, list[int]]],
    boosters: list[_Booster],
    cap: int,
    classes: tuple[int, int],
    metric: str,
    max_rounds: int | None,
) -> dict[str, Any]:
    """Choose the rounds on the workers' staged out-of-fold scores
    (:mod:`models.distributed.capacity`) and record the search as ``capacity_`` records
    it (:func:`models.auto.record.curve_record`'s curve, the same keys)."""
    t0 = time.perf_counter()
    cps = checkpoints(cap)
    fold_stumps = [b.stumps() for b in boosters[:-1]]
    staged = [client.submit(capacity.staged_out_of_fold, p, fold_stumps, cps) for p in parts]
    n_pos, n_neg = classes
    targets = capacity.platt_targets(n_pos, n_neg)

    def evaluate(points: np.ndarray) -> np.ndarray:
        sums = [
            client.submit(capacity.platt_sums, st, p, points, targets)
            for st, p in zip(staged, parts, strict=True)
        ]
        return np.asarray(gather(_tree_sum(client, sums, groups), "choosing the rounds").hi)

    curve = capacity.platt_curve(evaluate, cps, n_pos, n_neg, metric)
    staged.clear()  # the staged scores are released on the workers
    fitted = [SimpleNamespace(n_estimators_=len(b.alphas)) for b in boosters[:-1]]
    c = curve.best
    return {
        "weak_learner": "stump",
        "max_depth": 1,
        "n_estimators": curve.rounds,
        "metric": metric,
        "validation_loss": round(float(curve.smooth[c]), 6),
        "max_rounds": None if max_rounds is None else int(max_rounds),
        "search_rows": n_pos + n_neg,
        "search_folds": len(fitted),
        "stopped": "grid_done",
        "search_seconds": round(time.perf_counter() - t0, 3),
        "final_estimate_seconds": 0.0,
        "time_fallback": False,
        "curves": [curve_record("stump", 1, curve.cps, curve.losses, curve.smooth, c, fitted)],
        "search": "distributed: stumps grown to the cap on every row, rounds chosen on the "
        "out-of-fold scores of the same passes (docs/distributed.md)",
        "search_calibration": "platt",
        "round_cap": int(cap),
        "newton_passes": curve.passes,
    }


def _offsets(labels: list[dict[Any, int]], classes: list[Any]) -> list[tuple[int, int]]:
    """Rows of each class in the partitions before each partition (the folds' offsets)."""
    out, seen = [], [0, 0]
    for counts in labels:
        out.append((seen[0], seen[1]))
        for c in (0, 1):
            seen[c] += int(counts.get(classes[c], 0))
    return out


def _conclude(summary: Summary) -> tuple[BinEdges, dict[Any, int], int, list[int]]:
    """Task: the edges of the merged summary, its labels, rows and exact-edge features."""
    exact = [j for j, v in enumerate(summary.distinct) if v is not None]
    return edges_of(summary), summary.labels, summary.n_rows, exact


def _check_folds(counts: np.ndarray, classes: list[Any]) -> None:
    """Every fold booster's training rows (the other folds) must hold both classes."""
    total = counts.sum(axis=0)
    for b in range(counts.shape[0]):
        train = total - counts[b]
        if (train == 0).any():
            missing = classes[int(np.argmin(train))]
            raise TrainingError(
                f"the training rows of fold {b} hold no row of class {missing!r} "
                f"({int(total.min())} rows of the rarer class in all): too few rows for "
                f"{counts.shape[0]}-fold cross-fitting"
            )


def _choose(
    t: int,
    hist: np.ndarray,
    boosters: list[_Booster],
    previous: list[partitions.Update | None],
    valid: np.ndarray,
    criterion: str,
) -> list[partitions.Update | None]:
    """Each running booster's stump of round ``t`` from the reduced histogram, with the
    termination rules of the single-machine loop (:func:`models.boosting.loop.step_verdict`)."""
    updates: list[partitions.Update | None] = [None] * len(boosters)
    for b, booster in enumerate(boosters):
        if booster.reason is not None:
            continue
        h = hist[:, :, 2 * b : 2 * b + 2]
        total = float(h[0].sum())
        if previous[b] is not None and not (np.isfinite(total) and total > 0):
            # the last update made the weights non-finite: that round is dropped
            booster.choices.pop()
            booster.alphas.pop()
            booster.errors.pop()
            if t - 1 == 0:
                raise TrainingError("weights became non-finite after the first round")
            booster.reason = "non_finite_weights"
            continue
        choice = choose_stump(h, valid, criterion)
        eps = _error(h, choice) / total
        alpha = _alpha(eps)
        verdict = step_verdict(t, eps, alpha)
        if verdict == "no_positive_alpha":
            booster.reason = verdict
            continue
        booster.choices.append(choice)
        booster.alphas.append(alpha)
        booster.errors.append(eps)
        if verdict == "perfect_fit":
            booster.reason = verdict
            continue
        updates[b] = (choice.feature, choice.bin, choice.left, choice.right, choice.missing,
                      alpha, total)  # fmt: skip
    return updates
