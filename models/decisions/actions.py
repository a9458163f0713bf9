"""Decisions among named actions: a ``(K, A)`` cost matrix, the action of least expected cost.

A square ``(K, K)`` matrix (:mod:`models.decisions.rule`) can only choose a class. Many
decisions choose something else: approve, send to manual review, ask for a second
factor, decline. Here ``C[i][a]`` is the cost of taking action ``a`` when the truth is
class ``i`` (rows = truth, as in :mod:`~models.decisions.rule`; columns = actions, named,
``A >= 1``). The decision for calibrated probabilities ``p`` is

    ``argmin_a sum_i p_i C[i][a]``

**Ties go to the action listed first** (the lowest column index): list the cheaper or
safer action first when two may cost the same. (Square matrices without action names
keep their own rule, :func:`models.decisions.rule.decide`: ties toward the higher class
index, the binary "positive iff ``p1 >= t``".)

Costs are finite and ``>= 0`` like those of a square matrix; unlike it, no column is a
"correct" decision, so no entry is compared with another. The costs may be one matrix
for all rows or one per row, ``(n, K, A)``, e.g. review costs 4 on every row while
declining a legitimate transaction costs its amount.

References
----------
.. [1] Elkan, C. (2001). The foundations of cost-sensitive learning. IJCAI (the optimal
   decision as the least expected cost over the available decisions).
.. [2] Chow, C. K. (1970). On optimum recognition error and reject tradeoff. IEEE
   Transactions on Information Theory 16(1), 41-46 (a reject option at a fixed cost).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from models.decisions.rule import _as_float_array, _check_proba
from models.exceptions import InvalidCostMatrix

__all__ = [
    "ActionDecisions",
    "decide_actions",
    "review_band",
    "review_matrix",
    "validate_action_matrix",
    "validate_action_names",
    "validate_row_action_matrices",
]

MAX_ACTIONS = 256
MAX_NAME = 128


def validate_action_names(names: Sequence[str], n_actions: int | None = None) -> tuple[str, ...]:
    """Action names as a tuple: non-empty strings of at most 128 characters, distinct,
    at least one and at most 256, and (given ``n_actions``) one per matrix column.

    Raises
    ------
    InvalidCostMatrix
        The message names the offending position, e.g. ``"actions[2]: 'review' is
        listed twice (also actions[1]); action names must be distinct"``.
    """
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise InvalidCostMatrix(f"actions: expected a list of names, got {names!r:.60}")
    out = tuple(names)
    if not 1 <= len(out) <= MAX_ACTIONS:
        raise InvalidCostMatrix(f"actions: expected 1 to {MAX_ACTIONS} names, got {len(out)}")
    seen: dict[str, int] = {}
    for a, name in enumerate(out):
        if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME:
            raise InvalidCostMatrix(
                f"actions[{a}]: expected a name of 1 to {MAX_NAME} characters, got {name!r:.60}"
            )
        if name in seen:
            raise InvalidCostMatrix(
                f"actions[{a}]: {name!r} is listed twice (also actions[{seen[name]}]); "
                "action names must be distinct"
            )
        seen[name] = a
    if n_actions is not None and len(out) != n_actions:
        raise InvalidCostMatrix(
            f"actions: {len(out)} names for {n_actions} cost columns; expected one name per "
            "column of the cost matrix (columns = actions, in the order named)"
        )
    return out


def _check_action_stack(c: np.ndarray, actions: tuple[str, ...], per_row: bool) -> None:
    finite = np.isfinite(c)
    bad = ~finite | (np.where(finite, c, 0.0) < 0)
    if bad.any():
        r, i, a = (int(v) for v in np.argwhere(bad)[0])
        where = f"row {r}, " if per_row else ""
        raise InvalidCostMatrix(
            f"{where}cost matrix entry [{i}][{a}] (truth {i}, action {actions[a]!r}): cost "
            f"must be finite and >= 0, got {c[r, i, a]}"
        )


def validate_action_matrix(
    a: ArrayLike, n_classes: int, actions: Sequence[str]
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Validate one ``(K, A)`` action cost matrix and its action names.

    Parameters
    ----------
    a : array-like of shape (n_classes, n_actions)
        ``a[i][j]`` = cost of taking action ``j`` when the truth is class ``i``.
    n_classes : int
        ``K``: the matrix has one row per class.
    actions : sequence of str
        One distinct name per column (:func:`validate_action_names`).

    Returns
    -------
    (ndarray of shape (K, A), float64, tuple of str)

    Raises
    ------
    InvalidCostMatrix
        Rows not ``K``, a ragged row, columns not matching the names, names not
        distinct, or an entry negative or non-finite; the message says which.
    """
    k = int(n_classes)
    if isinstance(a, list | tuple) and len(a) != k:
        raise InvalidCostMatrix(
            f"cost matrix: expected {k} rows (one per class, rows = truth), got {len(a)}"
        )
    c = _as_float_array(a, "cost matrix")
    if c.ndim != 2 or c.shape[0] != k:
        raise InvalidCostMatrix(
            f"cost matrix: expected shape ({k}, A) (rows = truth, one column per action), "
            f"got {c.shape}"
        )
    names = validate_action_names(actions, c.shape[1])
    _check_action_stack(c[None], names, per_row=False)
    return c.copy(), names


def validate_row_action_matrices(
    a: ArrayLike, n_rows: int, n_classes: int, actions: Sequence[str]
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Validate per-row ``(K, A)`` action cost matrices, ``(n, K, A)``, and their names.

    Raises
    ------
    InvalidCostMatrix
        Wrong shape (the message gives the expected one), names as in
        :func:`validate_action_names`, or an invalid entry (naming the row).
    """
    c = _as_float_array(a, "cost matrices")
    n, k = int(n_rows), int(n_classes)
    if c.ndim != 3 or c.shape[:2] != (n, k):
        raise InvalidCostMatrix(
            f"per-row cost matrices: expected shape ({n}, {k}, A) (one ({k}, A) matrix per "
            f"row, rows = truth, one column per action), got {c.shape}"
        )
    names = validate_action_names(actions, c.shape[2])
    _check_action_stack(c, names, per_row=True)
    return c.copy(), names


def review_matrix(binary: np.ndarray, c_review: ArrayLike) -> np.ndarray:
    """Two-class costs with a review action: ``(.., 2, 2)`` matrices -> ``(.., 2, 3)``.

    The third column is ``c_review`` in both rows (reviewing costs the same whatever the
    truth); the first two are the binary matrix's (decide negative, decide positive).
    ``c_review`` is a number or one value per matrix of a ``(n, 2, 2)`` stack.

    Raises
    ------
    InvalidCostMatrix
        ``c_review`` negative, non-finite, or of the wrong length.
    """
    r = _as_float_array(c_review, "c_review")
    lead = binary.shape[:-2]
    if r.ndim > 1 or (r.ndim == 1 and (not lead or r.shape[0] != lead[0])):
        want = "a number" if not lead else f"a number or {lead[0]} values (one per row)"
        raise InvalidCostMatrix(f"c_review: expected {want}, got shape {r.shape}")
    finite = np.isfinite(r)
    bad = ~finite | (np.where(finite, r, 0.0) < 0)
    if bad.any():
        at = f"row {int(np.flatnonzero(bad)[0])}, column 'c_review'" if r.ndim else "c_review"
        value = r[np.flatnonzero(bad)[0]] if r.ndim else r
        raise InvalidCostMatrix(f"{at}: cost must be finite and >= 0, got {float(value)}")
    col = np.broadcast_to(r[..., None] if r.ndim else r, (*lead, 2))
    return np.concatenate([binary, col[..., None]], axis=-1)


def review_band(
    c_fp: float, c_fn: float, c_review: float, c_tp: float = 0.0, c_tn: float = 0.0
) -> tuple[float, float] | None:
    """The probabilities ``p = P(classes[1])`` at which two-class costs with ``c_review``
    send a row to review: the interval ``(low, high)``, or None when review is never
    the least expected cost.

    Deciding negative costs ``E_neg(p) = c_tn + p (c_fn - c_tn)`` in expectation,
    positive ``E_pos(p) = c_fp - p (c_fp - c_tp)``, review ``c_review`` whatever the
    truth; ties go to the action listed first (negative, positive, review), so review is
    taken iff ``c_review < E_neg(p)`` and ``c_review < E_pos(p)``: for ``p`` strictly
    between ``low = (c_review - c_tn) / (c_fn - c_tn)`` and ``high = (c_fp - c_review) /
    (c_fp - c_tp)`` (Chow's reject band, [2]_), clipped to ``[0, 1]``. When errors cost
    more than correct decisions (``c_fn > c_tn``, ``c_fp > c_tp``, the usual case) a row
    below ``low`` is decided negative and one above ``high`` positive. The costs are
    those of a validated setting (:func:`review_matrix`); no check is made here.

    Examples
    --------
    >>> review_band(c_fp=1.0, c_fn=5.0, c_review=0.5)
    (0.1, 0.5)
    >>> review_band(c_fp=1.0, c_fn=5.0, c_review=2.0) is None  # review dearer than deciding
    True
    """
    low, high = 0.0, 1.0
    closed_low = closed_high = True  # a bound clipped to 0 or 1 includes it
    for slope, start in ((c_fn - c_tn, c_tn), (c_tp - c_fp, c_fp)):
        # review beats this decision iff c_review < start + slope * p
        if slope == 0:
            if not c_review < start:
                return None
        elif slope > 0:
            bound = (c_review - start) / slope
            if bound >= low:
                low, closed_low = bound, False
        else:
            bound = (c_review - start) / slope
            if bound <= high:
                high, closed_high = bound, False
    if low > high or (low == high and not (closed_low and closed_high)):
        return None
    return float(low), float(high)


@dataclass(frozen=True, eq=False)
class ActionDecisions:
    """Result of :func:`decide_actions`.

    Attributes
    ----------
    action_index : ndarray of shape (n,), int64
        Chosen action (column index) per row.
    expected_cost : ndarray of shape (n,), float64
        ``sum_i p_i C[i][a]`` of the chosen ``a`` per row.
    """

    action_index: np.ndarray
    expected_cost: np.ndarray


def decide_actions(
    proba: ArrayLike, costs: ArrayLike, *, validated: bool = False
) -> ActionDecisions:
    """Least-expected-cost actions ``argmin_a sum_i p_i C[i][a]``, ties to the first listed.

    Parameters
    ----------
    proba : array-like of shape (n, K)
        Calibrated probabilities, model class order, rows summing to 1 (within 1e-6).
    costs : array-like of shape (K, A) or (n, K, A)
        One action cost matrix for all rows, or one per row.
    validated : bool, default=False
        ``costs`` were returned by :func:`validate_action_matrix` or
        :func:`validate_row_action_matrices`: skip re-checking every entry (shapes are
        still checked).

    Returns
    -------
    ActionDecisions

    Raises
    ------
    InvalidCostMatrix
        Wrong shape for ``proba``'s rows and classes, or (not validated) an invalid entry.
    InvalidInput
        ``proba`` malformed.

    Examples
    --------
    Approve, review (4 whatever the truth) or decline (a missed fraud costs 100, a
    declined legitimate customer 10):

    >>> C = [[0.0, 4.0, 10.0], [100.0, 4.0, 0.0]]
    >>> decide_actions([[0.99, 0.01], [0.9, 0.1], [0.3, 0.7]], C).action_index.tolist()
    [0, 1, 2]
    """
    p = _check_proba(proba)
    n, k = p.shape
    c = _as_float_array(costs, "costs")
    if c.ndim == 2:
        if c.shape[0] != k or c.shape[1] < 1:
            raise InvalidCostMatrix(f"costs: expected shape ({k}, A), got {c.shape}")
        if not validated:
            _check_action_stack(c[None], tuple(map(str, range(c.shape[1]))), per_row=False)
        if n == 1:  # one row: Python floats, the same sums as the einsum below
            e1 = np.einsum("ni,ia->na", p, c)[0].tolist()
            best = min(range(len(e1)), key=e1.__getitem__)  # first minimum: ties -> first
            return ActionDecisions(np.array([best], np.int64), np.array([e1[best]]))
        e = np.einsum("ni,ia->na", p, c)
    elif c.ndim == 3:
        if c.shape[0] != n or c.shape[1] != k or c.shape[2] < 1:
            raise InvalidCostMatrix(
                f"costs: expected per-row matrices of shape ({n}, {k}, A), got {c.shape}"
            )
        if not validated:
            _check_action_stack(c, tuple(map(str, range(c.shape[2]))), per_row=True)
        e = np.einsum("ni,nia->na", p, c)
    else:
        raise InvalidCostMatrix(f"costs: expected shape ({k}, A) or ({n}, {k}, A), got {c.shape}")
    # einsum's own loops, not BLAS: a row's sums are the same alone and in a batch (see
    # models.decisions.rule.decide). np.argmin returns the first minimum: ties -> first.
    idx = np.argmin(e, axis=1) if n else np.zeros(0, np.intp)
    return ActionDecisions(idx.astype(np.int64), e[np.arange(n), idx])
