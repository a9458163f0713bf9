"""Cost-Generalized AdaBoost (CGAda) and the asymmetric AdaBoost of Landesa-Vazquez & Alba-Castro.

Both are plain AdaBoost (Eqs. 5-7 of Nikolaou et al.) started from a class-dependent
initial distribution -- nothing else changes:

* **CGAda** (Table 1 row "CGAda": D^1_i = c(y_i), update e^{-y_i alpha_t h_t(x_i)};
  Table 2: AdaBoost's alpha, Eq. 5). Table 3 loss c(y) e^{-y F(x)}, decision threshold
  c = c_FP / (c_FP + c_FN) (Eq. 2). Table 4: FGD-consistent, cost-consistent and
  asymmetry-preserving.
* **Asymmetric AdaBoost** (Landesa-Vazquez & Alba-Castro 2012, Table 1 of that paper):
  D^1 = gamma D_{1+} on the positives and (1 - gamma) D_{1-} on the negatives, with
  gamma in (0, 1) the total initial weight of the positive class (their Eq. 12) and
  D_{1+-} the class-conditional distributions (here: the sample weights normalised
  within each class, uniform by default).

The two coincide when the initial distributions do: CGAda with costs (c_fp, c_fn) on
data with total positive weight W+ and negative weight W- is asymmetric AdaBoost with
gamma = c_fn W+ / (c_fn W+ + c_fp W-); on balanced data (W+ = W-) this is
gamma = c_fn / (c_fn + c_fp). Conversely asymmetric AdaBoost is CGAda with the
per-example costs c_fn' = gamma / W+ and c_fp' = (1 - gamma) / W- (costs of the
class-conditional error *rates*, their Eq. 38), recorded as its ``training_cost_matrix_``.

References
----------
Nikolaou, N., Edakunni, N., Kull, M., Flach, P. and Brown, G. (2016). "Cost-sensitive
boosting algorithms: Do we really need them?", Machine Learning 104(2), 359-384:
Tables 1-4 (row CGAda), Eqs. 2, 5-7.

Landesa-Vazquez, I. and Alba-Castro, J. L. (2012). "Shedding light on the asymmetric
learning capability of AdaBoost", Pattern Recognition Letters 33(3), 247-255: Table 1,
Eqs. 12-14 (gamma and the class-conditional distributions), Eq. 38.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from models.boosting.loop import BOOSTING_PARAMS, BaseBoosting
from models.exceptions import InvalidInput, TrainingError
from models.specs.algorithm import ParamSpec
from models.specs.estimator_params import declared_init
from models.variants._common import CostSensitiveBoosting, MarginLoss, table4, variant_spec

__all__ = ["CGAda", "AsymmetricAdaBoost"]


class CGAda(CostSensitiveBoosting):
    """Cost-Generalized AdaBoost: AdaBoost from D^1_i proportional to c(y_i).

    * D^1_i = c(y_i) / sum_j c(y_j) (times the sample weights), Table 1;
    * alpha_t = 1/2 log(sum_{ok} D^t / sum_{nok} D^t), Table 2 / Eq. 5;
    * D^{t+1}_i proportional to D^t_i exp(-y_i alpha_t h_t(x_i)), Table 1 / Eq. 6;
    * H(x) = sign(F(x)) (Eq. 18), i.e. p(y=1|x) > c_FP / (c_FP + c_FN) (Table 3).

    Only the ratio c_fn / c_fp matters (the scale cancels in D^1).

    Parameters and attributes: those of
    :class:`~models.variants._common.CostSensitiveBoosting`.

    References
    ----------
    Nikolaou et al. (2016), Tables 1-4 (row CGAda), Eqs. 5-7 and 18; Landesa-Vazquez and
    Alba-Castro (2012), Table 1.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(300, 5, random_state=0)
    >>> CGAda(c_fp=1.0, c_fn=5.0, n_estimators=10).fit(X, y).predict(X[:3]).shape
    (3,)
    """

    def table3_loss(self, t: int = 1, q: int = 0) -> MarginLoss:
        """c(y) e^{-m} (Table 3), the same at every round."""
        hat_fp, hat_fn = self.scaled_costs()
        return MarginLoss((hat_fp, hat_fn), (1.0, 1.0))


class AsymmetricAdaBoost(BaseBoosting):
    """AdaBoost with the class-level asymmetry gamma in its initial weights.

    * D^1_i = gamma s_i / W+ for positives and (1 - gamma) s_i / W- for negatives, where
      s are the sample weights (1 by default) and W+-, their class totals (Table 1 and
      Eqs. 12-14 of Landesa-Vazquez & Alba-Castro 2012, uniform class-conditional
      distributions D_{1+-} unless sample weights are given);
    * alpha_t and the weight update of AdaBoost (Eqs. 5-6 of Nikolaou et al.);
    * H(x) = sign(F(x)).

    gamma = 1/2 is the class-balanced case; gamma = W+ / (W+ + W-) is plain AdaBoost.
    The bounded training quantity is gamma FNR + (1 - gamma) FPR (their Eqs. 15-16, 38).

    Parameters
    ----------
    gamma : float, default=0.5
        Total initial weight of the positive class, in (0, 1) (exclusive).
    n_estimators, weak_learner, max_depth, max_bins, score_kind, random_state, stump_criterion
        As in :class:`~models.boosting.adaboost.AdaBoost`.

    Attributes
    ----------
    training_cost_matrix_ : ndarray of shape (2, 2)
        [[0, c_fp'], [c_fn', 0]] with c_fn' = gamma / W+ and c_fp' = (1 - gamma) / W-,
        divided by the larger: the per-example costs under which this model is CGAda
        (module docstring), used to serve the uncalibrated model.
    ensemble_, estimator_alphas_, estimator_errors_, n_estimators_, termination_reason_
        As in :class:`~models.boosting.adaboost.AdaBoost`.

    References
    ----------
    Landesa-Vazquez, I. and Alba-Castro, J. L. (2012), "Shedding light on the asymmetric
    learning capability of AdaBoost", Pattern Recognition Letters 33(3): Table 1,
    Eqs. 12-16 and 38. Nikolaou et al. (2016): Eqs. 5-7; Tables 1-4, row CGAda.
    """

    __init__ = declared_init({"gamma": 0.5}, BOOSTING_PARAMS)

    def _check_params(self) -> None:
        super()._check_params()
        check_gamma(self.gamma)

    def _setup(self, y: np.ndarray, sample_weight: np.ndarray) -> None:
        """Class totals W+-; the equivalent per-example costs (``training_cost_matrix_``)."""
        gamma = check_gamma(self.gamma)
        w_pos = float(sample_weight[y > 0].sum())
        w_neg = float(sample_weight[y < 0].sum())
        if not (w_pos > 0 and w_neg > 0):
            which = "positive" if not w_pos > 0 else "negative"
            raise TrainingError(
                f"the {which} class has zero total sample weight: its class-conditional "
                "initial distribution (Eqs. 13-14 of Landesa-Vazquez & Alba-Castro) is undefined"
            )
        c_fn, c_fp = gamma / w_pos, (1.0 - gamma) / w_neg
        top = max(c_fn, c_fp)
        self.training_cost_matrix_ = np.array([[0.0, c_fp / top], [c_fn / top, 0.0]])
        self._class_totals = (w_neg, w_pos)

    def _initial_weights(self, y: np.ndarray, sample_weight: np.ndarray) -> np.ndarray:
        """D^1 = gamma D_{1+} (positives), (1 - gamma) D_{1-} (negatives); Table 1."""
        gamma = float(self.gamma)
        w_neg, w_pos = self._class_totals
        return np.where(y > 0, gamma / w_pos, (1.0 - gamma) / w_neg) * sample_weight


def check_gamma(value: Any) -> float:
    """gamma as a float in the open interval (0, 1), else :class:`InvalidInput`."""
    ok = not isinstance(value, bool) and isinstance(value, int | float | np.integer | np.floating)
    g = float(value) if ok else math.nan
    if not (0.0 < g < 1.0):
        raise InvalidInput(
            f"gamma must be a number strictly between 0 and 1 (the initial weight of the "
            f"positive class), got {value!r}"
        )
    return g


def _build_asymmetric(common: dict[str, Any], params: dict[str, Any]) -> AsymmetricAdaBoost:
    check_gamma(params.get("gamma", 0.5))
    return AsymmetricAdaBoost(**common, **params)


_CGADA_RULE = (
    "sign[F(x)] (Eq. 18); Table 3: sign[p(y=1|x) - c_FP/(c_FP+c_FN)] at the training costs."
)

SPECS = [
    variant_spec(
        CGAda,
        name="cgada",
        title="CGAda (Cost-Generalized AdaBoost)",
        source="Landesa-Vazquez & Alba-Castro (2012, 2015); Nikolaou et al. (2016) Tables 1-4",
        equations="Nikolaou et al. 2016: Table 1 (D^1 = c(y_i), update Eq. 6), Table 2 "
        "(alpha Eq. 5), Table 3 (loss c(y) e^{-yF}), Eq. 18",
        decision_rule=_CGADA_RULE,
        properties=table4(True, True, True),
        notes="AdaBoost started from cost-proportional weights; only c_fn/c_fp matters.",
    ),
    variant_spec(
        AsymmetricAdaBoost,
        name="asymmetric_adaboost",
        title="Asymmetric AdaBoost (class-dependent initial weights, gamma)",
        source="Landesa-Vazquez & Alba-Castro (2012), Pattern Recognition Letters 33(3)",
        equations="Landesa-Vazquez & Alba-Castro 2012: Table 1, Eqs. 12-16, 38; "
        "Nikolaou et al. 2016: Eqs. 5-7",
        decision_rule="sign[F(x)]; the bounded training error is gamma FNR + (1-gamma) FPR "
        "(Eq. 38), i.e. CGAda with per-example costs c_fn = gamma/W+, c_fp = (1-gamma)/W-.",
        properties=table4(True, True, True),
        build=_build_asymmetric,
        notes="gamma = total initial weight of the positive class, in (0, 1); 0.5 = "
        "class-balanced. Equals CGAda with gamma = c_fn W+/(c_fn W+ + c_fp W-) "
        "(= c_fn/(c_fn+c_fp) on balanced data); properties as CGAda (Table 4).",
        params=(
            ParamSpec(
                "gamma",
                "float",
                0.5,
                "initial weight of the positive class, strictly between 0 and 1",
                minimum=0.0,
                maximum=1.0,
                exclusive_minimum=True,
            ),
        ),
    ),
]
