"""Cost settings of a request -> arrays for :func:`models.decisions.decide`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.errors import InvalidArgument
from app.services._core import core_errors
from models.decisions import (
    CostMatrix,
    row_cost_matrices,
    validate_cost_matrix,
    validate_row_cost_matrices,
)

Costs = Mapping[str, Any]
ROW_COST_NAMES = ("c_fp", "c_fn", "c_tp", "c_tn")


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


def cost_setting(
    n_rows: int,
    n_classes: int,
    *,
    costs: Costs | None = None,
    cost_matrix: Sequence[Sequence[float]] | np.ndarray | None = None,
    row_costs: Sequence[Costs] | None = None,
    row_cost_columns: Mapping[str, np.ndarray] | None = None,
    row_matrices: np.ndarray | None = None,
    field: str | None = None,
) -> CostSetting:
    """Build the cost setting of a request (at most one form is given).

    ``row_costs`` (one mapping of named costs per row), ``row_cost_columns`` (one array per
    named cost) and ``row_matrices`` (an ``(n, K, K)`` stack) are three spellings of
    per-row costs. ``field`` names the request field in error messages (default: the
    argument's name). Without any, every error costs 1 and every correct decision 0
    (0-1 loss), which makes the decision the most probable class.
    """
    if costs is not None:
        f = field or "costs"
        if n_classes != 2:
            raise InvalidArgument(
                f"{f}: named costs are for two-class models; send cost_matrix", field=f
            )
        with core_errors(f):
            return CostSetting(CostMatrix.from_binary(**costs).matrix, "costs")
    if cost_matrix is not None:
        f = field or "cost_matrix"
        with core_errors(f):
            matrix = validate_cost_matrix(np.asarray(cost_matrix, dtype=np.float64), n_classes)
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
        cols = {
            k: np.fromiter((float(r.get(k, 0.0)) for r in row_costs), np.float64, n_rows)
            for k in ROW_COST_NAMES
        }
        return _row_columns(cols, n_rows, n_classes, f)
    if row_cost_columns is not None:
        return _row_columns(row_cost_columns, n_rows, n_classes, field or "row_costs")
    if row_matrices is not None:
        f = field or "row_costs"
        with core_errors(f):
            stack = validate_row_cost_matrices(row_matrices, n_rows, n_classes)
        return CostSetting(stack, "row_costs")
    return CostSetting(1.0 - np.eye(n_classes), "zero_one")
