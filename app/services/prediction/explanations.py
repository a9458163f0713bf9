"""Why each row got its decision: the ``explain`` option of a predict.

:func:`explain_rows` turns the numerical core's attribution
(:mod:`models.inference.explanation`) of a block of decided rows into what a response
reports per row: the bias and one contribution per feature, which sum to the raw score
the calibration map took (the ``score``, also what the prediction log stores), the
probabilities that score led to, and the expected-cost margin of the decision (the
expected cost of the second-best decision minus the chosen one's, in the units of the
costs: how much the decision would have to lose before it changed).

Computed only when a request asks (``explain: true``); a model that cannot explain
(more than two classes, a model deciding without probabilities, an algorithm whose
scorer or learners have no exact attribution) is refused with ``INVALID_ARGUMENT``
naming ``explain`` and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.errors import InvalidArgument
from app.services.common.core_errors import core_errors
from app.services.decisions.request_costs import CostSetting
from models.inference.explanation import check_explainable, contributions, cost_margin
from models.inference.model import InferenceModel

__all__ = ["RowExplanations", "check_request", "explain_rows", "feature_labels"]

FIELD = "explain"


@dataclass(frozen=True)
class RowExplanations:
    """Per row: ``bias + contributions.sum(1) == score`` (up to rounding), the score's
    probability of ``classes[1]`` and the expected-cost margin of the decision."""

    features: tuple[str, ...]
    bias: np.ndarray  # (n,)
    contributions: np.ndarray  # (n, d), columns in ``features`` order
    score: np.ndarray  # (n,)
    probability: np.ndarray  # (n,)
    margin: np.ndarray  # (n,)


def feature_labels(model: InferenceModel) -> tuple[str, ...]:
    """The model's feature names; ``x0, x1, ...`` for a model trained without names."""
    if model.feature_names is not None:
        return tuple(model.feature_names)
    return tuple(f"x{j}" for j in range(model.n_features))


def check_request(model: InferenceModel) -> None:
    """Refuse ``explain`` for a model that cannot explain (before any row is decided)."""
    with core_errors(FIELD):
        check_explainable(model)


def explain_rows(
    model: InferenceModel,
    X: np.ndarray,
    proba: np.ndarray | None,
    raw: np.ndarray | None,
    setting: CostSetting,
) -> RowExplanations:
    """The explanations of decided rows ``X`` (their probabilities ``proba``, the raw
    scores ``raw`` the map took, and the cost setting applied)."""
    check_request(model)
    if proba is None or raw is None or np.ndim(raw) != 1:
        raise InvalidArgument(f"{FIELD}: this model has no score to explain", field=FIELD)
    with core_errors(FIELD):
        bias, contrib = contributions(model, X)
    return RowExplanations(
        feature_labels(model),
        bias,
        contrib,
        raw,
        proba[:, 1],
        cost_margin(proba, setting.matrix),
    )
