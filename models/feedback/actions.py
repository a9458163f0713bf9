"""Realised cost of logged decisions among named actions, and figures per action.

A logged decision took one column of the cost matrix it was decided under: the decided
class of a square ``(K, K)`` matrix, or the action of a ``(K, A)`` one
(:mod:`models.decisions.actions`). Once its outcome (true class ``y``) is known, its
realised cost is the entry ``C[y][column]``. Stacks of matrices of different widths
(some rows decided among three actions, some among two classes) arrive padded with NaN
to the widest; a column that falls on the padding is an error naming the row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from models.exceptions import InvalidCostMatrix, InvalidInput

__all__ = ["action_figures", "taken_costs"]


def taken_costs(y_index: ArrayLike, column: ArrayLike, costs: ArrayLike) -> np.ndarray:
    """``C_r[y_r][column_r]`` per row: the cost-matrix entry of the column each decision took.

    Parameters
    ----------
    y_index : array-like of int, shape (n,)
        True class indices.
    column : array-like of int, shape (n,)
        The column each decision took (its class for a square matrix, its action for a
        ``(K, A)`` matrix).
    costs : array-like of shape (K, W) or (n, K, W)
        One matrix for every row or one per row (rows = truth); NaN marks the padding
        of matrices narrower than ``W``.

    Returns
    -------
    ndarray of shape (n,), float64

    Raises
    ------
    InvalidInput
        Indices not integers, out of range, or counts that disagree (naming the row).
    InvalidCostMatrix
        The entry taken is NaN (a column beyond that row's matrix), infinite or negative.
    """
    c = np.asarray(costs, dtype=np.float64)
    y, a = np.asarray(y_index), np.asarray(column)
    for name, v in (("y_index", y), ("column", a)):
        if v.ndim != 1 or not (np.issubdtype(v.dtype, np.integer) or v.size == 0):
            raise InvalidInput(f"{name}: expected a 1-D array of indices, got {v.dtype} {v.shape}")
    if y.shape != a.shape:
        raise InvalidInput(f"column: expected {y.size} values (one per row), got {a.size}")
    if c.ndim == 2:
        c = np.broadcast_to(c, (y.size, *c.shape))
    if c.ndim != 3 or c.shape[0] != y.size:
        raise InvalidCostMatrix(f"costs: expected shape (K, W) or ({y.size}, K, W), got {c.shape}")
    n, k, w = c.shape
    for name, v, bound in (("y_index", y, k), ("column", a, w)):
        bad = (v < 0) | (v >= bound)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise InvalidInput(
                f"{name}: row {r}: expected an index in [0, {bound - 1}], got {v[r]}"
            )
    out = c[np.arange(n), y.astype(np.int64), a.astype(np.int64)]
    bad = ~np.isfinite(out) | (np.where(np.isfinite(out), out, 0.0) < 0)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise InvalidCostMatrix(
            f"row {r}: cost matrix entry [{int(y[r])}][{int(a[r])}] must be a finite cost "
            f">= 0, got {out[r]} (a column beyond the row's matrix is NaN)"
        )
    return out


def action_figures(
    action: Sequence[Any] | np.ndarray,
    labelled: np.ndarray,
    realised: np.ndarray,
    expected_cost: np.ndarray,
) -> list[dict[str, Any]] | None:
    """Per action taken, in order of first appearance: how often and what it cost.

    Parameters
    ----------
    action : sequence of (n,)
        The name of the action each row took; None for a class decision (no actions).
    labelled : ndarray of bool, shape (n,)
        Rows with an outcome.
    realised : ndarray of shape (m,)
        Realised cost of each labelled row (``m = labelled.sum()``), in row order.
    expected_cost : ndarray of shape (n,)
        Expected cost of each decision when made.

    Returns
    -------
    list of dict or None
        None when no row was decided among actions; else one
        ``{"action", "taken", "share", "labelled", "realised_cost",
        "mean_realised_cost", "expected_cost"}`` per action: ``share`` of all ``n`` rows
        (class decisions included), realised and expected cost summed over the action's
        labelled rows (None without any).
    """
    names = np.asarray(action, dtype=object)
    n = len(names)
    acted = names != None  # noqa: E711 - element-wise comparison of an object array
    if not acted.any():
        return None
    per_row = np.full(n, np.nan)
    per_row[labelled] = realised
    order: dict[str, None] = dict.fromkeys(names[acted].tolist())
    out = []
    for name in order:
        rows = names == name
        mine = rows & labelled
        m = int(mine.sum())
        total = float(per_row[mine].sum()) if m else None
        out.append(
            {
                "action": name,
                "taken": int(rows.sum()),
                "share": float(rows.sum() / n),
                "labelled": m,
                "realised_cost": total,
                "mean_realised_cost": None if total is None else total / m,
                "expected_cost": float(expected_cost[mine].sum()) if m else None,
            }
        )
    return out
