"""Deciding one block of a table: features and cost columns in, output columns out.

This is the part of a batch that runs wherever the rows are (the job's worker, or a Dask
worker): numpy and pyarrow only, no SQL and no web code. The decision itself is
:func:`app.services.decisions.row_decisions.decide_rows`, the very code ``/v1/.../predict`` runs,
and the costs become the predictor's own
:class:`~app.services.prediction.request.CostRequest` (``row_costs`` for costs taken from
columns), so a row is validated and decided exactly as predict
would. Error messages name the row by its position in the whole input (``first_row``
+ position in the block) and the input column a per-row cost came from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from app.errors import InvalidArgument, ServiceError
from app.services.common.core_errors import core_errors
from app.services.decisions.request_costs import REVIEW_COST_NAMES, ROW_COST_NAMES, CostSetting
from app.services.decisions.row_decisions import decide_rows
from app.services.prediction.intervals import interval_rows
from app.services.prediction.request import CostRequest
from models.inference.model import InferenceModel, check_features

__all__ = ["BatchCosts", "BatchShadow", "BlockSummary", "decide_block", "output_schema"]


@dataclass(frozen=True)
class BatchCosts:
    """The cost setting of a batch and its deployment priors.

    ``fixed`` holds named binary costs given as numbers, ``columns`` named binary costs
    taken per row from an input column (``{"c_fn": "amount"}``); both may be given
    together (e.g. ``c_fn`` from a column, ``c_fp`` fixed), ``c_review`` among them adds
    the review action. ``cost_matrix`` is one ``(K, K)`` matrix instead, or with
    ``actions`` a ``(K, A)`` one; a cell may be ``{"column": name}``: that cost per row
    from an input column (kept in ``columns`` as ``"cost_matrix[i][j]"``). Nothing: 0-1
    costs, as for predict.
    """

    fixed: Mapping[str, float] = field(default_factory=dict)
    columns: Mapping[str, str] = field(default_factory=dict)
    cost_matrix: list[list[Any]] | None = None  # numbers, or {"column": name} cells
    priors: list[float] | None = None
    actions: list[str] | None = None

    @property
    def has_actions(self) -> bool:
        """Whether the rows decide among actions (``actions``, or named costs with c_review)."""
        return self.actions is not None or "c_review" in {*self.fixed, *self.columns}

    @property
    def named_columns(self) -> dict[str, str]:
        """The named costs (c_fp, ...) taken from columns (not the cost matrix's cells)."""
        return {k: v for k, v in self.columns.items() if not k.startswith("cost_matrix[")}

    def to_json(self) -> dict[str, Any]:
        return {
            "fixed": dict(self.fixed),
            "columns": dict(self.columns),
            "cost_matrix": self.cost_matrix,
            "priors": self.priors,
            "actions": self.actions,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BatchCosts:
        return cls(
            dict(data.get("fixed") or {}),
            dict(data.get("columns") or {}),
            data.get("cost_matrix"),
            data.get("priors"),
            data.get("actions"),
        )

    @classmethod
    def of(
        cls,
        costs: Mapping[str, Any] | None = None,
        cost_matrix: list[list[Any]] | None = None,
        priors: list[float] | None = None,
        actions: list[str] | None = None,
    ) -> BatchCosts:
        """From the request's spelling: ``{"c_fn": {"column": "amount"}, "c_fp": 5}``, or a
        cost matrix whose cells are numbers or ``{"column": name}``."""
        fixed: dict[str, float] = {}
        columns: dict[str, str] = {}
        for name, value in (costs or {}).items():
            if isinstance(value, Mapping):
                columns[name] = str(value["column"])
            else:
                fixed[name] = float(value)
        for i, row in enumerate(cost_matrix or []):
            for j, cell in enumerate(row):
                if isinstance(cell, Mapping):
                    columns[f"cost_matrix[{i}][{j}]"] = str(cell["column"])
        return cls(fixed, columns, cost_matrix, priors, actions)

    def request(self, n_rows: int, columns: Mapping[str, np.ndarray] | None = None) -> CostRequest:
        """The predictor's cost request of ``n_rows`` rows (``columns``: cost name -> values
        of the per-row costs taken from the input)."""
        values = columns or {}
        if self.cost_matrix is not None and self.columns:  # cells from columns: per row
            return CostRequest(
                cost_array=self._cells(n_rows, values),
                priors=self.priors,
                cost_field="cost_matrix",
                actions=self.actions,
            )
        if self.columns:
            names = (
                REVIEW_COST_NAMES if "c_review" in {*self.fixed, *self.columns} else ROW_COST_NAMES
            )
            block = np.empty((n_rows, len(names)), dtype=np.float64)
            for i, name in enumerate(names):
                block[:, i] = values[name] if name in self.columns else self.fixed.get(name, 0.0)
            return CostRequest(row_costs=block, priors=self.priors, cost_field="costs")
        if self.fixed:
            return CostRequest(costs=dict(self.fixed), priors=self.priors, cost_field="costs")
        return CostRequest(cost_matrix=self.cost_matrix, priors=self.priors, actions=self.actions)

    def _cells(self, n_rows: int, values: Mapping[str, np.ndarray]) -> np.ndarray:
        """The per-row matrices (n, K, A) of a cost matrix with cells from columns."""
        matrix = self.cost_matrix or []
        width = len(matrix[0]) if matrix else 0
        for i, row in enumerate(matrix):
            if len(row) != width:
                raise InvalidArgument(
                    f"cost_matrix[{i}]: expected {width} cells like row 0 (one per decision), "
                    f"got {len(row)}",
                    field=f"cost_matrix[{i}]",
                )
        out = np.empty((n_rows, len(matrix), width), np.float64)
        for i, row in enumerate(matrix):
            for j, cell in enumerate(row):
                key = f"cost_matrix[{i}][{j}]"
                out[:, i, j] = values[key] if key in self.columns else float(cell)
        return out

    def setting(
        self, n_rows: int, n_classes: int, columns: Mapping[str, np.ndarray] | None = None
    ) -> CostSetting:
        """The validated cost setting of ``n_rows`` rows (``columns``: cost name -> values)."""
        return self.request(n_rows, columns).setting(n_rows, n_classes)


@dataclass(frozen=True)
class BatchShadow:
    """The model's shadow version, asked to decide a batch's rows too: its model, its
    number, and where its features are among the served version's feature columns."""

    model: InferenceModel
    version: int
    columns: tuple[int, ...]  # shadow feature j is served feature columns[j]

    @classmethod
    def of(cls, shadow: InferenceModel, version: int, served: InferenceModel) -> BatchShadow:
        """Checked against the served version: the same classes, the same features (by
        name, in any order; by position when either has no names), probabilities."""
        if list(shadow.classes) != list(served.classes) or shadow.rule == "fixed":
            raise InvalidArgument(
                f"shadow: the model's shadow, version {version}, decides classes "
                f"{list(shadow.classes)} ({shadow.rule} rule); the batch's version decides "
                f"{list(served.classes)}: a shadow must decide the same classes from "
                "probabilities",
                field="shadow",
            )
        mine, theirs = shadow.feature_names, served.feature_names
        if mine is None or theirs is None:
            if shadow.n_features != served.n_features:
                raise InvalidArgument(
                    f"shadow: the model's shadow, version {version}, takes {shadow.n_features} "
                    f"features, the batch's version {served.n_features}",
                    field="shadow",
                )
            return cls(shadow, version, tuple(range(shadow.n_features)))
        if sorted(mine) != sorted(theirs):
            raise InvalidArgument(
                f"shadow: the model's shadow, version {version}, takes the features "
                f"{list(mine)[:20]}, the batch's version {list(theirs)[:20]}",
                field="shadow",
            )
        where = {f: i for i, f in enumerate(theirs)}
        return cls(shadow, version, tuple(where[f] for f in mine))


@dataclass
class BlockSummary:
    """Running totals of a batch: rows, decisions per class index, total expected cost,
    among actions the rows that took each action (by name), with intervals
    (``interval: true``) the rows whose decision is not stable, and with a shadow its own
    totals and the rows it decided differently."""

    rows: int = 0
    per_class: dict[int, int] = field(default_factory=dict)
    expected_cost: float = 0.0
    has_cost: bool = True  # False for models that decide without probabilities
    per_action: dict[str, int] | None = None
    unstable: int | None = None
    shadow: BlockSummary | None = None
    differing: int = 0  # rows whose shadow decision (or action) differs

    def add(self, other: BlockSummary) -> None:
        if other.shadow is not None:
            self.shadow = self.shadow or BlockSummary()
            self.shadow.add(other.shadow)
            self.differing += other.differing
        self.rows += other.rows
        for k, n in other.per_class.items():
            self.per_class[k] = self.per_class.get(k, 0) + n
        if other.per_action is not None:
            mine = self.per_action = self.per_action or {}
            for name, n in other.per_action.items():
                mine[name] = mine.get(name, 0) + n
        self.expected_cost += other.expected_cost
        self.has_cost = self.has_cost and other.has_cost
        if other.unstable is not None:
            self.unstable = (self.unstable or 0) + other.unstable

    def to_json(self, classes: tuple[Any, ...]) -> dict[str, Any]:
        """What the job shows: rows, decided per class, decided positive, total cost;
        among actions also ``actions_taken`` (rows per action name; ``decided`` then
        counts the rows whose action stands for a class); with intervals ``unstable``
        (rows whose decision differs at the two ends of their interval)."""
        decided = {str(c): self.per_class.get(i, 0) for i, c in enumerate(classes)}
        out = {
            "rows": self.rows,
            "decided": decided,
            "decided_positive": self.per_class.get(1, 0) if len(classes) == 2 else None,
            "total_expected_cost": self.expected_cost if self.has_cost else None,
        }
        if self.per_action is not None:
            out["actions_taken"] = dict(self.per_action)
        if self.unstable is not None:
            out["unstable"] = self.unstable
        if self.shadow is not None:
            out["shadow"] = {
                **self.shadow.to_json(classes),
                "decided_differently": self.differing,
            }
        return out


_ROW = re.compile(r"\brow (\d+)")


def _located(exc: ServiceError, first_row: int, columns: Mapping[str, str]) -> ServiceError:
    """``exc`` with its row numbers counted from the start of the whole input, and the
    input column of each per-row cost named."""
    detail = _ROW.sub(lambda m: f"row {int(m.group(1)) + first_row}", exc.detail, count=1)
    for name, column in columns.items():
        detail = detail.replace(f"column '{name}'", f"'{name}' (input column {column!r})")
        if name.startswith("cost_matrix["):  # "entry [i][j]" of a per-row matrix
            cell = name[len("cost_matrix") :]
            detail = detail.replace(f"entry {cell}", f"entry {cell} (input column {column!r})")
            detail = detail.replace(f"C{cell}", f"C{cell} (input column {column!r})")
    return type(exc)(detail, field=exc.field, **exc.extra)


def output_schema(
    model: InferenceModel,
    id_fields: list[pa.Field],
    *,
    probabilities: bool = True,
    actions: bool = False,
    interval: bool = False,
    shadow: bool = False,
) -> pa.Schema:
    """Columns written per row: ids, ``proba_<class>``, decision, threshold, expected cost;
    among ``actions`` also ``action`` (the name; ``decision`` is then the class the action
    stands for, null for others); with ``interval`` then ``p_low``, ``p_high`` and
    ``stable`` (:mod:`app.services.prediction.intervals`). With a ``shadow``, its
    ``shadow_proba_<class>``, ``shadow_decision`` (``shadow_action``) and
    ``shadow_expected_cost`` after them."""
    fields = list(id_fields)
    if probabilities and model.rule != "fixed":
        fields += [pa.field(f"proba_{c}", pa.float64()) for c in model.classes]
    labels = pa.array(list(model.classes))
    fields += [
        pa.field("decision", labels.type),
        *([pa.field("action", pa.string())] if actions else []),
        pa.field("threshold", pa.float64()),
        pa.field("expected_cost", pa.float64()),
    ]
    if interval:
        fields += [
            pa.field("p_low", pa.float64()),
            pa.field("p_high", pa.float64()),
            pa.field("stable", pa.bool_()),
        ]
    if shadow:
        fields += [pa.field(f"shadow_proba_{c}", pa.float64()) for c in model.classes]
        fields += [
            pa.field("shadow_decision", labels.type),
            *([pa.field("shadow_action", pa.string())] if actions else []),
            pa.field("shadow_expected_cost", pa.float64()),
        ]
    return pa.schema(fields)


def feature_matrix(table: pa.Table | pa.RecordBatch, features: list[str]) -> np.ndarray:
    """The float64 feature matrix of ``features`` (nulls -> NaN, i.e. missing)."""
    n = table.num_rows
    X = np.empty((n, len(features)), dtype=np.float64)
    for j, name in enumerate(features):
        column = table.column(name)
        X[:, j] = column.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    return X


def _cost_columns(table: pa.Table | pa.RecordBatch, costs: BatchCosts) -> dict[str, np.ndarray]:
    return {
        name: table.column(column).to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
        for name, column in costs.columns.items()
    }


def decide_block(
    model: InferenceModel,
    table: pa.Table | pa.RecordBatch,
    *,
    features: list[str],
    costs: BatchCosts,
    id_columns: list[str],
    schema: pa.Schema,
    first_row: int = 0,
    interval: bool = False,
    shadow: BatchShadow | None = None,
) -> tuple[pa.Table, BlockSummary]:
    """Decide every row of ``table``: the output rows (``schema``) and their totals.

    ``first_row`` is the position of the block's first row in the whole input, for
    error messages. Raises :class:`app.errors.InvalidArgument` naming that row.
    ``interval``: also each row's probability interval and ``stable`` flag (``schema``
    from :func:`output_schema` with ``interval=True``). With a ``shadow``, it decides the
    same rows under the same cost setting and priors.
    """
    n = table.num_rows
    try:
        with core_errors("input"):
            X = check_features(feature_matrix(table, features), len(features))
        setting = costs.setting(n, model.n_classes, _cost_columns(table, costs))
        proba, decisions, _, _ = decide_rows(
            model, X, setting, costs.priors, cost_field="costs", priors_field="priors"
        )
        bounds = interval_rows(model, X, proba, setting, costs.priors) if interval else None
        other = None
        if shadow is not None:
            other = decide_rows(
                shadow.model, X[:, list(shadow.columns)], setting, costs.priors,
                cost_field="costs", priors_field="priors",
            )  # fmt: skip
    except ServiceError as exc:
        raise _located(exc, first_row, costs.columns) from None
    columns: list[pa.Array | pa.ChunkedArray] = [table.column(c) for c in id_columns]
    if proba is not None and any(f.name.startswith("proba_") for f in schema):
        columns += [pa.array(proba[:, k]) for k in range(proba.shape[1])]
    labels, actions, summary = _decided(model, setting.actions, proba, decisions)
    threshold = (
        pa.array(decisions.threshold)
        if decisions.threshold is not None
        else pa.nulls(n, pa.float64())
    )
    columns += [labels, *actions, threshold, pa.array(decisions.expected_cost, from_pandas=True)]
    if bounds is not None:
        columns += [pa.array(bounds.low), pa.array(bounds.high), pa.array(bounds.stable)]
        summary.unstable = int((~bounds.stable).sum())
    if other is not None:
        s_proba, s_decisions, _, _ = other
        assert s_proba is not None  # BatchShadow.of refuses fixed-rule shadows
        columns += [pa.array(s_proba[:, k]) for k in range(s_proba.shape[1])]
        s_labels, s_actions, summary.shadow = _decided(model, setting.actions, s_proba, s_decisions)
        columns += [s_labels, *s_actions, pa.array(s_decisions.expected_cost, from_pandas=True)]
        mine = (
            decisions.action_index if decisions.action_index is not None else decisions.labels_index
        )
        theirs = (
            s_decisions.action_index
            if s_decisions.action_index is not None
            else s_decisions.labels_index
        )
        summary.differing = int(np.count_nonzero(mine != theirs))
    return pa.Table.from_arrays(columns, schema=schema), summary


def _decided(
    model: InferenceModel, names: Any, proba: np.ndarray | None, decisions: Any
) -> tuple[pa.Array, list[pa.Array], BlockSummary]:
    """The decision column, the action column among actions, and their totals."""
    n = len(decisions.labels_index)
    idx = decisions.labels_index
    none = idx < 0  # among actions: an action that stands for no class
    labels = pa.array(list(model.classes)).take(pa.array(idx, mask=none if none.any() else None))
    actions: list[pa.Array] = []
    per_action = None
    if decisions.action_index is not None:
        names = names or ()
        actions.append(pa.array(list(names), pa.string()).take(pa.array(decisions.action_index)))
        taken = np.bincount(decisions.action_index, minlength=len(names))
        per_action = {names[a]: int(v) for a, v in enumerate(taken) if v}
    counts = np.bincount(idx[~none], minlength=model.n_classes)
    summary = BlockSummary(
        rows=n,
        per_class={k: int(v) for k, v in enumerate(counts) if v},
        expected_cost=float(np.nansum(decisions.expected_cost)),
        has_cost=proba is not None,
        per_action=per_action,
    )
    return labels, actions, summary
