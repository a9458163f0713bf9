"""Cost-sensitive LogitBoost: Algorithm 3 of Masnadi-Shirazi & Vasconcelos.

Minimises the binomial loss (34) with the asymmetric link (35),

    p_c(x) = 1 / (1 + exp(-2 (gamma F(x) + eta))),  gamma = (C1 + C2)/2,  eta = 1/2 log(C2/C1),

by Newton steps (Theorem 5, Appendix D). Each round fits a weighted least-squares
regression stump to the working responses z_i = (y'_i - p_c(x_i)) / (p_c(1 - p_c)) (Eq. 54)
with weights w_i (Eq. 55), picks the stump of smallest weighted residual (Eq. 56) and adds
G_m = G_phi / (2 gamma) (Eq. 52). For a stump (a least-squares fit with one indicator per
cell instead of the paper's a phi(x) + b of Eqs. 50-51) the fit of a cell is
sum_cell w z / sum_cell w, and the residual (56) is sum w z^2 - sum_cells (sum w z)^2 / sum w,
so the stump maximising the second sum is chosen.

How the two contradictions of the paper (summary 6.3, items 3-4) are resolved:

* Weights (Eq. 55 vs Appendix D). Algorithm 3 and Eq. 55 print w = p(1 - p) with the
  *symmetric* link (20), p = 1/(1 + exp(-2F)); the derivation (Appendix D) computes the
  Hessian of (34) as -4 gamma^2 p_c (1 - p_c), so the Newton step G = (1/2 gamma)
  E[z] is the least-squares fit with weights w = p_c (1 - p_c). We follow the derivation:
  ``weights="link"`` (default) uses p_c (1 - p_c), and a cell's fit is then exactly the
  Newton step gradient / Hessian of (34) in that cell. ``weights="symmetric"`` uses Eq. 55
  as printed (the choice behind the margin argument of section 4.5: the weight peaks at
  F = 0, the cost-sensitive boundary, rather than at p_c = 1/2). Both have the population
  fixed point p_c(x) = P(1|x), i.e. Eq. 36; the tests fit both.
* Start (Algorithm 3: p_c^(1) = p^(1) = 1/2 and f^(1) = 0). These are inconsistent unless
  C1 = C2: at F = 0 the link (35) gives p_c = 1/(1 + exp(-2 eta)) = C2 / (C1 + C2). We keep
  F^(1) = 0 (the output rule sgn[sum_m G_m] has no intercept) and compute p_c and p from F
  by (35) and (20), so every round is the Newton step at the current model:
  p^(1) = 1/2 and p_c^(1) = C2 / (C1 + C2).

Costs are normalised to C1 + C2 = 2 (:mod:`models.variants.csboost._common`), hence gamma = 1 and
eta = 1/2 log(c_fp / c_fn). The paper's loss depends on the costs only through eta after
this normalisation (for the ``"link"`` weights the fitted model is the same for any common
scale of the costs; with ``"symmetric"`` weights it is not, and the normalisation fixes
the scale at which equal costs are plain LogitBoost). The model's probability is
p_c(x) = s'(x) odds-shifted by exp(2 eta) = c_fp / c_fn, which is exactly what the
change-of-skew rule of the inference model does to the ``"logistic"`` score
s'(x) = 1/(1 + exp(-2F)): served uncalibrated, the decision probability is p_c (Eq. 35).

Numerics: z is never formed (a cell's sum_w z is sum (y' - p_c) times w / (p_c (1 - p_c))),
and a cell's fit is capped at |G_phi| <= ``z_max`` (4 by default), the bound of Friedman,
Hastie & Tibshirani's LogitBoost, applied to the fitted cell value rather than to each
z_i: the cost-dependent responses (54) exceed 4 as soon as p_c < 1/5, and clipping them
would change the cost-sensitive step itself.

With C1 = C2 (c_fp == c_fn) gamma = 1, eta = 0, p_c = p and both weightings coincide:
this is LogitBoost (Friedman et al. 2000, Algorithm 3, with F <- F + f/2).

``weak_learner="linear"`` is the paper's learner: G_phi(x) = a_phi phi(x) + b_phi on one
feature, the weighted least-squares fit of z (Eqs. 50-51, closed form) with the same
weights, the feature of smallest weighted residual (Eq. 56), G_m = G_phi / (2 gamma)
(Eq. 52). The paper has no missing values: rows where phi is NaN are left out of the
regression and get their own constant, their cell's Newton step (as the stumps' NaN
cell; 0 if the feature had no NaN in training). Each feature is centred and scaled once
per fit (unweighted mean and standard deviation) for a well-conditioned regression; a and
b are mapped back to the raw feature. The cap ``z_max`` applies to the fitted function on
the training rows: if max |G_phi| there exceeds it, a and b (and the NaN constant) are
scaled down together, which keeps G_phi in the family a phi + b. Exported as the
``"linear"`` learners of :class:`~models.inference.ensemble.Ensemble`.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit

from models.exceptions import InvalidInput
from models.inference.ensemble import Ensemble
from models.specs.algorithm import ParamSpec
from models.specs.estimator_params import declared_init
from models.variants.csboost._common import cost_params, make_spec
from models.variants.csboost._histogram import BinnedHistogram
from models.variants.csboost._real import RealValuedBoosting, catalog_build, cell_sums, pick_stump
from models.weak.base import constant_stump

__all__ = ["CostSensitiveLogitBoost", "HESSIAN_WEIGHTS"]

HESSIAN_WEIGHTS = ("link", "symmetric")


def _log_cosh(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    return a + np.log1p(np.exp(-2.0 * a)) - np.log(2.0)


class CostSensitiveLogitBoost(RealValuedBoosting):
    """Cost-sensitive LogitBoost (Algorithm 3 of Masnadi-Shirazi & Vasconcelos).

    Parameters
    ----------
    n_estimators : int, default=100
        Maximum number of rounds M.
    c_fp : float, default=1.0
        Cost of a false positive (C2).
    c_fn : float, default=1.0
        Cost of a false negative / miss (C1).
    max_bins : int, default=256
        Bins per feature (including the NaN bin) of the regression stumps.
    weights : {"link", "symmetric"}, default="link"
        Newton weights p_c (1 - p_c) (Appendix D) or p (1 - p) as printed in Eq. 55.
    z_max : float, default=4.0
        Cap on the fitted cell value |G_phi| (> 0).
    weak_learner : {"stump", "linear"}, default="stump"
        ``"stump"``: regression stumps; ``"linear"``: the paper's a phi(x) + b on one
        feature (Eqs. 50-53; see the module docstring).
    score_kind : {"logistic"}, default="logistic"
        s'(x) = 1/(1+exp(-2F)).
    random_state : None
        Unused (deterministic); kept for the common API.

    Attributes
    ----------
    classes_, n_features_in_, ensemble_, n_estimators_, termination_reason_
        As for :class:`~models.boosting.adaboost.AdaBoost`; ``ensemble_`` holds the real cell
        values G_m and unit alphas.
    estimator_alphas_ : ndarray
        All ones.
    train_loss_ : ndarray
        Mean binomial loss (34) (sample-weighted) after each round.
    c1_, c2_, training_cost_matrix_
        Normalised costs (C1 + C2 = 2) and [[0, c_fp], [c_fn, 0]].

    References
    ----------
    Masnadi-Shirazi, H. and Vasconcelos, N. (2007). "Cost-Sensitive Boosting", SVCL-TR
    2007/06: Eqs. 20, 34-36, 50-56, Algorithm 3, Appendix D.
    Friedman, J., Hastie, T. and Tibshirani, R. (2000). "Additive logistic regression: a
    statistical view of boosting", Annals of Statistics 28: LogitBoost, z_max.
    """

    # Newton steps are not line searches: a round is kept even if (34) rises slightly
    _require_decrease = False
    _weak_learners: ClassVar[tuple[str, ...]] = ("stump", "linear")

    __init__ = declared_init(
        n_estimators=100,
        c_fp=1.0,
        c_fn=1.0,
        max_bins=256,
        weights="link",
        z_max=4.0,
        weak_learner="stump",
        score_kind="logistic",
        random_state=None,
    )

    def _check_params(self) -> None:
        super()._check_params()
        if self.weights not in HESSIAN_WEIGHTS:
            raise InvalidInput(f"weights must be one of {HESSIAN_WEIGHTS}, got {self.weights!r}")
        z = self.z_max
        if isinstance(z, bool) or not isinstance(z, int | float) or not (0 < float(z) < np.inf):
            raise InvalidInput(f"z_max must be a finite number > 0, got {z!r}")

    def _start(self, y: np.ndarray, sw: np.ndarray) -> None:
        self._gamma = 0.5 * (self.c1_ + self.c2_)  # = 1 with normalised costs
        self._eta = 0.5 * float(np.log(self.c2_ / self.c1_))
        self._y01 = (y > 0).astype(np.float64)

    def link(self, F: np.ndarray) -> np.ndarray:
        """p_c(x) of Eq. 35 for predictor values F (needs a fitted model)."""
        return np.asarray(expit(2.0 * (self._gamma * F + self._eta)))

    def _loss(self, y: np.ndarray, sw: np.ndarray, F: np.ndarray) -> float:
        """Mean binomial loss (34): -[y' log p_c + (1 - y') log(1 - p_c)], weighted."""
        a = 2.0 * (self._gamma * F + self._eta)
        nll = np.logaddexp(0.0, -a) * self._y01 + np.logaddexp(0.0, a) * (1.0 - self._y01)
        return float((sw * nll).sum() / sw.sum())

    def _prepare(self, X: np.ndarray, hist: BinnedHistogram) -> None:
        if self.weak_learner != "linear":
            return
        miss = np.isnan(X)
        with warnings.catch_warnings():  # an all-NaN column: mean/std NaN, handled below
            warnings.simplefilter("ignore", RuntimeWarning)
            mu = np.nanmean(X, axis=0)
            sd = np.nanstd(X, axis=0)
        mu = np.where(np.isfinite(mu), mu, 0.0)
        sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
        self._mu, self._sd = mu, sd
        self._Z = np.where(miss, 0.0, (X - mu) / sd)  # standardised phi, 0 where NaN
        self._present = (~miss).astype(np.float64)
        self._has_nan = miss.any(axis=0)

    def _linear_round(
        self, grad: np.ndarray, hess: np.ndarray, lam: float
    ) -> tuple[tuple[int, float, float, float], np.ndarray] | None:
        """Eqs. 50-51 per feature (centred), Eq. 56 selection, Eq. 52 step."""
        Z, P = self._Z, self._present
        s1, sz, szz = P.T @ hess, Z.T @ hess, (Z * Z).T @ hess  # <1>, <phi>, <phi^2>
        g1, gz = P.T @ grad, Z.T @ grad  # <z>, <phi z> (w z summed)
        det = s1 * szz - sz**2
        ok = det > 1e-9 * np.maximum(s1 * szz, lam)
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(ok, (s1 * gz - sz * g1) / det, 0.0)  # Eq. 50
            b = np.where(ok, (szz * g1 - sz * gz) / det, g1 / (s1 + lam))  # Eq. 51
        gm, hm = grad.sum() - g1, hess.sum() - s1  # the NaN rows: their own constant
        c = np.where(self._has_nan, gm / (hm + lam), 0.0)
        # residual (56) = sum w z^2 - (a <phi z> + b <z>) - gm^2 / hm: maximise the rest
        gain = a * gz + b * g1 + c * gm
        gain = np.where(np.isfinite(gain), gain, -np.inf)
        if not np.isfinite(gain).any():
            return None
        j = int(np.argmax(gain >= gain.max() - 1e-12 * abs(gain.max())))
        out = np.where(P[:, j] > 0, a[j] * Z[:, j] + b[j], c[j])
        peak = float(np.abs(out).max())
        shrink = min(1.0, float(self.z_max) / peak) if peak > 0 else 1.0
        step = shrink / (2.0 * self._gamma)  # Eq. 52
        slope = float(a[j] * step / self._sd[j])
        intercept = float((b[j] - a[j] * self._mu[j] / self._sd[j]) * step)
        return (j, slope, intercept, float(c[j] * step)), out * step

    def _export(self, learners: list[Any], n_features: int) -> Ensemble:
        if self.weak_learner != "linear":
            return super()._export(learners, n_features)
        cols = list(zip(*learners, strict=True)) if learners else [(), (), (), ()]
        arrays: dict[str, np.ndarray] = {
            "feature": np.asarray(cols[0], dtype=np.int32),
            "slope": np.asarray(cols[1], dtype=np.float64),
            "intercept": np.asarray(cols[2], dtype=np.float64),
            "value_missing": np.asarray(cols[3], dtype=np.float64),
        }
        return Ensemble("linear", np.ones(len(learners)), arrays, int(n_features))

    def _round(
        self, hist: BinnedHistogram, y: np.ndarray, sw: np.ndarray, F: np.ndarray
    ) -> tuple[Any, np.ndarray] | None:
        pc = self.link(F)
        grad = sw * (self._y01 - pc)  # sum of w z over a cell when w = p_c (1 - p_c)
        if self.weights == "link":
            hess = sw * pc * (1.0 - pc)
        else:  # Eq. 55: p (1 - p); w z = r (y' - p_c), r = p(1-p) / (p_c(1-p_c))
            hess = sw * expit(2.0 * F) * expit(-2.0 * F)
            grad = grad * np.exp(2.0 * (_log_cosh(self._gamma * F + self._eta) - _log_cosh(F)))
        lam = 1e-12 * float(hess.sum())
        if self.weak_learner == "linear":
            found = self._linear_round(grad, hess, lam)
            if found is None or not np.any(np.abs(found[1]) > 1e-12):
                return None  # zero gradient everywhere: nothing left to fit
            return found
        nan = hist.binned.has_missing
        gl, gr, gm = (c.sum(axis=-1) for c in cell_sums(hist.split_sums(grad), nan))
        hl, hr, hm = (c.sum(axis=-1) for c in cell_sums(hist.split_sums(hess), nan))
        gain = gl**2 / (hl + lam) + gr**2 / (hr + lam) + gm**2 / (hm + lam)  # Eq. 56

        def fit(g: np.ndarray, h: np.ndarray) -> np.ndarray:
            z = float(self.z_max)
            return np.clip(g / (h + lam), -z, z) / (2.0 * self._gamma)  # Eq. 52

        picked = pick_stump(hist, -gain, (fit(gl, hl), fit(gr, hr), fit(gm, hm)))
        if picked is None:  # no feature can be split: one cell
            v = float(fit(np.asarray(grad.sum()), np.asarray(hess.sum())))
            picked = constant_stump(v, y.shape[0])
        stump, out = picked
        if not np.any(np.abs(out) > 1e-12):
            return None  # zero gradient everywhere: nothing left to fit
        return stump, out


SPEC = make_spec(
    CostSensitiveLogitBoost,
    name="cs_logitboost",
    title="Cost-sensitive LogitBoost",
    equations="Masnadi-Shirazi & Vasconcelos 2007: loss Eq. 34 with link Eq. 35, minimiser "
    "Eq. 36, Newton step Eqs. 52-56 (Algorithm 3, Appendix D) with the paper's linear "
    "learner a*phi(x)+b (Eqs. 50-51, weak_learner 'linear') or regression stumps; weights "
    "p_c(1-p_c) from Appendix D (or Eq. 55 as printed); reduces to LogitBoost for equal costs",
    build=catalog_build(CostSensitiveLogitBoost, "cs_logitboost"),
    params=cost_params(
        ParamSpec(
            "weights",
            "str",
            "link",
            "Newton weights: 'link' = p_c(1-p_c) (Appendix D, exact Newton step) or "
            "'symmetric' = p(1-p) (Eq. 55 as printed)",
            choices=HESSIAN_WEIGHTS,
        ),
        ParamSpec(
            "z_max",
            "float",
            4.0,
            "cap on each fitted cell value |G_phi| (Friedman et al.'s z_max)",
            minimum=0.0,
            exclusive_minimum=True,
        ),
        init=False,
    ),
    properties=None,
    weak_learners=("stump", "linear"),  # real-valued learners: not the discrete tree kernel
    notes="weak_learner 'linear' is the paper's learner a*phi(x)+b on one feature (Eqs. "
    "50-53; rows with phi missing get their own constant; the step is scaled so that its "
    "largest value on the training rows is at most z_max), exported as linear learners. "
    "'stump' (default): regression stumps (three cells: left, right, NaN) over the core's "
    "histogram bins, exported as stumps. Unit alphas. The raw "
    "score is always s'(x) = 1/(1+exp(-2F)) (the 'score' setting does not apply); served "
    "uncalibrated its skew-removed form is the paper's link p_c (Eq. 35). Costs are "
    "normalised to C1 + C2 = 2 (gamma = 1). Not in Nikolaou et al.'s Table 4.",
)
