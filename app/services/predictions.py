"""Values that go into and come out of :class:`app.services.predictor.Predictor`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.services.costs import Costs
from app.services.evaluation import RequestMetrics
from app.services.provenance import Provenance
from models.decisions import Decisions
from models.inference import InferenceModel


@dataclass(frozen=True)
class Resolved:
    model: str
    version: int
    alias: str | None
    sha256: str
    version_id: int
    stale_since: float | None = None  # epoch seconds: served from memory, database down


@dataclass(frozen=True)
class Rows:
    """Rows of a request in one of its forms: JSON rows, records, or a decoded matrix."""

    instances: Sequence[Sequence[float | None]] | None = None
    records: Sequence[Mapping[str, float | None]] | None = None
    matrix: np.ndarray | None = None  # float64, (n, d): an already decoded tensor
    field: str | None = None  # how error messages name the rows (default: the form's name)


@dataclass(frozen=True)
class CostRequest:
    """The cost setting of a request (at most one form) and deployment priors.

    ``cost_field`` / ``priors_field`` name them in error messages when the request
    spells them differently (e.g. ``parameters.cost_matrix`` or a ``costs`` tensor).
    """

    costs: Costs | None = None
    cost_matrix: Sequence[Sequence[float]] | np.ndarray | None = None
    row_costs: Sequence[Costs] | None = None
    cost_array: np.ndarray | None = None  # layout told by its shape (see cost_setting)
    cost_layout: str | None = None
    priors: Sequence[float] | None = None
    cost_field: str | None = None
    priors_field: str = "priors"


@dataclass(frozen=True)
class Prediction:
    resolved: Resolved
    classes: tuple[Any, ...]
    proba: np.ndarray | None  # None for models that decide without probabilities
    decisions: Decisions
    provenance: Provenance


@dataclass(frozen=True)
class Evaluation:
    resolved: Resolved
    classes: tuple[Any, ...]
    metrics: RequestMetrics
    provenance: Provenance


@dataclass(frozen=True)
class Loaded:
    """A cached model and the facts of its version that every response reports."""

    model: InferenceModel
    calibration: dict[str, Any]
