"""Typed answers of the costwise API (frozen dataclasses) and the costs a request takes.

Each dataclass mirrors one response schema of ``/openapi.json``. Fields the client does
not know yet (a newer server) are kept in ``extra`` rather than dropped or refused.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, fields, is_dataclass
from dataclasses import field as dc_field
from datetime import datetime
from functools import cache
from typing import Any, Literal, NotRequired, TypedDict, TypeVar, Union, cast, get_args, get_origin
from typing import get_type_hints as _hints

Label = int | str | bool
JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]
FINISHED_JOB_STATUSES = frozenset({"succeeded", "failed", "cancelled"})

T = TypeVar("T")


class Costs(TypedDict):
    """Named binary costs; the positive class is ``classes[1]`` of the model."""

    c_fp: float
    c_fn: float
    c_tp: NotRequired[float]
    c_tn: NotRequired[float]
    c_review: NotRequired[float]  # the cost of review: adds the actions negative/positive/review


class TrainingParams(TypedDict, total=False):
    """Training parameters (see ``GET /v1/algorithms``); every one is optional."""

    algorithm: str
    params: dict[str, Any]
    n_estimators: int
    weak_learner: str  # one the server registers: GET /v1/algorithms lists each algorithm's
    max_depth: int
    score: Literal["vote", "logistic"]
    calibration: Literal["platt", "isotonic", "beta", "venn_abers", "auto", "none"]
    calibration_split: Literal["holdout", "kfold"]
    calibration_fraction: float
    n_folds: int
    evaluation_fraction: float | None
    random_state: int | None
    distributed: bool  # on the server's Dask cluster, from a Parquet dataset (a job)


@dataclass(frozen=True)
class Answer:
    """What every answer holds besides its documented fields: those a newer server sent
    that this client does not know yet (kept, never dropped or refused)."""

    extra: dict[str, Any] = dc_field(default_factory=dict, repr=False, kw_only=True)


@dataclass(frozen=True)
class Health(Answer):
    status: str
    checks: dict[str, Any] = dc_field(default_factory=dict)


@dataclass(frozen=True)
class Model(Answer):
    name: str
    description: str
    tags: dict[str, str]
    latest_version: int | None
    aliases: dict[str, int]
    created_at: datetime
    updated_at: datetime
    prediction_log: bool = True


@dataclass(frozen=True)
class ModelPage(Answer):
    models: list[Model]
    total: int


@dataclass(frozen=True)
class Version(Answer):
    model: str
    version: int
    status: str
    algorithm: str
    params: dict[str, Any]
    calibration: dict[str, Any]
    data: dict[str, Any]
    metrics: dict[str, Any]
    training_seconds: float
    artifact_sha256: str
    artifact_size: int
    aliases: list[str]
    created_at: datetime
    parent_version: int | None = None  # recalibrated from this version (shares its booster)


@dataclass(frozen=True)
class PriorEstimate(Answer):
    """Deployment class priors estimated from a version's logged probabilities (EM)."""

    model: str
    id: int | None  # None: computed by GET, not recorded
    version: int
    estimated_at: str
    since: str | None
    until: str | None
    n_rows: int
    classes: list[Label]
    priors: list[float]
    train_priors: list[float]
    n_iter: int
    converged: bool
    log_likelihood_ratio: float
    p_value: float
    first_prediction_at: str | None = None
    last_prediction_at: str | None = None
    recorded: bool = False  # True: what predict's priors="estimated" now applies


@dataclass(frozen=True)
class Alias(Answer):
    model: str
    alias: str
    version: int


@dataclass(frozen=True)
class Explanation(Answer):
    """Why a row got its score (predict with ``explain=True``): ``bias`` plus the
    ``contributions`` (feature name -> value) sum to ``score``, the raw boosting score."""

    bias: float
    contributions: dict[str, float]
    score: float
    probability: float
    expected_cost_margin: float


@dataclass(frozen=True)
class Interval(Answer):
    """How sure a row's decision is (predict with ``interval=True``): ``p_low <=
    probabilities[1] <= p_high``, and ``stable``: the same decision at both ends."""

    p_low: float
    p_high: float
    stable: bool


@dataclass(frozen=True)
class Prediction(Answer):
    decision: Label | None  # None: among actions, an action that stands for no class
    probabilities: list[float] | None
    threshold: float | None
    expected_cost: float | None
    id: str | None = None  # the row's id in the prediction log (report outcomes with it)
    action: str | None = None  # among actions: the name of the action taken
    explanation: Explanation | None = None  # asked for with explain=True
    interval: Interval | None = None  # asked for with interval=True


@dataclass(frozen=True)
class Calibration(Answer):
    method: str | None
    split: str | None
    # the booster's raw score (vote = s(x), Eq. 24; logistic = s'(x), Eq. 25), None if none
    score: str | None = None


@dataclass(frozen=True)
class RowCostsSummary(Answer):
    """Entry-wise ``min`` and ``max`` of the per-row cost matrices of ``n_rows`` rows."""

    n_rows: int
    min: list[list[float]]
    max: list[list[float]]


@dataclass(frozen=True)
class AppliedCosts(Answer):
    cost_matrix: list[list[float]] | None
    row_costs: RowCostsSummary | None
    priors: list[float] | None
    # the server's recorded prior estimate applied by ``priors="estimated"`` (id, version,
    # estimated_at, since, until, n_rows); None otherwise
    priors_estimate: dict[str, Any] | None = None
    actions: list[str] | None = None  # the cost matrix's columns when deciding among actions


@dataclass(frozen=True)
class Resolution(Answer):
    """Set when the version was resolved from the server's memory while its registry
    database was down or stalled (``stale`` is then always true)."""

    stale: bool
    resolved_at: str


@dataclass(frozen=True)
class Provenance(Answer):
    """Where a decision came from: version (and alias), calibration, rule, costs applied."""

    model: str
    version: int
    alias: str | None
    calibration: Calibration
    cost_setting: str
    decision_rule: str
    applied_costs: AppliedCosts
    training_costs: list[list[float]] | None
    resolution: Resolution | None = dc_field(default=None, kw_only=True)
    # when the alias is split: {"name": "champion" | "canary", "weight", "sticky"}
    arm: dict[str, Any] | None = dc_field(default=None, kw_only=True)
    # with interval=True: how each row's interval was made ("fold_jackknife")
    interval_method: str | None = dc_field(default=None, kw_only=True)


@dataclass(frozen=True)
class PredictResponse(Provenance):
    """Decisions, one per row, and their provenance."""

    classes: list[Label]
    predictions: list[Prediction]
    # with shadow=True: {"version", "alias", "predictions": [{decision, action,
    # probabilities, expected_cost}]}, the shadow version's decisions of the same rows
    shadow: dict[str, Any] | None = None


@dataclass(frozen=True)
class Evaluation(Provenance):
    """What deciding labelled rows cost, and the provenance of those decisions."""

    classes: list[Label]
    n_rows: int
    confusion_matrix: list[list[int]]
    total_cost: float | None  # None: over the largest float (costs near 1e308)
    mean_cost: float
    q: float | None
    skew: float | None
    brier: float | None
    accuracy: float | None  # None among actions


@dataclass(frozen=True)
class AlgorithmParam(Answer):
    name: str
    type: str
    default: Any
    description: str
    range: str | None = None
    choices: list[Any] | None = None


@dataclass(frozen=True)
class Algorithm(Answer):
    name: str
    title: str
    family: str
    source: str
    equations: str
    trains_with_costs: bool
    decision_rule: str
    calibrated_probabilities: bool
    properties: dict[str, bool] | None
    params: list[AlgorithmParam]
    notes: str
    weak_learners: list[str] = dc_field(default_factory=list, kw_only=True)


@dataclass(frozen=True)
class ApiKey(Answer):
    id: int
    name: str
    role: str
    prefix: str
    active: bool
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


@dataclass(frozen=True)
class CreatedKey(ApiKey):
    """A new key: ``key`` is the secret, returned by the service this once only."""

    key: str = dc_field(repr=False)


@dataclass(frozen=True)
class JobError(Answer):
    code: str
    detail: str
    field: str | None = None


@dataclass(frozen=True)
class Job(Answer):
    """A job: status, phase, progress (``done`` of ``total``), result.

    ``kind`` is ``training`` (``version`` is the registered version) or ``batch``
    (``result`` holds ``rows``, ``decided``, ``decided_positive``,
    ``total_expected_cost``, ``output``; ``done``/``total`` count rows).
    """

    id: str
    model: str
    status: str
    phase: str
    done: int
    total: int
    progress: float
    attempts: int
    max_attempts: int
    cancel_requested: bool
    worker: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    timings: dict[str, float]
    version: int | None
    version_url: str | None
    error: JobError | None
    kind: str = "training"
    result: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        """True once the job succeeded, failed or was cancelled (it will not change)."""
        return self.status in FINISHED_JOB_STATUSES


@dataclass(frozen=True)
class JobPage(Answer):
    jobs: list[Job]
    total: int


@dataclass(frozen=True)
class Plot(Answer):
    kind: str
    title: str
    json_url: str
    svg_url: str


@dataclass(frozen=True)
class WhatIf(Answer):
    """The decision at given costs replayed on a version's held-out predictions."""

    model: str
    version: int
    threshold: float
    confusion_matrix: list[list[int]]
    total_cost: float | None  # None: over the largest float (costs near 1e308)
    mean_cost: float
    accuracy: float
    n: int
    labels: list[Label]
    costs: dict[str, float]
    # asked with c_review: the review band [low, high], counts by truth and action, rows
    # reviewed and cost (None without c_review)
    review: dict[str, Any] | None = None


@dataclass(frozen=True)
class OutcomeResult(Answer):
    """What happened to one reported outcome: ``status`` is recorded, unchanged,
    conflict, pending (kept until its prediction is logged), invalid or refused
    (``detail`` says why)."""

    id: str
    status: str
    version: int | None
    detail: str | None


@dataclass(frozen=True)
class OutcomesReport(Answer):
    model: str
    counts: dict[str, int]
    results: list[OutcomeResult]


@cache
def _field_types(cls: type) -> dict[str, Any]:
    hints = _hints(cls)
    return {f.name: hints[f.name] for f in fields(cls) if f.name != "extra"}


def _convert(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(tp) if a is not type(None)]
        return _convert(options[0], value) if len(options) == 1 else value
    if origin is list and isinstance(value, list):
        (item,) = get_args(tp)
        return [_convert(item, v) for v in value]
    if tp is datetime and isinstance(value, str):
        return datetime.fromisoformat(value)
    if isinstance(tp, type) and is_dataclass(tp):
        return from_json(tp, value)
    return value


def from_json(cls: type[T], data: Any) -> T:
    """Build the dataclass ``cls`` from a decoded JSON object (unknown keys go to ``extra``).

    Raises ``TypeError`` or ``ValueError`` when ``data`` does not have the documented shape.
    """
    if not isinstance(data, dict):
        raise TypeError(f"expected a JSON object for {cls.__name__}, got {type(data).__name__}")
    known = _field_types(cast(type, cls))
    values = {k: _convert(tp, data[k]) for k, tp in known.items() if k in data}
    extra = {k: v for k, v in data.items() if k not in known}
    return cast(T, cast(Any, cls)(**values, extra=extra))
