"""Use case: cost-sensitive predictions and evaluations from registered versions.

The hot path resolves the version in one short read (so an alias moved on any replica
takes effect on the next request) and reuses loaded models from an in-memory LRU
cache keyed by the artifact's sha256. A blob is verified against its digest before it
is ever used, and a model that fails verification is never cached.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.db import database_errors
from app.errors import InvalidArgument
from app.registry.repository import Registry, find_ref
from app.services._core import core_errors
from app.services.costs import Costs, CostSetting, cost_setting
from app.services.data import check_limits, features_matrix, records_matrix
from models.artifacts import load_model
from models.decisions import Decisions, decide
from models.inference import InferenceModel
from models.metrics import (
    brier_score,
    cost_confusion_matrix,
    skew,
    total_cost,
)


@dataclass(frozen=True)
class Resolved:
    model: str
    version: int
    alias: str | None
    sha256: str
    version_id: int


@dataclass(frozen=True)
class Rows:
    """Rows of a request in one of its two forms."""

    instances: Sequence[Sequence[float | None]] | None = None
    records: Sequence[Mapping[str, float | None]] | None = None


@dataclass(frozen=True)
class CostRequest:
    costs: Costs | None = None
    cost_matrix: Sequence[Sequence[float]] | None = None
    row_costs: Sequence[Costs] | None = None
    priors: Sequence[float] | None = None


@dataclass(frozen=True)
class Prediction:
    resolved: Resolved
    classes: tuple[Any, ...]
    proba: np.ndarray | None  # None for models that decide without probabilities
    decisions: Decisions
    cost_source: str
    rule: str
    training_costs: list[list[float]] | None


@dataclass(frozen=True)
class Evaluation:
    resolved: Resolved
    classes: tuple[Any, ...]
    confusion: np.ndarray
    total_cost: float
    mean_cost: float
    q: float | None
    skew: float | None
    brier: float | None
    accuracy: float


class Predictor:
    """Serves decisions from registered versions, with a bounded model cache."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        cache_size: int = 64,
        max_rows: int = 100_000,
        max_features: int = 10_000,
    ) -> None:
        self._sessions = sessions
        self._engine: Engine = sessions.kw["bind"]  # the hot path reads on a bare connection
        self._cache: OrderedDict[str, InferenceModel] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.max_rows = max_rows
        self.max_features = max_features

    # ------------------------------------------------------------- resolution
    def resolve(self, name: str, version: int | None = None, alias: str | None = None) -> Resolved:
        with database_errors(), self._engine.connect() as conn:
            ref = find_ref(conn, name, version, alias)
        if ref is None:  # let the repository say what exists instead
            with database_errors(), self._sessions() as s:
                ref = Registry(s).resolve_ref(name, version=version, alias=alias)
        return Resolved(name, ref.version, ref.alias, ref.sha256, ref.id)

    def load(self, resolved: Resolved) -> InferenceModel:
        with self._lock:
            model = self._cache.get(resolved.sha256)
            if model is not None:
                self._cache.move_to_end(resolved.sha256)
                return model
        with database_errors(), self._sessions() as s:
            reg = Registry(s)
            blob = reg.get_artifact(reg.get_version(resolved.model, resolved.version))
        with core_errors():
            model = load_model(blob, expected_sha256=resolved.sha256)
        with self._lock:
            self._cache[resolved.sha256] = model
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return model

    @property
    def cached(self) -> int:
        return len(self._cache)

    # ---------------------------------------------------------------- helpers
    def _matrix(self, model: InferenceModel, rows: Rows) -> np.ndarray:
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
    ) -> tuple[np.ndarray | None, Decisions, CostSetting]:
        setting = cost_setting(
            len(X),
            len(model.classes),
            costs=costs.costs,
            cost_matrix=costs.cost_matrix,
            row_costs=costs.row_costs,
        )
        if model.rule == "fixed":  # decides only under its training costs: never ignore costs
            if costs.priors is not None:
                raise InvalidArgument(
                    "priors: this model decides only under its training conditions; "
                    "deployment priors cannot be applied",
                    field="priors",
                )
            if setting.source == "zero_one":  # no costs given: the model's own
                setting = CostSetting(np.asarray(model.training_costs, np.float64), "training")
            with core_errors(setting.source if setting.source != "training" else None):
                return None, model.decide(X, setting.matrix), setting
        with core_errors("priors"):
            proba = model.decision_proba(X, costs.priors)
        with core_errors("costs"):
            return proba, decide(proba, setting.matrix, validated=True), setting

    # -------------------------------------------------------------- use cases
    def predict(
        self,
        name: str,
        rows: Rows,
        costs: CostRequest,
        *,
        version: int | None = None,
        alias: str | None = None,
    ) -> Prediction:
        resolved = self.resolve(name, version, alias)
        model = self.load(resolved)
        X = self._matrix(model, rows)
        proba, decisions, setting = self._decide(model, X, costs)
        costs_trained = None if model.training_costs is None else model.training_costs.tolist()
        return Prediction(
            resolved, model.classes, proba, decisions, setting.source, model.rule, costs_trained
        )

    def evaluate(
        self,
        name: str,
        rows: Rows,
        labels: Sequence[Any],
        costs: CostRequest,
        *,
        version: int | None = None,
        alias: str | None = None,
    ) -> Evaluation:
        resolved = self.resolve(name, version, alias)
        model = self.load(resolved)
        X = self._matrix(model, rows)
        if len(labels) != len(X):
            raise InvalidArgument(
                f"labels: expected one label per row ({len(X)}), got {len(labels)}", field="labels"
            )
        index = {c: i for i, c in enumerate(model.classes)}
        y = np.empty(len(labels), dtype=np.intp)
        for i, label in enumerate(labels):
            if label not in index or type(label) is not type(model.classes[index[label]]):
                raise InvalidArgument(
                    f"labels[{i}]: {label!r} is not a class of this model {list(model.classes)}",
                    field=f"labels[{i}]",
                )
            y[i] = index[label]
        proba, decisions, setting = self._decide(model, X, costs)
        k = len(model.classes)
        confusion = cost_confusion_matrix(y, decisions.labels_index, k)
        total = total_cost(y, decisions.labels_index, setting.matrix)
        q = z = None
        if k == 2 and not setting.per_row and 0 < int(confusion[1].sum()) < len(y):
            c = setting.matrix
            c_fp, c_fn = c[0, 1] - c[0, 0], c[1, 0] - c[1, 1]
            z = float(skew(c_fp, c_fn, pi_pos=float(confusion[1].sum() / len(y))))
            fnr = confusion[1, 0] / confusion[1].sum()
            fpr = confusion[0, 1] / confusion[0].sum()
            q = float(fnr * (1 - z) + fpr * z)  # Eq. 26 at the decisions made
        brier = None
        if proba is not None:
            onehot = np.zeros_like(proba)
            onehot[np.arange(len(y)), y] = 1.0
            brier = (
                float(brier_score((y == 1).astype(np.int8), proba[:, 1]))
                if k == 2
                else float(((proba - onehot) ** 2).sum(axis=1).mean())
            )
        return Evaluation(
            resolved,
            model.classes,
            confusion,
            total,
            total / len(y),
            q,
            z,
            brier,
            float((decisions.labels_index == y).mean()),
        )
