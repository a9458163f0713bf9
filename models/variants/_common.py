"""Shared pieces of the binary cost-sensitive AdaBoost variants (Tables 1-4 of Nikolaou et al.).

* :class:`CostSensitiveBoosting` -- the :class:`~models.boosting.loop.BaseBoosting` loop with the
  class-level costs ``c_fp``, ``c_fn`` (Eq. 1) turned into per-example costs c(y_i)
  (Eq. 3) once per fit, and ``training_cost_matrix_`` recorded for serving.
* :class:`MarginLoss` -- a loss of the form K1(y) exp(-K2(y) m) of the margin
  m = y F(x), the shape of every loss of Table 3 that is a function of the margin.
* :func:`half_log_ratio` -- alpha = 1/2 log(num / den), the common shape of every
  closed-form alpha of Table 2, with AdaBoost's clipping and the footnote 9 rule.
* :func:`variant_spec` -- the catalog entry (:class:`~models.catalog.algorithms.AlgorithmSpec`).

Cost scaling. Costs enter some variants only through ratios (CGAda, AsymAda, AdaC2: the
normalisation of D^t cancels any common factor) and others through their absolute size
(AdaC1, AdaC3, AdaCost: costs inside the exponent and the alpha formula; CSB0-2: the
factor c(y_i) of a mistake is compared with the factor 1 of a correct example). Each
variant therefore declares how the costs are scaled before use (``_cost_scale``):

``"max"``
    c_hat = c / max(c_fp, c_fn), in (0, 1], the largest cost is 1 (the default; AdaC1-3
    and the ratio-only variants). The original AdaC1-3 (Sun et al. 2007) assume costs in
    [0, 1]; this keeps the arguments of their logarithms non-negative (alpha real) and
    makes equal costs mean c_hat = 1, the symmetric case c_FP = c_FN = 1 of section 2.3 in
    which AdaC1-3 reduce to AdaBoost.
``"min"``
    c_hat = c / min(c_fp, c_fn) >= 1, the cheaper class has cost 1 (CSB0-2): a mistake
    never lowers a weight relative to a correct example (gamma >= 1), and equal costs
    give gamma = 1, the symmetric case in which CSB2 reduces to AdaBoost.
``"sum"``
    c_hat = c / (c_fp + c_fn), in (0, 1) with c_hat_FP + c_hat_FN = 1 and c_hat_FP = z,
    the cost skew of Eq. 28 -- the parametrisation of the experiments of section 5 (21
    skews z, Figs. 4-7). Used by AdaCost and AdaCost(beta2) (Fan et al.'s range [0, 1]
    holds, and equal costs give c_hat = 1/2 rather than 1, which leaves AdaCost a
    positive alpha; see :mod:`models.variants.adacost`).

References
----------
Nikolaou, N., Edakunni, N., Kull, M., Flach, P. and Brown, G. (2016). "Cost-sensitive
boosting algorithms: Do we really need them?", Machine Learning 104(2), 359-384:
Eqs. 1-3, Tables 1-4, Eqs. 11-12 (FGD view), Eq. 28 (cost skew), section 3.3 (asymmetry preservation),
footnote 9 (stop when no positive real alpha exists).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from models.boosting.loop import BOOSTING_PARAMS, EPS_CLIP, BaseBoosting
from models.decisions.training_costs import check_cost
from models.specs.algorithm import AlgorithmSpec, ParamSpec
from models.specs.estimator_params import declared_init

__all__ = [
    "CostSensitiveBoosting",
    "MarginLoss",
    "half_log_ratio",
    "cost_params",
    "cost_param",
    "variant_spec",
    "SERVING_RULE",
]

SERVING_RULE = (
    " Served uncalibrated (calibration 'none'): the request's costs are applied by the "
    "change-of-skew rule relative to the training costs (section 5.1), so the training "
    "costs reproduce sign[F(x)]; calibrated: the calibrated probability is thresholded at "
    "the request's costs (Eq. 17)."
)


def half_log_ratio(num: float, den: float) -> float:
    """alpha = 1/2 log(num / den) for num, den >= 0 (the shape of every Table 2 alpha).

    The share ``den / (num + den)`` plays the role of eps_t in Eq. 5 and is clipped to
    [1e-10, 1 - 1e-10] like AdaBoost's eps (so a perfect learner gets alpha ~ 11.5, see
    :mod:`models.boosting.loop`). A negative argument (the "imaginary alpha" of footnote 9) or a
    non-finite one gives NaN, and ``num < den`` a negative alpha: the base loop then stops
    without adding the learner (``termination_reason_ == "no_positive_alpha"``).
    """
    total = num + den
    if not (math.isfinite(num) and math.isfinite(den)) or not total > 0:
        return math.nan
    share = den / total
    tol = 1e-12
    if share < -tol or share > 1.0 + tol:  # one argument of the log is negative
        return math.nan
    share = min(max(share, EPS_CLIP), 1.0 - EPS_CLIP)
    return 0.5 * math.log((1.0 - share) / share)


@dataclass(frozen=True)
class MarginLoss:
    """L(y, m) = K1(y) exp(-K2(y) m), a Table 3 loss of the margin m = y F(x).

    ``k1`` and ``k2`` hold the factors of the negative class (index 0, y = -1) and of the
    positive class (index 1, y = +1).

    References
    ----------
    Nikolaou et al. (2016), Table 3 (losses), Eq. 11 (weights = normalised negative
    derivative of the loss), Eq. 12 (alpha = line-search minimiser), section 3.3
    (asymmetry ratio r_L(m)).
    """

    k1: tuple[float, float]
    k2: tuple[float, float]

    def _factors(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos = np.asarray(y) > 0
        return np.where(pos, self.k1[1], self.k1[0]), np.where(pos, self.k2[1], self.k2[0])

    def log_loss(self, y: np.ndarray, margin: np.ndarray) -> np.ndarray:
        """log L(y, m) = log K1(y) - K2(y) m (for numerically stable sums)."""
        k1, k2 = self._factors(y)
        return np.log(k1) - k2 * np.asarray(margin, dtype=np.float64)

    def __call__(self, y: np.ndarray, margin: np.ndarray) -> np.ndarray:
        """L(y, m)."""
        return np.exp(self.log_loss(y, margin))

    def weight(self, y: np.ndarray, margin: np.ndarray) -> np.ndarray:
        """-dL/dm = K1 K2 exp(-K2 m): the unnormalised FGD weight of Eq. 11."""
        _, k2 = self._factors(y)
        return k2 * self(y, margin)

    def ratio(self, margin: np.ndarray, important: int) -> np.ndarray:
        """r_L(m) = L(important class, m) / L(other class, m) (section 3.3).

        ``important`` is the label (+1 or -1) of the class with the larger cost.
        """
        m = np.asarray(margin, dtype=np.float64)
        imp = np.full(m.shape, float(important))
        return np.exp(self.log_loss(imp, m) - self.log_loss(-imp, m))


class CostSensitiveBoosting(BaseBoosting):
    """The boosting loop with class-level costs c_FP, c_FN (base of the Table 1 variants).

    ``_setup`` validates the costs, records ``training_cost_matrix_`` and stores the
    scaled per-example costs c_hat(y_i) (Eq. 3, scaled per ``_cost_scale``, see the module
    docstring) in ``self._c`` for the hooks of the subclasses; it is removed after fit.

    Parameters
    ----------
    c_fp : float, default=1.0
        Cost of a false positive (a negative example predicted positive), > 0.
    c_fn : float, default=1.0
        Cost of a false negative (a positive example predicted negative), > 0.
    n_estimators, weak_learner, max_depth, max_bins, score_kind, random_state, stump_criterion
        As in :class:`~models.boosting.loop.BaseBoosting`.

    Attributes
    ----------
    training_cost_matrix_ : ndarray of shape (2, 2)
        [[0, c_fp], [c_fn, 0]] (rows = truth), used to serve the uncalibrated model.
    scaled_costs_ : ndarray of shape (2,)
        [c_hat_FP, c_hat_FN], the costs the hooks used, by default
        [c_fp, c_fn] / max(c_fp, c_fn) (``_cost_scale``, see the module docstring).
    ensemble_, estimator_alphas_, estimator_errors_, n_estimators_, termination_reason_
        As in :class:`~models.boosting.adaboost.AdaBoost`; training stops at the first round
        without a positive real alpha (footnote 9).

    References
    ----------
    Nikolaou et al. (2016), Eqs. 1-3 and Tables 1-2.
    """

    _cost_scale: ClassVar[str] = "max"

    __init__ = declared_init({"c_fp": 1.0, "c_fn": 1.0}, BOOSTING_PARAMS)

    def _check_params(self) -> None:
        super()._check_params()
        check_cost("c_fp", self.c_fp)
        check_cost("c_fn", self.c_fn)

    def scaled_costs(self) -> tuple[float, float]:
        """(c_hat_FP, c_hat_FN): the costs scaled per ``_cost_scale`` (module docstring)."""
        c_fp, c_fn = check_cost("c_fp", self.c_fp), check_cost("c_fn", self.c_fn)
        scale = {"max": max(c_fp, c_fn), "min": min(c_fp, c_fn), "sum": c_fp + c_fn}
        return c_fp / scale[self._cost_scale], c_fn / scale[self._cost_scale]

    def _setup(self, y: np.ndarray, sample_weight: np.ndarray) -> None:
        """Record the training costs; per-example scaled costs c_hat(y_i) (Eq. 3)."""
        c_fp, c_fn = check_cost("c_fp", self.c_fp), check_cost("c_fn", self.c_fn)
        self.training_cost_matrix_ = np.array([[0.0, c_fp], [c_fn, 0.0]])
        hat_fp, hat_fn = self.scaled_costs()
        self.scaled_costs_ = np.array([hat_fp, hat_fn])
        self._c = np.where(y > 0, hat_fn, hat_fp)

    def _initial_weights(self, y: np.ndarray, sample_weight: np.ndarray) -> np.ndarray:
        """D^1_i proportional to c(y_i) (times the sample weight): Table 1, 3rd column."""
        w = sample_weight * self._c
        return w / w.sum()

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> CostSensitiveBoosting:
        """Run the variant's boosting loop (see :meth:`BaseBoosting.fit`)."""
        try:
            super().fit(X, y, sample_weight)
        finally:
            self.__dict__.pop("_c", None)
        return self

    def table3_loss(self, t: int = 1, q: int = 0) -> MarginLoss:
        """The Table 3 loss of round t as K1(y) exp(-K2(y) m), when the variant has one.

        Round t's loss is the one whose normalised negative derivative at F_t is
        D^{t+1} (Eq. 11); for an FGD-consistent variant alpha_t is also its line-search
        minimiser along h_t (Eq. 12). ``q`` is used by CSB2 only (the number of rounds
        that misclassified the example).

        Raises
        ------
        NotImplementedError
            For the variants whose loss is not a function of the margin (Table 3).
        """
        raise NotImplementedError(
            f"{type(self).__name__}: the loss cannot be expressed as a function of the "
            "margin y F(x) (Table 3 of Nikolaou et al. 2016)"
        )


def cost_param(name: str, description: str) -> ParamSpec:
    """A training cost as a catalog parameter: a float > 0, default 1."""
    return ParamSpec(name, "float", 1.0, description, minimum=0.0, exclusive_minimum=True)


def cost_params() -> tuple[ParamSpec, ...]:
    """The catalog parameters c_fp and c_fn (Eq. 1), floats > 0, default 1."""
    return (
        cost_param("c_fp", "cost of a false positive c_FP (Eq. 1), used in training"),
        cost_param("c_fn", "cost of a false negative c_FN (Eq. 1), used in training"),
    )


def _builder(cls: type[BaseBoosting]) -> Callable[[dict[str, Any], dict[str, Any]], Any]:
    def build(common: dict[str, Any], params: dict[str, Any]) -> BaseBoosting:
        return cls(**common, **params)

    return build


def variant_spec(
    cls: type[BaseBoosting],
    *,
    name: str,
    title: str,
    source: str,
    equations: str,
    decision_rule: str,
    properties: Mapping[str, bool] | None,
    notes: str = "",
    params: tuple[ParamSpec, ...] | None = None,
    build: Callable[[dict[str, Any], dict[str, Any]], Any] | None = None,
    serving: str = SERVING_RULE,
    weak_learners: tuple[str, ...] | Literal["binary", "multiclass"] = "binary",
) -> AlgorithmSpec:
    """Catalog entry of a binary variant trained with costs (Table 4 ``properties``).

    ``build`` defaults to ``cls(**common, **params)``; ``serving`` (how the uncalibrated
    and the calibrated model meet the request's costs) is appended to ``decision_rule``.
    """
    return AlgorithmSpec(
        name=name,
        title=title,
        family="binary",
        source=source,
        equations=equations,
        trains_with_costs=True,
        decision_rule=decision_rule + serving,
        build=_builder(cls) if build is None else build,
        params=cost_params() if params is None else params,
        properties=None if properties is None else dict(properties),
        notes=notes,
        weak_learners=weak_learners,
    )


def table4(fgd: bool, cost: bool, asym: bool) -> dict[str, bool]:
    """Table 4 row: FGD-consistent, cost-consistent, asymmetry-preserving."""
    return {"fgd_consistent": fgd, "cost_consistent": cost, "asymmetry_preserving": asym}
