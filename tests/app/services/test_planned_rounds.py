"""A job's ``total`` (set when it is queued) is the round count its training reports."""

from __future__ import annotations

import pytest
from sklearn.datasets import make_classification

from app.services.training import TrainingData, TrainingSpec, fit_model, planned_rounds
from models.algorithms import get_algorithm
from models.progress import progress_callback


@pytest.mark.parametrize(
    "algorithm",
    ["adaboost", "csb2", "p_adaboost", "jous", "samme", "ovr_adaboost", "angle_adaboost"],
)
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
        algorithm=algorithm, n_estimators=5, calibration=calibration, calibration_split=split
    )
    seen: list[tuple[str, int, int]] = []
    with progress_callback(lambda *a: seen.append(a)):
        fit_model(TrainingData(X=X, y=y, feature_names=[f"f{i}" for i in range(5)]), spec)
    totals = {total for phase, _, total in seen if phase == "boosting"}
    assert totals == {planned_rounds(spec)}
    # cross-fitted calibration (binary wrapped boosters and SAMME / one-vs-rest) counts
    # its 5 fold fits and the final fit as one run
    if calibration == "platt" and split == "kfold" and algorithm not in ("jous", "angle_adaboost"):
        assert planned_rounds(spec) == 6 * 5
    else:
        assert planned_rounds(spec) == 5
    if algorithm not in ("jous", "ovr_adaboost"):  # these restart per quantile / class
        done = [d for phase, d, _ in seen if phase == "boosting"]
        assert done == sorted(done)  # one steady count, no restart per fold
