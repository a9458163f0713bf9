"""The algorithm-catalog entry of SAMME: SAMME inside :class:`CalibratedMulticlass`.

It lives apart from :mod:`models.multiclass.samme` because the entry needs the
calibrated wrapper, which itself imports SAMME: with the entry in samme.py the two
modules imported each other (the circle was hidden inside a function). Here the imports
run one way: this entry -> calibrated wrapper -> SAMME.
"""

from __future__ import annotations

from typing import Any

from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.samme import SAMME
from models.specs.algorithm import AlgorithmSpec


def _build(common: dict[str, Any], params: dict[str, Any]) -> CalibratedMulticlass:
    samme = SAMME(**common)
    samme._check_params()
    return CalibratedMulticlass(samme, random_state=common.get("random_state"))


SPEC = AlgorithmSpec(
    name="samme",
    title="SAMME with calibrated class probabilities",
    family="multiclass",
    source="Zhu, Zou, Rosset & Hastie (2009), Multi-class AdaBoost; the cost-insensitive "
    "baseline of Yang, Guo & Chang (2020)",
    equations="Zhu et al. 2009: Algorithm 2 (SAMME); scores: vote fractions (Eq. 24 of "
    "Nikolaou et al. for K = 2) or softmax of the votes (population minimiser); per-class "
    "calibration + normalisation (Zadrozny & Elkan 2002)",
    trains_with_costs=False,
    decision_rule="argmin_j sum_i p_i C[i][j] over the calibrated class probabilities at "
    "the request's K x K cost matrix (0-1 costs: argmax p)",
    build=_build,
    weak_learners="multiclass",
    notes="Trained without costs; one version serves every K x K cost matrix. "
    "calibration none serves the raw SAMME vote fractions (uncalibrated).",
)
