"""How sure each decision is: the ``interval`` option of a predict (and of a batch).

:func:`interval_rows` gives, per decided row, an interval ``[p_low, p_high]`` for the
probability of ``classes[1]`` the decision used (:mod:`models.uncertainty.interval`: the
jackknife spread of the fold ensemble's boosters, through the calibration map and any
prior shift) and ``stable``: whether the decision of least expected cost, under the row's
own costs, is the same at both ends (among actions, ``actions`` or ``c_review``, the
action; :mod:`models.uncertainty.stability`).

Computed only when asked (``interval: true``). A model that cannot give an interval
(more than two classes, one booster instead of a fold ensemble, a model deciding
without probabilities) is refused with ``INVALID_ARGUMENT`` naming ``interval``,
before any row is decided or logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.errors import InvalidArgument
from app.services.common.core_errors import core_errors
from app.services.decisions.request_costs import CostSetting
from models.inference.model import InferenceModel
from models.uncertainty.interval import check_interval_model, probability_interval
from models.uncertainty.stability import stable_decisions

__all__ = ["FIELD", "RowIntervals", "check_request", "interval_rows"]

FIELD = "interval"


@dataclass(frozen=True)
class RowIntervals:
    """Per row: ``p_low <= probabilities[1] <= p_high``, and whether the decision is the
    same at both ends; ``method`` is the provenance's ``interval_method``."""

    low: np.ndarray  # (n,)
    high: np.ndarray  # (n,)
    stable: np.ndarray  # (n,) bool
    method: str


def check_request(model: InferenceModel) -> None:
    """Refuse ``interval`` for a model that cannot give one (before any row is decided)."""
    with core_errors(FIELD):
        check_interval_model(model)


def interval_rows(
    model: InferenceModel,
    X: np.ndarray,
    proba: np.ndarray | None,
    setting: CostSetting,
    priors: Sequence[float] | None,
) -> RowIntervals:
    """The intervals of decided rows ``X`` (their probabilities ``proba``, the cost setting
    and the deployment priors that decided them)."""
    check_request(model)
    if proba is None:  # never for a two-class fold ensemble; refused rather than assumed
        raise InvalidArgument(f"{FIELD}: this model has no probabilities", field=FIELD)
    with core_errors(FIELD):
        found = probability_interval(model, X, proba[:, 1], priors)
        stable = stable_decisions(
            found.low, found.high, setting.matrix, actions=setting.actions is not None
        )
    return RowIntervals(found.low, found.high, stable, found.method)
