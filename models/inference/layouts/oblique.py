"""The ``"oblique"`` layout: learner ``t`` has ``R >= 2`` linear functions of all features.

Arrays: ``coef`` (float64, ``(M * R * d,)``: learner-major, then function, then
feature), ``intercept`` and ``value`` (float64, ``(M * R,)``), ``fill`` (float64,
``(M * d,)``). With ``x'`` = ``x`` whose NaN entries are replaced by the learner's
``fill`` (the training mean of the feature), ``s_r(x) = sum_j coef[t, r, j] x'_j +
intercept[t, r]`` (summed over ``j`` in index order, the same order for every batch) and
``h_t(x) = value[t, argmax_r s_r(x)]`` (ties: the lower ``r``). Two classes: ``R = 2``,
function 0 is zero and ``value = (-1, +1)``, i.e. ``sign(w.x + b)`` with ``-1`` on the
hyperplane; SAMME: ``R = K`` and ``value = (0, .., K-1)``, the argmax class of a linear
model (:mod:`models.weak.oblique`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.exceptions import ArtifactError, NotExplainable
from models.features.binning import codes_as_float
from models.inference.layouts.attribution import tag_map
from models.inference.layouts.rows import CHUNK, block
from models.specs.layout import EnsembleLayout

__all__ = ["LAYOUT", "learner_outputs"]

_EXPLAIN_CELLS = 1 << 20  # rows x learners x features per block of an explanation


def _prepare(alphas: np.ndarray, arrays: dict[str, np.ndarray], n_features: int) -> dict[str, Any]:
    """Validate the arrays; return them reshaped per learner (and R, functions per learner)."""
    m, d = alphas.size, int(n_features)
    n_fun = arrays["intercept"].size
    if n_fun % m or n_fun // m < 2:
        raise ArtifactError(
            f"array 'intercept' must hold R >= 2 entries per learner ({m} learners)"
        )
    r = n_fun // m
    for name, size in (("coef", m * r * d), ("value", m * r), ("fill", m * d)):
        if arrays[name].size != size:
            raise ArtifactError(
                f"array {name!r} must have shape ({size},), got {arrays[name].shape}"
            )
    # writeable contiguous copies: an artifact's arrays are read-only, which the compiled
    # kernel (models.kernels.predict.oblique_outputs) would take as another type and
    # compile again on a request
    return {
        "n_functions": r,
        "coef": np.array(arrays["coef"].reshape(m, r, d)),
        "intercept": np.array(arrays["intercept"].reshape(m, r)),
        "value": np.array(arrays["value"].reshape(m, r)),
        "fill": np.array(arrays["fill"].reshape(m, d)),
    }


def learner_outputs(ensemble: Any, X: np.ndarray) -> np.ndarray:
    """h_t(x) of every oblique learner, shape (rows, M), in row blocks.

    One compiled call per block (:func:`models.kernels.predict.oblique_outputs`): a
    row's products are summed along the features in numpy's pairwise order, not by a
    BLAS product, so its outputs do not depend on the batch it came in. The numpy
    form (about ten calls on (rows, M, R, d) temporaries) took about 30 us for one
    row and 3 times as long for 10,000 (tests/models/kernels/test_predict_kernels.py checks
    the kernel against it bit for bit).
    """
    from models.kernels.predict import as_kernel_input, oblique_outputs  # numba

    d = ensemble._derived
    coef, b, value, fill = d["coef"], d["intercept"], d["value"], d["fill"]
    if X.shape[0] <= CHUNK and X.dtype != np.uint8:
        return oblique_outputs(as_kernel_input(X), coef, b, value, fill)  # type: ignore[no-any-return]
    out = np.empty((X.shape[0], coef.shape[0]))
    for i in range(0, X.shape[0], CHUNK):  # pre-binned codes: float one block at a time
        xc = as_kernel_input(block(X, i))
        out[i : i + xc.shape[0]] = oblique_outputs(xc, coef, b, value, fill)
    return out


def _explain(ensemble: Any, X: np.ndarray, tag: str) -> tuple[float, np.ndarray]:
    """Attribution by the linear split terms (two functions per learner only).

    Learner ``t`` answers by the sign of ``s(x) = w.x' + c`` (``w``, ``c`` the second
    function minus the first). Its reference is its answer at its fill point ``mu`` (the
    training mean), which goes to the bias; a row whose answer differs moves the term by
    ``delta = alpha_t (g(h_t(x)) - g(h_t(mu)))``, shared among the features in proportion
    to their split terms ``w_j (x'_j - mu_j)``, which sum to ``s(x) - s(mu)``. That sum is
    not zero when the answers differ (``s(x)`` and ``s(mu)`` lie on the two sides of the
    hyperplane, so ``|s(x) - s(mu)| >= |s(mu)|``); should rounding make it zero, the
    move is shared equally.
    """
    dv = ensemble._derived
    if dv["n_functions"] != 2:
        raise NotExplainable(
            f"the oblique layout explains learners of two linear functions (two classes); "
            f"these have {dv['n_functions']} (class-valued learners)"
        )
    if X.dtype == np.uint8:
        X = codes_as_float(X)
    g, alphas = tag_map(tag), ensemble.alphas
    coef, b, value, mu = dv["coef"], dv["intercept"], dv["value"], dv["fill"]
    w = coef[:, 1, :] - coef[:, 0, :]
    at_mu = (coef * mu[:, None, :]).sum(axis=2) + b  # (M, 2), as the kernel compares them
    steps = np.arange(alphas.size)
    reference = g(value[steps, (at_mu[:, 1] > at_mu[:, 0]).astype(np.intp)])
    delta = (g(learner_outputs(ensemble, X)) - reference) * alphas
    m, d = mu.shape
    out = np.empty((X.shape[0], d))
    step = max(1, _EXPLAIN_CELLS // (m * d))  # rows per block: (rows, M, d) temporaries
    for i in range(0, X.shape[0], step):
        xc = X[i : i + step, None, :]
        xs = np.where(np.isnan(xc), mu, xc)  # (rows, M, d): each learner's fill
        terms = (xs - mu) * w
        total = terms.sum(axis=2)
        moves = delta[i : i + step]
        ok = (moves != 0) & (total != 0)
        scale = np.where(ok, moves / np.where(ok, total, 1.0), 0.0)  # (rows, M)
        even = np.where(ok, 0.0, moves).sum(axis=1) / d  # a zero total: shared equally
        out[i : i + step] = np.matmul(scale[:, None, :], terms)[:, 0, :] + even[:, None]
    return float(alphas @ reference), out


ARRAYS = dict.fromkeys(("coef", "intercept", "value", "fill"), np.float64)
DESCRIPTION = "R linear functions of all features (NaN: the training mean); the largest one's value"
LAYOUT = EnsembleLayout(
    "oblique", DESCRIPTION, ARRAYS, _prepare, learner_outputs, class_arrays=("value",),
    explain=_explain,
)  # fmt: skip
