"""Per-feature attribution shared by the layouts (their ``explain``): exact sums.

Every layout's ``explain(ensemble, X, tag)`` returns ``(bias, contributions)`` for the sum
``sum_t alpha_t g(h_t(x))`` with ``g`` the identity (``tag="F"``, the margin F of Eq. 7 of
Nikolaou et al.) or ``g(h) = I(h > 0)`` (``tag="V"``, the votes of Eq. 24): ``bias`` is a
number, ``contributions`` has one column per feature, and ``bias + contributions.sum(1)``
equals the sum up to rounding (:mod:`models.inference.explanation` says what each
layout's terms are).

Learners of one feature (stumps, linear learners) need no path: the whole of
``alpha_t (g(h_t(x)) - r_t)`` goes to the learner's feature, ``r_t`` its reference value,
and the bias is ``sum_t alpha_t r_t`` (:func:`single_feature_terms`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from models.inference.layouts.rows import CHUNK, block

__all__ = ["tag_map", "single_feature_terms"]


def tag_map(tag: str) -> Callable[[np.ndarray], np.ndarray]:
    """``g`` of ``tag``: the identity for ``"F"``, ``I(h > 0)`` as float64 for ``"V"``."""
    if tag == "F":
        return lambda z: np.asarray(z, dtype=np.float64)
    return lambda z: (np.asarray(z) > 0).astype(np.float64)


def single_feature_terms(
    ensemble: object,
    X: np.ndarray,
    tag: str,
    reference: np.ndarray,
    outputs: Callable[[object, np.ndarray], np.ndarray],
) -> tuple[float, np.ndarray]:
    """``(bias, contributions)`` of learners that each read one feature (``feature``).

    ``reference`` holds ``r_t`` (already mapped by ``g``); ``outputs`` is the layout's
    ``h_t(x)``, the same function the served sums use. A row's terms
    ``alpha_t (g(h_t(x)) - r_t)`` are summed per feature (learners sorted by feature,
    one ``add.reduceat`` per row block: no BLAS product, whose threads can cost
    milliseconds on a busy machine).
    """
    g = tag_map(tag)
    alphas = ensemble.alphas  # type: ignore[attr-defined]
    d = int(ensemble.n_features)  # type: ignore[attr-defined]
    feature = ensemble.arrays["feature"].astype(np.intp)  # type: ignore[attr-defined]
    order = np.argsort(feature, kind="stable")
    used, starts = np.unique(feature[order], return_index=True)
    out = np.zeros((X.shape[0], d))
    for i in range(0, X.shape[0], CHUNK):
        xc = block(X, i)
        terms = (g(outputs(ensemble, xc)) - reference) * alphas
        out[i : i + xc.shape[0], used] = np.add.reduceat(terms[:, order], starts, axis=1)
    return float(alphas @ reference), out
