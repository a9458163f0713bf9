"""Use case: cost-sensitive predictions and evaluations from registered versions.

The hot path resolves the version in one short read (so an alias moved on any replica
takes effect on the next request) and reuses loaded models from an in-memory LRU
cache keyed by the artifact's sha256. A blob is verified against its digest before it
is ever used, and a model that fails verification is never cached.

Serving through registry outages: every successful resolution is remembered (name,
version / alias -> version) with its time. When the database is down or stalled (the
look-up raises :class:`app.errors.Unavailable`, at once while
:class:`app.db.DatabaseHealth` says it is down), a resolution at most
``stale_seconds`` old whose model is still loaded is used instead, marked stale
(:attr:`Resolved.stale_since`); otherwise the 503 stands. ``stale_seconds=0`` disables it.

The prediction log: every predicted row (with its id, raw score, probabilities, decision
and costs) is handed to :class:`app.services.feedback.prediction_log.PredictionLogWriter`, which
writes it off the request path; a predict only waits for the log when the writer's
queue is full (bounded, then 503 without its decisions: an answered row is always logged;
see COSTWISE_PREDICTION_LOG_OVERFLOW).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

import numpy as np
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.db import DatabaseHealth
from app.errors import InvalidArgument, Unavailable
from app.registry.repository import DEFAULT_ALIAS, lookup_ref, reading
from app.services.common.core_errors import core_errors
from app.services.common.inputs import (
    check_limits,
    features_matrix,
    named_columns_matrix,
    records_matrix,
)
from app.services.decisions.evaluation import RequestMetrics, labels_index, request_metrics
from app.services.decisions.request_costs import CostSetting
from app.services.decisions.row_decisions import RowDecisions, decide_rows
from app.services.feedback.prediction_log import (
    LogEntry,
    PredictionLogWriter,
    check_ids,
    ids_list,
    new_ids,
)
from app.services.feedback.priors import PriorEstimates
from app.services.model_registry.stored_models import read_stored
from app.services.prediction import intervals
from app.services.prediction.explanations import RowExplanations, check_request, explain_rows
from app.services.prediction.intervals import RowIntervals, interval_rows
from app.services.prediction.provenance import Provenance, calibration_summary
from app.services.prediction.request import CostRequest, DecisionRequest, Rows
from models.decisions.rule import Decisions
from models.inference.model import InferenceModel, check_features

__all__ = ["Evaluation", "Prediction", "Predictor", "Resolved", "ShadowHook"]


#: Called with every logged predict: (served version, feature matrix, cost setting, priors,
#: row ids). The challenger room's shadow scorer (app.services.challenger.shadow) queues it
#: for the model's shadow version, off the request path; the wiring sets it.
ShadowHook = Callable[
    ["Resolved", np.ndarray, CostSetting, Sequence[float] | None, list[str]], None
]


@dataclass(frozen=True)
class Arm:
    """Which arm of an alias's traffic split served a request (see
    :mod:`app.services.challenger.split`)."""

    name: str  # champion | canary
    weight: float  # the canary's share
    sticky: bool  # chosen by the request's routing_key (else at random)


class Router(Protocol):
    """The alias's traffic split, as the predictor asks it (set by the wiring)."""

    def route(
        self, name: str, alias: str | None, routing_key: str | None
    ) -> tuple[int | None, Arm | None]: ...


class ShadowAnswer(Protocol):
    """What the shadow version decided for a request's rows (``"shadow": true``)."""

    @property
    def version(self) -> int: ...

    alias: str | None
    decisions: RowDecisions


class ShadowNow(Protocol):
    """The shadow scorer as a predict with ``"shadow": true`` uses it (set by the wiring):
    decide the rows now (raising InvalidArgument naming ``shadow`` when it cannot), then
    record the decisions against the logged ids."""

    def decide_now(
        self, served: Resolved, X: np.ndarray, setting: CostSetting, priors: Sequence[float] | None
    ) -> ShadowAnswer: ...

    def record_now(self, decided: Any, ids: Sequence[str]) -> None: ...


# ---------------------------------------------------- values in and out
@dataclass(frozen=True)
class Resolved:
    model: str
    version: int
    alias: str | None
    sha256: str
    version_id: int
    stale_since: float | None = None  # epoch seconds: served from memory, database down
    model_id: int = 0
    log: bool = True  # the model's prediction-log switch
    arm: Arm | None = None  # the arm of the alias's traffic split that served, if split


@dataclass(frozen=True)
class Prediction:
    resolved: Resolved
    classes: tuple[Any, ...]
    proba: np.ndarray | None  # None for models that decide without probabilities
    decisions: Decisions
    provenance: Provenance
    ids: list[str] | None = None  # the rows' ids: logged, or given by the client
    shadow: ShadowAnswer | None = None  # "shadow": true: the shadow version's decisions
    explanations: RowExplanations | None = None  # asked for with explain
    intervals: RowIntervals | None = None  # asked for with interval


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


class Predictor:
    """Serves decisions from registered versions, with a bounded model cache."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        cache_size: int = 64,
        max_rows: int = 100_000,
        max_features: int = 10_000,
        stale_seconds: float = 0.0,
        health: DatabaseHealth | None = None,
        log: PredictionLogWriter | None = None,
        log_features: bool = False,
        estimates: PriorEstimates | None = None,
    ) -> None:
        self._sessions = sessions
        self.estimates = estimates  # "priors": "estimated" (None: not available)
        self.log = log  # None: the prediction log is off (COSTWISE_PREDICTION_LOG=false)
        self.log_features = log_features
        self.shadow: ShadowHook | None = None  # set by the wiring when shadow scoring is on
        self.shadow_now: ShadowNow | None = None  # the same, for "shadow": true
        self.router: Router | None = None  # aliases' traffic splits (set by the wiring)
        self._engine: Engine = sessions.kw["bind"]  # the hot path reads on a bare connection
        self._cache: OrderedDict[str, Loaded] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.max_rows = max_rows
        self.max_features = max_features
        self.stale_seconds = stale_seconds
        self._health = health
        # (name, version, alias) asked -> (answer, epoch seconds it was resolved)
        self._recent: OrderedDict[tuple[str, int | None, str | None], tuple[Resolved, float]]
        self._recent = OrderedDict()
        self._recent_size = 16 * cache_size

    # ------------------------------------------------------------- resolution
    def shadow_ref(self, name: str) -> tuple[int | None, str | None]:
        """The shadow ``name`` names (set by PUT .../shadow): ``(version, None)``,
        ``(None, alias)``, or ``(None, None)`` without one (a batch asks it)."""
        with reading(self._sessions) as reg:
            model = reg.get_model(name)
            return model.shadow_version, model.shadow_alias

    def resolve(self, name: str, version: int | None = None, alias: str | None = None) -> Resolved:
        """The version to serve; from memory (stale) only while the database is down."""
        try:
            if self._health is not None:
                self._health.check()
            resolved = self._resolve(name, version, alias)
        except Unavailable:
            stale = self._stale(name, version, alias)
            if stale is None:
                raise
            return stale
        if self.stale_seconds > 0:
            with self._lock:
                key = (name, version, alias)
                self._recent[key] = (resolved, time.time())
                self._recent.move_to_end(key)
                while len(self._recent) > self._recent_size:
                    self._recent.popitem(last=False)
        return resolved

    def _resolve(self, name: str, version: int | None, alias: str | None) -> Resolved:
        ref = lookup_ref(self._engine, name, version, alias)
        if ref is None:  # let the repository say what exists instead
            with reading(self._sessions) as reg:
                ref = reg.resolve_ref(name, version=version, alias=alias)
        return Resolved(
            name,
            ref.version,
            ref.alias,
            ref.sha256,
            ref.id,
            model_id=ref.model_id,
            log=ref.prediction_log,
        )

    def _stale(self, name: str, version: int | None, alias: str | None) -> Resolved | None:
        """A recent resolution whose model is loaded, marked stale; None if there is none."""
        if self.stale_seconds <= 0:
            return None
        with self._lock:
            found = self._recent.get((name, version, alias))
            if found is None:
                return None
            resolved, at = found
            if time.time() - at > self.stale_seconds or resolved.sha256 not in self._cache:
                return None
        return replace(resolved, stale_since=at)

    def load(self, resolved: Resolved) -> InferenceModel:
        return self.entry(resolved).model

    def entry(self, resolved: Resolved) -> Loaded:
        """The model of ``resolved`` and its calibration record, from the cache if there."""
        with self._lock:
            found = self._cache.get(resolved.sha256)
            if found is not None:
                self._cache.move_to_end(resolved.sha256)
                return found
        with reading(self._sessions) as reg:
            version = reg.get_version(resolved.model, resolved.version)
            stored = read_stored(reg, version)
            calibration = calibration_summary(version.calibration)
        loaded = Loaded(replace(stored, sha256=resolved.sha256).load(), calibration)
        with self._lock:
            self._cache[resolved.sha256] = loaded
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return loaded

    @property
    def cached(self) -> int:
        return len(self._cache)

    # ---------------------------------------------------------------- helpers
    def _matrix(self, model: InferenceModel, rows: Rows) -> np.ndarray:
        if rows.matrix is not None and rows.columns is not None:
            field = rows.field or "records"
            check_limits(len(rows.matrix), 0, max_rows=self.max_rows, max_features=0, field=field)
            return named_columns_matrix(
                rows.matrix, rows.columns, model.feature_names, mismatch=rows.mismatch, field=field
            )
        if rows.matrix is not None:
            field = rows.field or "features"
            n, d = rows.matrix.shape
            check_limits(n, d, max_rows=self.max_rows, max_features=self.max_features, field=field)
            if d != model.n_features:
                raise InvalidArgument(
                    f"{field}: expected {model.n_features} features per row (shape "
                    f"[N, {model.n_features}]), got shape [{n}, {d}]",
                    field=field,
                )
            with core_errors(field):
                return check_features(rows.matrix, model.n_features)
        field = "instances" if rows.instances is not None else "records"
        data: Sequence[Any] = rows.instances if rows.instances is not None else rows.records or []
        check_limits(
            len(data), 0, max_rows=self.max_rows, max_features=self.max_features, field=field
        )
        if rows.instances is not None:
            return features_matrix(rows.instances, field="instances", n_features=model.n_features)
        return records_matrix(rows.records or [], model.feature_names)

    def _decide(
        self, model: InferenceModel, X: np.ndarray, costs: CostRequest
    ) -> tuple[np.ndarray | None, Decisions, CostSetting, np.ndarray | None]:
        """Probabilities, decisions, the cost setting and the raw scores (or None)."""
        return decide_rows(
            model,
            X,
            costs.setting(len(X), len(model.classes)),
            costs.priors,  # type: ignore[arg-type]  # "estimated" was replaced by _estimated
            cost_field=costs.cost_field,
            priors_field=costs.priors_field,
        )

    def _estimated(self, r: Resolved, costs: CostRequest) -> CostRequest:
        """``"priors": "estimated"`` replaced by the latest estimate of the version."""
        if not isinstance(costs.priors, str):
            return costs
        field = costs.priors_field
        if costs.priors != "estimated" or self.estimates is None:
            raise InvalidArgument(
                f'{field}: expected a list of class priors or "estimated", got '
                f"{costs.priors!r:.40}",
                field=field,
            )
        applied = self.estimates.applied(r.model, r.version, r.version_id, field)
        return replace(costs, priors=applied.priors, priors_estimate=applied.ref)

    def _run(self, name: str, req: DecisionRequest) -> tuple[Resolved, Loaded, np.ndarray]:
        canary, arm = None, None
        if self.router is not None and req.version is None:  # before resolving: one read
            canary, arm = self.router.route(name, req.alias or DEFAULT_ALIAS, req.routing_key)
        if canary is not None:  # the canary's version, still named by the alias
            alias = req.alias or DEFAULT_ALIAS
            resolved = replace(self.resolve(name, canary), alias=alias, arm=arm)
        else:
            resolved = self.resolve(name, req.version, req.alias)
            if arm is not None:
                resolved = replace(resolved, arm=arm)
        loaded = self.entry(resolved)
        return resolved, loaded, self._matrix(loaded.model, req.rows)

    @staticmethod
    def _provenance(r: Resolved, m: Loaded, setting: CostSetting, c: CostRequest) -> Provenance:
        trained = None if m.model.training_costs is None else m.model.training_costs.tolist()
        return Provenance.of(
            r.model,
            r.version,
            r.alias,
            m.calibration,
            m.model.rule,
            setting,
            None if isinstance(c.priors, str) else c.priors,
            trained,
            stale_since=r.stale_since,
            priors_estimate=c.priors_estimate,
            arm=None if r.arm is None else vars(r.arm),
        )

    # -------------------------------------------------------------- use cases
    def predict(self, name: str, req: DecisionRequest) -> Prediction:
        """Decide every row; rows are logged (and get ids) unless logging is off.

        ``req.ids`` are the client's ids of the rows (one per row, distinct; see
        :func:`app.services.feedback.prediction_log.check_ids`), else the log makes its own.
        """
        resolved, loaded, X = self._run(name, req)
        ids = req.ids
        if ids is not None:
            check_ids(ids, len(X), req.ids_field)
        costs = self._estimated(resolved, req.costs)
        if req.explain:
            check_request(loaded.model)
        if req.interval:
            intervals.check_request(loaded.model)
        proba, decisions, setting, raw = self._decide(loaded.model, X, costs)
        explained = None
        if req.explain:  # before the log: a refused request logs nothing
            explained = explain_rows(loaded.model, X, proba, raw, setting)
        provenance = self._provenance(resolved, loaded, setting, costs)
        priors = None if isinstance(costs.priors, str) else costs.priors
        bounds = None
        if req.interval:
            bounds = interval_rows(loaded.model, X, proba, setting, priors)
            provenance = replace(provenance, interval_method=bounds.method)
        shadow = None
        if req.shadow:  # decided before anything is logged: a refusal fails the request whole
            if self.shadow_now is None:
                raise InvalidArgument(
                    "shadow: shadow scoring is off in this process (COSTWISE_SHADOW_QUEUE_ROWS=0)",
                    field="shadow",
                )
            shadow = self.shadow_now.decide_now(resolved, X, setting, priors)
        stable = None if bounds is None else bounds.stable
        logged = self._log(resolved, X, ids, proba, raw, decisions, setting, priors, stable)
        if logged is not None and shadow is not None and self.shadow_now is not None:
            self.shadow_now.record_now(shadow, logged)
        elif logged is not None and self.shadow is not None and setting.actions is None:
            self.shadow(resolved, X, setting, priors, logged)  # queued, not run here
        return Prediction(
            resolved, loaded.model.classes, proba, decisions, provenance,
            logged or ids_list(ids), shadow, explained, bounds,
        )  # fmt: skip

    def _log(
        self,
        r: Resolved,
        X: np.ndarray,
        ids: Sequence[str] | None,
        proba: np.ndarray | None,
        raw: np.ndarray | None,
        decisions: Decisions,
        setting: CostSetting,
        priors: Sequence[float] | None,
        stable: np.ndarray | None = None,
    ) -> list[str] | None:
        """Hand the rows to the log writer; their ids, or None if not logged. Waits
        (bounded) while the writer's queue is full, then raises Unavailable (503): the
        decisions are not returned unless their rows are queued.

        Models that decide without probabilities (``fixed`` rule) are not logged:
        monitoring needs probabilities. Decisions among actions (``actions``,
        ``c_review``) are logged with the action taken, the names and their (K, A) costs."""
        if self.log is None or not r.log or proba is None or not r.model_id:
            return None
        row_ids = list(ids) if ids is not None else new_ids(len(X))
        entry = LogEntry(
            model_id=r.model_id,
            version_id=r.version_id,
            version=r.version,
            alias=r.alias,
            created_at=datetime.now(UTC),
            ids=row_ids,
            raw=raw,
            proba=proba,
            decision=decisions.labels_index,
            threshold=decisions.threshold,
            expected_cost=decisions.expected_cost,
            cost_setting=setting.source,
            costs=setting.matrix,
            priors=priors,
            features=X if self.log_features else None,
            stable=stable,
            action=decisions.action_index,
            actions=setting.actions,
        )
        self.log.submit(entry)
        return row_ids

    def evaluate(self, name: str, req: DecisionRequest) -> Evaluation:
        """Decide the labelled rows (``req.labels``) as predict would, and score them."""
        resolved, loaded, X = self._run(name, req)
        y = labels_index(req.labels or [], loaded.model.classes, len(X))
        costs = self._estimated(resolved, req.costs)
        proba, decisions, setting, _ = self._decide(loaded.model, X, costs)
        metrics = request_metrics(y, proba, decisions, setting)
        provenance = self._provenance(resolved, loaded, setting, costs)
        return Evaluation(resolved, loaded.model.classes, metrics, provenance)
