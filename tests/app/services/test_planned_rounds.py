"""A job's ``total`` (set when it is queued) is the round count its training reports.

Every fit made of several boosting loops (cross-fitted calibration, JOUS-Boost's
q-classifiers, one-vs-rest members) reports them as one steady count.
"""

from __future__ import annotations

import pytest
from sklearn.datasets import make_classification

from app.services.training import TrainingData, TrainingSpec, fit_model, planned_rounds
from models.boosting.progress import progress_callback
from models.catalog.algorithms import algorithms, get_algorithm

#: AdaCost's first learner has no positive alpha on these data (a TrainingError, tested
#: elsewhere); ``auto`` chooses its own rounds (tested below); every other algorithm of the
#: catalog is covered.
ALGORITHMS = sorted(set(algorithms()) - {"adacost", "auto"})


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize(
    ("calibration", "split"), [("platt", "kfold"), ("platt", "holdout"), ("none", "kfold")]
)
def test_planned_rounds_is_the_total_the_training_reports(
    algorithm: str, calibration: str, split: str
) -> None:
    k = 3 if get_algorithm(algorithm).family == "multiclass" else 2
    X, y = make_classification(
        n_samples=300, n_features=5, n_informative=3, n_classes=k, random_state=0
    )
    spec = TrainingSpec(
        algorithm=algorithm, n_estimators=4, calibration=calibration, calibration_split=split
    )
    seen: list[tuple[str, int, int]] = []
    with progress_callback(lambda *a: seen.append(a)):
        fit_model(TrainingData(X=X, y=y, feature_names=[f"f{i}" for i in range(5)]), spec)
    boosting = [(done, total) for phase, done, total in seen if phase == "boosting"]
    assert {total for _, total in boosting} == {planned_rounds(spec, k)}
    done = [d for d, _ in boosting]
    assert done == sorted(done) and len(set(done)) == len(done)  # steady, no restart
    per_fit = 6 if calibration == "platt" and split == "kfold" else 1  # 5 folds + final
    expected = {
        "jous": 4 * 9,  # delta - 1 = 9 q-classifiers, no calibration of their own
        "angle_adaboost": 4,  # angle-based probabilities, no calibrator
        "angle_logitboost": 4,
        "ovr_adaboost": 3 * 4 * per_fit,  # one calibrated member per class
    }.get(algorithm, 4 * per_fit)
    assert planned_rounds(spec, k) == expected


@pytest.mark.parametrize("n_classes", [2, 3])
def test_planned_rounds_of_the_automatic_capacity_is_the_total_it_reports(n_classes: int) -> None:
    X, y = make_classification(
        n_samples=300, n_features=5, n_informative=3, n_classes=n_classes, random_state=0
    )
    spec = TrainingSpec()  # the default: algorithm auto
    assert spec.algorithm == "auto"
    seen: list[tuple[str, int, int]] = []
    with progress_callback(lambda *a: seen.append(a)):
        fit = fit_model(TrainingData(X=X, y=y), spec)
    boosting = [(done, total) for phase, done, total in seen if phase == "boosting"]
    # 5 folds x (400 + 200 + 100 + 50) rounds of the grid (more classes: depth 6 x 300;
    # 50 oblique rounds), and 6 x 400 for the final stage
    search = 5 * (750 if n_classes == 2 else 950)
    assert planned_rounds(spec, n_classes) == search + 6 * 400
    assert {total for _, total in boosting} == {planned_rounds(spec, n_classes)}
    done = [d for d, _ in boosting]
    assert done == sorted(done) and done[-1] >= search  # reached the final stage
    assert 1 <= fit.fitted["n_estimators"] <= fit.fitted["capacity"]["n_estimators"]
