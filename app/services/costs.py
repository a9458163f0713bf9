"""Cost settings of a request -> arrays for :func:`models.decisions.decide`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.errors import InvalidArgument
from app.services._core import core_errors
from models.decisions import CostMatrix, row_cost_matrices, validate_cost_matrix

Costs = Mapping[str, Any]
BINARY_COSTS = ("c_fp", "c_fn", "c_tp", "c_tn")


@dataclass(frozen=True)
class CostSetting:
    """Validated costs: one (K, K) matrix or one (n, K, K) stack, and where they came from."""

    matrix: np.ndarray
    source: str  # "costs" | "cost_matrix" | "row_costs" | "zero_one"

    @property
    def per_row(self) -> bool:
        return self.matrix.ndim == 3


def cost_setting(
    n_rows: int,
    n_classes: int,
    *,
    costs: Costs | None = None,
    cost_matrix: Sequence[Sequence[float]] | None = None,
    row_costs: Sequence[Costs] | None = None,
) -> CostSetting:
    """Build the cost setting of a request (at most one of the three forms).

    Without any, every error costs 1 and every correct decision 0 (0-1 loss), which
    makes the decision the most probable class.
    """
    if costs is not None:
        if n_classes != 2:
            raise InvalidArgument(
                "costs: named costs are for two-class models; send cost_matrix", field="costs"
            )
        with core_errors("costs"):
            return CostSetting(CostMatrix.from_binary(**costs).matrix, "costs")
    if cost_matrix is not None:
        with core_errors("cost_matrix"):
            return CostSetting(
                validate_cost_matrix(np.asarray(cost_matrix, dtype=np.float64), n_classes),
                "cost_matrix",
            )
    if row_costs is not None:
        if n_classes != 2:
            raise InvalidArgument(
                "row_costs: named costs are for two-class models", field="row_costs"
            )
        if len(row_costs) != n_rows:
            raise InvalidArgument(
                f"row_costs: expected one cost setting per row ({n_rows}), got {len(row_costs)}",
                field="row_costs",
            )
        cols = {
            k: np.fromiter((float(r.get(k, 0.0)) for r in row_costs), np.float64, n_rows)
            for k in ("c_fp", "c_fn", "c_tp", "c_tn")
        }
        with core_errors("row_costs"):
            matrices = row_cost_matrices(
                cols["c_fp"], cols["c_fn"], cols["c_tp"], cols["c_tn"], n_rows=n_rows
            )
            return CostSetting(matrices, "row_costs")
    return CostSetting(1.0 - np.eye(n_classes), "zero_one")


def binary_costs(c_fp: float, c_fn: float, c_tp: float = 0.0, c_tn: float = 0.0) -> CostMatrix:
    """Named binary costs given one by one (e.g. query parameters), validated as ``costs``
    of a predict request; an error names the offending cost (``field="c_fn"``)."""
    with core_errors("costs", names=BINARY_COSTS):
        return CostMatrix.from_binary(c_fp, c_fn, c_tp, c_tn)
