"""What a batch checks against the model before any row is read: the feature columns and
the cost setting (forms, names, fixed values; per-row values are checked row by row when
the batch runs), through predict's own decision code."""

from __future__ import annotations

import numpy as np

from app.errors import InvalidArgument
from app.services.batch.scoring import BatchCosts
from app.services.decisions.action_costs import multiclass_review
from app.services.decisions.request_costs import REVIEW_COST_NAMES, cost_setting
from app.services.decisions.row_decisions import decide_rows
from models.inference.model import InferenceModel

__all__ = ["check_costs", "check_model_costs", "features_of"]


def check_costs(costs: BatchCosts, n_classes: int) -> None:
    """What can be checked before any row is read: the forms, names and fixed values."""
    named = {*costs.fixed, *costs.named_columns}
    if costs.cost_matrix is not None and named:
        raise InvalidArgument(
            "costs: give either named costs (c_fp, c_fn, ...) or cost_matrix, not both",
            field="costs",
        )
    if costs.actions is not None and costs.cost_matrix is None:
        raise InvalidArgument(
            f"actions: actions need their costs as a {n_classes} x {len(costs.actions)} "
            "cost_matrix (rows = truth, one column per action; a cell may be "
            '{"column": name})',
            field="actions",
        )
    unknown = sorted(named - set(REVIEW_COST_NAMES))
    if unknown:
        raise InvalidArgument(
            f"costs: unknown cost {unknown[0]!r}; expected some of {list(REVIEW_COST_NAMES)}",
            field="costs",
        )
    if "c_review" in named and n_classes != 2:
        raise multiclass_review("costs.c_review", n_classes)
    if named and not {"c_fp", "c_fn"} <= named:
        missing = sorted({"c_fp", "c_fn"} - named)
        raise InvalidArgument(
            f'costs: {missing[0]} is required (a number, or {{"column": name}})',
            field="costs",
        )
    if costs.cost_matrix is not None and costs.columns:  # cells from columns: zeros probe
        costs.setting(1, n_classes, {key: np.zeros(1) for key in costs.columns})
    elif costs.columns:  # the per-row values are checked row by row when the job runs
        for name, value in costs.fixed.items():
            if not (np.isfinite(value) and value >= 0):
                raise InvalidArgument(
                    f"costs.{name}: cost must be finite and >= 0, got {value}", field="costs"
                )
    else:
        costs.setting(1, n_classes)


def features_of(model: InferenceModel, columns: list[str] | None) -> list[str]:
    """The feature columns: ``columns``, else the model's feature names."""
    names = list(columns) if columns is not None else model.feature_names
    if names is None:
        raise InvalidArgument(
            "input.columns: this model was trained without feature names; list its "
            f"{model.n_features} feature columns of the input, in training order",
            field="input.columns",
        )
    if len(names) != model.n_features:
        raise InvalidArgument(
            f"input.columns: the model takes {model.n_features} features, got {len(names)} columns",
            field="input.columns",
        )
    if len(set(names)) != len(names):
        raise InvalidArgument("input.columns: a column is named twice", field="input.columns")
    return list(names)


def check_model_costs(model: InferenceModel, costs: BatchCosts) -> None:
    """``costs`` (and priors) as this model's predict would take them; raises 4xx errors."""
    check_costs(costs, model.n_classes)
    if costs.named_columns and model.n_classes != 2:
        raise InvalidArgument(
            "costs: per-row costs from columns are for two-class models; send cost_matrix",
            field="costs",
        )
    # one row of zeros through predict's own decision code: the cost form against this
    # model (fixed-rule models refuse other costs), and the priors; per-row values are
    # checked row by row when the batch runs
    if costs.cost_matrix is not None and costs.columns:  # the shape and names: zeros probe
        setting = costs.setting(1, model.n_classes, {k: np.zeros(1) for k in costs.columns})
    elif costs.columns:
        if model.rule == "fixed":
            raise InvalidArgument(
                "costs: this model decides only under its training costs; per-row costs "
                "need a model with calibrated probabilities",
                field="costs",
            )
        if costs.priors is None:
            return
        setting = cost_setting(1, model.n_classes)  # the priors only
    else:
        setting = costs.setting(1, model.n_classes)
    probe = np.zeros((1, model.n_features))
    decide_rows(model, probe, setting, costs.priors, cost_field="costs")
