"""Helpers shared by the tests of the multiclass boosters (imported by name)."""

from __future__ import annotations

from typing import Any

import numpy as np


def assert_same_rounds(ours: Any, ref: Any, *Xs: np.ndarray, ref_alphas: str = "") -> None:
    """``ours`` predicts as ``ref`` on every ``X`` and kept the same learner weights and
    weighted errors (to rounding); ``ref_alphas`` names ``ref``'s weights when they are
    not its ``estimator_alphas_`` (scikit-learn's ``estimator_weights_``)."""
    for X in Xs:
        np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    alphas = getattr(ref, ref_alphas or "estimator_alphas_")
    np.testing.assert_allclose(ours.estimator_alphas_, alphas, rtol=1e-12)
    np.testing.assert_allclose(ours.estimator_errors_, ref.estimator_errors_, rtol=1e-12)


def stump_ties(estimator: Any) -> dict[str, str]:
    """scikit-learn checks a stump booster is expected to fail: on the 15-row data of
    check_sample_weight_equivalence many splits tie exactly, and integer weights or
    repeated (shuffled) rows sum the same weights in another order, so the float results
    differ in the last bit and the tie goes another way. The stump itself is exact
    (test_weak.py), only the tie-breaking is order dependent."""
    if estimator.weak_learner != "stump":
        return {}
    return {"check_sample_weight_equivalence_on_dense_data": "float ties (row order)"}
