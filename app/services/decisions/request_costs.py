"""Cost settings of a request -> arrays for :func:`models.decisions.rule.decide`."""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.errors import InvalidArgument
from app.services.common.core_errors import core_errors
from app.services.decisions.action_costs import (
    REVIEW_ACTIONS,
    REVIEW_CLASSES,
    action_matrix,
    action_names,
    multiclass_review,
    with_review,
)
from models.decisions.rule import (
    CostMatrix,
    row_cost_matrices,
    validate_cost_matrix,
    validate_row_cost_matrices,
)

Costs = Mapping[str, Any]
ROW_COST_NAMES = ("c_fp", "c_fn", "c_tp", "c_tn")
BINARY_COSTS = ROW_COST_NAMES
#: the named two-class costs with the optional cost of review (columns of per-row arrays)
REVIEW_COST_NAMES = (*ROW_COST_NAMES, "c_review")


@dataclass(frozen=True)
class CostSetting:
    """Validated costs: one (K, K) matrix or one (n, K, K) stack, and where they came from.

    Among named actions (``actions`` not None): one (K, A) matrix or an (n, K, A) stack,
    column ``a`` the costs of ``actions[a]``, and ``action_classes[a]`` the class index
    that action stands for (-1: none; ``c_review``'s "negative" and "positive" stand
    for classes 0 and 1).
    """

    matrix: np.ndarray
    source: str  # "costs" | "cost_matrix" | "row_costs" | "zero_one" | "training"
    actions: tuple[str, ...] | None = None
    action_classes: tuple[int, ...] | None = None

    @property
    def per_row(self) -> bool:
        return self.matrix.ndim == 3

    def describe(self) -> dict[str, Any]:
        """What was applied, for provenance: the one matrix, or a summary of per-row ones
        (number of rows and the entry-wise minimum and maximum over the rows)."""
        actions = None if self.actions is None else list(self.actions)
        if not self.per_row:
            return {"cost_matrix": self.matrix.tolist(), "row_costs": None, "actions": actions}
        m = self.matrix
        summary = {"n_rows": len(m), "min": m.min(axis=0).tolist(), "max": m.max(axis=0).tolist()}
        return {"cost_matrix": None, "row_costs": summary, "actions": actions}


def _review(matrices: np.ndarray, c_review: Any, source: str, field: str) -> CostSetting:
    """Two-class costs with the review action (c_review a number or one per row)."""
    m = with_review(matrices, c_review, field)
    return CostSetting(m, source, REVIEW_ACTIONS, REVIEW_CLASSES)


def _row_columns(
    cols: Mapping[str, np.ndarray], n_rows: int, n_classes: int, field: str
) -> CostSetting:
    if n_classes != 2:
        raise InvalidArgument(f"{field}: named costs are for two-class models", field=field)
    with core_errors(field):
        matrices = row_cost_matrices(
            cols["c_fp"], cols["c_fn"], cols.get("c_tp"), cols.get("c_tn"), n_rows=n_rows
        )
    if cols.get("c_review") is not None:
        c_review = cols["c_review"]
        if np.ndim(c_review) == 0:
            c_review = np.full(n_rows, float(c_review))
        return _review(matrices, c_review, "row_costs", field)
    return CostSetting(matrices, "row_costs")


def _cost_array(
    a: np.ndarray, n_rows: int, n_classes: int, field: str, layout: str | None
) -> CostSetting:
    """Costs given as one array whose shape says what it holds (see :func:`cost_setting`)."""
    k, n, shape = n_classes, n_rows, list(a.shape)
    if k == 2 and a.ndim == 2 and a.shape == (n, 5) and layout != "matrix":
        return _row_columns(dict(zip(REVIEW_COST_NAMES, a.T, strict=True)), n, k, field)
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
        expected += (
            f", [{n}, 2], [{n}, 4] or [{n}, 5] ((c_fp, c_fn[, c_tp, c_tn[, c_review]]) per row)"
        )
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
    actions: Sequence[str] | None = None,
    actions_field: str = "actions",
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

    ``actions`` names the columns of a ``(K, A)`` ``cost_matrix`` or ``cost_array``
    (``(n, K, A)``: one per row): the decision is then the action of least expected cost
    (:mod:`models.decisions.actions`). Named two-class costs with ``c_review`` (in
    ``costs``, in every row of ``row_costs``, or as a fifth ``cost_array`` column) add the
    action "review" to "negative" and "positive" (:data:`REVIEW_ACTIONS`).
    """
    if actions is not None:
        names = action_names(actions, actions_field)
        if cost_matrix is None and cost_array is None:
            given = "named costs" if costs is not None or row_costs is not None else "no costs"
            raise InvalidArgument(
                f"{actions_field}: actions need their costs as a {n_classes} x {len(names)} "
                f"cost_matrix (rows = truth, one column per action), got {given}",
                field=actions_field,
            )
        f = field or ("cost_matrix" if cost_matrix is not None else "costs")
        a = cost_matrix if cost_matrix is not None else cost_array
        m = action_matrix(a, names, n_rows, n_classes, field=f, actions_field=actions_field)
        source = "cost_matrix" if m.ndim == 2 else "row_costs"
        return CostSetting(m, source, names, (-1,) * len(names))
    if costs is not None:
        f = field or "costs"
        if n_classes != 2 and costs.get("c_review") is not None:
            raise multiclass_review(f"{f}.c_review", n_classes)
        if n_classes != 2:
            raise InvalidArgument(
                f"{f}: named costs are for two-class models; send cost_matrix", field=f
            )
        if costs.get("c_review") is not None:
            named = {k: v for k, v in costs.items() if k != "c_review"}
            with core_errors(f):
                binary = _binary_matrix(named)
            review = costs["c_review"]
            valid = (type(review) is float or type(review) is int) and 0.0 <= review < math.inf
            if valid:  # remembered, as _binary_matrix (an invalid one: the error below)
                m = _review_matrix_of(binary.tobytes(), float(review).hex())
                return CostSetting(m, "costs", REVIEW_ACTIONS, REVIEW_CLASSES)
            return _review(binary, review, "costs", f"{f}.c_review")
        with core_errors(f):
            return CostSetting(_binary_matrix(costs), "costs")
    if cost_matrix is not None:
        f = field or "cost_matrix"
        width = {len(r) for r in cost_matrix if isinstance(r, Sequence | np.ndarray)}
        if len(cost_matrix) == n_classes and len(width) == 1 and width != {n_classes}:
            raise InvalidArgument(
                f"{f}: expected shape ({n_classes}, {n_classes}) (rows = truth, columns = "
                f"prediction), got ({n_classes}, {width.pop()}); to decide among actions, name "
                "one per column in `actions`",
                field=f,
            )
        with core_errors(f):
            matrix = validate_cost_matrix(cost_matrix, n_classes)
        return CostSetting(matrix, "cost_matrix")
    if row_costs is not None:
        f = field or "row_costs"
        if n_classes != 2:
            review = not isinstance(row_costs, np.ndarray) and any(
                "c_review" in r for r in row_costs
            )
            if review or (isinstance(row_costs, np.ndarray) and row_costs.shape[-1] == 5):
                raise multiclass_review(f"{f}.c_review", n_classes)
            raise InvalidArgument(f"{f}: named costs are for two-class models", field=f)
        if len(row_costs) != n_rows:
            raise InvalidArgument(
                f"{f}: expected one cost setting per row ({n_rows}), got {len(row_costs)}",
                field=f,
            )
        if isinstance(row_costs, np.ndarray):  # decoded: c_fp, c_fn, c_tp, c_tn[, c_review]
            names = REVIEW_COST_NAMES if row_costs.shape[-1] == 5 else ROW_COST_NAMES
            cols = dict(zip(names, row_costs.T, strict=True))
        else:
            cols = {
                k: np.fromiter((float(r.get(k, 0.0)) for r in row_costs), np.float64, n_rows)
                for k in ROW_COST_NAMES
            }
            cols.update(_row_reviews(row_costs, f))
        return _row_columns(cols, n_rows, n_classes, f)
    if cost_array is not None:
        return _cost_array(cost_array, n_rows, n_classes, field or "costs", cost_layout)
    return CostSetting(1.0 - np.eye(n_classes), "zero_one")


def _row_reviews(row_costs: Sequence[Costs], field: str) -> dict[str, np.ndarray]:
    """``{"c_review": values}`` when the rows give c_review (every row must), else {}."""
    has = [r.get("c_review") is not None for r in row_costs]
    if not any(has):
        return {}
    if not all(has):
        r = has.index(False)
        raise InvalidArgument(
            f"{field}[{r}]: c_review is missing; give it on every row or on none (row "
            f"{has.index(True)} has it)",
            field=f"{field}[{r}].c_review",
        )
    return {"c_review": np.array([float(r["c_review"]) for r in row_costs], np.float64)}


@functools.lru_cache(maxsize=1024)
def _review_matrix_of(binary: bytes, c_review: str) -> np.ndarray:
    """The (2, 3) matrix of a validated binary matrix (its bytes) with ``c_review`` (its
    ``float.hex``), read-only; an invalid ``c_review`` raises and is not kept."""
    matrix = np.frombuffer(binary, dtype=np.float64).reshape(2, 2)
    m = with_review(matrix, float.fromhex(c_review), "costs.c_review")
    m.setflags(write=False)
    return m


_FOUR_DOUBLES = struct.Struct("=4d")
_BINARY_NAMES = frozenset(BINARY_COSTS)


@functools.lru_cache(maxsize=1024)
def _binary_matrix_of(key: bytes) -> np.ndarray:
    c_fp, c_fn, c_tp, c_tn = _FOUR_DOUBLES.unpack(key)
    return CostMatrix.from_binary(c_fp, c_fn, c_tp, c_tn).matrix  # read-only: safe to share


def _binary_matrix(costs: Costs) -> np.ndarray:
    """The validated matrix of named binary costs, remembered for the last 1,024 distinct
    settings (most requests repeat a few; an invalid one raises and is not kept). Keyed by
    the exact floats (their 8 bytes each: -0.0 is not 0.0), packed in one call."""
    get = costs.get
    values = (get("c_fp", 0.0), get("c_fn", 0.0), get("c_tp", 0.0), get("c_tn", 0.0))
    named = "c_fp" in costs and "c_fn" in costs and costs.keys() <= _BINARY_NAMES
    if named and all(type(v) is float or type(v) is int for v in values):
        try:
            key = _FOUR_DOUBLES.pack(*values)
        except struct.error:  # an int beyond a float: validated (and refused) below
            pass
        else:
            return _binary_matrix_of(key)
    return CostMatrix.from_binary(**costs).matrix


def binary_costs(c_fp: float, c_fn: float, c_tp: float = 0.0, c_tn: float = 0.0) -> CostMatrix:
    """Named binary costs given one by one (e.g. query parameters), validated as ``costs``
    of a predict request; an error names the offending cost (``field="c_fn"``)."""
    with core_errors("costs", names=BINARY_COSTS):
        return CostMatrix.from_binary(c_fp, c_fn, c_tp, c_tn)
