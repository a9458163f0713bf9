"""The progress hook: every boosting loop reports its rounds and can be cancelled."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from models.boosting.adaboost import AdaBoost
from models.boosting.progress import progress_callback, report
from models.exceptions import CoreError, TrainingCancelled
from models.multiclass.samme import SAMME
from models.variants.csboost.cs_logitboost import CostSensitiveLogitBoost
from models.variants.jous import JOUSBoost


def _data(n_classes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    return make_classification(
        n_samples=200, n_features=5, n_informative=3, n_classes=n_classes, random_state=0
    )


def test_report_without_callback_does_nothing() -> None:
    report(1, 2)


def test_callback_is_scoped_to_the_with_block() -> None:
    seen: list[tuple[str, int, int]] = []
    with progress_callback(lambda *a: seen.append(a)):
        report(3, 10, phase="calibrating")
    report(4, 10)
    assert seen == [("calibrating", 3, 10)]


def test_adaboost_reports_every_round() -> None:
    X, y = _data()
    seen: list[tuple[str, int, int]] = []
    with progress_callback(lambda *a: seen.append(a)):
        clf = AdaBoost(n_estimators=7, random_state=0).fit(X, y)
    assert seen[: clf.n_estimators_] == [("boosting", t, 7) for t in range(clf.n_estimators_)]


def _cancel_at(round_: int):  # type: ignore[no-untyped-def]
    def callback(phase: str, done: int, total: int) -> None:
        if done >= round_:
            raise TrainingCancelled(f"stopped at {phase} {done}/{total}")

    return callback


@pytest.mark.parametrize(
    ("estimator", "n_classes"),
    [
        (AdaBoost(n_estimators=20), 2),
        (CostSensitiveLogitBoost(n_estimators=20), 2),
        (SAMME(n_estimators=20), 3),
        (JOUSBoost(n_estimators=5, delta=4), 2),
    ],
)
def test_every_loop_can_be_cancelled(estimator: object, n_classes: int) -> None:
    X, y = _data(n_classes)
    with progress_callback(_cancel_at(2)), pytest.raises(TrainingCancelled, match="stopped at"):
        estimator.fit(X, y)  # type: ignore[attr-defined]
    assert not hasattr(estimator, "ensemble_")


def test_cancellation_is_a_core_error_not_a_value_error() -> None:
    assert issubclass(TrainingCancelled, CoreError)
    assert not issubclass(TrainingCancelled, ValueError)


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_cross_fitting_counts_all_fits_as_one_steady_run(n_classes: int, n_jobs: int) -> None:
    from models.boosting.calibrated import CalibratedBoosting
    from models.multiclass.calibrated import CalibratedMulticlass

    X, y = _data(n_classes)
    seen: list[tuple[str, int, int]] = []
    if n_classes == 2:
        clf = CalibratedBoosting(AdaBoost(n_estimators=6), split="kfold", n_folds=4, n_jobs=n_jobs)
    else:
        clf = CalibratedMulticlass(
            SAMME(n_estimators=6), calibration_split="kfold", n_folds=4, n_jobs=n_jobs
        )
    with progress_callback(lambda *a: seen.append(a)):
        clf.fit(X, y)
    rounds = [(done, total) for phase, done, total in seen if phase == "boosting"]
    # 4 fold fits + the final fit, 6 rounds each (none stops early on these data)
    if n_jobs == 1:
        assert rounds == [(t, 30) for t in range(30)]
    else:  # concurrent fits: one count that never goes back, one report per round
        done = [d for d, _ in rounds]
        assert len(rounds) == 30 and {t for _, t in rounds} == {30}
        assert done == list(range(30))


def test_fit_part_passes_other_phases_and_cancellation_through() -> None:
    from models.boosting.progress import fit_part

    seen: list[tuple[str, int, int]] = []
    with progress_callback(lambda *a: seen.append(a)), fit_part(1, 2):
        report(3, 10, phase="quantiles")
        report(3, 10)
    assert seen == [("quantiles", 3, 10), ("boosting", 13, 20)]
    with progress_callback(_cancel_at(12)), fit_part(1, 2), pytest.raises(TrainingCancelled):
        report(2, 10)
    with fit_part(0, 3):  # no callback installed: nothing to scale, nothing raised
        report(1, 10)
