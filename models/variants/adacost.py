"""AdaCost (Fan et al.) and AdaCost(beta2) (Ting): rows AdaCost of Tables 1-4 of Nikolaou et al.

Both start from D^1_i proportional to c(y_i) and update with a cost-adjustment
function beta (Table 1):

    D^{t+1}_i proportional to D^t_i exp(-beta_i y_i alpha_t h_t(x_i)),
    beta_i = (1 + c(y_i)) / 2 if h_t(x_i) != y_i,  (1 - c(y_i)) / 2 if h_t(x_i) = y_i.

They differ in alpha (Table 2): AdaCost uses
alpha_t = 1/2 log((1 + r_t) / (1 - r_t)) with r_t = sum_i D^t_i beta_i y_i h_t(x_i)
(= S_ok(D beta) - S_nok(D beta)); AdaCost(beta2) uses AdaBoost's alpha (Eq. 5).

Cost scaling (``"sum"``, see :mod:`models.variants._common`): c_hat = c / (c_fp + c_fn),
so c_hat_FP + c_hat_FN = 1 and c_hat_FP = z, the cost skew of Eq. 28 -- the
parametrisation in which section 5 trains and evaluates AdaCost over 21 skews (Figs. 4-7).
Fan et al.'s range c in [0, 1] holds, so beta is in [0, 1] and |r_t| <= 1 (alpha real).
The scale matters, because costs enter beta through their absolute size. Since
r_t = sum_i D^t_i (1 - c_i)/2 - eps_t, AdaCost's alpha is positive iff
eps_t < (1 - cbar_t)/2 with cbar_t = sum_i D^t_i c_i, a stronger demand than AdaBoost's
eps_t < 1/2; and since r_t <= (1 - cbar_t)/2, alpha_t <= artanh((1 - cbar_t)/2) even for a
perfect learner (1/2 log(5/3) ~ 0.26 with equal costs), so AdaCost's alphas are small.
Scaling by the larger cost instead (c / max(c_fp, c_fn)) gives the expensive
class c = 1 and beta = 0 when correct: the bound is then usually unreachable already in
round 1, and with c_fp == c_fn (c = 1, r_t = -eps_t) it never holds, so AdaCost could not
be trained where the paper used it. With "sum", equal costs give c = 1/2 and the bound
eps_t < 1/4; on class-balanced data with uniform sample weights round 1 has
cbar_1 = z^2 + (1 - z)^2 and the bound eps_1 < z (1 - z), at least twice the bound of the
max scaling (skew z = 1/11: 0.083 against 0.041). It still shrinks with the skew, so a
first round without positive alpha (TrainingError, footnote 9) remains possible.
AdaCost(beta2) has a positive alpha whenever eps_t < 1/2. Neither variant reduces to
AdaBoost (section 2.3): with c_fp == c_fn, beta = 1/4 on correct examples and 3/4 on
mistakes, so D^1 and the first learner are AdaBoost's, but the update raises a mistake's
weight relative to a correct example's by e^{alpha_t} instead of AdaBoost's
e^{2 alpha_t}, and AdaCost's alpha_1 = 1/2 log((5/4 - eps_1) / (3/4 + eps_1)) is not
AdaBoost's 1/2 log((1 - eps_1) / eps_1).

Properties (Table 4): FGD-inconsistent, cost-inconsistent, asymmetry-swapping; Table 3
gives no loss of the margin. Note (ours, not the paper's): for learners with outputs
+-1, -beta_i y_i h_t(x_i) = (c_i - y_i h_t(x_i)) / 2, so the weights are
D^{t+1}_i proportional to c_i exp(c_i A_t / 2) exp(-y_i F_t(x_i) / 2) with
A_t = sum_{tau <= t} alpha_tau: a function of the margin after all, whose class ratio
(c_imp / c_other) exp((c_imp - c_other) A_t / 2) stays >= 1 while every alpha is
positive. The asymmetry swap of Table 4 therefore needs negative alphas, which the
footnote 9 rule applied here (stop at the first non-positive alpha) excludes.

References
----------
Nikolaou, N., Edakunni, N., Kull, M., Flach, P. and Brown, G. (2016). "Cost-sensitive
boosting algorithms: Do we really need them?", Machine Learning 104(2), 359-384:
Tables 1-4 (rows AdaCost, AdaCost(beta2)), section 3.3, Eq. 28 (cost skew), section 5,
footnote 9.

Fan, W., Stolfo, S. J., Zhang, J. and Chan, P. K. (1999). "AdaCost: misclassification
cost-sensitive boosting", Proceedings of ICML 1999, 97-105. Ting, K. M. (2000). "A
comparative study of cost-sensitive boosting algorithms", Proceedings of ICML 2000.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from models.boosting.loop import BaseBoosting
from models.exceptions import TrainingError
from models.variants._common import CostSensitiveBoosting, half_log_ratio, table4, variant_spec

__all__ = ["AdaCost", "AdaCostBeta2"]


class AdaCost(CostSensitiveBoosting):
    """AdaCost: cost-adjusted exponent beta_i in the update and in alpha (Fan et al.).

    * D^1_i proportional to c_hat(y_i) (Table 1);
    * alpha_t = 1/2 log((1 + r_t) / (1 - r_t)), r_t = sum_i D^t_i beta_i y_i h_t(x_i)
      (Table 2);
    * D^{t+1}_i proportional to D^t_i exp(-beta_i y_i alpha_t h_t(x_i)) (Table 1), with
      beta_i = (1 + c_hat_i)/2 on mistakes and (1 - c_hat_i)/2 on correct examples.

    Parameters and attributes: those of
    :class:`~models.variants._common.CostSensitiveBoosting`; ``scaled_costs_`` is [c_fp,
    c_fn] / (c_fp + c_fn) (cost skew z, 1 - z; Eq. 28). Training often stops early (footnote
    9), so ``n_estimators_`` can be small.

    References
    ----------
    Nikolaou et al. (2016), Tables 1-4 row AdaCost, footnote 9; Fan et al. (1999).
    """

    _cost_scale: ClassVar[str] = "sum"

    def _beta(self, y: np.ndarray, h: np.ndarray) -> np.ndarray:
        """beta_i of Table 1: (1 + c_i)/2 on mistakes, (1 - c_i)/2 on correct examples."""
        return 0.5 * (1.0 + np.where(h != y, self._c, -self._c))

    def _alpha(self, y: np.ndarray, h: np.ndarray, w: np.ndarray) -> float:
        """Table 2, AdaCost: 1/2 log((1 + r) / (1 - r)), r = sum_i D_i beta_i y_i h_i."""
        r = float(np.dot(w * self._beta(y, h), y * h))
        self._last_r = (r, 0.5 * (1.0 - float(np.dot(w, self._c))))  # r and (1 - cbar)/2
        return half_log_ratio(1.0 + r, 1.0 - r)

    def _update_weights(
        self, y: np.ndarray, h: np.ndarray, w: np.ndarray, alpha: float
    ) -> np.ndarray:
        """Table 1, AdaCost: D_i exp(-beta_i y_i alpha h_i)."""
        return w * np.exp(-alpha * self._beta(y, h) * y * h)

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> AdaCost:
        """Run the loop; a first round without positive alpha is explained in terms of r_1."""
        try:
            super().fit(X, y, sample_weight)
        except TrainingError as exc:
            last = self.__dict__.get("_last_r")
            if last is None or last[0] > 0:
                raise
            r, bound = last
            raise TrainingError(
                f"the first weak learner has no positive alpha: {type(self).__name__}'s alpha "
                "(Table 2) needs r_1 = sum_i D_i beta_i y_i h_i = (1 - cbar_1)/2 - eps_1 > 0, got "
                f"r_1 = {r:.4g}: with the scaled costs c = cost / (c_fp + c_fn) and "
                f"cbar_1 = sum_i D_i c_i, the weighted error eps_1 = {bound - r:.4f} must be "
                f"below (1 - cbar_1)/2 = {bound:.4g} (smaller the more skewed the costs); try "
                "a stronger weak learner, adacost_beta2 or another variant"
            ) from exc
        finally:
            self.__dict__.pop("_last_r", None)
        return self


class AdaCostBeta2(AdaCost):
    """AdaCost(beta2): AdaCost's weight update with AdaBoost's alpha (Ting 2000).

    * D^1_i proportional to c_hat(y_i), update D^t_i exp(-beta_i y_i alpha_t h_t(x_i))
      with beta_i as in :class:`AdaCost` (Table 1);
    * alpha_t = 1/2 log(S_ok(D) / S_nok(D)) (Table 2, Eq. 5).

    Parameters and attributes: those of
    :class:`~models.variants._common.CostSensitiveBoosting`; ``scaled_costs_`` is [c_fp,
    c_fn] / (c_fp + c_fn) (cost skew z, 1 - z; Eq. 28).

    References
    ----------
    Nikolaou et al. (2016), Tables 1-4 row AdaCost(beta2); Ting (2000).
    """

    def _alpha(self, y: np.ndarray, h: np.ndarray, w: np.ndarray) -> float:
        """Table 2, AdaCost(beta2): AdaBoost's 1/2 log((1 - eps_t) / eps_t), Eq. 5."""
        return BaseBoosting._alpha(self, y, h, w)


_RULE = (
    "sign[F(x)] (Eq. 18); Table 3: cannot be written as a threshold on p(y=1|x) in terms "
    "of c_FP, c_FN (cost-inconsistent)."
)
_NOTE = (
    "Costs are divided by their sum (c_FP / (c_FP + c_FN) = z, the cost skew of Eq. 28; "
    "c in (0, 1), Fan et al.'s range); beta = (1 +- c)/2."
)

SPECS = [
    variant_spec(
        AdaCost,
        name="adacost",
        title="AdaCost",
        source="Fan et al. (1999); Nikolaou et al. (2016) Tables 1-4",
        equations="Nikolaou et al. 2016: Table 1 (update e^{-beta y alpha h}, beta), Table 2 "
        "(alpha from r = sum D beta y h), Eq. 18, footnote 9",
        decision_rule=_RULE,
        properties=table4(False, False, False),
        notes=_NOTE + " Stops at the first non-positive alpha (footnote 9): alpha > 0 needs a "
        "weighted error below (1 - mean c)/2 (1/4 when c_fp == c_fn), so at strong skews "
        "training can stop early or fail in round 1. Does not reduce to AdaBoost with equal "
        "costs.",
    ),
    variant_spec(
        AdaCostBeta2,
        name="adacost_beta2",
        title="AdaCost(beta2)",
        source="Ting (2000); Nikolaou et al. (2016) Tables 1-4",
        equations="Nikolaou et al. 2016: Table 1 (update e^{-beta y alpha h}, beta), Table 2 "
        "(alpha Eq. 5), Eq. 18",
        decision_rule=_RULE,
        properties=table4(False, False, False),
        notes=_NOTE + " With c_fp == c_fn (c = 1/2) correct examples are multiplied by "
        "e^{-alpha/4} and mistakes by e^{3 alpha/4} (not AdaBoost).",
    ),
]
