"""The one request value every door builds: what to decide, under which costs, with which version.

``/v1`` predict and evaluate (:func:`app.api.bodies.parsing.predict_input`), ``/v2`` infer
(:func:`app.api.v2.tensors.decode`) and the CLI build a :class:`DecisionRequest` and pass
it whole to :class:`app.services.prediction.predictor.Predictor`; batch decisions
(:mod:`app.services.batch`) turn their costs into the same :class:`CostRequest` for every
block of rows. A new predict option is declared once here and once in the HTTP schema;
``tests/app/api/test_decision_request.py`` fails when a door does not map a field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.services.decisions.request_costs import Costs, CostSetting, cost_setting

__all__ = ["CostRequest", "DecisionRequest", "Rows"]

#: the forms a cost setting may take: fields of CostRequest, arguments of cost_setting
COST_FORMS = ("costs", "cost_matrix", "row_costs", "cost_array", "cost_layout")


@dataclass(frozen=True)
class Rows:
    """Rows of a request in one of its forms: JSON rows, records, or a decoded matrix."""

    instances: Sequence[Sequence[float | None]] | None = None
    records: Sequence[Mapping[str, float | None]] | None = None
    matrix: np.ndarray | None = None  # float64, (n, d): already decoded rows
    field: str | None = None  # how error messages name the rows (default: the form's name)
    # records decoded into ``matrix``: its column names, and the first record whose keys
    # differ (index, keys), if any (see app.services.common.inputs.named_columns_matrix)
    columns: tuple[str, ...] | None = None
    mismatch: tuple[int, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class CostRequest:
    """The cost setting of a request (at most one form) and deployment priors.

    ``cost_field`` / ``priors_field`` name them in error messages when the request
    spells them differently (e.g. ``parameters.cost_matrix`` or a ``costs`` tensor).
    """

    costs: Costs | None = None
    cost_matrix: Sequence[Sequence[float]] | np.ndarray | None = None
    # decoded: (n, 4) c_fp, c_fn, c_tp, c_tn, or (n, 5) with c_review
    row_costs: Sequence[Costs] | np.ndarray | None = None
    cost_array: np.ndarray | None = None  # layout told by its shape (see cost_setting)
    cost_layout: str | None = None
    priors: Sequence[float] | str | None = None  # "estimated": the latest prior estimate
    cost_field: str | None = None
    priors_field: str = "priors"
    priors_estimate: dict[str, Any] | None = None  # which estimate "estimated" applied
    # names of the columns of a (K, A) cost_matrix / cost_array: decide among actions
    actions: Sequence[str] | None = None
    actions_field: str = "actions"

    def setting(self, n_rows: int, n_classes: int) -> CostSetting:
        """The validated cost setting of ``n_rows`` rows of a ``n_classes``-class model."""
        forms = {name: getattr(self, name) for name in COST_FORMS}
        return cost_setting(
            n_rows,
            n_classes,
            field=self.cost_field,
            actions=self.actions,
            actions_field=self.actions_field,
            **forms,
        )


@dataclass(frozen=True)
class DecisionRequest:
    """One predict (or evaluate) request as the predictor takes it, whichever door it came by."""

    rows: Rows
    costs: CostRequest = field(default_factory=CostRequest)
    version: int | None = None
    alias: str | None = None
    ids: Sequence[str] | None = None  # the caller's row ids (prediction log); predict only
    ids_field: str = "ids"  # how error messages name them
    labels: Sequence[Any] | None = None  # evaluate only: the true class of each row
    # predict only: also decide with the model's shadow version, now, and answer with it
    shadow: bool = False
    # the key of a sticky traffic split (e.g. a customer id): the same key, the same arm
    routing_key: str | None = None
    explain: bool = False  # predict only: each row's explanation (prediction.explanations)
    # predict only: each row's probability interval and stable flag (prediction.intervals)
    interval: bool = False
