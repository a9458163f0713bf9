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


def test_out_of_fold_metrics_from_the_binary_columns_and_in_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.services.decisions import evaluation

    X, y = make_classification(600, 5, random_state=2)
    spec = TrainingSpec(n_estimators=10, random_state=0)
    fitted = fit_model(TrainingData(X, y), spec)
    estimator = estimator_of(spec).fit(X, y)
    oof = estimator.oof_
    whole = evaluation.out_of_fold_metrics(fitted.inference, y, oof.proba)
    assert whole == fitted.metrics  # what training recorded: from the columns, the same
    assert evaluation.out_of_fold_metrics(fitted.inference, y, oof.positive) == whole
    monkeypatch.setattr(evaluation, "METRIC_BLOCK_ROWS", 7)  # 86 blocks
    blocks = evaluation.out_of_fold_metrics(fitted.inference, y, oof.positive)
    assert blocks["accuracy"] == whole["accuracy"]
    assert blocks["mean_cost_at_training_costs"] == pytest.approx(
        whole["mean_cost_at_training_costs"], rel=1e-12
    )
    assert {k: v for k, v in blocks.items() if k != "mean_cost_at_training_costs"} == {
        k: v for k, v in whole.items() if k != "mean_cost_at_training_costs"
    }


def test_class_indices_of_integer_labels_by_search_and_of_others_by_lookup() -> None:
    from types import SimpleNamespace

    from app.services.decisions.evaluation import class_indices

    model: Any = SimpleNamespace(classes=(-3, 2, 10))
    assert class_indices(model, np.array([10, -3, 2, 2, 10])).tolist() == [2, 0, 1, 1, 2]
    assert class_indices(model, np.array([2, 10], dtype=np.int8)).tolist() == [1, 2]
    unsorted: Any = SimpleNamespace(classes=(10, -3))
    assert class_indices(unsorted, np.array([-3, 10, -3])).tolist() == [1, 0, 1]
    named: Any = SimpleNamespace(classes=("no", "yes"))
    assert class_indices(named, np.array(["yes", "no"])).tolist() == [1, 0]
    for bad in (np.array([2, 5]), np.array([11]), np.array([-4])):
        with pytest.raises(KeyError):
            class_indices(model, bad)
