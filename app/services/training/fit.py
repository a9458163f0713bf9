"""Fitting: the catalog's estimator trained, measured (out of fold or on held-out rows),
ready to register."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.services.common.core_errors import core_errors
from app.services.decisions.evaluation import (
    OUT_OF_FOLD,
    class_indices,
    evaluation_metrics,
    out_of_fold_metrics,
)
from app.services.plots.precompute import PlotRow, plot_rows, plot_rows_from
from app.services.training.spec import (
    TrainingData,
    TrainingSpec,
    checked_algorithm,
    estimator_of,
    evaluation_of,
    evaluation_split,
)
from models.boosting.prebinned import fit_prebinned, raw_space_model
from models.boosting.progress import report
from models.catalog.algorithms import AlgorithmSpec, trained_booster
from models.inference.fold_ensemble import FoldEnsembleScorer
from models.inference.model import InferenceModel
from models.inference.scorers import BinaryScorer

_REQUEST_COSTS = {
    "threshold": "the request's costs (one setting, a matrix or one per row) decide on these "
    "probabilities by least expected cost",
    "skew_change": "uncalibrated scores of a model trained with costs: the training skew is "
    "removed (odds times z_tr / (1 - z_tr)), then the request's costs decide (change-of-skew "
    "rule, section 5.1 of Nikolaou et al.)",
    "fixed": "decides only under its training cost matrix (or a positive multiple); other "
    "costs and deployment priors are refused with 422",
}


@dataclass(frozen=True)
class FittedModel:
    """What training produced: the served model and the facts recorded beside it."""

    inference: InferenceModel
    metrics: dict[str, Any]
    calibration: dict[str, Any]
    fitted: dict[str, Any]
    decision: dict[str, Any]
    plots: list[PlotRow] = field(default_factory=list)  # plot rows of the evaluation rows


def fit_model(data: TrainingData, spec: TrainingSpec, max_rounds: int | None = None) -> FittedModel:
    """Fit the algorithm (with calibration) and measure it (:func:`evaluation_of`).

    The estimator comes from the catalog (:func:`models.catalog.algorithms.build_estimator`):
    plain binary boosters in their calibrated form, self-serving estimators with the
    request's calibration settings. By default a model whose calibration is cross-fitted
    trains on every row and is measured on its out-of-fold calibrated probabilities
    (:class:`models.boosting.crossfit.OutOfFold`); with ``evaluation_fraction`` (or without
    out-of-fold probabilities) on a stratified held-out share. ``max_rounds``
    (COSTWISE_MAX_ROUNDS) caps the rounds an estimator chooses itself.
    """
    algorithm, _ = checked_algorithm(data, spec)
    estimator = estimator_of(spec, algorithm, max_rounds)
    evaluation = evaluation_of(spec, estimator)
    train_idx, eval_idx = evaluation_split(data.y, evaluation.fraction, spec.random_state)
    edges = data.edges  # set: data.X holds bin codes (read from a dataset reference)
    if edges is not None and len(eval_idx) == 0:
        X, y = data.X, data.y  # every row trains: no copy of the codes
    else:
        X, y = data.X[train_idx], data.y[train_idx]
    del train_idx  # (all rows: arange(n), 76 MiB on 10,000,000 rows, not kept through the fit)
    report(0, 0, "binning")  # until the first boosting round: binning and set-up
    with core_errors("labels"):
        if edges is None:
            estimator.fit(X, y)
        else:
            fit_prebinned(estimator, X, y, edges)
        calibration_info = dict(
            getattr(estimator, "calibration_info_", None) or {"method": spec.calibration}
        )
        inference = estimator.to_inference(data.feature_names)
        if edges is not None:  # splits from code space to feature values, same answers
            inference = raw_space_model(inference, edges)
        if isinstance(inference.scorer, BinaryScorer | FoldEnsembleScorer):  # s or s', recorded
            calibration_info.setdefault("score", inference.scorer.score_kind)
        report(0, 0, "evaluating")
        capacity = getattr(estimator, "capacity_", None)
        oof = getattr(estimator, "oof_", None) if evaluation.out_of_fold else None
        if oof is not None and inference.rule == "threshold":
            y_oof = y if oof.all_rows else y[oof.rows]
            y_index = class_indices(inference, y_oof)  # once, for the metrics and the plots
            if inference.n_classes == 2:  # the columns of P(y = 1) and the score, no copies
                proba, raw = oof.positive, oof.raw_positive
            else:
                proba, raw = oof.proba, oof.raw
            metrics = out_of_fold_metrics(inference, y_oof, proba, y_index=y_index)
            plots = plot_rows_from(
                inference, y_oof, proba, raw, capacity=capacity, evaluation=OUT_OF_FOLD,
                y_index=y_index,
            )  # fmt: skip
            del proba, raw, y_index
        else:
            X_eval = data.X[eval_idx]
            if edges is not None:
                X_eval = edges.decode(X_eval)  # values in the same bins: same answers
            metrics = evaluation_metrics(inference, X_eval, data.y[eval_idx])
            plots = plot_rows(inference, X_eval, data.y[eval_idx], capacity=capacity)
    booster = trained_booster(estimator)
    fitted: dict[str, Any] = {
        k: (v.item() if isinstance(v, np.generic) else v)
        for k in ("n_estimators_", "termination_reason_")
        if isinstance(v := getattr(booster, k, None), int | str | np.integer)
    }
    if capacity is not None:  # what the automatic capacity chose, and its validation curves
        fitted["capacity_"] = capacity
    return FittedModel(
        inference,
        metrics,
        calibration_info,
        {k.rstrip("_"): v for k, v in fitted.items()},
        decision_facts(inference, algorithm),
        plots,
    )


def decision_facts(inference: InferenceModel, algorithm: AlgorithmSpec) -> dict[str, Any]:
    """How the version decides (recorded on it as ``params.decision``)."""
    costs = inference.training_costs
    return {
        "rule": inference.rule,
        "trains_with_costs": algorithm.trains_with_costs,
        "training_costs": None if costs is None else costs.tolist(),
        "paper_rule": algorithm.decision_rule,
        "request_costs": _REQUEST_COSTS[inference.rule],
    }
