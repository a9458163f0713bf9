"""Costs, initial weights, the decision rule and catalog entries shared by the
cost-sensitive boosting algorithms of Masnadi-Shirazi & Vasconcelos (and AdaDB).

Costs. The paper's loss (2) charges C2 for a false positive and C1 for a miss, so
``C1 = c_fn`` and ``C2 = c_fp`` with ``classes_[1]`` the positive class (y = +1, the
paper's I+). Only the ratio C1/C2 matters to the learned decisions (section 2.2 of the
paper; for the exponential loss (33) scaling both costs by k only divides every step by
k). The algorithms therefore run with the normalised costs

    C1 = 2 c_fn / (c_fp + c_fn),    C2 = 2 c_fp / (c_fp + c_fn),    gamma = (C1 + C2)/2 = 1,

so that equal costs are exactly the paper's cost-insensitive case C1 = C2 = 1 (Algorithms
1-3 then *are* AdaBoost, RealBoost and LogitBoost), and the predictor F(x) is on the
scale of Eq. 36 with C1 + C2 = 2:

    F*(x) = 1/2 log[P(1|x) C1 / (P(-1|x) C2)]    (Lemma 2, Eqs. 36 and 61-62).

Scores and serving. The raw score is s'(x) = 1 / (1 + exp(-2 F(x))) (score kind
``"logistic"``). At the optimum s'(x) = P(1|x) C1 / (P(1|x) C1 + P(-1|x) C2): the posterior
under the training skew, whose odds are those of P(1|x) times C1/C2. The inference model's
change-of-skew rule (models/inference/model.py) multiplies the odds by z_tr/(1 - z_tr) =
c_fp/c_fn = C2/C1, which gives back exactly the paper's posterior estimate
P(1|x) = 1 / (1 + (C1/C2) exp(-(C1 + C2) F(x))) (Eq. 61 inverted; for LogitBoost this is
the link p_c of Eq. 35). Thresholding it at the training costs, z_tr = C2 / (C1 + C2),
is s'(x) >= 1/2, i.e. F(x) >= 0: the paper's own output rule h(x) = sgn[F(x)] with
sgn(0) = +1 (Eq. 1; Algorithms 1-3), which :meth:`predict` applies.

Sign of the threshold T (contradiction 1 of the summary). Eqs. 5 and 7 read
h = sgn[log f0* - T] with T = log(C1/C2), i.e. "predict +1 iff P1/P-1 > C1/C2", while the
Bayes rule (3), the set H of (4), the cost-sensitive predictor (32), the minimiser (36)
and the boundary identity (57) all give "+1 iff P1/P-1 > C2/C1" (and section 5.1.1 uses
x* = -T/2 = -1/2 log(C1/C2) for the Gaussian problem). We follow the derivation: the
boundary is P(1|x) = C2 / (C1 + C2) (Eq. 57), which is what sgn[F] does with F from
Eq. 36. No threshold other than 0 on F is involved: T belongs to threshold manipulation
of cost-insensitive detectors (Eq. 9), not to Algorithms 1-3.

Initial weights. Algorithms 1 and 2 start from w_i = 1/(2|I+|) and 1/(2|I-|)
(``init_weights="class_balanced"``). That reweights the classes to equal total weight,
so the empirical loss minimised is (33) under *balanced* priors and the learned boundary
is P(1|x) pi+ / pi- = C2/C1 instead of (57) whenever the classes are not balanced. The
default ``"uniform"`` (w_i proportional to the sample weight, 1/N without weights)
minimises the empirical loss (33) itself, keeps the population minimiser (36) under the
data's priors (cost-consistency, Table 4 of Nikolaou et al.) and makes equal costs give
AdaBoost (whose D^1 is 1/N). The two coincide on balanced data (the paper's synthetic
problem, 10,000 examples per class).

References
----------
Masnadi-Shirazi, H. and Vasconcelos, N. (2007). "Cost-Sensitive Boosting", SVCL-TR
2007/06: Eqs. 1-7, 32-36, 57, 61; Algorithms 1-3.
Nikolaou, N. et al. (2016). "Cost-sensitive boosting algorithms: do we really need
them?", Machine Learning 104: Eq. 3 (c(y)), section 5.1 (change of skew), Tables 3-4.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from models.boosting.loop import BaseBoosting
from models.decisions.training_costs import check_cost
from models.exceptions import InvalidInput
from models.specs.algorithm import AlgorithmSpec, ParamSpec
from models.variants._common import cost_param, variant_spec

__all__ = [
    "DECISION_RULE",
    "INIT_WEIGHTS",
    "CostSensitiveMixin",
    "cost_params",
    "initial_weights",
    "make_spec",
    "normalized_costs",
]

INIT_WEIGHTS = ("uniform", "class_balanced")
SOURCE = (
    "Masnadi-Shirazi & Vasconcelos (2007), 'Cost-Sensitive Boosting', SVCL-TR 2007/06 "
    "(later IEEE TPAMI 2011)"
)
DECISION_RULE = (
    "sign[F(x)] (sgn(0) = +1), i.e. sign[p(y=1|x) - c_fp/(c_fp+c_fn)] with p from Eq. 36/61 "
    "(Table 3 of Nikolaou et al.)."
)
SERVING = (
    " Served uncalibrated (calibration 'none'): the raw score s'(x) = 1/(1+exp(-2F)) is the "
    "posterior under the training skew; the change-of-skew rule (section 5.1 of Nikolaou "
    "et al.) turns it into P(1|x) = 1/(1 + (C1/C2) exp(-(C1+C2) F)) (Eq. 61 inverted) and "
    "thresholds it at the request's costs, so the training costs reproduce sgn[F(x)] "
    "exactly. Calibrated: the calibrated probability is thresholded at the request's costs."
)


def normalized_costs(c_fp: float, c_fn: float) -> tuple[float, float]:
    """(C1, C2) = (2 c_fn, 2 c_fp) / (c_fp + c_fn): miss and false-positive costs of the
    paper's loss (2), scaled so that gamma = (C1 + C2) / 2 = 1 (see the module docstring)."""
    s = c_fp + c_fn
    return 2.0 * c_fn / s, 2.0 * c_fp / s


def initial_weights(y: np.ndarray, sample_weight: np.ndarray, mode: str) -> np.ndarray:
    """D^1: ``"uniform"`` = sample weights / sum; ``"class_balanced"`` = 1/(2|I+|),
    1/(2|I-|) of Algorithms 1-2 (times the sample weights within each class)."""
    sw = np.asarray(sample_weight, dtype=np.float64)
    if mode == "uniform":
        return sw / sw.sum()
    pos = y > 0
    w_pos, w_neg = float(sw[pos].sum()), float(sw[~pos].sum())
    if not (w_pos > 0 and w_neg > 0):
        return sw / sw.sum()
    return np.where(pos, sw / (2.0 * w_pos), sw / (2.0 * w_neg))


class CostSensitiveMixin:
    """Costs, the training cost matrix and the sgn[F] rule for the estimators here.

    Subclasses hold ``c_fp``, ``c_fn`` and ``init_weights`` parameters; :meth:`_set_costs`
    sets ``c1_``, ``c2_`` (normalised C1, C2) and ``training_cost_matrix_``.

    References
    ----------
    Masnadi-Shirazi & Vasconcelos (2007): loss (2) (C1 = miss, C2 = false positive),
    Eq. 1 (sgn with sgn(0) = +1), output rule of Algorithms 1-3.
    """

    c_fp: float
    c_fn: float
    init_weights: str
    classes_: np.ndarray
    # provided by BaseBoosting (declared here for type checking only)
    decision_function: Callable[[Any], np.ndarray]
    staged_decision_function: Callable[[Any], Iterator[np.ndarray]]

    def _set_costs(self) -> None:
        c_fp = check_cost("c_fp", self.c_fp)
        c_fn = check_cost("c_fn", self.c_fn)
        self.c1_, self.c2_ = normalized_costs(c_fp, c_fn)
        self.training_cost_matrix_ = np.array([[0.0, c_fp], [c_fn, 0.0]])

    def _check_init_weights(self) -> None:
        if self.init_weights not in INIT_WEIGHTS:
            raise InvalidInput(
                f"init_weights must be one of {INIT_WEIGHTS}, got {self.init_weights!r}"
            )

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where F(x) >= 0, else ``classes_[0]``: h(x) = sgn[F(x)] with
        sgn(0) = +1 (Eq. 1; the output rule of Algorithms 1-3)."""
        f = self.decision_function(X)
        return self.classes_[(f >= 0).astype(np.intp)]

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """sgn[F_t(x)] (sgn(0) = +1) after each round."""
        for f in self.staged_decision_function(X):
            yield self.classes_[(f >= 0).astype(np.intp)]


def cost_params(*extra: ParamSpec, init: bool = True) -> tuple[ParamSpec, ...]:
    """c_fp (C2), c_fn (C1), optionally init_weights, then ``extra``."""
    base = [
        cost_param("c_fp", "cost of a false positive: C2 of the paper's loss (2)"),
        cost_param("c_fn", "cost of a false negative (miss): C1 of the paper's loss (2)"),
    ]
    if init:
        base.append(
            ParamSpec(
                "init_weights",
                "str",
                "uniform",
                "initial weights: 'uniform' (1/N, minimises the empirical loss (33)) or "
                "'class_balanced' (1/(2|I+|), 1/(2|I-|) as printed in Algorithms 1-2)",
                choices=INIT_WEIGHTS,
            )
        )
    return (*base, *extra)


def make_spec(cls: type[BaseBoosting], **entry: Any) -> AlgorithmSpec:
    """Catalog entry of a cost-sensitive algorithm of this package: a
    :func:`~models.variants._common.variant_spec` with the paper as ``source``, its
    decision rule and how it is served."""
    return variant_spec(
        cls, **{"source": SOURCE, "decision_rule": DECISION_RULE, "serving": SERVING, **entry}
    )
