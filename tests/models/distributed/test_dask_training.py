"""Distributed training on a real Dask cluster (a ``dask scheduler`` and two ``dask worker``
processes on 127.0.0.1) over a partitioned Parquet data set, against the single-machine
learner trained with the same bins, folds and rounds.

Tolerance: each worker sums its partitions' histograms and those sums are added, so the
sums are in another order than one process's (and depend on which worker holds which
partition); the weights, alphas and scores may therefore differ in the last bits. Measured here: under 1e-14. Asserted: the same stumps
(features, thresholds, outputs) in every booster, alphas and raw scores within 1e-12,
calibrated probabilities within 1e-9, and identical decisions."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from models.auto import AutoCalibratedBoosting
from models.auto.curve import checkpoints, smoothed
from models.auto.search import SearchRows, entry_losses, fit_entry
from models.boosting.adaboost import AdaBoost
from models.boosting.crossfit import Folds
from models.boosting.prebinned import fit_prebinned, raw_space
from models.calibration.calibrators import make_calibrator
from models.decisions.rule import CostMatrix, class_priors
from models.distributed import edges_of, fit_calibrated_adaboost, fold_of_rows, row_keys, summarize
from models.exceptions import InvalidInput, TrainingError
from models.features.binning import BinEdges, BinnedRows, bin_features, prebinned
from models.inference.artifacts import dump_model, load_model
from models.inference.ensemble import Ensemble
from models.inference.model import InferenceModel
from models.inference.scorers import BinaryScorer
from tests.dask_cluster import running_cluster

distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.slow

NAMES = [f"f{j}" for j in range(6)]
N_ROWS, ROUNDS, FOLDS = 20_000, 30, 5


def _data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Continuous, discrete (7 values), rounded (~60 values) and missing features."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[:, 1] = rng.integers(0, 7, n)
    X[:, 2] = np.round(X[:, 2], 1)
    X[rng.random(n) < 0.1, 3] = np.nan
    logit = X[:, 0] + 0.5 * X[:, 1] - 1.5 + np.nan_to_num(X[:, 3]) - X[:, 4] ** 2
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    return X, y


def _write(X: np.ndarray, y: Any, directory: Path, parts: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, len(y), parts + 1).astype(int)
    for i in range(parts):
        a, b = bounds[i], bounds[i + 1]
        columns = {name: X[a:b, j] for j, name in enumerate(NAMES)}
        pq.write_table(pa.table({**columns, "label": y[a:b]}), directory / f"part-{i:02d}.parquet")
    return directory


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_cluster(tmp_path_factory.mktemp("dask")) as cluster:
        yield cluster.address


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[np.ndarray, np.ndarray, Path]:
    X, y = _data(N_ROWS)
    return X, y, _write(X, y, tmp_path_factory.mktemp("data") / "train", parts=4)


def _folds(X: np.ndarray, y: np.ndarray, k: int, parts: int) -> np.ndarray:
    """The stratified hash folds of the rows as :func:`_write` partitions them (each
    partition continues the turns of the ones before it)."""
    bounds = np.linspace(0, len(y), parts + 1).astype(int)
    keys, out, seen = row_keys(X), [], [0, 0]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        out.append(fold_of_rows(keys[a:b], y[a:b], k, (seen[0], seen[1])))
        seen = [seen[0] + int((y[a:b] == 0).sum()), seen[1] + int((y[a:b] == 1).sum())]
    return np.concatenate(out)


def _single_machine(
    X: np.ndarray, y: np.ndarray, edges: BinEdges, rounds: int, k: int, parts: int = 4
) -> tuple[list[AdaBoost], AdaBoost, np.ndarray]:
    """The single-machine learner (pre-binned AdaBoost) on the same bins and hash folds:
    the fold boosters, the booster on all rows and the out-of-fold scores."""
    folds = _folds(X, y, k, parts)
    codes = BinnedRows.empty(len(y), X.shape[1])
    codes[:] = edges.encode(X)
    scores = np.empty(len(y))
    fold_models = []
    for b in range(k):
        train, test = np.flatnonzero(folds != b), np.flatnonzero(folds == b)
        model = fit_prebinned(AdaBoost(n_estimators=rounds), codes[train], y[train], edges)
        with prebinned(edges):
            scores[test] = model.score_samples(codes[test])
        fold_models.append(model)
    final = fit_prebinned(AdaBoost(n_estimators=rounds), codes, y, edges)
    return fold_models, final, scores


def _same_stumps(a: Ensemble, b: Ensemble) -> None:
    for name in ("feature", "threshold", "value_left", "value_right", "value_missing"):
        np.testing.assert_array_equal(a.arrays[name], b.arrays[name], err_msg=name)
    np.testing.assert_allclose(a.alphas, b.alphas, rtol=0, atol=1e-12)


def test_the_distributed_model_is_the_single_machine_model(
    scheduler: str, dataset: tuple[np.ndarray, np.ndarray, Path]
) -> None:
    X, y, path = dataset
    fit = fit_calibrated_adaboost(scheduler, str(path), NAMES, "label", n_estimators=ROUNDS,
                                  n_folds=FOLDS)  # fmt: skip
    # fewer rows than the sample: the edges are those of the whole matrix in memory
    binned = bin_features(X)
    np.testing.assert_array_equal(fit.edges.n_thresholds, binned.n_thresholds)
    np.testing.assert_array_equal(fit.edges.thresholds, binned.thresholds)

    fold_models, final, scores = _single_machine(X, y, fit.edges, ROUNDS, FOLDS)
    for model, ensemble in zip(fold_models, fit.fold_ensembles, strict=True):
        _same_stumps(model.ensemble_, ensemble)
    served = fit.model.scorer.ensemble  # type: ignore[attr-defined]
    _same_stumps(raw_space(final.ensemble_, fit.edges), served)
    np.testing.assert_allclose(fit.oof.raw_positive, scores, rtol=0, atol=1e-12)

    single = InferenceModel(
        classes=(0, 1),
        feature_names=tuple(NAMES),
        scorer=BinaryScorer(
            raw_space(final.ensemble_, fit.edges), "vote", make_calibrator("platt").fit(scores, y)
        ),
        train_priors=class_priors(y, 2),
    )
    X_new, _ = _data(5_000, seed=1)
    p_single = single.predict_proba(X_new)[:, 1]
    np.testing.assert_allclose(fit.model.predict_proba(X_new)[:, 1], p_single, rtol=0, atol=1e-9)
    for c_fp, c_fn in ((1.0, 1.0), (1.0, 5.0), (10.0, 1.0)):
        costs = CostMatrix.from_binary(c_fp=c_fp, c_fn=c_fn)
        decided = fit.model.decide(X_new, costs).labels_index
        np.testing.assert_array_equal(decided, single.decide(X_new, costs).labels_index)
        assert 0 < decided.sum() < len(decided)  # both decisions occur
    stored = load_model(*dump_model(fit.model, metadata={"params": fit.info}))  # as registered
    np.testing.assert_array_equal(stored.predict_proba(X_new), fit.model.predict_proba(X_new))
    assert fit.model.classes == (0, 1)
    assert fit.model.feature_names == tuple(NAMES)
    assert fit.info["rounds"] == [ROUNDS] * (FOLDS + 1)
    assert fit.info["n_rows"] == N_ROWS and fit.info["n_partitions"] == 4
    assert fit.info["n_workers"] == 2 and fit.info["distributed"] is True


def test_sampled_edges_are_those_of_the_whole_data_set(
    scheduler: str, dataset: tuple[np.ndarray, np.ndarray, Path]
) -> None:
    """With fewer sample rows than rows, the merged summaries of 4 partitions give the
    edges of one summary of every row: exact for the discrete features, sampled
    quantiles for the continuous ones."""
    X, y, path = dataset
    fit = fit_calibrated_adaboost(scheduler, str(path), NAMES, "label", n_estimators=2,
                                  n_folds=2, sample_rows=3_000)  # fmt: skip
    whole = edges_of(summarize(X, y, 3_000))
    np.testing.assert_array_equal(fit.edges.thresholds, whole.thresholds)
    binned = bin_features(X)
    for j in (1, 2):  # at most 255 distinct values: exactly the in-memory cut points
        np.testing.assert_array_equal(fit.edges.thresholds[j], binned.thresholds[j])
    assert fit.info["exact_edges_features"] == 2
    assert fit.edges.n_thresholds[0] == 254  # continuous: 255 quantile bins of the sample


def test_a_dask_dataframe_trains_the_same_model(
    scheduler: str, dataset: tuple[np.ndarray, np.ndarray, Path]
) -> None:
    dd = pytest.importorskip("dask.dataframe")
    _, _, path = dataset
    kwargs: dict[str, Any] = {"n_estimators": 5, "n_folds": 3}
    from_files = fit_calibrated_adaboost(scheduler, str(path), NAMES, "label", **kwargs)
    frame = dd.read_parquet(sorted(str(p) for p in path.glob("*.parquet")))
    from_frame = fit_calibrated_adaboost(scheduler, frame, NAMES, "label", **kwargs)
    _same_stumps(from_files.model.scorer.ensemble, from_frame.model.scorer.ensemble)  # type: ignore[attr-defined]
    np.testing.assert_allclose(from_files.oof.raw_positive, from_frame.oof.raw_positive, atol=1e-12)


def test_bad_inputs_fail_with_the_reason(scheduler: str, tmp_path: Path) -> None:
    X, y = _data(600, seed=2)
    path = _write(X, y, tmp_path / "ok", parts=2)
    with pytest.raises(InvalidInput, match="no column 'nope'"):
        fit_calibrated_adaboost(scheduler, str(path), [*NAMES[:2], "nope"], "label")
    one_class = _write(X, np.zeros(600, dtype=np.int64), tmp_path / "one", parts=2)
    with pytest.raises(TrainingError, match="exactly two classes, got 1"):
        fit_calibrated_adaboost(scheduler, str(one_class), NAMES, "label")
    with pytest.raises(InvalidInput, match="n_folds"):
        fit_calibrated_adaboost(scheduler, str(path), NAMES, "label", n_folds=1)
    with pytest.raises(TrainingError, match="cannot reach the Dask scheduler"):
        fit_calibrated_adaboost("tcp://127.0.0.1:9", str(path), NAMES, "label")


def test_a_worker_lost_mid_training(
    tmp_path: Path, dataset: tuple[np.ndarray, np.ndarray, Path]
) -> None:
    """A worker killed at round 10: the scheduler recomputes its partitions on the other
    worker from their lineage (re-read, re-encoded, rounds replayed) and the model is the
    one an undisturbed cluster trains."""
    _, _, path = dataset
    with running_cluster(tmp_path) as cluster:
        undisturbed = fit_calibrated_adaboost(cluster.address, str(path), NAMES, "label",
                                              n_estimators=20, n_folds=3)  # fmt: skip

        def kill(t: int, facts: dict[str, Any]) -> None:
            if t == 9:
                os.killpg(cluster.workers[0].pid, signal.SIGKILL)

        resumed = fit_calibrated_adaboost(cluster.address, str(path), NAMES, "label",
                                          n_estimators=20, n_folds=3, on_round=kill)  # fmt: skip
        assert cluster.workers[0].wait(timeout=30) == -signal.SIGKILL
    _same_stumps(undisturbed.model.scorer.ensemble, resumed.model.scorer.ensemble)  # type: ignore[attr-defined]
    np.testing.assert_allclose(undisturbed.oof.raw_positive, resumed.oof.raw_positive, atol=1e-12)


def test_the_scheduler_lost_mid_training_fails_clearly(
    tmp_path: Path, dataset: tuple[np.ndarray, np.ndarray, Path]
) -> None:
    _, _, path = dataset
    with running_cluster(tmp_path) as cluster:

        def kill(t: int, facts: dict[str, Any]) -> None:
            if t == 3:
                os.killpg(cluster.procs[0].pid, signal.SIGKILL)

        with pytest.raises(TrainingError, match="lost a worker or the scheduler"):
            fit_calibrated_adaboost(cluster.address, str(path), NAMES, "label",
                                    n_estimators=20, n_folds=3, on_round=kill)  # fmt: skip


def test_every_worker_lost_fails_clearly(
    tmp_path: Path, dataset: tuple[np.ndarray, np.ndarray, Path]
) -> None:
    """With no worker left Dask would wait for one for ever; the training fails after
    ``no_worker_seconds`` with a TrainingError that says why."""
    _, _, path = dataset
    with running_cluster(tmp_path) as cluster:

        def kill(t: int, facts: dict[str, Any]) -> None:
            if t == 3:
                for worker in cluster.workers:
                    os.killpg(worker.pid, signal.SIGKILL)

        with pytest.raises(TrainingError, match="no worker for 3 s"):
            fit_calibrated_adaboost(cluster.address, str(path), NAMES, "label",
                                    n_estimators=20, n_folds=3, on_round=kill,
                                    no_worker_seconds=3)  # fmt: skip


def test_hive_partition_keys_are_columns(
    scheduler: str, dataset: tuple[np.ndarray, np.ndarray, Path], tmp_path: Path
) -> None:
    """Feature f1 (7 integer values) stored only as Hive folders ``f1=v/``: the workers add
    it back as a column, so the model is the one trained on the same partitions with f1
    stored in the files (to the bit: the histogram sums do not depend on where the
    partitions sit)."""
    X, y, _ = dataset
    hive, flat = tmp_path / "hive", tmp_path / "flat"
    flat.mkdir()
    for v in np.unique(X[:, 1]).astype(int):
        rows = X[:, 1] == v
        columns = {name: X[rows, j] for j, name in enumerate(NAMES)}
        pq.write_table(pa.table({**columns, "label": y[rows]}), flat / f"f1_{v}.parquet")
        del columns["f1"]
        (hive / f"f1={v}").mkdir(parents=True)
        pq.write_table(pa.table({**columns, "label": y[rows]}), hive / f"f1={v}" / "p.parquet")
    kwargs: dict[str, Any] = {"n_estimators": 10, "n_folds": 3}
    from_hive = fit_calibrated_adaboost(scheduler, str(hive), NAMES, "label", **kwargs)
    from_flat = fit_calibrated_adaboost(scheduler, str(flat), NAMES, "label", **kwargs)
    for a, b in zip(
        [from_hive.model.scorer.ensemble, *from_hive.fold_ensembles],  # type: ignore[attr-defined]
        [from_flat.model.scorer.ensemble, *from_flat.fold_ensembles],  # type: ignore[attr-defined]
        strict=True,
    ):
        for name in ("feature", "threshold", "value_left", "value_right", "value_missing"):
            np.testing.assert_array_equal(a.arrays[name], b.arrays[name], err_msg=name)
        np.testing.assert_array_equal(a.alphas, b.alphas)
    assert 1 in from_hive.model.scorer.ensemble.arrays["feature"]  # type: ignore[attr-defined]
    np.testing.assert_array_equal(
        from_hive.model.predict_proba(X), from_flat.model.predict_proba(X)
    )
    # a key that is not a number cannot be a feature: the error names it
    (hive / "f1=3").rename(hive / "f1=three")
    with pytest.raises(InvalidInput, match="column 'f1' is not numeric"):
        fit_calibrated_adaboost(scheduler, str(hive), NAMES, "label", **kwargs)


def test_the_rounds_are_chosen_as_the_single_machine_search_chooses_them(
    scheduler: str, tmp_path: Path
) -> None:
    """Without ``n_estimators`` the boosters grow to the cap and the rounds are chosen on
    the out-of-fold calibrated log loss at the checkpoints, as models.auto chooses them for
    its stump entry: the same curve (within 1e-6, the record's rounding) and the same
    rounds as fit_entry/entry_losses/smoothed on the same bins and hash folds. 4,000 rows
    overfit before the cap of 250 (the single-machine rule chooses 138 here)."""
    n, cap = 4_000, 250
    X, y = _data(n)
    path = _write(X, y, tmp_path / "train", parts=3)
    fit = fit_calibrated_adaboost(scheduler, str(path), NAMES, "label", max_rounds=cap,
                                  n_folds=FOLDS)  # fmt: skip

    codes = BinnedRows.empty(n, X.shape[1])
    codes[:] = fit.edges.encode(X)
    folds = _folds(X, y, FOLDS, parts=3)
    est = AutoCalibratedBoosting(grid=[("stump", 1, cap)], n_folds=FOLDS, n_jobs=1)
    est.classes_ = np.array([0, 1])
    rows = SearchRows(np.arange(n), codes, y, y.astype(np.intp), None, False, FOLDS,
                      Folds(folds, FOLDS))  # fmt: skip
    cps = checkpoints(cap)
    with prebinned(fit.edges):
        models, oof = fit_entry(est, ("stump", 1, cap), rows, cps, FOLDS * cap, 0, FOLDS * cap)
    losses = entry_losses(est, oof, rows)
    best = int(np.argmin(smoothed(losses)))

    record = fit.info["capacity"]
    assert record["n_estimators"] == int(cps[best]) == fit.info["n_estimators"]
    assert 1 < record["n_estimators"] < cap  # an interior minimum: the rule had to choose
    curve = record["curves"][0]
    assert curve["rounds"] == cps.tolist()
    np.testing.assert_allclose(curve["loss"], losses, rtol=0, atol=1.1e-6)
    assert curve["fold_rounds"] == [int(m.n_estimators_) for m in models]
    assert record["round_cap"] == cap and record["max_rounds"] == cap
    assert record["weak_learner"] == "stump" and record["metric"] == "log_loss"
    # the served model: the boosters truncated to the rounds chosen, the map on their scores
    rounds = record["n_estimators"]
    assert fit.info["rounds"] == [rounds] * (FOLDS + 1)
    assert len(fit.model.scorer.ensemble.alphas) == rounds  # type: ignore[attr-defined]
    np.testing.assert_allclose(fit.oof.raw_positive, oof[best], rtol=0, atol=1e-12)
    for model, ensemble in zip(models, fit.fold_ensembles, strict=True):
        np.testing.assert_allclose(model.ensemble_.alphas[:rounds], ensemble.alphas, atol=1e-12)


def test_the_brier_score_can_choose_the_rounds(scheduler: str, tmp_path: Path) -> None:
    X, y = _data(2_000, seed=3)
    path = _write(X, y, tmp_path / "train", parts=2)
    fit = fit_calibrated_adaboost(scheduler, str(path), NAMES, "label", max_rounds=40,
                                  n_folds=3, metric="brier")  # fmt: skip
    record = fit.info["capacity"]
    assert record["metric"] == "brier" and 1 <= record["n_estimators"] <= 40
    assert all(0.0 < v < 0.5 for v in record["curves"][0]["loss"])  # Brier, not log loss
    with pytest.raises(InvalidInput, match="metric must be one of"):
        fit_calibrated_adaboost(scheduler, str(path), NAMES, "label", metric="auc")
    with pytest.raises(InvalidInput, match="max_rounds must be"):
        fit_calibrated_adaboost(scheduler, str(path), NAMES, "label", max_rounds=0)
