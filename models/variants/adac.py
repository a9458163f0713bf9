"""AdaC1, AdaC2 and AdaC3 of Sun et al. (rows AdaC1-3 of Tables 1-4 of Nikolaou et al.).

With c = c_hat(y_i) the scaled per-example cost (below), D^t the current distribution
(sum 1), "ok" the examples h_t classifies correctly and "nok" the others:

=======  ==========================  ===========================================================
variant  D^{t+1}_i proportional to   alpha_t (Table 2)
=======  ==========================  ===========================================================
AdaC1    D^t_i e^{-c y_i a h_t(x_i)}   1/2 log[(1 + S_ok(Dc) - S_nok(Dc)) / (1 - S_ok(Dc) + S_nok(Dc))]
AdaC2    c D^t_i e^{-y_i a h_t(x_i)}   1/2 log[S_ok(Dc) / S_nok(Dc)]
AdaC3    c D^t_i e^{-c y_i a h_t(x_i)} 1/2 log[(S(Dc) + S_ok(Dc^2) - S_nok(Dc^2)) / (S(Dc) - S_ok(Dc^2) + S_nok(Dc^2))]
=======  ==========================  ===========================================================

with D^1_i = c (times the sample weight, normalised) for all three (Table 1).

Cost scaling: c_hat = c / max(c_fp, c_fn) in (0, 1]. Sun et al. state the cost items in
[0, 1]; with costs in (0, 1] and D summing to 1, |S_ok(Dc) - S_nok(Dc)| <= 1 and
|S_ok(Dc^2) - S_nok(Dc^2)| <= S(Dc), so the arguments of the logarithms of AdaC1 and
AdaC3 are never negative (alpha is real). Larger costs could make them negative (the
"imaginary alpha" of footnote 9). AdaC2 depends on the cost ratio only. With
c_fp == c_fn all three reduce to AdaBoost (c_hat = 1).

Losses (Table 3) of round t, i.e. the losses whose normalised negative derivative at
F_t is D^{t+1} (Eq. 11), of the margin m = y F(x):
AdaC1 e^{-c m}; AdaC2 c^f e^{-m}; AdaC3 c^{f-1} e^{-c m}, with f = t + 1 the number of
cost factors in D^{t+1}. AdaC2's alpha_t is the line-search minimiser (Eq. 12) of its
round-t loss (FGD-consistent); the closed forms of AdaC1 and AdaC3 are not (no closed
form exists when costs sit in the exponent), so they are FGD-inconsistent (Table 4).
AdaC1 and AdaC3 put the cost in the exponent and are asymmetry-swapping (section 3.3);
AdaC2 is asymmetry-preserving but cost-inconsistent (Table 3: threshold
c_FP^f / (c_FP^f + c_FN^f)).

References
----------
Nikolaou, N., Edakunni, N., Kull, M., Flach, P. and Brown, G. (2016). "Cost-sensitive
boosting algorithms: Do we really need them?", Machine Learning 104(2), 359-384:
Tables 1-4 (rows AdaC1, AdaC2, AdaC3), Eqs. 11-12, section 3.2 (AdaC2's population
minimiser), section 3.3, footnote 9.

Sun, Y., Kamel, M. S., Wong, A. K. C. and Wang, Y. (2007). "Cost-sensitive boosting for
classification of imbalanced data", Pattern Recognition 40(12), 3358-3378.
"""

from __future__ import annotations

import numpy as np

from models.variants._common import (
    CostSensitiveBoosting,
    MarginLoss,
    half_log_ratio,
    table4,
    variant_spec,
)

__all__ = ["AdaC1", "AdaC2", "AdaC3"]


class AdaC1(CostSensitiveBoosting):
    """AdaC1: costs inside the exponent of the update (Sun et al.).

    * D^1_i proportional to c_hat(y_i) (Table 1);
    * alpha_t = 1/2 log((1 + r_t) / (1 - r_t)), r_t = sum_i D^t_i c_hat(y_i) y_i h_t(x_i)
      (Table 2, r_t = S_ok(Dc) - S_nok(Dc));
    * D^{t+1}_i proportional to D^t_i exp(-c_hat(y_i) y_i alpha_t h_t(x_i)) (Table 1).

    Parameters and attributes: those of
    :class:`~models.variants._common.CostSensitiveBoosting`.

    References
    ----------
    Nikolaou et al. (2016), Tables 1-4 row AdaC1, Table 3 loss e^{-c(y) y F(x)}.
    Sun et al. (2007), Pattern Recognition 40(12).
    """

    def _alpha(self, y: np.ndarray, h: np.ndarray, w: np.ndarray) -> float:
        """Table 2, AdaC1: 1/2 log((1 + r) / (1 - r)), r = sum_i D_i c_i y_i h_i."""
        r = float(np.dot(w * self._c, y * h))
        return half_log_ratio(1.0 + r, 1.0 - r)

    def _update_weights(
        self, y: np.ndarray, h: np.ndarray, w: np.ndarray, alpha: float
    ) -> np.ndarray:
        """Table 1, AdaC1: D_i exp(-c_i y_i alpha h_i)."""
        return w * np.exp(-alpha * self._c * y * h)

    def table3_loss(self, t: int = 1, q: int = 0) -> MarginLoss:
        """e^{-c(y) m} (Table 3), the same at every round."""
        hat_fp, hat_fn = self.scaled_costs()
        return MarginLoss((1.0, 1.0), (hat_fp, hat_fn))


class AdaC2(CostSensitiveBoosting):
    """AdaC2: costs outside the exponent of the update (Sun et al.).

    * D^1_i proportional to c_hat(y_i) (Table 1);
    * alpha_t = 1/2 log(S_ok(D c) / S_nok(D c)) (Table 2);
    * D^{t+1}_i proportional to c_hat(y_i) D^t_i exp(-y_i alpha_t h_t(x_i)) (Table 1).

    Unrolled, D^t is proportional to c^t e^{-y F_{t-1}}; alpha_t minimises
    sum_i c_i^{t+1} e^{-y_i (F_{t-1} + alpha h_t)} (Eq. 12) whose gradient at F_t is
    D^{t+1} (Eq. 11). Only c_fn / c_fp matters.

    Parameters and attributes: those of
    :class:`~models.variants._common.CostSensitiveBoosting`.

    References
    ----------
    Nikolaou et al. (2016), Tables 1-4 row AdaC2, Table 3 loss c(y)^f e^{-y F(x)},
    section 3.2 (population minimiser). Sun et al. (2007), Pattern Recognition 40(12).
    """

    def _alpha(self, y: np.ndarray, h: np.ndarray, w: np.ndarray) -> float:
        """Table 2, AdaC2: 1/2 log(sum_ok D_i c_i / sum_nok D_i c_i)."""
        wc = w * self._c
        nok = float(np.dot(wc, h != y))
        return half_log_ratio(float(wc.sum()) - nok, nok)

    def _update_weights(
        self, y: np.ndarray, h: np.ndarray, w: np.ndarray, alpha: float
    ) -> np.ndarray:
        """Table 1, AdaC2: c_i D_i exp(-y_i alpha h_i)."""
        return self._c * w * np.exp(-alpha * y * h)

    def table3_loss(self, t: int = 1, q: int = 0) -> MarginLoss:
        """c(y)^{t+1} e^{-m}: Table 3's c(y)^f e^{-yF} with f = t + 1."""
        hat_fp, hat_fn = self.scaled_costs()
        return MarginLoss((hat_fp ** (t + 1), hat_fn ** (t + 1)), (1.0, 1.0))


class AdaC3(CostSensitiveBoosting):
    """AdaC3: costs both inside and outside the exponent of the update (Sun et al.).

    * D^1_i proportional to c_hat(y_i) (Table 1);
    * alpha_t = 1/2 log((S(Dc) + r2) / (S(Dc) - r2)), r2 = sum_i D_i c_i^2 y_i h_t(x_i)
      (Table 2, r2 = S_ok(Dc^2) - S_nok(Dc^2));
    * D^{t+1}_i proportional to c_hat(y_i) D^t_i exp(-c_hat(y_i) y_i alpha_t h_t(x_i)).

    Parameters and attributes: those of
    :class:`~models.variants._common.CostSensitiveBoosting`.

    References
    ----------
    Nikolaou et al. (2016), Tables 1-4 row AdaC3, Table 3 loss c(y)^{f-1} e^{-c(y) y F(x)},
    Fig. 2 (asymmetry swapping). Sun et al. (2007), Pattern Recognition 40(12).
    """

    def _alpha(self, y: np.ndarray, h: np.ndarray, w: np.ndarray) -> float:
        """Table 2, AdaC3: 1/2 log((S(Dc) + r2) / (S(Dc) - r2))."""
        wc = w * self._c
        s = float(wc.sum())
        r2 = float(np.dot(wc * self._c, y * h))
        return half_log_ratio(s + r2, s - r2)

    def _update_weights(
        self, y: np.ndarray, h: np.ndarray, w: np.ndarray, alpha: float
    ) -> np.ndarray:
        """Table 1, AdaC3: c_i D_i exp(-c_i y_i alpha h_i)."""
        return self._c * w * np.exp(-alpha * self._c * y * h)

    def table3_loss(self, t: int = 1, q: int = 0) -> MarginLoss:
        """c(y)^t e^{-c(y) m}: Table 3's c(y)^{f-1} e^{-c(y) yF} with f = t + 1."""
        hat_fp, hat_fn = self.scaled_costs()
        return MarginLoss((hat_fp**t, hat_fn**t), (hat_fp, hat_fn))


_SCALE_NOTE = (
    "Costs are divided by the larger one (c in (0, 1], Sun et al.'s range) so alpha stays "
    "real; c_fp == c_fn gives AdaBoost."
)

SPECS = [
    variant_spec(
        AdaC1,
        name="adac1",
        title="AdaC1",
        source="Sun et al. (2005, 2007); Nikolaou et al. (2016) Tables 1-4",
        equations="Nikolaou et al. 2016: Table 1 (update e^{-c(y) y alpha h}), Table 2 "
        "(alpha), Table 3 (loss e^{-c(y) yF}), Eq. 18",
        decision_rule="sign[F(x)] (Eq. 18); Table 3: sign[p(y=1|x) - c_FP/(c_FP+c_FN)] at "
        "the training costs.",
        properties=table4(False, True, False),
        notes=_SCALE_NOTE,
    ),
    variant_spec(
        AdaC2,
        name="adac2",
        title="AdaC2",
        source="Sun et al. (2005, 2007); Nikolaou et al. (2016) Tables 1-4",
        equations="Nikolaou et al. 2016: Table 1 (update c(y) e^{-y alpha h}), Table 2 "
        "(alpha), Table 3 (loss c(y)^f e^{-yF}), Eq. 18",
        decision_rule="sign[F(x)] (Eq. 18); Table 3: sign[p(y=1|x) - c_FP^f/(c_FP^f+c_FN^f)] "
        "with f the number of rounds (cost-inconsistent).",
        properties=table4(True, False, True),
        notes="Only c_fn/c_fp matters; the cost ratio is compounded once per round. "
        "c_fp == c_fn gives AdaBoost.",
    ),
    variant_spec(
        AdaC3,
        name="adac3",
        title="AdaC3",
        source="Sun et al. (2005, 2007); Nikolaou et al. (2016) Tables 1-4",
        equations="Nikolaou et al. 2016: Table 1 (update c(y) e^{-c(y) y alpha h}), Table 2 "
        "(alpha), Table 3 (loss c(y)^{f-1} e^{-c(y) yF}), Eq. 18",
        decision_rule="sign[F(x)] (Eq. 18); Table 3: sign[p(y=1|x) - c_FP^f/(c_FP^f+c_FN^f)] "
        "(cost-inconsistent).",
        properties=table4(False, False, False),
        notes=_SCALE_NOTE,
    ),
]
