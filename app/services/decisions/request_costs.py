"""Cost settings of a request -> arrays for :func:`models.decisions.rule.decide`."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.errors import InvalidArgument
from app.services.common.core_errors import core_errors
from models.decisions.rule import (
    CostMatrix,
    row_cost_matrices,
    validate_cost_matrix,
    validate_row_cost_matrices,
)

Costs = Mapping[str, Any]
ROW_COST_NAMES = ("c_fp", "c_fn", "c_tp", "c_tn")
BINARY_COSTS = ROW_COST_NAMES


@dataclass(frozen=True)
class CostSetting:
    """Validated costs: one (K, K) matrix or one (n, K, K) stack, and where they came from."""

    matrix: np.ndarray
    source: str  # "costs" | "cost_matrix" | "row_costs" | "zero_one" | "training"

    @property
    def per_row(self) -> bool:
        return self.matrix.ndim == 3

    def describe(self) -> dict[str, Any]:
        """What was applied, for provenance: the one matrix, or a summary of per-row ones
        (number of rows and the entry-wise minimum and maximum over the rows)."""
        if not self.per_row:
            return {"cost_matrix": self.matrix.tolist(), "row_costs": None}
        m = self.matrix
        summary = {"n_rows": len(m), "min": m.min(axis=0).tolist(), "max": m.max(axis=0).tolist()}
        return {"cost_matrix": None, "row_costs": summary}


def _row_columns(
    cols: Mapping[str, np.ndarray], n_rows: int, n_classes: int, field: str
) -> CostSetting:
    if n_classes != 2:
        raise InvalidArgument(f"{field}: named costs are for two-class models", field=field)
    with core_errors(field):
        matrices = row_cost_matrices(
            cols["c_fp"], cols["c_fn"], cols.get("c_tp"), cols.get("c_tn"), n_rows=n_rows
        )
    return CostSetting(matrices, "row_costs")


def _cost_array(
    a: np.ndarray, n_rows: int, n_classes: int, field: str, layout: str | None
) -> CostSetting:
    """Costs given as one array whose shape says what it holds (see :func:`cost_setting`)."""
    k, n, shape = n_classes, n_rows, list(a.shape)
    if a.ndim == 3:
        with core_errors(field):
            return CostSetting(validate_row_cost_matrices(a, n, k), "row_costs")
    one_matrix = a.ndim == 2 and a.shape == (k, k) and layout != "rows"
    per_row = k == 2 and a.ndim == 2 and a.shape in ((n, 2), (n, 4)) and layout != "matrix"
    if one_matrix and per_row:
        raise InvalidArgument(
            f"{field}: shape {shape} is ambiguous for {n} rows of a two-class model (one cost "
            "matrix, or (c_fp, c_fn) per row?); set the tensor's parameters "
            '{"layout": "matrix"} or {"layout": "rows"}',
            field=field,
        )
    if one_matrix:
        with core_errors(field):
            return CostSetting(validate_cost_matrix(a, k), "cost_matrix")
    if per_row:
        cols = dict(zip(ROW_COST_NAMES, a.T, strict=False))
        return _row_columns(cols, n, k, field)
    expected = f"[{k}, {k}] (one cost matrix) or [{n}, {k}, {k}] (one per row)"
    if k == 2:
        expected += f", [{n}, 2] or [{n}, 4] ((c_fp, c_fn[, c_tp, c_tn]) per row)"
    if layout is not None:
        expected += f" with layout {layout!r}"
    raise InvalidArgument(f"{field}: expected shape {expected}, got {shape}", field=field)


def cost_setting(
    n_rows: int,
    n_classes: int,
    *,
    costs: Costs | None = None,
    cost_matrix: Sequence[Sequence[float]] | np.ndarray | None = None,
    row_costs: Sequence[Costs] | np.ndarray | None = None,
    cost_array: np.ndarray | None = None,
    cost_layout: str | None = None,
    field: str | None = None,
) -> CostSetting:
    """Build the cost setting of a request (at most one form is given).

    ``row_costs`` holds one mapping of named costs per row (or, decoded, an ``(n, 4)``
    array of columns c_fp, c_fn, c_tp, c_tn). ``cost_array`` is any
    setting as one float array, told apart by its shape: ``(K, K)`` one matrix,
    ``(n, K, K)`` one per row, and for two classes ``(n, 2)`` / ``(n, 4)`` the named
    costs ``(c_fp, c_fn[, c_tp, c_tn])`` per row (``cost_layout`` "matrix" or "rows"
    settles ``(2, 2)`` with two rows). ``field`` names the request field in error
    messages (default: the argument's name). Without any, every error costs 1 and every correct decision 0
    (0-1 loss), which makes the decision the most probable class.
    """
    if costs is not None:
        f = field or "costs"
        if n_classes != 2:
            raise InvalidArgument(
                f"{f}: named costs are for two-class models; send cost_matrix", field=f
            )
        with core_errors(f):
            return CostSetting(_binary_matrix(costs), "costs")
    if cost_matrix is not None:
        f = field or "cost_matrix"
        with core_errors(f):
            matrix = validate_cost_matrix(cost_matrix, n_classes)
        return CostSetting(matrix, "cost_matrix")
    if row_costs is not None:
        f = field or "row_costs"
        if n_classes != 2:
            raise InvalidArgument(f"{f}: named costs are for two-class models", field=f)
        if len(row_costs) != n_rows:
            raise InvalidArgument(
                f"{f}: expected one cost setting per row ({n_rows}), got {len(row_costs)}",
                field=f,
            )
        if isinstance(row_costs, np.ndarray):  # decoded: columns c_fp, c_fn, c_tp, c_tn
            cols = dict(zip(ROW_COST_NAMES, row_costs.T, strict=True))
        else:
            cols = {
                k: np.fromiter((float(r.get(k, 0.0)) for r in row_costs), np.float64, n_rows)
                for k in ROW_COST_NAMES
            }
        return _row_columns(cols, n_rows, n_classes, f)
    if cost_array is not None:
        return _cost_array(cost_array, n_rows, n_classes, field or "costs", cost_layout)
    return CostSetting(1.0 - np.eye(n_classes), "zero_one")


@functools.lru_cache(maxsize=1024)
def _binary_matrix_of(key: tuple[str, ...]) -> np.ndarray:
    c_fp, c_fn, c_tp, c_tn = (float.fromhex(v) for v in key)
    return CostMatrix.from_binary(c_fp, c_fn, c_tp, c_tn).matrix  # read-only: safe to share


def _binary_matrix(costs: Costs) -> np.ndarray:
    """The validated matrix of named binary costs, remembered for the last 1,024 distinct
    settings (most requests repeat a few; an invalid one raises and is not kept). Keyed by
    the exact floats (``float.hex``: -0.0 is not 0.0)."""
    values = [costs.get(k, 0.0) for k in BINARY_COSTS]
    named = set(costs) <= set(BINARY_COSTS) and {"c_fp", "c_fn"} <= set(costs)
    if named and all(type(v) is float or type(v) is int for v in values):
        return _binary_matrix_of(tuple(float(v).hex() for v in values))
    return CostMatrix.from_binary(**costs).matrix


def binary_costs(c_fp: float, c_fn: float, c_tp: float = 0.0, c_tn: float = 0.0) -> CostMatrix:
    """Named binary costs given one by one (e.g. query parameters), validated as ``costs``
    of a predict request; an error names the offending cost (``field="c_fn"``)."""
    with core_errors("costs", names=BINARY_COSTS):
        return CostMatrix.from_binary(c_fp, c_fn, c_tp, c_tn)
