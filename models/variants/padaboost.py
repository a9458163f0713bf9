"""P-AdaBoost: discrete AdaBoost with the Friedman-Hastie-Tibshirani logistic link.

Mease, Wyner & Buja (2007, section 2) call "P-AdaBoost" the procedure that runs
discrete AdaBoost (their section 2 pseudocode: alpha_m = 1/2 log((1 - eps_m) / eps_m),
F_m = F_{m-1} + alpha_m g_m, weights times exp(-alpha_m g_m(x_i) y_i)) and maps the
score through the link of their Eq. (1)::

    p_m(y = 1 | x) = 1 / (1 + exp(-2 F_m(x)))                         (Eq. 1)

This is exactly the score s'(x) of Eq. (25) of Nikolaou et al. (2016), so P-AdaBoost is
:class:`models.boosting.adaboost.AdaBoost` with ``score_kind="logistic"``; no new estimator is
needed, only this catalog entry. The paper's point is negative: these probabilities
overfit (they diverge to 0 and 1 as M grows) while the classification at 1/2 does not.
The paper's P-AdaBoost is the *uncalibrated* form (the service's calibration "none");
any other calibration wraps the link output in a calibration map fitted on held-out data.

References
----------
.. [1] D. Mease, A. J. Wyner, A. Buja. "Boosted classification trees and class
   probability/quantile estimation." JMLR 8 (2007), 409-439: section 2, Eq. (1).
.. [2] J. Friedman, T. Hastie, R. Tibshirani. "Additive logistic regression: a
   statistical view of boosting." Annals of Statistics 28 (2000), 337-374.
.. [3] N. Nikolaou et al. "Cost-sensitive boosting algorithms: Do we really need them?"
   Machine Learning 104 (2016): Eqs. 5-7 (AdaBoost), Eq. 25 (s'(x)).
"""

from __future__ import annotations

from typing import Any

from models.boosting.adaboost import AdaBoost
from models.specs.algorithm import AlgorithmSpec

__all__ = ["SPEC", "build_p_adaboost"]


def build_p_adaboost(common: dict[str, Any], params: dict[str, Any]) -> AdaBoost:
    """Unfitted P-AdaBoost: ``AdaBoost(**common)`` with ``score_kind="logistic"`` (Eq. 1).

    The request's score kind is overridden: the link of Eq. (1) *is* the algorithm.
    """
    return AdaBoost(**{**common, "score_kind": "logistic"})


SPEC = AlgorithmSpec(
    name="p_adaboost",
    title="P-AdaBoost (AdaBoost + logistic link p = 1/(1+exp(-2F)))",
    family="binary",
    source="Mease, Wyner & Buja (2007), JMLR 8, section 2; link of Friedman, Hastie & "
    "Tibshirani (2000)",
    equations="Mease et al. 2007: section 2 (discrete AdaBoost), Eq. 1 "
    "p = 1/(1+exp(-2F(x))); = Nikolaou et al. 2016 Eqs. 5-7 and Eq. 25 (s'(x))",
    trains_with_costs=False,
    decision_rule="sign[p(y=1|x) - c], p = 1/(1+exp(-2F(x))) (Eq. 1) or its calibrated "
    "version, c = c_fp / (c_fp + c_fn) at the request's costs (section 3 of Mease et al.: "
    "classify +1 iff p > c). Uncalibrated this is exactly AdaMEC (Table 3 of Nikolaou et "
    "al.): p >= c iff F(x) >= 1/2 log(c_fp / c_fn)",
    build=build_p_adaboost,
    properties={"fgd_consistent": True, "cost_consistent": True, "asymmetry_preserving": True},
    # P-AdaBoost's probabilities are its link, not calibrated (Mease et al. section 2).
    calibrated_probabilities=False,
    notes="AdaBoost served with the score s'(x) = 1/(1+exp(-2F)) regardless of the "
    "request's score kind. calibrated_probabilities is false: P-AdaBoost's probabilities "
    "are this link, which Mease et al. show overfit (diverge to 0/1 with M) while the 1/2 "
    "classification does not. It is the paper's (uncalibrated) P-AdaBoost only when the "
    "request sets calibration 'none'; the service wraps the estimator in "
    "CalibratedBoosting with the request's calibration, so platt/isotonic serve a "
    "calibrated map of the link instead (the same model as 'adaboost' with score "
    "'logistic'). Use 'jous', or 'adaboost' with a calibration, for probabilities.",
)
