"""The ``"stumps"`` layout: one threshold test per learner.

Arrays (one entry per learner, shape ``(M,)``): ``feature`` (int32), ``threshold``,
``value_left``, ``value_right``, ``value_missing`` (float64). ``h(x) = value_left`` if
``x[feature] <= threshold``, ``value_missing`` if ``x[feature]`` is NaN, else
``value_right``. Decision stumps and univariate logistic regressions (threshold
``-b0/b1``) both use it.

The sums need no per-learner loop: with ``L_t(x) = I(x_{j_t} <= t_t)``,
``F(x) = sum_t alpha_t v^R_t + L(x) . alpha (v^L - v^R) + isnan(x) . Miss`` where ``Miss``
moves NaN rows from the right value to the missing value; the class votes likewise, one
class column at a time (matrix-vector: a (rows, M) x (M, K) product can hand work to
BLAS threads, which on a busy machine sometimes costs milliseconds instead of
microseconds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.inference.layouts.attribution import single_feature_terms, tag_map
from models.inference.layouts.rows import CHUNK, block, check_one_per_learner, row_sums
from models.specs.layout import EnsembleLayout

__all__ = ["LAYOUT"]

_VALUES = ("value_left", "value_right", "value_missing")


def _prepare(alphas: np.ndarray, arrays: dict[str, np.ndarray], n_features: int) -> dict[str, Any]:
    check_one_per_learner(arrays, alphas.size, n_features)
    derived: dict[str, Any] = {}
    for tag, f in (("F", lambda z: z), ("V", lambda z: (z > 0).astype(np.float64))):
        vl, vr, vm = (f(arrays[n]) for n in _VALUES)
        derived[f"const{tag}"] = float(alphas @ vr)
        derived[f"left{tag}"] = alphas * (vl - vr)
        miss = np.zeros(int(n_features))
        np.add.at(miss, arrays["feature"], alphas * (vm - vr))
        derived[f"miss{tag}"] = miss
    derived["feature"] = arrays["feature"].astype(np.intp)
    return derived


def _outputs(ensemble: Any, X: np.ndarray) -> np.ndarray:
    a = ensemble.arrays
    x = np.take(X, ensemble._derived["feature"], axis=1)
    h = np.where(x <= a["threshold"], a["value_left"], a["value_right"])
    return np.where(np.isnan(x), a["value_missing"], h)


def _sums(ensemble: Any, X: np.ndarray, tag: str) -> np.ndarray:
    d = ensemble._derived
    thr = ensemble.arrays["threshold"]
    out = np.empty(X.shape[0])
    codes = X.dtype == np.uint8
    has_nan = codes or bool(np.isnan(X).any())
    for i in range(0, X.shape[0], CHUNK):
        xc = block(X, i)
        left = np.take(xc, d["feature"], axis=1) <= thr
        r = row_sums(left, d[f"left{tag}"])
        if has_nan:
            r += row_sums(np.isnan(xc), d[f"miss{tag}"])
        out[i : i + CHUNK] = r + d[f"const{tag}"]
    return out


def _explain(ensemble: Any, X: np.ndarray, tag: str) -> tuple[float, np.ndarray]:
    """Attribution of the sums (:mod:`~models.inference.layouts.attribution`): a stump's
    whole term goes to its feature, measured from the mean of its two branch values
    (the root of a depth-1 tree, each branch weighted equally: the artifact keeps no
    training counts)."""
    g, a = tag_map(tag), ensemble.arrays
    reference = (g(a["value_left"]) + g(a["value_right"])) / 2.0
    return single_feature_terms(ensemble, X, tag, reference, _outputs)


class _Votes:
    """The class votes of stumps whose values are class indices (module docstring); a
    class, not a closure, so that a fitted estimator holding it pickles."""

    def __init__(self, ensemble: Any, k: int) -> None:
        a, beta = ensemble.arrays, ensemble.alphas
        m = np.arange(beta.size)
        vl, vr, vm = (a[n].astype(np.intp) for n in _VALUES)
        diff = np.zeros((beta.size, k))
        np.add.at(diff, (m, vl), beta)
        np.add.at(diff, (m, vr), -beta)
        miss = np.zeros((ensemble.n_features, k))
        self.feature = a["feature"].astype(np.intp)
        np.add.at(miss, (self.feature, vm), beta)
        np.add.at(miss, (self.feature, vr), -beta)
        self.k = k
        self.const = np.bincount(vr, weights=beta, minlength=k)
        self.diff = np.ascontiguousarray(diff.T)  # class-major: one matrix-vector product
        self.miss = np.ascontiguousarray(miss.T)  # per class
        self.threshold = a["threshold"]

    def __call__(self, X: np.ndarray, total: float) -> np.ndarray:
        out = np.empty((X.shape[0], self.k))
        has_nan = bool(np.isnan(X).any())
        for i in range(0, X.shape[0], CHUNK):
            xc = X[i : i + CHUNK]
            left = np.take(xc, self.feature, axis=1) <= self.threshold
            v = np.column_stack([row_sums(left, col) for col in self.diff]) + self.const
            if has_nan:
                nan = np.isnan(xc)
                v += np.column_stack([row_sums(nan, col) for col in self.miss])
            out[i : i + CHUNK] = v
        return out if not total else np.clip(out / total, 0.0, 1.0)


ARRAYS = {"feature": np.int32, **dict.fromkeys(("threshold", *_VALUES), np.float64)}
DESCRIPTION = "value_left if x[feature] <= threshold, value_missing if NaN, else value_right"
LAYOUT = EnsembleLayout(
    "stumps", DESCRIPTION, ARRAYS, _prepare, _outputs, _sums, _Votes,
    class_arrays=_VALUES, cuts=("feature", "threshold"), explain=_explain,
)  # fmt: skip
