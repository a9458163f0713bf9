"""CSB0, CSB1 and CSB2 of Ting (rows CSB0-2 of Tables 1-4 of Nikolaou et al.).

All three start from D^1_i proportional to c(y_i) and use AdaBoost's alpha (Eq. 5,
Table 2) as the voting weight; they differ in the weight update (Table 1), with
gamma_i = c(y_i) if h_t(x_i) != y_i and 1 if h_t(x_i) = y_i:

* CSB0: D^{t+1}_i proportional to gamma_i D^t_i -- no alpha and no exponential in the
  update: only misclassified examples are reweighted, by their cost;
* CSB1: D^{t+1}_i proportional to gamma_i D^t_i exp(-y_i h_t(x_i)) -- a fixed step 1
  instead of alpha_t;
* CSB2: D^{t+1}_i proportional to gamma_i D^t_i exp(-y_i alpha_t h_t(x_i)).

Cost scaling: c_hat = c / min(c_fp, c_fn) >= 1, the cheaper class has cost 1. Then
gamma >= 1, a mistake never lowers a weight relative to a correct example -- which is why
CSB0 and CSB1 are asymmetry-preserving (section 3.3) -- and c_fp == c_fn gives
gamma = 1: CSB2 is then AdaBoost, CSB1 an AdaBoost with unit step in the update and CSB0
never changes its weights (so it refits the same learner every round). These two do
not reduce to AdaBoost (section 2.3).

Losses (Table 3): CSB2's weights are c^{1+q} e^{-yF} with q the number of rounds that
misclassified the example, not a function of the margin alone; alpha_t (Eq. 5 on D^t)
is the line-search minimiser for the q before round t while the update uses the q after
it, so CSB2 is FGD-inconsistent; cost-inconsistent; asymmetry-preserving (K1 = c^{1+q}
non-decreasing in the cost). CSB0 and CSB1 have no loss of the margin (Table 3).

References
----------
Nikolaou, N., Edakunni, N., Kull, M., Flach, P. and Brown, G. (2016). "Cost-sensitive
boosting algorithms: Do we really need them?", Machine Learning 104(2), 359-384:
Tables 1-4 (rows CSB0, CSB1, CSB2), sections 2.3 and 3.3.

Ting, K. M. (2000). "A comparative study of cost-sensitive boosting algorithms",
Proceedings of ICML 2000, 983-990. Ting, K. M. and Zheng, Z. (1998). "Boosting trees
for cost-sensitive classifications", ECML 1998.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from models.variants._common import CostSensitiveBoosting, MarginLoss, table4, variant_spec

__all__ = ["CSB0", "CSB1", "CSB2"]


class _CSB(CostSensitiveBoosting):
    """Shared by CSB0-2: costs scaled so the cheaper class has cost 1; gamma_i."""

    _cost_scale: ClassVar[str] = "min"

    def _gamma(self, y: np.ndarray, h: np.ndarray) -> np.ndarray:
        """gamma_i = c_hat(y_i) on mistakes, 1 on correct examples (Table 1)."""
        return np.where(h != y, self._c, 1.0)


class CSB0(_CSB):
    """CSB0: D^{t+1}_i proportional to gamma_i D^t_i (Table 1), vote weights by Eq. 5.

    Parameters and attributes: those of
    :class:`~models.variants._common.CostSensitiveBoosting`; ``scaled_costs_`` is [c_fp,
    c_fn] / min(c_fp, c_fn) (the cheaper class has cost 1). The update does not use alpha_t
    of Eq. 5, only the vote weights do.

    References
    ----------
    Nikolaou et al. (2016), Tables 1-4 row CSB0; Ting and Zheng (1998); Ting (2000).
    """

    def _update_weights(
        self, y: np.ndarray, h: np.ndarray, w: np.ndarray, alpha: float
    ) -> np.ndarray:
        """Table 1, CSB0: gamma_i D_i (alpha unused)."""
        return self._gamma(y, h) * w


class CSB1(_CSB):
    """CSB1: D^{t+1}_i proportional to gamma_i D^t_i exp(-y_i h_t(x_i)) (Table 1).

    The update takes a unit step (no alpha); the vote weights are alpha_t of Eq. 5.

    Parameters and attributes: those of
    :class:`~models.variants._common.CostSensitiveBoosting`; ``scaled_costs_`` is [c_fp,
    c_fn] / min(c_fp, c_fn) (the cheaper class has cost 1).

    References
    ----------
    Nikolaou et al. (2016), Tables 1-4 row CSB1; Ting (2000).
    """

    def _update_weights(
        self, y: np.ndarray, h: np.ndarray, w: np.ndarray, alpha: float
    ) -> np.ndarray:
        """Table 1, CSB1: gamma_i D_i exp(-y_i h_i) (alpha unused)."""
        return self._gamma(y, h) * w * np.exp(-y * h)


class CSB2(_CSB):
    """CSB2: D^{t+1}_i proportional to gamma_i D^t_i exp(-y_i alpha_t h_t(x_i)) (Table 1).

    Vote weights alpha_t of Eq. 5 (Table 2); with c_fp == c_fn this is AdaBoost.

    Parameters and attributes: those of
    :class:`~models.variants._common.CostSensitiveBoosting`; ``scaled_costs_`` is [c_fp,
    c_fn] / min(c_fp, c_fn) (the cheaper class has cost 1).

    References
    ----------
    Nikolaou et al. (2016), Tables 1-4 row CSB2, Table 3 loss c(y)^{q-1} e^{-yF}; Ting (2000).
    """

    def _update_weights(
        self, y: np.ndarray, h: np.ndarray, w: np.ndarray, alpha: float
    ) -> np.ndarray:
        """Table 1, CSB2: gamma_i D_i exp(-y_i alpha h_i)."""
        return self._gamma(y, h) * w * np.exp(-alpha * y * h)

    def table3_loss(self, t: int = 1, q: int = 0) -> MarginLoss:
        """c(y)^{1+q} e^{-m} for an example misclassified q times (Table 3's K1 = c^{q-1}
        up to the counting of the initial factor); constant in t."""
        hat_fp, hat_fn = self.scaled_costs()
        return MarginLoss((hat_fp ** (1 + q), hat_fn ** (1 + q)), (1.0, 1.0))


_RULE = (
    "sign[F(x)] (Eq. 18); Table 3: cannot be written as a threshold on p(y=1|x) in terms "
    "of c_FP, c_FN (cost-inconsistent)."
)
_NOTE = "Costs are divided by the smaller one (the cheaper class has cost 1, gamma >= 1)."

SPECS = [
    variant_spec(
        CSB0,
        name="csb0",
        title="CSB0",
        source="Ting & Zheng (1998); Ting (2000); Nikolaou et al. (2016) Tables 1-4",
        equations="Nikolaou et al. 2016: Table 1 (update gamma D), Table 2 (alpha Eq. 5), Eq. 18",
        decision_rule=_RULE,
        properties=table4(False, False, True),
        notes=_NOTE + " Reweights only misclassified examples; with c_fp == c_fn the weights "
        "never change (not AdaBoost).",
    ),
    variant_spec(
        CSB1,
        name="csb1",
        title="CSB1",
        source="Ting (2000); Nikolaou et al. (2016) Tables 1-4",
        equations="Nikolaou et al. 2016: Table 1 (update gamma e^{-y h} D), Table 2 "
        "(alpha Eq. 5), Eq. 18",
        decision_rule=_RULE,
        properties=table4(False, False, True),
        notes=_NOTE + " Unit step in the update; with c_fp == c_fn not AdaBoost.",
    ),
    variant_spec(
        CSB2,
        name="csb2",
        title="CSB2",
        source="Ting (2000); Nikolaou et al. (2016) Tables 1-4",
        equations="Nikolaou et al. 2016: Table 1 (update gamma e^{-y alpha h} D), Table 2 "
        "(alpha Eq. 5), Table 3 (loss c(y)^{q-1} e^{-yF}), Eq. 18",
        decision_rule="sign[F(x)] (Eq. 18); Table 3: sign[p(y=1|x) - "
        "c_FP^{q-1}/(c_FP^{q-1}+c_FN^{q-1})], q = rounds that misclassified x "
        "(cost-inconsistent).",
        properties=table4(False, False, True),
        notes=_NOTE + " c_fp == c_fn gives AdaBoost.",
    ),
]
