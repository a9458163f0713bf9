"""Cost-sensitive decisions as pure functions of calibrated probabilities and costs.

Convention (ARCHITECTURE.md, section 3): ``C[i][j]`` is the cost of predicting class
``j`` when the truth is class ``i`` (rows = truth, columns = prediction). Binary:
``C = [[c_tn, c_fp], [c_fn, c_tp]]``. The decision for probabilities ``p`` is
``argmin_j sum_i p_i C[i][j]``, ties broken toward the higher class index; for two
classes this is "predict positive iff ``p1 >= t``" with
``t = (c_fp - c_tn) / ((c_fp - c_tn) + (c_fn - c_tp))``, the paper's ``c`` of Eq. 2
when ``c_tp = c_tn = 0``.

Everything is vectorised: deciding 100,000 rows takes a few milliseconds.

References
----------
.. [1] Nikolaou, N., Edakunni, N., Kull, M., Flach, P., Brown, G. (2016). Cost-sensitive
   boosting algorithms: Do we really need them? Machine Learning 104, 359-384.
   Section 2.1 (Eqs. 1-4), Theorem 1 (Eqs. 19-20).
.. [2] Elkan, C. (2001). The foundations of cost-sensitive learning. IJCAI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from models.exceptions import InvalidCostMatrix, InvalidInput, InvalidPriors

__all__ = [
    "CostMatrix",
    "Decisions",
    "apply_prior_shift",
    "binary_threshold",
    "class_priors",
    "decide",
    "row_cost_matrices",
    "validate_cost_matrix",
    "validate_row_cost_matrices",
]

_BINARY_NAMES = {(0, 0): "c_tn", (0, 1): "c_fp", (1, 0): "c_fn", (1, 1): "c_tp"}
_PROBA_TOL = 1e-6


def _short(i: int, j: int, k: int) -> str:
    return _BINARY_NAMES[(i, j)] if k == 2 else f"C[{i}][{j}]"


def _loc(style: str, r: int, i: int, j: int, k: int) -> str:
    """Human name of entry (i, j) of matrix r for error messages."""
    if style == "named":
        return _short(i, j, k)
    if style == "rows":
        return f"row {r}, column '{_short(i, j, k)}'" if k == 2 else f"row {r}, entry C[{i}][{j}]"
    extra = f" '{_BINARY_NAMES[(i, j)]}'" if k == 2 else ""
    return f"cost matrix entry [{i}][{j}]{extra} (truth {i}, prediction {j})"


def _check_stack(c: np.ndarray, style: str) -> None:
    """Validate a (n, K, K) stack of cost matrices.

    ``style`` chooses how messages name an entry: ``"matrix"`` (one matrix),
    ``"named"`` (binary costs by name) or ``"rows"`` (per-row costs, naming the row).
    """
    k = c.shape[1]
    finite = np.isfinite(c)
    bad = ~finite | (np.where(finite, c, 0.0) < 0)
    if bad.any():
        r, i, j = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidCostMatrix(
            f"{_loc(style, r, i, j, k)}: cost must be finite and >= 0, got {c[r, i, j]}"
        )
    diag = np.diagonal(c, axis1=1, axis2=2)  # (n, K): cost of the correct decision per truth
    worse = diag[:, :, None] > c
    if worse.any():
        r, i, j = (int(v) for v in np.argwhere(worse)[0])
        raise InvalidCostMatrix(
            f"{_loc(style, r, i, i, k)}: a correct decision may not cost more than an error, got "
            f"{_short(i, i, k)}={c[r, i, i]} > {_short(i, j, k)}={c[r, i, j]}"
        )
    prefix = "" if style != "rows" else "row {r}: "
    if k == 2:
        with np.errstate(over="ignore"):  # inf is > 0: huge costs are valid
            den = (c[:, 0, 1] - c[:, 0, 0]) + (c[:, 1, 0] - c[:, 1, 1])
        if np.any(den <= 0):
            r = int(np.flatnonzero(den <= 0)[0])
            raise InvalidCostMatrix(
                f"{prefix.format(r=r)}threshold denominator (c_fp - c_tn) + (c_fn - c_tp) must be "
                f"> 0, got {den[r]} (c_fp={c[r, 0, 1]}, c_fn={c[r, 1, 0]}, c_tp={c[r, 1, 1]}, "
                f"c_tn={c[r, 0, 0]}): every decision would cost the same"
            )
    else:
        flat = np.all(c == diag[:, :, None], axis=(1, 2))
        if flat.any():
            r = int(np.flatnonzero(flat)[0])
            raise InvalidCostMatrix(
                f"{prefix.format(r=r)}cost matrix makes every decision equally costly (each row "
                "is constant); at least one error must cost more than a correct decision"
            )


def _ragged_row(a: Any, width: int | None = None, at: str = "") -> str | None:
    """Where nested lists ``a`` are ragged: ``"row 1 has 1 entries, expected 2"`` (the
    first row whose length differs from ``width``, or else from the first row's), or None."""
    if not isinstance(a, list | tuple) or not all(isinstance(r, list | tuple) for r in a):
        return None
    want = width if width is not None else (len(a[0]) if a else 0)
    for i, row in enumerate(a):
        if len(row) != want:
            return f"row {at}{i} has {len(row)} entries, expected {want}"
        inner = _ragged_row(row, None, f"{at}{i}, ")
        if inner is not None:
            return inner
    return None


def _as_float_array(a: ArrayLike, name: str, width: int | None = None) -> np.ndarray:
    try:
        return np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        ragged = _ragged_row(a, width)
        if ragged is not None:
            raise InvalidCostMatrix(f"{name}: {ragged}") from None
        raise InvalidCostMatrix(f"{name}: expected numbers, got {a!r:.80}") from None


def validate_cost_matrix(a: ArrayLike, n_classes: int) -> np.ndarray:
    """Validate one ``(K, K)`` cost matrix and return it as a float64 copy.

    Parameters
    ----------
    a : array-like of shape (n_classes, n_classes)
        ``a[i][j]`` = cost of predicting ``j`` when the truth is ``i``.
    n_classes : int
        Expected ``K``.

    Returns
    -------
    ndarray of shape (K, K), float64

    Raises
    ------
    InvalidCostMatrix
        Wrong shape; an entry negative or non-finite; a correct decision costing more than
        an error in the same row (``C[i][i] > C[i][j]``; binary: ``c_tn > c_fp`` or
        ``c_tp > c_fn``); binary threshold denominator ``(c_fp - c_tn) + (c_fn - c_tp) <= 0``;
        for ``K > 2``, every row constant. The message names the entry and what was expected.

    References
    ----------
    .. [1] Nikolaou et al. (2016), Eq. 1 (binary cost matrix) and Eqs. 2-4.
    """
    k = int(n_classes)
    c = _as_float_array(a, "cost matrix", width=k)  # a ragged row: its length and K
    if c.shape != (k, k):
        raise InvalidCostMatrix(
            f"cost matrix: expected shape ({k}, {k}) (rows = truth, columns = prediction), "
            f"got {c.shape}"
        )
    _check_stack(c[None], "matrix")
    return c.copy()


def validate_row_cost_matrices(a: ArrayLike, n_rows: int, n_classes: int) -> np.ndarray:
    """Validate a stack of per-row ``(K, K)`` cost matrices; return it as float64.

    Parameters
    ----------
    a : array-like of shape (n_rows, n_classes, n_classes)
        ``a[r][i][j]`` = cost of predicting ``j`` for row ``r`` when its truth is ``i``.
    n_rows, n_classes : int
        Expected ``n`` and ``K``.

    Raises
    ------
    InvalidCostMatrix
        Wrong shape, or a row's matrix is invalid (see :func:`validate_cost_matrix`);
        the message names the row and the entry, e.g. ``"row 3, entry C[0][2]: ..."``.
    """
    c = _as_float_array(a, "cost matrices")
    k, n = int(n_classes), int(n_rows)
    if c.shape != (n, k, k):
        raise InvalidCostMatrix(
            f"per-row cost matrices: expected shape ({n}, {k}, {k}) (one ({k}, {k}) matrix "
            f"per row), got {c.shape}"
        )
    _check_stack(c, "rows")
    return c.copy()


def binary_threshold(c_fp: float, c_fn: float, c_tp: float = 0.0, c_tn: float = 0.0) -> float:
    """Probability threshold ``t``: predict positive iff ``P(y = 1 | x) >= t``.

    ``t = (c_fp - c_tn) / ((c_fp - c_tn) + (c_fn - c_tp))``; with ``c_tp = c_tn = 0`` this is
    ``c = c_fp / (c_fp + c_fn)`` of Eq. 2, and the rule is Eq. 4 / Eq. 20 of [1]_.

    Parameters
    ----------
    c_fp, c_fn : float
        Cost of a false positive / false negative (finite, >= 0).
    c_tp, c_tn : float, default 0
        Cost of a true positive / true negative (finite, >= 0, ``c_tp <= c_fn``,
        ``c_tn <= c_fp``).

    Returns
    -------
    float
        ``t`` in ``[0, 1]``.

    Raises
    ------
    InvalidCostMatrix
        See :func:`validate_cost_matrix`; the message names ``c_fp``, ``c_fn``, ``c_tp``
        or ``c_tn``.

    References
    ----------
    .. [1] Nikolaou et al. (2016), Eqs. 2, 4 and 20.
    """
    return CostMatrix.from_binary(c_fp, c_fn, c_tp, c_tn).threshold


@dataclass(frozen=True, eq=False)
class CostMatrix:
    """A validated ``(K, K)`` cost matrix, ``matrix[i][j]`` = cost of predicting ``j`` when truth is ``i``.

    Construct with :meth:`from_binary` (named costs) or :meth:`from_array`; the direct
    constructor validates too. The stored array is read-only.

    References
    ----------
    .. [1] Nikolaou et al. (2016), Eq. 1.

    Examples
    --------
    Rows are the truth, columns the prediction: ``[[c_tn, c_fp], [c_fn, c_tp]]``.

    >>> CostMatrix.from_binary(c_fp=1.0, c_fn=5.0).matrix.tolist()
    [[0.0, 1.0], [5.0, 0.0]]
    >>> CostMatrix.from_binary(c_fp=-1.0, c_fn=5.0)
    Traceback (most recent call last):
    ...
    models.exceptions.InvalidCostMatrix: c_fp: ...
    """

    matrix: np.ndarray

    def __post_init__(self) -> None:
        c = _as_float_array(self.matrix, "cost matrix")
        if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] < 2:
            raise InvalidCostMatrix(
                f"cost matrix: expected a square (K, K) array, K >= 2, got {c.shape}"
            )
        c = validate_cost_matrix(c, c.shape[0])
        c.setflags(write=False)
        object.__setattr__(self, "matrix", c)

    @classmethod
    def from_binary(
        cls, c_fp: float, c_fn: float, c_tp: float = 0.0, c_tn: float = 0.0
    ) -> CostMatrix:
        """Binary matrix ``[[c_tn, c_fp], [c_fn, c_tp]]`` from named costs.

        Parameters
        ----------
        c_fp, c_fn, c_tp, c_tn : float
            Named costs, validated as in :func:`binary_threshold` (messages name the field).

        Returns
        -------
        CostMatrix
        """
        vals = {"c_fp": c_fp, "c_fn": c_fn, "c_tp": c_tp, "c_tn": c_tn}
        for name, v in vals.items():
            x = _as_float_array(v, name)
            if x.ndim != 0:
                raise InvalidCostMatrix(f"{name}: expected a single number, got shape {x.shape}")
        c = np.array([[c_tn, c_fp], [c_fn, c_tp]], dtype=np.float64)
        _check_stack(c[None], "named")
        return cls(c)

    @classmethod
    def from_array(cls, a: ArrayLike, n_classes: int) -> CostMatrix:
        """Validated matrix from a ``(n_classes, n_classes)`` array-like ``a``
        (:func:`validate_cost_matrix`: arguments and errors)."""
        return cls(validate_cost_matrix(a, n_classes))

    @property
    def n_classes(self) -> int:
        """Number of classes ``K``."""
        return int(self.matrix.shape[0])

    @property
    def threshold(self) -> float:
        """Binary threshold ``(c_fp - c_tn) / ((c_fp - c_tn) + (c_fn - c_tp))`` (Eq. 2 / Eq. 20).

        Raises
        ------
        InvalidCostMatrix
            If the matrix is not 2 x 2.
        """
        if self.n_classes != 2:
            raise InvalidCostMatrix(
                f"threshold: only defined for 2 classes, this cost matrix has {self.n_classes}"
            )
        c = self.matrix
        return float(_threshold(c[0, 1] - c[0, 0], c[1, 0] - c[1, 1]))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CostMatrix) and np.array_equal(self.matrix, other.matrix)

    def __hash__(self) -> int:
        return hash(self.matrix.tobytes())


def row_cost_matrices(
    c_fp: ArrayLike,
    c_fn: ArrayLike,
    c_tp: ArrayLike | None = None,
    c_tn: ArrayLike | None = None,
    *,
    n_rows: int | None = None,
) -> np.ndarray:
    """Stack of per-row binary cost matrices (example-dependent costs).

    Each argument is a number (same for every row) or a 1-D array with one value per
    row, e.g. ``c_fn = amount`` when a missed fraud costs the transaction's amount.
    ``c_tp``/``c_tn`` default to 0.

    Parameters
    ----------
    c_fp, c_fn, c_tp, c_tn : float or array-like of shape (n,)
    n_rows : int, optional
        Expected number of rows; per-row arrays must have this length (scalars broadcast).
        Without it ``n`` is the common length of the arrays, or 1 if all are scalars.

    Returns
    -------
    ndarray of shape (n, 2, 2)
        ``out[r] = [[c_tn[r], c_fp[r]], [c_fn[r], c_tp[r]]]``.

    Raises
    ------
    InvalidCostMatrix
        Lengths disagree with each other or with ``n_rows``; or a row is invalid (see
        :func:`validate_cost_matrix`); the message names the row index and the field,
        e.g. ``"row 3, column 'c_fn': cost must be finite and >= 0, got -1.0"``.

    References
    ----------
    .. [1] Nikolaou et al. (2016), Eq. 3 (class-level costs); here costs may differ per example.
    """
    raw = {"c_fp": c_fp, "c_fn": c_fn, "c_tp": 0.0 if c_tp is None else c_tp,
           "c_tn": 0.0 if c_tn is None else c_tn}  # fmt: skip
    arrays: dict[str, np.ndarray] = {}
    n = None if n_rows is None else int(n_rows)
    for name, v in raw.items():
        x = _as_float_array(v, name)
        if x.ndim > 1:
            raise InvalidCostMatrix(
                f"{name}: expected a number or a 1-D array, got shape {x.shape}"
            )
        if x.ndim == 1:
            if n is not None and x.shape[0] != n:
                expected = "the number of rows" if n_rows is not None else "the other cost arrays"
                raise InvalidCostMatrix(
                    f"{name}: expected {n} values ({expected}), got {x.shape[0]}"
                )
            n = x.shape[0]
        arrays[name] = x
    n = 1 if n is None else n
    out = np.empty((n, 2, 2), dtype=np.float64)
    for (i, j), name in _BINARY_NAMES.items():
        out[:, i, j] = arrays[name]
    _check_stack(out, "rows")
    return out


def _check_proba(proba: ArrayLike, k: int | None = None) -> np.ndarray:
    try:
        p = np.asarray(proba, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput("proba: expected a (n, K) array of probabilities") from None
    if p.ndim != 2 or p.shape[1] < 2:
        raise InvalidInput(f"proba: expected shape (n, K) with K >= 2, got {p.shape}")
    if k is not None and p.shape[1] != k:
        raise InvalidInput(f"proba: expected {k} columns (one per class), got {p.shape[1]}")
    if p.shape[0] == 0:
        return p
    if p.shape[0] == 1:  # one row (a one-row request): Python floats, no numpy calls
        row = p[0].tolist()
        if all(0.0 <= v <= 1.0 for v in row) and abs(sum(row) - 1.0) <= _PROBA_TOL:
            return p  # otherwise the checks below name the bad entry
    # fast path (a few numpy calls: one-row requests): min and max propagate NaN, which
    # fails both comparisons, so anything but values in [0, 1] takes the slow path that
    # names the first bad entry
    if not (p.min() >= 0.0 and p.max() <= 1.0):
        finite = np.isfinite(p)
        bad = ~finite | (np.where(finite, p, 0.5) < 0) | (np.where(finite, p, 0.5) > 1)
        r, j = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidInput(
            f"proba: row {r}, column {j}: expected a probability in [0, 1], got {p[r, j]}"
        )
    s = p.sum(axis=1)
    off = np.abs(s - 1.0)
    if off.max() > _PROBA_TOL:
        r = int(np.flatnonzero(off > _PROBA_TOL)[0])
        raise InvalidInput(f"proba: row {r} sums to {s[r]}, expected 1 (within {_PROBA_TOL})")
    return p


def _check_priors(priors: ArrayLike, k: int, name: str) -> np.ndarray:
    try:
        pi = np.asarray(priors, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidPriors(f"{name}: expected {k} numbers, got {priors!r:.80}") from None
    if pi.shape != (k,):
        raise InvalidPriors(f"{name}: expected {k} values (one per class), got shape {pi.shape}")
    if not np.all(np.isfinite(pi)):
        raise InvalidPriors(f"{name}: every prior must be finite, got {pi.tolist()}")
    if np.any(pi <= 0):
        j = int(np.flatnonzero(pi <= 0)[0])
        raise InvalidPriors(f"{name}[{j}]: every prior must be > 0, got {pi[j]}")
    if abs(pi.sum() - 1.0) > 1e-6:
        raise InvalidPriors(f"{name}: priors must sum to 1 (within 1e-6), got sum {pi.sum()}")
    return pi


def class_priors(
    y_index: np.ndarray, n_classes: int, sample_weight: ArrayLike | None = None
) -> np.ndarray:
    """Training class priors: each class's share of the (weighted) training rows.

    With ``sample_weight`` the shares are weighted, as the calibrator that produces the
    probabilities is fitted with the same weights; these are the ``train_priors`` that
    :func:`apply_prior_shift` divides by.

    Raises
    ------
    InvalidInput
        ``sample_weight`` of the wrong length, non-finite or negative, or a class whose
        rows all have weight 0 (it has no training prior; the message names the class index).
    """
    y_index = np.asarray(y_index, dtype=np.intp)
    totals: np.ndarray
    if sample_weight is None:
        totals = np.bincount(y_index, minlength=n_classes).astype(np.float64)
    else:
        try:
            sw = np.asarray(sample_weight, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidInput("sample_weight: expected numbers") from None
        if sw.shape != y_index.shape:
            raise InvalidInput(
                f"sample_weight: expected {y_index.size} weights (one per row), got shape {sw.shape}"
            )
        if not np.all(np.isfinite(sw)) or np.any(sw < 0):
            raise InvalidInput("sample_weight: every weight must be finite and >= 0")
        totals = np.bincount(y_index, weights=sw, minlength=n_classes)
    if np.any(totals <= 0):
        k = int(np.argmax(totals <= 0))
        raise InvalidInput(
            f"sample_weight: class index {k} has total weight 0; every class needs a "
            "positive total weight"
        )
    return totals / totals.sum()


def apply_prior_shift(
    proba: ArrayLike, train_priors: ArrayLike, deploy_priors: ArrayLike
) -> np.ndarray:
    """Adjust probabilities to deployment class priors that differ from training priors.

    ``p'_k = p_k * pi'_k / pi_k / sum_j (p_j * pi'_j / pi_j)`` (Bayes' rule with the
    class-conditional densities unchanged). Equal priors give back ``proba``. Deciding on
    the shifted probabilities equals deciding on the original ones with each cost-matrix
    row ``i`` scaled by ``pi'_i / pi_i`` -- the cost/prior equivalence of section 2.1.

    Parameters
    ----------
    proba : array-like of shape (n, K)
        Calibrated probabilities in model class order, rows summing to 1.
    train_priors, deploy_priors : array-like of shape (K,)
        Finite, > 0, summing to 1 within 1e-6.

    Returns
    -------
    ndarray of shape (n, K)

    Raises
    ------
    InvalidPriors
        Priors of the wrong length, non-finite, <= 0 or not summing to 1 (message names which).
    InvalidInput
        ``proba`` malformed.

    References
    ----------
    .. [1] Nikolaou et al. (2016), section 2.1 (skewed classes and skewed costs as
       adjusted class priors).
    .. [2] Elkan, C. (2001). The foundations of cost-sensitive learning. IJCAI.
    """
    p = _check_proba(proba)
    k = p.shape[1]
    ratio = _check_priors(deploy_priors, k, "deploy_priors") / _check_priors(
        train_priors, k, "train_priors"
    )
    q = p * ratio
    total = q.sum(axis=1, keepdims=True)
    return q / total


@dataclass(frozen=True, eq=False)
class Decisions:
    """Result of :func:`decide`.

    Attributes
    ----------
    labels_index : ndarray of shape (n,), int64
        Chosen class index (into the model's ``classes_``) per row.
    expected_cost : ndarray of shape (n,), float64
        ``sum_i p_i C[i][j]`` of the chosen ``j`` per row.
    threshold : ndarray of shape (n,) or None
        For two classes, the per-row threshold ``t`` (positive iff ``p1 >= t``); else None.
    action_index : ndarray of shape (n,), int64, or None
        Decisions among named actions (:mod:`models.decisions.actions`): the chosen action
        (column of the ``(K, A)`` cost matrix) per row; ``labels_index`` then holds the
        class an action stands for, or -1 for an action that stands for no class. None
        for square cost matrices (the decision is a class).
    """

    labels_index: np.ndarray
    expected_cost: np.ndarray
    threshold: np.ndarray | None
    action_index: np.ndarray | None = None


def _threshold(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray | float:
    """``a / (a + b)`` for ``a, b >= 0`` with ``a + b > 0``, without overflow.

    Both are divided by ``max(a, b)`` first, so costs near the float64 maximum (where
    ``a + b`` overflows to inf and the plain ratio would give 0) and subnormal costs give
    the same threshold as any positive multiple of them (e.g. 1e308/1e308 -> 0.5).
    """
    s = np.maximum(a, b)
    return (a / s) / ((a / s) + (b / s))


def _decide_one(p: np.ndarray, c: np.ndarray) -> Decisions:
    """:func:`decide` of one row under one matrix, in Python floats: the same operations
    in the same order as the vectorised path (IEEE double either way), so the same bits,
    at a few microseconds instead of a dozen numpy calls."""
    k = p.shape[1]
    if k == 2:
        (p0, p1), ((c00, c01), (c10, c11)) = p[0].tolist(), c.tolist()
        a, b = c01 - c00, c10 - c11
        m = max(a, b)  # _threshold: a, b >= 0 (validated), not both 0
        t = (a / m) / ((a / m) + (b / m))
        pos = p1 >= t
        cost = p0 * c01 + p1 * c11 if pos else p0 * c00 + p1 * c10
        return Decisions(np.array([int(pos)]), np.array([cost]), np.array([t]))
    e = np.einsum("ni,ij->nj", p, c)[0].tolist()  # the batch path's sums (see below)
    best = k - 1
    for j in range(k - 2, -1, -1):  # argmin, ties -> higher index
        if e[j] < e[best]:
            best = j
    return Decisions(np.array([best]), np.array([e[best]]), None)


def decide(
    proba: ArrayLike, costs: CostMatrix | ArrayLike, *, validated: bool = False
) -> Decisions:
    """Minimum-expected-cost decisions ``argmin_j sum_i p_i C[i][j]``.

    Parameters
    ----------
    proba : array-like of shape (n, K)
        Calibrated probabilities, model class order, rows summing to 1 (within 1e-6).
    costs : CostMatrix, array-like of shape (K, K), or array-like of shape (n, K, K)
        One cost matrix for all rows, or one per row (see :func:`row_cost_matrices`).
    validated : bool, default=False
        ``costs`` is a float64 array that :func:`validate_cost_matrix` or
        :func:`row_cost_matrices` already returned: skip re-checking every entry (the
        shapes are still checked). For hot paths that validated once.

    Returns
    -------
    Decisions
        Ties are broken toward the higher class index. For ``K = 2`` the decision is
        computed as ``p1 >= t`` with ``t`` the per-row threshold (Eq. 4 / Eq. 20), which
        is the expected-cost argmin with that tie rule; ``threshold`` is returned.

    Raises
    ------
    InvalidCostMatrix
        Invalid costs (see :func:`validate_cost_matrix`; per-row errors name the row),
        or the number of per-row matrices differs from the number of rows.
    InvalidInput
        ``proba`` malformed.

    References
    ----------
    .. [1] Nikolaou et al. (2016), Eq. 4 (Bayes decision), Theorem 1 (Eqs. 19-20).

    Examples
    --------
    With ``c_fn = 5 c_fp`` a row is decided positive once ``p1 >= 1/6``:

    >>> d = decide([[0.9, 0.1], [0.7, 0.3], [0.2, 0.8]], CostMatrix.from_binary(1.0, 5.0))
    >>> d.labels_index.tolist(), d.expected_cost.round(2).tolist()
    ([0, 1, 1], [0.5, 0.7, 0.2])
    """
    p = _check_proba(proba)
    n, k = p.shape
    if isinstance(costs, CostMatrix):
        c = costs.matrix
        if c.shape[0] != k:
            raise InvalidCostMatrix(f"cost matrix: expected shape ({k}, {k}), got {c.shape}")
    else:
        c = _as_float_array(costs, "costs")
        if c.ndim == 2:
            if not validated or c.shape != (k, k):
                c = validate_cost_matrix(c, k)
        elif c.ndim == 3:
            if c.shape[1:] != (k, k):
                raise InvalidCostMatrix(
                    f"costs: expected per-row matrices of shape ({n}, {k}, {k}), got {c.shape}"
                )
            if c.shape[0] != n:
                raise InvalidCostMatrix(
                    f"costs: got {c.shape[0]} per-row cost matrices for {n} rows; expected one per row"
                )
            if not validated:
                _check_stack(c, "rows")
        else:
            raise InvalidCostMatrix(
                f"costs: expected shape ({k}, {k}) or ({n}, {k}, {k}), got {c.shape}"
            )
    if n == 1 and c.ndim == 2:
        return _decide_one(p, c)
    if k == 2:
        if c.ndim == 2:
            t = np.full(n, _threshold(c[0, 1] - c[0, 0], c[1, 0] - c[1, 1]))
            pos = p[:, 1] >= t
            exp_cost = np.where(pos, p[:, 0] * c[0, 1] + p[:, 1] * c[1, 1],
                                p[:, 0] * c[0, 0] + p[:, 1] * c[1, 0])  # fmt: skip
        else:
            t = np.asarray(_threshold(c[:, 0, 1] - c[:, 0, 0], c[:, 1, 0] - c[:, 1, 1]))
            pos = p[:, 1] >= t
            exp_cost = np.where(pos, p[:, 0] * c[:, 0, 1] + p[:, 1] * c[:, 1, 1],
                                p[:, 0] * c[:, 0, 0] + p[:, 1] * c[:, 1, 0])  # fmt: skip
        return Decisions(pos.astype(np.int64), exp_cost, t)
    # sum_i p_i C[i, :] by einsum's own loops (no BLAS): every row's sums in the same
    # order whatever the batch. ``p @ c`` goes through BLAS, whose blocking depends on
    # the number of rows: a row alone and in a batch could differ in the last bit and
    # flip a near-tie. One call (1.9 us for one row, K = 6), not a loop over classes (9 us).
    e = np.einsum("ni,ij->nj", p, c) if c.ndim == 2 else np.einsum("ni,nij->nj", p, c)
    idx = (k - 1) - np.argmin(e[:, ::-1], axis=1)  # argmin, ties -> higher index
    return Decisions(idx.astype(np.int64), e[np.arange(n), idx], None)
