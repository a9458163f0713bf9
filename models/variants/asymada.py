"""AsymAda: Viola & Jones' asymmetric AdaBoost as in Tables 1-2 of Nikolaou et al.

The cost asymmetry is spread over the M = ``n_estimators`` rounds fixed in advance:
every round multiplies the weights by c(y_i)^{1/M}.

* D^1_i proportional to c(y_i)^{1/M} (Table 1);
* alpha_t = 1/2 log(S_ok(D^t c^{1/M}) / S_nok(D^t c^{1/M})) (Table 2);
* D^{t+1}_i proportional to c(y_i)^{1/M} D^t_i exp(-y_i alpha_t h_t(x_i)) (Table 1);
* H(x) = sign(F(x)) (Eq. 18).

This is AdaC2 (module :mod:`models.variants.adac`) with the costs c^{1/M} instead of c,
which is how it is implemented. Unrolled, D^t is proportional to c^{t/M} e^{-y F_{t-1}},
alpha_t minimises sum_i c_i^{(t+1)/M} e^{-y_i (F_{t-1} + alpha h_t(x_i))} (Eq. 12) and
D^{t+1} is the normalised gradient of that same loss at F_t (Eq. 11): FGD-consistent
(Table 4), with the loss c(y)^{(t+1)/M} e^{-yF} at round t. Table 3 prints the loss as
c(y)^M e^{-yF}; the literal recursion of Tables 1-2 accumulates the exponent 1/M per
round (in Viola & Jones's intent, the whole cost ratio after M rounds, which is what
makes the final rule approximately p(y=1|x) > c_FP / (c_FP + c_FN), cost-consistent).
We implement the tables literally: after round M the exponent is (M + 1)/M, one factor
c^{1/M} more than exact cost-consistency, a difference that vanishes as M grows.

If training stops early (no positive alpha, perfect fit), fewer than M factors were
applied and the asymmetry is only partly built in: M must be fixed before training.

Costs: only c_fn / c_fp matters (scaled by the larger before the power for numerics).
With c_fp == c_fn, AsymAda is AdaBoost.

References
----------
Nikolaou, N., Edakunni, N., Kull, M., Flach, P. and Brown, G. (2016). "Cost-sensitive
boosting algorithms: Do we really need them?", Machine Learning 104(2), 359-384:
Tables 1-4 (row AsymAda), Eqs. 11-12, 18.

Viola, P. and Jones, M. (2002). "Fast and robust classification using asymmetric
AdaBoost and a detector cascade", Advances in Neural Information Processing Systems 14.
"""

from __future__ import annotations

import numpy as np

from models.variants._common import MarginLoss, table4, variant_spec
from models.variants.adac import AdaC2

__all__ = ["AsymAda"]


class AsymAda(AdaC2):
    """Asymmetric AdaBoost of Viola & Jones: the cost spread as c^{1/M} over M rounds.

    * D^1_i proportional to c(y_i)^{1/M} (Table 1);
    * alpha_t = 1/2 log(sum_ok D^t_i c_i^{1/M} / sum_nok D^t_i c_i^{1/M}) (Table 2);
    * D^{t+1}_i proportional to c_i^{1/M} D^t_i exp(-y_i alpha_t h_t(x_i)) (Table 1),

    with M = ``n_estimators`` (fixed in advance).

    Parameters and attributes: those of
    :class:`~models.variants._common.CostSensitiveBoosting`, except that ``n_estimators`` is
    M, the number of rounds over which the cost is spread (also the maximum ensemble size),
    and ``scaled_costs_`` holds the per-round factors [c_hat_FP^{1/M}, c_hat_FN^{1/M}]
    (costs divided by the larger).

    References
    ----------
    Nikolaou et al. (2016), Tables 1-4 row AsymAda, Eqs. 11-12; Viola and Jones (2002).
    """

    def _setup(self, y: np.ndarray, sample_weight: np.ndarray) -> None:
        """As AdaC2 with the per-round cost factors c_hat^{1/M} (Table 1)."""
        super()._setup(y, sample_weight)
        power = 1.0 / int(self.n_estimators)
        self.scaled_costs_ = self.scaled_costs_**power
        self._c = self._c**power

    def table3_loss(self, t: int = 1, q: int = 0) -> MarginLoss:
        """c(y)^{(t+1)/M} e^{-m}: the loss of round t of the literal Tables 1-2 recursion."""
        hat_fp, hat_fn = self.scaled_costs()
        e = (t + 1) / int(self.n_estimators)
        return MarginLoss((hat_fp**e, hat_fn**e), (1.0, 1.0))


SPECS = [
    variant_spec(
        AsymAda,
        name="asymada",
        title="AsymAda (asymmetric AdaBoost of Viola & Jones)",
        source="Viola & Jones (2002); Nikolaou et al. (2016) Tables 1-4",
        equations="Nikolaou et al. 2016: Table 1 (D^1 = c^{1/M}, update c^{1/M} e^{-y alpha "
        "h}), Table 2 (alpha), Table 3, Eq. 18",
        decision_rule="sign[F(x)] (Eq. 18); Table 3: sign[p(y=1|x) - c_FP/(c_FP+c_FN)] at the "
        "training costs (the cost ratio accumulated over the M rounds).",
        properties=table4(True, True, True),
        notes="n_estimators is M, the number of rounds over which the cost ratio is spread "
        "(c^{1/M} per round); only c_fn/c_fp matters; c_fp == c_fn gives AdaBoost.",
    )
]
