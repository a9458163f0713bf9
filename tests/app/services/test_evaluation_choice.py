"""Which rows measure a new version: out of fold by default, a true hold-out when asked."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.datasets import make_classification

from app.services.training import TrainingData, TrainingSpec, fit_model
from app.services.training.spec import Evaluation, estimator_of, evaluation_of


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, Evaluation(True, 0.0)),  # auto: always cross-fitted
        ({"n_estimators": 10}, Evaluation(True, 0.0)),  # calibrated AdaBoost, 5-fold
        ({"n_estimators": 10, "calibration_split": "holdout"}, Evaluation(False, 0.2)),
        ({"n_estimators": 10, "calibration": "none"}, Evaluation(False, 0.2)),
        ({"algorithm": "jous", "n_estimators": 5}, Evaluation(False, 0.2)),
        ({"n_estimators": 10, "evaluation_fraction": 0.3}, Evaluation(False, 0.3)),
        ({"evaluation_fraction": 0.25}, Evaluation(False, 0.25)),  # auto, asked for a hold-out
        ({"n_estimators": 10, "evaluation_fraction": 0.0}, Evaluation(False, 0.0)),
    ],
)
def test_the_evaluation_of_a_spec(fields: dict[str, Any], expected: Evaluation) -> None:
    spec = TrainingSpec(**fields)
    assert evaluation_of(spec, estimator_of(spec)) == expected


def test_an_explicit_fraction_is_a_true_hold_out_and_the_default_trains_on_every_row() -> None:
    X, y = make_classification(300, 5, random_state=0)
    data = TrainingData(X, y)
    held = fit_model(data, TrainingSpec(n_estimators=10, evaluation_fraction=0.2))
    assert held.metrics["evaluation"] == "holdout" and held.metrics["n_evaluation"] == 60
    assert held.calibration["n_boost"] == 240  # the held-out rows trained nothing
    oof = fit_model(data, TrainingSpec(n_estimators=10))
    assert oof.metrics["evaluation"] == "out_of_fold" and oof.metrics["n_evaluation"] == 300
    assert oof.calibration["n_boost"] == 300
    kinds = [p.kind for p in oof.plots]
    assert kinds == ["brier_curve", "reliability", "roc", "cost_curve", "heldout"]
    heldout = next(p for p in oof.plots if p.kind == "heldout").data
    assert heldout["evaluation"] == "out_of_fold" and len(heldout["y"]) == 300
    assert np.isclose(oof.metrics["accuracy"], np.mean((np.asarray(heldout["p"]) >= 0.5) == y))
