"""HTTP schemas (pydantic). Names end in Create/Out/Request/Response."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, NotRequired, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator
from typing_extensions import TypedDict

from app.services.model_registry.service import ModelView, VersionView
from app.services.training.algorithms import weak_learner_names

Label = int | str | bool
Number = float | None  # None (JSON null) is a missing value
MAX_INT = 2**31 - 1  # integers stored by the registry are 32-bit: larger ones are refused
MAX_SEED = 2**32 - 1  # numpy's seeds are unsigned 32-bit integers
NUL_MESSAGE = "text must not contain NUL characters (\\u0000)"
#: The address of a dataset or of a batch's output: 1 to 4096 characters (docs/data.md).
DataUri = Annotated[str, Field(min_length=1, max_length=4096)]


def _nul_free(value: Any) -> Any:
    """Raise ValueError if any string in ``value`` (keys included) contains a NUL.

    PostgreSQL cannot store NUL in text or JSON columns while SQLite can: refusing it
    everywhere keeps the two databases in agreement (422, never a 500)."""
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError(NUL_MESSAGE)
    elif isinstance(value, dict):
        for k, v in value.items():
            _nul_free(k)
            _nul_free(v)
    elif isinstance(value, list | tuple):
        for v in value:
            if isinstance(v, str | dict | list | tuple):
                _nul_free(v)
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorResponse(BaseModel):
    """Every error has this shape."""

    detail: str = Field(description="What is wrong and what was expected.")
    code: str = Field(description="Stable machine-readable code, e.g. NOT_FOUND.")
    field: str | None = Field(None, description="The offending field or row, when known.")
    errors: list[dict[str, Any]] | None = Field(None, description="All validation errors.")
    evidence: dict[str, Any] | None = Field(
        None, description="PROMOTION_REFUSED: the rule, each check and the comparison."
    )


# ---------------------------------------------------------------------- training
class TrainingParams(_Strict):
    """How to train: AdaBoost + calibration (the calibrated AdaMEC model)."""

    algorithm: str | None = Field(
        None,
        max_length=64,
        description="Boosting algorithm (see `GET /v1/algorithms`). Left out: `auto` "
        "(calibrated AdaBoost, SAMME for more than two classes, that chooses its weak learner "
        "and number of rounds by cross-fitted calibrated log loss), or `adaboost` when "
        "`n_estimators`, `weak_learner` or `max_depth` is given (as before `auto` existed). "
        "`adaboost`: discrete AdaBoost trained without costs; costs are applied at predict "
        "time (AdaMEC rule).",
    )
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="Algorithm-specific parameters (e.g. training costs `c_fp`, `c_fn`) as "
        "listed by `GET /v1/algorithms`.",
    )
    n_estimators: int | None = Field(
        None,
        ge=1,
        description="Boosting rounds M (upper bound); default 100. Not with `auto`, which "
        "chooses them.",
    )
    weak_learner: str | None = Field(
        None,
        max_length=64,
        description="Weak learner (the registered ones: `GET /v1/algorithms` lists each "
        "algorithm's `weak_learners`); default `stump`. Not with `auto`, which chooses it. "
        "`oblique`: sign(w.x + b) of a weighted ridge logistic regression on all features "
        "(SAMME: the argmax class of one such fit per class), for nearly linear data. "
        "`histogram` (cs_realboost) and `linear` (cs_logitboost) are the learners of "
        "Masnadi-Shirazi & Vasconcelos (Eq. 49; Eqs. 50-53).",
        json_schema_extra=lambda schema: _weak_learner_enum(schema),
    )
    max_depth: int | None = Field(
        None,
        ge=1,
        le=8,
        description="Tree depth when weak_learner=tree; default 3. Not with `auto`.",
    )
    score: Literal["vote", "logistic"] = Field(
        "vote", description="Raw score: `vote` = s(x), Eq. 24; `logistic` = s'(x), Eq. 25."
    )
    calibration: Literal["platt", "isotonic", "beta", "venn_abers", "auto", "none"] = Field(
        "platt",
        description="Calibration map: `platt`, `isotonic`, `beta` (Kull et al. 2017), "
        "`venn_abers` (inductive Venn-ABERS, Vovk & Petej 2014), `auto` (algorithm `auto` "
        "only: the map of least out-of-fold log loss among platt, isotonic and beta, "
        "recorded in `fitted.capacity.calibration`) or `none`.",
    )
    calibration_split: Literal["holdout", "kfold"] = "kfold"
    calibration_fraction: float = Field(1 / 3, gt=0, lt=1)
    n_folds: int = Field(5, ge=2, le=20)
    evaluation_fraction: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="Stratified share of rows held out for the reported metrics and plots "
        "(never used for training or calibration); 0: no evaluation. Default null: a model "
        "with cross-fitted calibration (the default) trains on every row and is measured "
        "on its out-of-fold calibrated probabilities; others hold out 0.2.",
    )
    random_state: int | None = Field(
        0, ge=0, le=MAX_SEED, description="Seed of every split and learner (0 to 2^32 - 1)."
    )
    distributed: bool = Field(
        False,
        description="Train on the Dask cluster of COSTWISE_DASK_SCHEDULER, as a job: the "
        "cluster's workers read a `dataset` reference (Parquet file or directory under "
        "COSTWISE_DATA_ROOTS). Supported: `algorithm` `auto` (rounds of stumps chosen) or "
        "`adaboost` of stumps (`n_estimators` given, or chosen when left out), `calibration` "
        "`platt` or `isotonic`, `calibration_split` `kfold`, `score` `vote`, two classes "
        "(docs/distributed.md).",
    )

    _no_nul_params = field_validator("params", "algorithm")(_nul_free)

    @field_validator("weak_learner")
    @classmethod
    def _registered_weak_learner(cls, value: str | None) -> str | None:
        """One of the weak learners registered when the request arrives."""
        names = weak_learner_names()
        if value is not None and value not in names:
            raise ValueError(f"weak_learner must be one of {list(names)}, got {value!r}")
        return value


def _weak_learner_enum(schema: dict[str, Any]) -> None:
    """The OpenAPI document lists the weak learners registered when it is made."""
    for option in schema.get("anyOf", []):
        if option.get("type") == "string":
            option["enum"] = list(weak_learner_names())


class TrainingRequest(TrainingParams):
    """Inline training data plus parameters."""

    features: list[list[Number]] = Field(description="Rows of numeric features; null = missing.")
    labels: list[Label] = Field(description="One label per row, exactly two distinct values.")
    feature_names: list[str] | None = None
    description: str | None = Field(None, description="Sets the model's description.")
    tags: dict[str, str] | None = Field(None, description="Sets the model's tags.")

    _no_nul = field_validator("labels", "feature_names", "description", "tags")(_nul_free)


class DatasetIn(_Strict):
    """A dataset the service reads itself (see docs/data.md)."""

    uri: DataUri = Field(
        description="`file:///path` under COSTWISE_DATA_ROOTS (a file, or a directory of "
        "Parquet files), or, when an operator enables fetching in COSTWISE_DATA_PROTOCOLS "
        "(off by default: 403), an `http(s)://` URL to a public address or one allowed by "
        "COSTWISE_DATA_ALLOW_HOSTS (other fsspec schemes when installed and allowed).",
    )
    format: Literal["parquet", "csv"] | None = Field(
        None, description="Left out: from the suffix (`.parquet`, `.pq`, `.csv`, `.csv.gz`)."
    )
    label_column: str = Field(min_length=1, description="The column of the labels.")
    columns: list[str] | None = Field(
        None, description="Feature columns, in order; left out: every column but the label."
    )

    _no_nul = field_validator("uri", "label_column", "columns")(_nul_free)


class DatasetTrainingRequest(TrainingParams):
    """Training data by reference instead of inline rows, plus parameters."""

    dataset: DatasetIn
    description: str | None = Field(None, description="Sets the model's description.")
    tags: dict[str, str] | None = Field(None, description="Sets the model's tags.")

    _no_nul = field_validator("description", "tags")(_nul_free)


class MetricsOut(BaseModel):
    brier: float | None = None
    log_loss: float | None = None
    ece: float | None = None
    auc: float | None = None
    brier_curve_area: float | None = None
    n_evaluation: int = 0


def _default(f: dataclasses.Field[Any]) -> Any:
    return ... if f.default is dataclasses.MISSING else f.default  # ...: required


def view_schema(view: type, **described: Any) -> type[BaseModel]:
    """A response schema with the fields of a service's view (a dataclass), in its order
    and with its defaults; ``described`` gives some of them a pydantic ``Field``."""
    hints = get_type_hints(view)
    fields: dict[str, Any] = {
        f.name: (hints[f.name], described.get(f.name, _default(f)))
        for f in dataclasses.fields(view)
    }
    return create_model(f"{view.__name__}Fields", **fields)


_VersionFields = view_schema(
    VersionView,
    parent_version=Field(
        None,
        description="For a recalibrated version: the version whose calibration map it "
        "replaced (it shares that version's booster). Null for a trained version.",
    ),
)
_ModelFields = view_schema(
    ModelView,
    prediction_log=Field(
        description="Whether this model's predictions are logged (when the service logs "
        "at all: COSTWISE_PREDICTION_LOG)."
    ),
)


class VersionOut(_VersionFields):  # type: ignore[misc,valid-type]  # fields of VersionView
    pass


class ModelOut(_ModelFields):  # type: ignore[misc,valid-type]  # fields of ModelView
    pass


class ModelUpdate(_Strict):
    """Settings of a model (admin)."""

    prediction_log: bool = Field(
        description="Log this model's predictions (for outcomes and monitoring) or not."
    )


class ModelListResponse(BaseModel):
    models: list[ModelOut]
    total: int


class VersionListResponse(BaseModel):
    model: str
    versions: list[VersionOut]


class AliasRequest(_Strict):
    version: int = Field(ge=1, le=MAX_INT)
    note: str = Field("", max_length=1000, description="Why (kept in the alias's history).")


class AliasOut(BaseModel):
    model: str
    alias: str
    version: int


class AliasMoveOut(BaseModel):
    """One move of an alias: who (API key name and role), when, from, to, why."""

    alias: str
    from_version: int | None = Field(description="null: the alias was created by this move.")
    to_version: int | None = Field(description="null: the alias was removed by this move.")
    actor: str
    actor_role: str
    reason: str = Field(description="`manual` (PUT), `removed` (DELETE) or `promoted`.")
    note: str
    evidence: dict[str, Any] | None = Field(
        description="A promotion's rule and the comparison that satisfied it."
    )
    at: datetime


class AliasHistoryResponse(BaseModel):
    model: str
    alias: str
    moves: list[AliasMoveOut]


# ------------------------------------------------------------------- prediction
class BinaryCosts(_Strict):
    """Named binary costs; the positive class is `classes[1]` of the model."""

    c_fp: float = Field(description="Cost of a false positive.")
    c_fn: float = Field(description="Cost of a false negative (a miss).")
    c_tp: float = Field(0.0, description="Cost of a true positive.")
    c_tn: float = Field(0.0, description="Cost of a true negative.")
    c_review: float | None = Field(
        None,
        description="Cost of sending the row to review instead of deciding, whatever the "
        "truth (two-class models only). Adds a third action: the actions are `negative`, "
        "`positive` and `review`, in that order.",
    )


class RowCosts(TypedDict):
    """Binary costs of one row (a TypedDict: validated without building a model per row)."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    c_fp: float
    c_fn: float
    c_tp: NotRequired[float]
    c_tn: NotRequired[float]
    c_review: NotRequired[float]


class _CostChoice(_Strict):
    costs: BinaryCosts | None = Field(None, description="One binary cost setting.")
    cost_matrix: list[list[float]] | None = Field(
        None,
        description="K x K matrix, C[i][j] = cost of predicting j when the truth is i; "
        "with `actions`, K x A: C[i][a] = cost of taking action a when the truth is i.",
    )
    row_costs: list[RowCosts] | None = Field(
        None,
        description="One binary cost setting per row (`c_fp`, `c_fn`, optional `c_tp`, "
        "`c_tn`, `c_review` (on every row or none)): example-dependent costs, e.g. a miss "
        "costs that transaction's amount.",
    )
    row_cost_matrices: list[list[list[float]]] | None = Field(
        None,
        description="One K x K matrix per row (n x K x K), or with `actions` one K x A "
        "matrix per row (n x K x A).",
    )
    actions: list[str] | None = Field(
        None,
        description="Names of the columns of `cost_matrix` / `row_cost_matrices` (distinct): "
        "each row takes the action of least expected cost, ties to the action listed first.",
    )
    priors: list[float] | Literal["estimated"] | None = Field(
        None,
        description="Deployment class priors (in `classes` order) when they differ "
        'from the training class balance, or `"estimated"`: the latest estimate of the '
        "serving version's priors from its prediction log (`GET /v1/models/{name}/priors`); "
        "`applied_costs.priors_estimate` then names it.",
    )
    version: int | None = Field(None, ge=1, le=MAX_INT, description="Use this version.")
    alias: str | None = Field(None, description="Use the version this alias points at.")

    @model_validator(mode="after")
    def _one_cost_setting(self) -> _CostChoice:
        forms = ("costs", "cost_matrix", "row_costs", "row_cost_matrices")
        given = [k for k in forms if getattr(self, k) is not None]
        if len(given) > 1:
            raise ValueError(f"give only one of {', '.join(forms)} (got {given})")
        if self.version is not None and self.alias is not None:
            raise ValueError("give either version or alias, not both")
        return self


class RowsRequest(_CostChoice):
    """Rows to score and the costs to decide with. Without costs, errors cost 1 (0-1 loss)."""

    instances: list[list[Number]] | None = Field(None, description="Rows in feature order.")
    records: list[dict[str, Number]] | None = Field(None, description="Rows keyed by name.")
    routing_key: str | None = Field(
        None,
        min_length=1,
        max_length=256,
        description="When the alias is split (PUT .../aliases/{alias}/split): the key that "
        "chooses the arm, e.g. a customer id; the same key always gets the same arm while "
        "the split stands. Without it the arm is drawn at random per request.",
    )

    @model_validator(mode="after")
    def _one_input(self) -> RowsRequest:
        if (self.instances is None) == (self.records is None):
            raise ValueError("give exactly one of instances or records")
        return self


class PredictRequest(RowsRequest):
    """Rows to score and the costs to decide with. Without costs, errors cost 1 (0-1 loss)."""

    ids: list[str] | None = Field(
        None,
        description="Your own id of each row (e.g. the transaction id), one per row, "
        "distinct, 1-128 characters, unique per model: outcomes are reported against it. "
        "Default: the prediction log makes one. An id already logged for the model keeps "
        "its first record (the new row is answered, not logged again).",
    )
    shadow: bool = Field(
        False,
        description="Also decide the rows with the model's shadow version (PUT "
        "/v1/models/{name}/shadow) now, under the same costs and priors, and answer with "
        "its decisions in `shadow` (the served decisions are unchanged). Costs the shadow's "
        "scoring on this request's time; without it the shadow decides after the response. "
        "422 naming `shadow` when the model has none.",
    )
    explain: bool = Field(
        False,
        description="Add each row's `explanation`: the contribution of each feature to "
        "the boosting score, summing with `bias` to the `score` the calibration map took, "
        "and the probability and expected-cost margin it leads to. Two-class models whose "
        "algorithm has an exact attribution only (the default `auto` has); others are "
        "refused (INVALID_ARGUMENT naming `explain`). Costs more per row than the plain "
        "decision (docs/api.md).",
    )
    interval: bool = Field(
        False,
        description="Add each row's `interval`: `p_low` <= probabilities[1] <= `p_high`, "
        "the jackknife interval of the fold ensemble's boosters (provenance "
        "`interval_method`; its measured coverage is in docs/api.md), and `stable`: "
        "whether the decision (among actions: the action) of least expected cost is the "
        "same at both ends. Two-class fold ensembles only (the default `auto` serves one "
        "for two classes); others are refused (INVALID_ARGUMENT naming `interval`).",
    )


class ExplanationOut(BaseModel):
    """Why a row got its score (``explain: true``)."""

    bias: float = Field(
        description="The part of the score no feature accounts for: the learners' "
        "reference values (the same for every row, up to rounding)."
    )
    contributions: dict[str, float] = Field(
        description="Feature name -> its contribution to the score (x0, x1, ... for a "
        "model trained without names); bias + their sum = score, to float rounding."
    )
    score: float = Field(
        description="The raw boosting score the calibration map took (calibration.score: "
        "the vote fraction or the logistic score, the mean over folds for a fold ensemble)."
    )
    probability: float = Field(
        description="The probability of classes[1] the decision used (equal to probabilities[1])."
    )
    expected_cost_margin: float = Field(
        description="Expected cost of the second-best decision minus the chosen one's "
        "(>= 0, 0 on a tie): how far the decision is from changing, in cost units."
    )


class IntervalOut(BaseModel):
    """How sure a row's decision is (``interval: true``)."""

    p_low: float = Field(description="Low end of the interval of probabilities[1].")
    p_high: float = Field(description="High end of the interval of probabilities[1].")
    stable: bool = Field(
        description="The decision of least expected cost (among actions: the action) is "
        "the same at p_low and at p_high, hence everywhere between them."
    )


class ShadowPredictionOut(BaseModel):
    decision: Label | None
    action: str | None = None
    probabilities: list[float] | None
    expected_cost: float | None


class ShadowDecisionsOut(BaseModel):
    version: int = Field(description="The shadow version that decided.")
    alias: str | None = Field(description="The alias the shadow follows, if any.")
    predictions: list[ShadowPredictionOut] = Field(description="One per row, in row order.")


class PredictionOut(BaseModel):
    id: str | None = Field(
        description="The row's id in the prediction log (yours from `ids`, else made by "
        "the service): report its outcome with POST /v1/models/{name}/outcomes. Null "
        "when logging is off (service-wide or for this model) and no `ids` were given."
    )
    decision: Label | None = Field(
        description="The class decided. Among `actions`: the class the action taken stands "
        "for (`c_review`: `negative` -> classes[0], `positive` -> classes[1]), null for "
        "any other action."
    )
    action: str | None = Field(
        None,
        description="Among actions (`actions`, or `c_review`): the name of the action taken "
        "(least expected cost, ties to the action listed first). Null for a K x K cost "
        "setting.",
    )
    probabilities: list[float] | None = Field(
        description="Probabilities the decision used, in `classes` order (after any prior "
        "shift); null for models that decide without probabilities."
    )
    threshold: float | None = Field(
        description="Two classes: the decision is classes[1] iff probabilities[1] >= "
        "threshold. Null otherwise."
    )
    expected_cost: float | None = Field(
        description="sum_i p_i C[i][decision] (among actions: C[i][action]); null without "
        "probabilities."
    )
    explanation: ExplanationOut | None = Field(
        None, description="Present only when the request asked for it (`explain: true`)."
    )
    interval: IntervalOut | None = Field(
        None, description="Present only when the request asked for it (`interval: true`)."
    )


class CalibrationOut(BaseModel):
    method: str | None = Field(description="platt, isotonic, none, ... (the version's record).")
    split: str | None = Field(description="holdout, kfold or none: data the calibrator saw.")
    score: str | None = Field(
        None,
        description="The raw score of a binary booster that the calibration map takes or, "
        "with method `none`, that is thresholded as the probability: `vote` = s(x) (Eq. 24; "
        "uncalibrated this is AdaMEC as defined by Eq. 9/19 of Nikolaou et al.), "
        "`logistic` = s'(x) = 1/(1+exp(-2F)) (Eq. 25). null for models without one.",
    )


class RowCostsSummary(BaseModel):
    n_rows: int
    min: list[list[float]] = Field(description="Entry-wise minimum of the per-row matrices.")
    max: list[list[float]] = Field(description="Entry-wise maximum of the per-row matrices.")


class PriorEstimateRef(BaseModel):
    id: int = Field(description="The estimate's id.")
    version: int = Field(description="The version whose logged predictions it used.")
    estimated_at: str = Field(description="When it was estimated (UTC, ISO 8601).")
    since: str | None = Field(description="Window start of the predictions used, if any.")
    until: str | None = Field(description="Window end of the predictions used, if any.")
    n_rows: int = Field(description="Logged predictions used.")


class AppliedCostsOut(BaseModel):
    cost_matrix: list[list[float]] | None = Field(
        description="The one K x K matrix every row was decided with (null: per-row costs)."
    )
    row_costs: RowCostsSummary | None = Field(description="Summary of per-row costs, if any.")
    actions: list[str] | None = Field(
        None, description="The names of the cost matrix's columns when deciding among actions."
    )
    priors: list[float] | None = Field(description="Deployment priors applied, if any.")
    priors_estimate: PriorEstimateRef | None = Field(
        None, description='The recorded estimate that `"priors": "estimated"` applied.'
    )


class ResolutionOut(BaseModel):
    stale: bool = Field(description="Always true: the version was resolved from memory.")
    resolved_at: str = Field(
        description="When the version was last resolved from the registry (UTC, ISO 8601)."
    )


class ArmOut(BaseModel):
    name: Literal["champion", "canary"]
    weight: float = Field(description="The canary's share of the alias's requests.")
    sticky: bool = Field(description="Chosen by the request's routing_key (else at random).")


class SplitRequest(_Strict):
    version: int = Field(ge=1, le=MAX_INT, description="The canary version.")
    weight: float = Field(
        allow_inf_nan=False, description="Share of the alias's requests it serves, in [0, 1]."
    )


class SplitOut(BaseModel):
    model: str
    alias: str
    champion_version: int = Field(description="The alias's own version, now.")
    canary_version: int
    weight: float
    created_by: str
    created_at: datetime


class Provenance(BaseModel):
    """Where a response came from (every predict and evaluate response carries it)."""

    model: str
    version: int
    alias: str | None = Field(description="The alias that chose the version, if any.")
    calibration: CalibrationOut = Field(description="How the probabilities were calibrated.")
    cost_setting: str = Field(
        description="Where the costs came from: costs, cost_matrix, "
        "row_costs, zero_one (none given) or training (the model's own)."
    )
    decision_rule: str = Field(
        description="threshold: calibrated (or cost-free) probabilities decided at the "
        "request's costs; skew_change: an uncalibrated model trained with costs, its "
        "training skew removed before deciding (section 5.1 of Nikolaou et al.); fixed: "
        "decides only under its training costs."
    )
    applied_costs: AppliedCostsOut = Field(description="The costs and priors applied.")
    training_costs: list[list[float]] | None = Field(
        description="The cost matrix the model was trained with, if it was."
    )
    arm: ArmOut | None = Field(
        None,
        description="Present only when the alias that chose the version is split: which "
        "arm served (`champion`: the alias's version; `canary`: the split's version).",
    )
    interval_method: str | None = Field(
        None,
        description="Present only with `interval: true`: how each row's interval was made "
        "(`fold_jackknife`: the jackknife t-interval of the fold boosters' mean score, "
        "mapped through the calibration map).",
    )
    resolution: ResolutionOut | None = Field(
        None,
        description="Null normally. While the registry database is down or stalled, a "
        "version resolved recently (COSTWISE_REGISTRY_STALE_SECONDS) is served from "
        "memory: then `{stale: true, resolved_at}` says so and since when.",
    )


class PredictResponse(Provenance):
    classes: list[Label]
    predictions: list[PredictionOut]
    shadow: ShadowDecisionsOut | None = Field(
        None, description='With `"shadow": true`: the shadow version\'s decisions of the rows.'
    )


class EvaluateRequest(RowsRequest):
    labels: list[Label] = Field(description="True label of each row.")


class EvaluateResponse(Provenance):
    classes: list[Label]
    n_rows: int
    confusion_matrix: list[list[int]] = Field(
        description="Rows = truth, columns = decision (among actions: K x A, columns = the "
        "action taken, in `applied_costs.actions` order)."
    )
    total_cost: float
    mean_cost: float
    q: float | None = Field(description="Normalised cost loss Q (Eq. 26) at this cost skew.")
    skew: float | None
    brier: float | None
    accuracy: float | None = Field(description="Share of rows decided right; null among actions.")


# ------------------------------------------------------------------------ plots
class PlotInfoOut(BaseModel):
    kind: str = Field(description="brier_curve, reliability, roc or cost_curve.")
    title: str
    json_url: str = Field(description="The plot's data as JSON.")
    svg_url: str = Field(description="The plot as an SVG picture.")


class PlotListResponse(BaseModel):
    model: str
    version: int
    plots: list[PlotInfoOut]


class WhatIfCosts(BaseModel):
    c_fp: float
    c_fn: float
    c_tp: float
    c_tn: float


class WhatIfReview(BaseModel):
    c_review: float
    band: list[float] | None = Field(
        description="[low, high]: a row goes to review iff low < P(labels[1]) < high "
        "(a bound at 0 or 1 includes it); with errors dearer than correct decisions, "
        "below low it is decided negative, above high positive. Null when review never "
        "costs least."
    )
    confusion_matrix: list[list[int]] = Field(
        description="2 x 3 counts: rows = truth, columns = negative, positive, review."
    )
    reviewed: int = Field(description="Rows sent to review.")
    reviewed_share: float = Field(description="reviewed / n.")
    total_cost: float | None = Field(description="Null past the largest float64.")
    mean_cost: float


class WhatIfResponse(BaseModel):
    model: str
    version: int
    threshold: float = Field(description="A row is decided positive iff P(labels[1]) >= this.")
    confusion_matrix: list[list[int]] = Field(
        description="[[tn, fp], [fn, tp]]: rows = truth, columns = decision."
    )
    total_cost: float | None = Field(
        description="Sum of the evaluation rows' costs; null when it exceeds the largest "
        "float64 (about 1.8e308, e.g. costs near 1e308): scale the costs down (decisions "
        "do not change when all costs are multiplied by one factor)."
    )
    mean_cost: float = Field(
        description="Total cost divided by n; always a number (also when the total is null)."
    )
    accuracy: float
    n: int = Field(
        description="Evaluation rows the numbers are computed on (out of fold or held out)."
    )
    labels: list[Label] = Field(description="[negative, positive] class labels.")
    costs: WhatIfCosts
    review: WhatIfReview | None = Field(
        None,
        description="With c_review: the same rows decided among negative, positive and "
        "review (ties to the action listed first), as predict's costs.c_review decides.",
    )


class WhatIfMatrixResponse(BaseModel):
    model: str
    version: int
    labels: list[Label] = Field(description="The version's classes: the matrices' order.")
    cost_matrix: list[list[float]]
    confusion_matrix: list[list[int]] = Field(
        description="K x K counts: rows = truth, columns = decision (least expected cost)."
    )
    total_cost: float | None = Field(
        description="Sum of the evaluation rows' costs; null past the largest float64."
    )
    mean_cost: float
    accuracy: float
    n: int = Field(
        description="Evaluation rows the numbers are computed on (out of fold or held out)."
    )


class ParamOut(BaseModel):
    name: str
    type: str
    default: Any
    description: str
    range: str | None = None
    choices: list[Any] | None = None


class AlgorithmOut(BaseModel):
    name: str
    title: str
    family: str = Field(description="binary, multiclass or any (two or more classes)")
    source: str = Field(description="Paper(s) the implementation follows.")
    equations: str
    trains_with_costs: bool
    decision_rule: str = Field(
        description="How the decision is made (Table 3 of Nikolaou "
        "et al. where it applies) and how request costs enter."
    )
    calibrated_probabilities: bool = Field(
        description="Whether the probabilities that define the algorithm are calibrated "
        "estimates of P(y|x): true where the service calibrates them (the request's "
        "calibration map; `calibration: none` serves the raw score) or the algorithm "
        "constructs them (JOUS); false for P-AdaBoost (its probabilities are the "
        "uncalibrated link 1/(1+exp(-2F)) of Mease et al.) and the angle-based algorithms "
        "(no probabilities)."
    )
    properties: dict[str, bool] | None = Field(
        None,
        description="Table 4 of Nikolaou et al.: FGD-consistent, cost-consistent, "
        "asymmetry-preserving (where the paper gives them).",
    )
    params: list[ParamOut]
    weak_learners: list[str] = Field(
        description="The registered weak_learner values this algorithm trains with "
        "(docs/algorithms.md, Weak learners)."
    )
    notes: str


class AlgorithmListResponse(BaseModel):
    algorithms: list[AlgorithmOut]


class HealthResponse(BaseModel):
    status: str
    checks: dict[str, Any] = {}


# ---------------------------------------------------------------------- jobs
JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]


class JobErrorOut(BaseModel):
    code: str = Field(description="Service error code, e.g. INVALID_ARGUMENT, JOB_ABANDONED.")
    detail: str
    field: str | None = None


class JobOut(BaseModel):
    """A job: status, progress (`done` of `total`), timings, outcome."""

    id: str
    model: str
    kind: Literal["training", "batch"] = Field(
        "training", description="`training` (a version) or `batch` (batch decisions)."
    )
    status: JobStatus
    phase: str = Field(
        description="queued, binning, boosting, calibrating, evaluating, registering or done "
        "(a batch: checking, scoring, writing, done)."
    )
    done: int = Field(description="Boosting rounds done so far (a batch: rows decided).")
    total: int = Field(
        description="Boosting rounds planned, an upper bound (a batch: rows of the input, "
        "0 when unknown before reading, e.g. CSV)."
    )
    progress: float = Field(ge=0, le=1, description="Share done, 0..1.")
    attempts: int
    max_attempts: int
    cancel_requested: bool
    worker: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    timings: dict[str, float] = Field(description="Seconds spent per phase.")
    version: int | None
    version_url: str | None
    error: JobErrorOut | None
    result: dict[str, Any] | None = Field(
        None,
        description="A succeeded batch: `rows`, `decided` (rows per class), "
        "`decided_positive` (two classes), `total_expected_cost`, `output`, `partitions`, "
        "`engine` (`worker` or `dask`).",
    )

    @classmethod
    def from_view(cls, view: Any) -> JobOut:
        """From the service's ``JobView``; the version's URL is the API's to build."""
        fields = dict(vars(view))
        version = fields.get("version")
        url = None if version is None else f"/v1/models/{fields['model']}/versions/{version}"
        return cls.model_validate({**fields, "version_url": url})


class ColumnCost(_Strict):
    """A per-row cost taken from a column of the input."""

    column: str = Field(min_length=1, max_length=256, description="Input column name.")


class BatchInput(_Strict):
    """The data set to decide: a reference (see docs/data.md)."""

    uri: DataUri = Field(
        description="file:// under an allowed root (COSTWISE_DATA_ROOTS), or, when "
        "COSTWISE_DATA_PROTOCOLS enables them, http(s):// (fenced: COSTWISE_DATA_ALLOW_HOSTS) "
        "or another fsspec URL.",
    )
    format: Literal["parquet", "csv"] | None = Field(
        None, description="Default: from the suffix (.csv), else parquet."
    )
    columns: list[str] | None = Field(
        None,
        max_length=10_000,
        description="The feature columns in the model's feature order (default: the "
        "model's feature names).",
    )


class BatchOutput(_Strict):
    uri: DataUri = Field(
        description="file:// directory under an allowed root that does not exist yet; the "
        "decisions are written there as Parquet files (one per input partition).",
    )


class BatchRequestIn(_Strict):
    """Decide every row of a data set (a job). Costs: named binary costs, each a number or
    `{"column": name}` (per-row, e.g. `{"c_fn": {"column": "amount"}, "c_fp": 5}`), or one
    `cost_matrix`; without costs, 0-1 costs as for predict."""

    input: BatchInput
    output: BatchOutput
    costs: dict[Literal["c_fp", "c_fn", "c_tp", "c_tn", "c_review"], float | ColumnCost] | None = (
        Field(
            None,
            description="Named two-class costs; `c_review` (the cost of review, whatever the "
            "truth) adds the actions `negative`, `positive`, `review`.",
        )
    )
    cost_matrix: list[list[float | ColumnCost]] | None = Field(
        None,
        description='K x K, or with `actions` K x A; a cell may be `{"column": name}`: '
        "that cost per row from an input column (e.g. decline costs the amount).",
    )
    actions: list[str] | None = Field(
        None,
        description="Names of the columns of `cost_matrix`: each row takes the action of "
        "least expected cost (ties to the action listed first); the output gains an "
        "`action` column.",
    )
    priors: list[float] | None = Field(None, description="Deployment class priors.")
    version: int | None = Field(None, ge=1, le=MAX_INT, description="Use this version.")
    alias: str | None = Field(None, description="Use the version this alias points at.")
    interval: bool = Field(
        False,
        description="Also write `p_low`, `p_high` and `stable` per row (as predict's "
        "`interval: true`), and count the rows not stable in the job's result "
        "(`unstable`). Two-class fold ensembles only (the default `auto`); others are "
        "refused (INVALID_ARGUMENT naming `interval`).",
    )
    id_columns: list[str] = Field(
        default_factory=list, max_length=64, description="Input columns copied to the output."
    )
    shadow: bool = Field(
        False,
        description="Also decide every row with the model's shadow version (set by PUT "
        "/v1/models/{name}/shadow; pinned when the job is created) under the same costs and "
        "priors: the output gains `shadow_proba_<class>`, `shadow_decision` "
        "(`shadow_action`) and `shadow_expected_cost`, the job's result a `shadow` summary "
        "(its version, decisions, total expected cost, rows decided differently). 422 "
        "naming `shadow` if the model has none.",
    )

    @model_validator(mode="after")
    def _one_choice(self) -> BatchRequestIn:
        if self.costs is not None and self.cost_matrix is not None:
            raise ValueError("give either costs or cost_matrix, not both")
        if self.version is not None and self.alias is not None:
            raise ValueError("give either version or alias, not both")
        return self


class JobListResponse(BaseModel):
    jobs: list[JobOut]
    total: int


# ------------------------------------------------------------- outcomes, monitoring
class OutcomeIn(_Strict):
    id: str = Field(description="The prediction's id (`predictions[i].id` of its predict).")
    label: Label = Field(description="The true class, as in `classes` (same JSON type).")
    cost: float | None = Field(
        None,
        description="The realised cost of the decision when you know it better than the "
        "cost matrix applied (e.g. the amount lost); >= 0.",
    )


class OutcomesRequest(_Strict):
    outcomes: list[OutcomeIn] = Field(
        min_length=1, description="At most 10,000 outcomes, each id at most once."
    )


class OutcomeOut(BaseModel):
    id: str
    status: str = Field(
        description="recorded (first report), unchanged (the same report again), conflict "
        "(a different label or cost for a recorded or pending outcome: nothing changed), "
        "pending (no prediction with this id is logged yet: kept, and recorded when it is; "
        "expires after COSTWISE_PENDING_OUTCOME_SECONDS), invalid (label not a class of "
        "the version, or of any version while pending; or a negative cost) or refused "
        "(COSTWISE_PENDING_OUTCOMES_MAX outcomes of the model already pending: report it "
        "again later). Never unknown."
    )
    version: int | None = Field(description="The version that made the prediction.")
    detail: str | None = Field(description="Why, for conflict, pending, invalid and refused.")


class OutcomesResponse(BaseModel):
    model: str
    counts: dict[str, int] = Field(description="Items per status.")
    results: list[OutcomeOut] = Field(description="One per outcome, in request order.")


class ActionFigures(BaseModel):
    action: str = Field(description="The action's name.")
    taken: int = Field(description="Predictions that took it.")
    share: float = Field(description="taken / predictions (class decisions included).")
    labelled: int = Field(description="Of them, with a reported outcome.")
    realised_cost: float | None = Field(
        description="Sum over its labelled predictions of C[label][action] under the costs "
        "applied when decided, or the cost reported with the outcome."
    )
    mean_realised_cost: float | None
    expected_cost: float | None = Field(
        description="Sum of the expected costs of its labelled predictions at decision time."
    )


class MonitoringFigures(BaseModel):
    predictions: int
    labelled: int = Field(description="Predictions with a reported outcome.")
    coverage: float | None = Field(description="labelled / predictions.")
    predicted_shares: list[float] = Field(
        description="Share of each decided class (an action that stands for no class, "
        "e.g. review, is in none)."
    )
    observed_shares: list[float] | None = Field(description="Share of each reported class.")
    predicted_positive_rate: float | None = Field(description="Two classes: classes[1] share.")
    observed_positive_rate: float | None
    mean_probability: list[float] | None = Field(description="Mean probability per class.")
    mean_probability_labelled: list[float] | None = Field(
        description="The same over the labelled predictions (compare with observed_shares)."
    )
    with_interval: int = Field(
        0, description="Predictions asked with `interval: true` (their stability is logged)."
    )
    unstable: int = Field(
        0,
        description="Of those, the decisions not stable over their probability interval "
        "(a different decision at p_low than at p_high).",
    )
    realised_cost: float | None = Field(
        description="Sum over labelled predictions of C[label][decision] under the costs "
        "applied when decided, or the cost reported with the outcome."
    )
    expected_cost: float | None = Field(description="Sum of their expected costs at decision time.")
    cost_ratio: float | None = Field(description="realised_cost / expected_cost.")
    mean_realised_cost: float | None
    calibration: dict[str, Any] | None = Field(
        description="On the labelled predictions: n, brier, log_loss, ece, classwise_ece, "
        "reliability (bins: edges, count, mean_predicted, observed), spiegelhalter {z, "
        "p_value}, hosmer_lemeshow {statistic, df, p_value}, cox {intercept, slope, "
        "statistic, df, p_value}, alarm {alpha, correction, p_values, fired, by} (binary "
        "tests; null otherwise)."
    )
    calibration_alarm: bool | None = Field(
        description="A calibration test (Cox, Spiegelhalter, Hosmer-Lemeshow) below 0.01 / 3 "
        "(Bonferroni): the probabilities do not match the outcomes. Null for more than two "
        "classes or without labelled predictions."
    )
    actions: list[ActionFigures] | None = Field(
        None,
        description="Decisions among named actions (actions, c_review): per action, in "
        "order of first appearance, how often it was taken and its realised cost. Null "
        "when no prediction was decided among actions.",
    )


class MonitoringBucket(MonitoringFigures):
    start: str = Field(description="Start of the hour or day (UTC).")


class VersionMonitoring(BaseModel):
    version: int
    classes: list[Label] | None
    total: MonitoringFigures
    buckets: list[MonitoringBucket]


class MonitoringResponse(BaseModel):
    model: str
    since: str | None
    until: str | None
    bucket: str
    versions: list[VersionMonitoring]
    pending_outcomes: int = Field(
        0,
        description="Outcomes of this model reported for ids whose prediction is not "
        "logged yet (kept, joined when it is; not in any version's figures until then).",
    )


# ---------------------------------------------------------------- recalibration
#: the bounds of a window of logged predictions in a request body
Since = Annotated[
    datetime | None,
    Field(description="Predictions made at or after this time (ISO 8601; no zone: UTC)."),
]
Until = Annotated[
    datetime | None,
    Field(description="Predictions made before this time (ISO 8601; no zone: UTC)."),
]


class OutcomeWindowIn(_Strict):
    since: Since = None
    until: Until = None

    @model_validator(mode="after")
    def _ordered(self) -> OutcomeWindowIn:
        since, until = _utc(self.since), _utc(self.until)
        if since is not None and until is not None and since >= until:
            raise ValueError("since must be before until")
        return self


def _utc(t: datetime | None) -> datetime | None:
    if t is None:
        return None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t


class RecalibrationRequest(_Strict):
    """Labelled rows to refit a version's calibration map on, without retraining."""

    method: Literal["platt", "isotonic", "multinomial"] = Field(
        "platt",
        description="The new calibration map: Platt scaling or isotonic regression (per class "
        "for K > 2), or for SAMME models (the multiclass default) one multinomial softmax map "
        "of the K class scores.",
    )
    instances: list[list[Number]] | None = Field(None, description="Rows in feature order.")
    records: list[dict[str, Number]] | None = Field(None, description="Rows keyed by name.")
    labels: list[Label] | None = Field(None, description="True label of each row.")
    from_outcomes: OutcomeWindowIn | None = Field(
        None,
        description="Instead of rows: the version's logged predictions in [since, until) "
        "whose outcomes were reported, with the raw scores logged when they were made.",
    )
    holdout_fraction: float = Field(
        0.3,
        gt=0.0,
        le=0.5,
        description="Stratified share of the labelled rows kept out of the fit, on which "
        "calibration before and after is measured.",
    )
    random_state: int | None = Field(0, ge=0, le=MAX_SEED, description="Seed of that split.")


# ----------------------------------------------------------------------- priors
class PriorEstimateRequest(_Strict):
    """Which logged predictions to estimate the priors from (and record the estimate)."""

    version: int | None = Field(
        None, ge=1, le=MAX_INT, description="Default: the version served now."
    )
    since: Since = None
    until: Until = None


class PriorEstimateResponse(BaseModel):
    model: str
    id: int | None = Field(
        description="The recorded estimate's id (POST); null: computed, not recorded (GET)."
    )
    recorded: bool = Field(
        description='Whether it was recorded, i.e. is now what `"priors": "estimated"` applies.'
    )
    version: int = Field(description="The version whose logged predictions it used.")
    estimated_at: str = Field(description="When it was computed (UTC, ISO 8601).")
    since: str | None = Field(description="Window start of the predictions used, if any.")
    until: str | None = Field(description="Window end of the predictions used, if any.")
    n_rows: int = Field(description="Logged predictions used.")
    classes: list[Label]
    priors: list[float] = Field(description="Estimated deployment priors, in `classes` order.")
    train_priors: list[float] = Field(description="The version's training priors.")
    n_iter: int = Field(description="EM iterations run.")
    converged: bool = Field(description="Whether EM reached its tolerance (1e-8).")
    log_likelihood_ratio: float = Field(
        description="Log likelihood of the rows under the estimated priors minus under the "
        "training priors (section 2.3 of Saerens et al. 2002)."
    )
    p_value: float = Field(
        description="Of the likelihood-ratio test 'the priors did not change' (chi-squared, "
        "K - 1 degrees of freedom)."
    )
    first_prediction_at: str | None
    last_prediction_at: str | None


# ---------------------------------------------------------- champion and challenger
class CompareSide(BaseModel):
    version: int
    alias: str | None


class CompareResponse(BaseModel):
    """Realised cost of b against a (differences are b - a: negative, b is cheaper)."""

    model: str
    a: CompareSide
    b: CompareSide
    since: str | None
    until: str | None
    mode: Literal["paired", "unpaired"] = Field(
        description="`paired`: shadow pairs (same prediction ids); `unpaired`: split traffic."
    )
    confidence: float
    assumptions: str = Field(description="What the interval assumes (and the alternative).")
    labelled_pairs: int = Field(description="Labelled shadow pairs (0 when unpaired).")
    pairs_by_direction: dict[str, int] | None = None
    labelled: dict[str, int] | None = Field(None, description="Unpaired: labelled rows per side.")
    cost_difference: dict[str, Any] | None = Field(
        description="mean_difference (b - a) with [low, high] at `confidence`, the method, "
        "degrees of freedom, standard error, and needed_rows: labelled pairs (per arm when "
        "unpaired) at which the interval would exclude zero at the observed effect."
    )
    verdict: str
    disagreements: dict[str, Any] | None = Field(
        description="Paired: rows decided differently, their share, and the realised cost "
        "of a's and of b's decisions on them."
    )
    versions: dict[str, dict[str, Any]] = Field(
        description="Per side: labelled, realised_cost, mean_realised_cost, expected_cost, "
        "cost_ratio (realised / expected), brier, log_loss, ece."
    )
    bucket: Literal["hour", "day"] = Field(description="The width of the series' buckets.")
    series: list[dict[str, Any]] = Field(
        description="Per bucket with labelled rows (UTC, oldest first, by the served "
        "prediction's time): `start`, and for `a` and `b` their `labelled` rows, "
        "`realised_cost` and `mean_realised_cost` (paired: the same rows on both sides)."
    )


class PromotionRuleIn(_Strict):
    min_labelled_pairs: int = Field(
        200, ge=2, le=MAX_INT, description="At least this many labelled rows behind the interval."
    )
    max_cost_difference: float = Field(
        0.0,
        allow_inf_nan=False,
        description="The upper end of the interval of mean(cost_b - cost_a) must be below this.",
    )
    max_ece_increase: float = Field(
        0.02, ge=0, allow_inf_nan=False, description="ECE of the candidate minus the current's."
    )
    confidence: float = Field(0.95, ge=0.5, lt=1.0)
    mode: Literal["auto", "paired", "unpaired"] = "auto"


class PromoteRequest(_Strict):
    candidate: str | int = Field(
        description="The version to promote: a number, an alias or model:version."
    )
    rule: PromotionRuleIn = Field(default_factory=PromotionRuleIn)
    since: datetime | None = Field(None, description="Window of the evidence (default: all).")
    until: datetime | None = None
    note: str = Field("", max_length=1000, description="Why (kept in the alias's history).")


class PromoteResponse(BaseModel):
    model: str
    alias: str
    from_version: int
    to_version: int
    evidence: dict[str, Any] = Field(description="The rule, each check and the comparison.")


class ShadowRequest(_Strict):
    version: int | None = Field(None, ge=1, le=MAX_INT, description="A fixed shadow version.")
    alias: str | None = Field(
        None,
        pattern=r"^[A-Za-z][A-Za-z0-9_\-]{0,63}$",
        description="Or an alias, followed: moving it moves the shadow.",
    )


class ShadowOut(BaseModel):
    model: str
    version: int | None
    alias: str | None
    resolved_version: int | None = Field(description="The version the shadow decides with now.")
    enabled: bool = Field(description="false: COSTWISE_SHADOW_QUEUE_ROWS=0 in this process.")
    counts: dict[str, int] = Field(
        description="This process's shadow rows since start (all models): written, "
        "duplicate, dropped (queue full), skipped (served by the shadow itself), failed, "
        "queued."
    )
