"""The ``"linear"`` layout: one linear function of one feature per learner.

Arrays (one entry per learner, shape ``(M,)``): ``feature`` (int32), ``slope``,
``intercept``, ``value_missing`` (float64). ``h(x) = slope * x[feature] + intercept``,
``value_missing`` if ``x[feature]`` is NaN: the linear weak learner ``a phi(x) + b`` of
cost-sensitive LogitBoost (Eqs. 50-53 of Masnadi-Shirazi & Vasconcelos 2007).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.inference.layouts.attribution import single_feature_terms, tag_map
from models.inference.layouts.rows import check_one_per_learner
from models.specs.layout import EnsembleLayout

__all__ = ["LAYOUT"]

#: Bound on a linear learner's output: a finite F (no inf - inf) for any finite input.
_LINEAR_CAP = 1e150


def _prepare(alphas: np.ndarray, arrays: dict[str, np.ndarray], n_features: int) -> dict[str, Any]:
    check_one_per_learner(arrays, alphas.size, n_features)
    return {"feature": arrays["feature"].astype(np.intp)}


def _outputs(ensemble: Any, X: np.ndarray) -> np.ndarray:
    """h_t(x) of every linear learner, shape (rows, M)."""
    a = ensemble.arrays
    x = np.take(X, ensemble._derived["feature"], axis=1)
    with np.errstate(over="ignore"):  # absurd x (|x| near 1e308): clipped below
        h = np.clip(x * a["slope"] + a["intercept"], -_LINEAR_CAP, _LINEAR_CAP)
    return np.where(np.isnan(x), a["value_missing"], h)


def _explain(ensemble: Any, X: np.ndarray, tag: str) -> tuple[float, np.ndarray]:
    """Attribution of the sums: a learner's term goes to its feature, measured from its
    value at ``x[feature] = 0`` (the intercept; the bias sums the intercepts)."""
    reference = tag_map(tag)(ensemble.arrays["intercept"])
    return single_feature_terms(ensemble, X, tag, reference, _outputs)


ARRAYS = {"feature": np.int32, **dict.fromkeys(("slope", "intercept", "value_missing"), np.float64)}
DESCRIPTION = "slope * x[feature] + intercept, value_missing if NaN (real-valued: no class votes)"
LAYOUT = EnsembleLayout("linear", DESCRIPTION, ARRAYS, _prepare, _outputs, explain=_explain)
