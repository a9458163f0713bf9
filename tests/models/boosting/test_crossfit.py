"""The shared cross-fitting helper: parallel fits give the same models as sequential ones."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from sklearn.datasets import make_classification

from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.boosting.crossfit import cross_fit, run_parallel
from models.boosting.progress import progress_callback, report
from models.exceptions import InvalidInput, TrainingCancelled, TrainingError
from models.inference.artifacts import dump_model
from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.samme import SAMME


def _data(k: int = 2, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(n, 6, n_informative=4, n_classes=k, random_state=1)
    X[::17, 2] = np.nan
    return X, y


@pytest.mark.parametrize("weak_learner", ["stump", "tree"])
def test_parallel_folds_give_bit_identical_binary_models(weak_learner: str) -> None:
    X, y = _data()

    def fit(n_jobs: int) -> CalibratedBoosting:
        booster = AdaBoost(15, weak_learner=weak_learner, max_depth=2)
        return CalibratedBoosting(booster, split="kfold", random_state=3, n_jobs=n_jobs).fit(X, y)

    one, two = fit(1), fit(2)
    assert dump_model(one.to_inference())[1] == dump_model(two.to_inference())[1]  # same sha
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))
    assert one.calibration_info_ == two.calibration_info_


def test_parallel_folds_give_bit_identical_multiclass_models() -> None:
    X, y = _data(3)

    def fit(n_jobs: int) -> CalibratedMulticlass:
        return CalibratedMulticlass(
            SAMME(12), calibration_split="kfold", random_state=3, n_jobs=n_jobs
        ).fit(X, y)

    one, two = fit(1), fit(2)
    assert dump_model(one.to_inference())[1] == dump_model(two.to_inference())[1]
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))


def test_cross_fit_scores_every_row_with_a_model_that_never_saw_it() -> None:
    X, y = _data()
    classes, y_index = np.unique(y, return_inverse=True)
    cf = cross_fit(lambda: AdaBoost(5), X, y, y_index, classes, n_folds=4, random_state=0,
                   keep_folds=True)  # fmt: skip
    assert len(cf.fold_models) == 4 and cf.info["n_folds"] == 4
    for model, (train, test) in zip(cf.fold_models, cf.folds, strict=True):
        assert not set(train) & set(test)
        np.testing.assert_array_equal(cf.scores[test], model.score_samples(X[test]))
    assert sorted(np.concatenate([t for _, t in cf.folds]).tolist()) == list(range(len(y)))


def test_run_parallel_passes_the_callers_context_and_uses_threads() -> None:
    seen: list[tuple[str, int, int]] = []
    threads: set[str] = set()
    barrier = threading.Barrier(2, timeout=10)

    def task(i: int) -> int:
        threads.add(threading.current_thread().name)
        barrier.wait()  # both tasks run at the same time, or this times out
        report(i, 2)
        return i * 10

    with progress_callback(lambda *a: seen.append(a)):
        out = run_parallel([lambda: task(0), lambda: task(1)], n_jobs=2)
    assert out == [0, 10]
    assert sorted(d for _, d, _ in seen) == [0, 1]
    assert len(threads) == 2


def test_run_parallel_raises_the_first_failure_and_cancellation() -> None:
    def fail() -> None:
        raise TrainingError("fold 2 failed")

    with pytest.raises(TrainingError, match="fold 2"):
        run_parallel([lambda: 1, fail, lambda: 3], n_jobs=2)

    def cancel(phase: str, done: int, total: int) -> None:
        raise TrainingCancelled("time limit")

    X, y = _data()
    clf = CalibratedBoosting(AdaBoost(5), split="kfold", n_jobs=2)
    with progress_callback(cancel), pytest.raises(TrainingCancelled):
        clf.fit(X, y)
    with pytest.raises(InvalidInput, match="n_jobs"):
        run_parallel([lambda: 1], n_jobs=0)


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("k", [2, 3])
def test_stratified_subsample_draws_the_rows_of_stratified_shuffle_split(seed: int, k: int) -> None:
    from sklearn.model_selection import StratifiedShuffleSplit

    from models.boosting.crossfit import stratified_subsample

    rng = np.random.default_rng(seed)
    y = rng.choice(k, size=5000, p=np.linspace(1.0, 2.0, k) / np.linspace(1.0, 2.0, k).sum())
    for rows in (k, 333, 2000, 4990):
        split = StratifiedShuffleSplit(n_splits=1, train_size=rows, random_state=seed)
        want = np.sort(next(split.split(np.zeros(len(y)), y))[0])
        got = stratified_subsample(y, rows, seed)
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError):  # a class of one row: scikit-learn's refusal, as before
        stratified_subsample(np.r_[np.zeros(50, dtype=int), 1], 10, 0)
