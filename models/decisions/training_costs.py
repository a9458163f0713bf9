"""Training costs: the binary algorithms' ``c_fp``, ``c_fn`` and the multiclass
algorithms' cost matrices (validation and defaults).

Convention (the project's and the paper's): ``C[i][j]`` is the cost of predicting class
``j`` when the truth is class ``i`` (rows = truth, columns = prediction), indices into
the sorted ``classes_``. Yang et al. write ``C_{j,k}`` for "truth j, predicted k" with
1-based classes, so their ``C_{j,k}`` is our ``C[j-1][k-1]``: the same matrix.

Yang et al. require ``C_{j,k} >= 0`` and assume ``C_{j,j} = 0`` (section 2.1; Lemma 1
uses ``alpha_{i,y_i} = 0``; a non-zero diagonal is left to future work, section 6), so
the diagonal must be zero here. Subtracting ``C[i][i]`` from row ``i`` changes every
expected cost of a row by the same amount and hence no Bayes decision (Eq. 4), which is
what the error message suggests.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from models.exceptions import InvalidInput

__all__ = ["check_cost", "check_cost_matrix", "zero_one_costs"]


def check_cost(name: str, value: Any) -> float:
    """``value`` as a finite float > 0, else :class:`InvalidInput` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InvalidInput(f"{name} must be a finite number > 0, got {value!r}")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise InvalidInput(f"{name} must be a finite number > 0, got {value!r}")
    return v


def zero_one_costs(n_classes: int) -> np.ndarray:
    """The cost-insensitive matrix ``C_{j,k} = I(j != k)`` (section 2.1), i.e. ``1 - I``."""
    return 1.0 - np.eye(int(n_classes))


def check_cost_matrix(
    value: Any, n_classes: int | None = None, *, where: str = "cost_matrix"
) -> np.ndarray:
    """Validate a training cost matrix; ``None`` means 0-1 costs (needs ``n_classes``).

    Parameters
    ----------
    value : array-like of shape (K, K) or None
        ``value[i][j]`` = cost of predicting class ``j`` when the truth is class ``i``.
    n_classes : int, optional
        Expected ``K`` (the number of classes in the training labels).
    where : str
        Name used in error messages (e.g. ``"params.cost_matrix"``).

    Returns
    -------
    ndarray of shape (K, K), float64
        A copy.

    Raises
    ------
    InvalidInput
        Not a square matrix of numbers, ``K`` different from ``n_classes``, ``K < 2``, an
        entry negative or not finite, a non-zero diagonal entry, or no positive
        misclassification cost at all. The message names the entry.

    References
    ----------
    Yang, Guo and Chang (2020), section 2.1 (``C_{j,k} >= 0``, ``C_{j,j} = 0``).
    """
    if value is None:
        if n_classes is None:
            raise InvalidInput(f"{where}: None (0-1 costs) needs the number of classes")
        return zero_one_costs(n_classes)
    try:
        c = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput(
            f"{where}: expected a square matrix of numbers (list of lists), got {value!r:.80}"
        ) from None
    if c.ndim != 2 or c.shape[0] != c.shape[1]:
        raise InvalidInput(
            f"{where}: expected a square K x K matrix (rows = truth, columns = prediction), "
            f"got shape {c.shape}"
        )
    k = c.shape[0]
    if k < 2:
        raise InvalidInput(f"{where}: expected at least 2 classes, got a {k} x {k} matrix")
    if n_classes is not None and k != n_classes:
        raise InvalidInput(
            f"{where}: expected a {n_classes} x {n_classes} matrix, one row and column per "
            f"class of the training labels (sorted), got {k} x {k}"
        )
    bad = ~np.isfinite(c) | (np.nan_to_num(c, nan=-1.0) < 0)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidInput(
            f"{where}[{i}][{j}] (truth {i}, prediction {j}): cost must be finite and >= 0, "
            f"got {c[i, j]}"
        )
    diag = np.diagonal(c)
    if np.any(diag != 0):
        i = int(np.flatnonzero(diag != 0)[0])
        raise InvalidInput(
            f"{where}[{i}][{i}]: the diagonal must be 0 (a correct prediction costs nothing, "
            f"as the angle-based loss of Yang et al. assumes), got {c[i, i]}; subtracting "
            f"C[{i}][{i}] from row {i} gives the same Bayes decisions"
        )
    if not np.any(c > 0):
        raise InvalidInput(f"{where}: at least one misclassification cost must be > 0")
    return c
