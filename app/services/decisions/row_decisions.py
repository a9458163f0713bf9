"""The decision of a block of rows under a cost setting: what predict does, in one place.

:class:`app.services.prediction.predictor.Predictor` (``/v1`` predict and evaluate, ``/v2`` infer)
and batch decisions (:mod:`app.services.batch`, in the worker or on Dask workers) both
call :func:`decide_rows`, so a row gets the same probabilities, decision, threshold and
expected cost whichever door it came through. No SQL and no web code here: it runs on
Dask workers with only the numpy-only :class:`models.inference.model.InferenceModel`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from app.errors import InvalidArgument
from app.services.common.core_errors import core_errors
from app.services.decisions.request_costs import CostSetting
from models.decisions.actions import decide_actions
from models.decisions.rule import Decisions, decide
from models.inference.model import InferenceModel

__all__ = ["RowDecisions", "decide_rows"]


class RowDecisions(NamedTuple):
    proba: np.ndarray | None  # None for models that decide without probabilities
    decisions: Decisions
    setting: CostSetting  # what was applied ("training" for fixed-rule models without costs)
    raw: np.ndarray | None  # the raw scores the calibration map took, when it has one


def decide_rows(
    model: InferenceModel,
    X: np.ndarray,
    setting: CostSetting,
    priors: Sequence[float] | None,
    *,
    cost_field: str | None = None,
    priors_field: str = "priors",
) -> RowDecisions:
    """Probabilities, least-expected-cost decisions, the cost setting and the raw scores.

    ``X`` is a checked float64 feature matrix; ``setting`` a validated cost setting
    (:func:`app.services.decisions.request_costs.cost_setting`); ``priors`` deployment class priors
    or None. ``fixed``-rule models decide only under their training costs: other costs or
    priors are refused (``INVALID_ARGUMENT`` naming ``cost_field`` / ``priors_field``).
    """
    if model.rule == "fixed":  # decides only under its training costs: never ignore costs
        if setting.actions is not None:
            field = cost_field or setting.source
            raise InvalidArgument(
                f"{field}: this model decides only under its training costs (rule fixed); "
                "it cannot decide among actions",
                field=field,
            )
        if priors is not None:
            raise InvalidArgument(
                f"{priors_field}: this model decides only under its training "
                "conditions; deployment priors cannot be applied",
                field=priors_field,
            )
        if setting.source == "zero_one":  # no costs given: the model's own
            setting = CostSetting(np.asarray(model.training_costs, np.float64), "training")
        field = cost_field or setting.source
        with core_errors(field if setting.source != "training" else None):
            return RowDecisions(None, model.decide(X, setting.matrix), setting, None)
    with core_errors(priors_field):
        proba, raw = model.scored_proba(X, priors, validated=True)
    with core_errors(cost_field or "costs"):
        if setting.actions is not None:
            return RowDecisions(proba, _actions(proba, setting), setting, raw)
        return RowDecisions(proba, decide(proba, setting.matrix, validated=True), setting, raw)


def _actions(proba: np.ndarray, setting: CostSetting) -> Decisions:
    """Decisions among the setting's actions: the action index per row, and the class it
    stands for (-1: none) as ``labels_index``."""
    chosen = decide_actions(proba, setting.matrix, validated=True)
    classes = np.asarray(setting.action_classes, dtype=np.int64)
    return Decisions(classes[chosen.action_index], chosen.expected_cost, None, chosen.action_index)
