"""Cost-sensitive AdaBoost (CSAda): Algorithm 1 of Masnadi-Shirazi & Vasconcelos.

Each round minimises the empirical cost-sensitive exponential loss (33) jointly over the
weak learner g and its step alpha (Eq. 38):

* candidates: with ``weak_learner="stump"``, *every* decision stump over the binned
  features (:mod:`models.variants.csboost._histogram`): each feature, each threshold, NaN sent
  left or right, both polarities, plus the two constant learners. No candidate is
  dropped for speed. For each, the class-wise weighted errors b (misses, Eq. 44) and
  d (false positives, Eq. 45) come from one weighted histogram; the root alpha of Eq. 41
  and the loss (40) at that root are computed for all candidates at once
  (:func:`~models.variants.csboost._alpha.alpha_loss_many`), and the candidate with the smallest
  loss is kept (Algorithm 1: "select (g_m, alpha_m) as the pair of smallest loss").
  Of the two polarities of a split exactly one has a positive step (L'(0) changes sign
  when g -> -g, see :mod:`models.variants.csboost._alpha`); the other can only tie with not moving,
  so it is not solved for. On 20 features x 255 thresholds that is ~5,100 root
  solves per round (10,200 when every feature has NaN), each a few vectorised Newton steps.
* step: alpha_m of the kept learner is solved again, alone, by Brent's bracketing method
  on Eq. 41 (:func:`~models.variants.csboost._alpha.alpha_eq41`; the paper used bisection).
* update: w_i <- w_i exp(-C1 alpha g(x_i)) for positives and exp(+C2 alpha g(x_i)) for
  negatives (Eq. 39), i.e. w_i exp(-c(y_i) y_i alpha g(x_i)), renormalised (a common
  factor changes neither Eq. 41 nor the argmin of (40)).

With ``weak_learner="tree"`` or ``"logistic"`` the candidates cannot be enumerated; the
learner is then fitted to the functional-gradient weights c(y_i) w_i of the loss (Eq. 11
of Nikolaou et al.: the derivative of exp(-c(y) y F) with respect to the margin) and its
step is Eq. 41, as above.

Edge cases: a learner without weighted mistakes (b = d = 0) has no finite root; like
AdaBoost it gets the step of errors clipped to 1e-10 and training stops
("perfect_fit"). When no candidate has a positive step (footnote 9 of Nikolaou et al.)
training stops without it ("no_positive_alpha").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from models.boosting.loop import BaseBoosting
from models.exceptions import InvalidInput
from models.inference.ensemble import Ensemble
from models.specs.estimator_params import declared_init
from models.variants._common import table4
from models.variants.csboost._alpha import alpha_eq41, alpha_loss_many, loss_eq40
from models.variants.csboost._common import (
    CostSensitiveMixin,
    cost_params,
    initial_weights,
    make_spec,
)
from models.variants.csboost._histogram import BinnedHistogram, first_minimum
from models.weak.base import Stump, constant_stump, stumps_ensemble
from models.weak.registry import binary_names

__all__ = [
    "CostSensitiveAdaBoost",
    "CostSensitiveStumpTrainer",
    "class_errors",
    "lower_left_hull",
]

SCORES = ("vote", "logistic")


def class_errors(y: np.ndarray, h: np.ndarray, w: np.ndarray) -> tuple[float, ...]:
    """(b, d, T+, T-) of Eqs. 44, 45, 42, 43 for learner outputs ``h`` and weights ``w``."""
    pos = y > 0
    b = float(w[pos & (h <= 0)].sum())
    d = float(w[~pos & (h > 0)].sum())
    return b, d, float(w[pos].sum()), float(w[~pos].sum())


def lower_left_hull(b: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Indices of the points (b_i, d_i) on the lower-left convex hull of the cloud.

    These are the points that minimise k1 b + k2 d for some direction k >= 0, found as
    the Pareto front (no other point has both smaller b and smaller d), from which every
    point lying above the chord of its two neighbours is removed (it is not extreme)
    until the chain is convex (collinear points are kept).
    """
    # cheap pre-filter: drop points dominated by one of a few anchors (not Pareto-optimal)
    maybe = np.ones(b.size, dtype=bool)
    for a in {int(np.argmin(b + d)), int(np.argmin(b + 3 * d)), int(np.argmin(3 * b + d))}:
        maybe &= ~((b >= b[a]) & (d >= d[a]) & ((b > b[a]) | (d > d[a])))
    cand = np.flatnonzero(maybe)
    order = cand[np.lexsort((d[cand], b[cand]))]
    ds = d[order]
    front = np.empty(ds.size, dtype=bool)
    front[:1] = True
    front[1:] = ds[1:] < np.minimum.accumulate(ds)[:-1]
    keep = order[front]  # b increasing, d decreasing
    while keep.size > 2:  # drop every point above the chord of its neighbours, repeat
        bb, dd = b[keep], d[keep]
        cross = (bb[1:-1] - bb[:-2]) * (dd[2:] - dd[:-2]) - (dd[1:-1] - dd[:-2]) * (
            bb[2:] - bb[:-2]
        )
        above = cross < 0
        if not above.any():
            break
        mask = np.ones(keep.size, dtype=bool)
        mask[1:-1] = ~above
        keep = keep[mask]
    return keep


class CostSensitiveStumpTrainer:
    """The stump of smallest loss (40) at its own step (41), over all binned stumps.

    Parameters
    ----------
    X, y, max_bins, sample_weight
        As for :class:`~models.variants.csboost._histogram.BinnedHistogram`.
    c1, c2 : float
        Costs of a miss (C1) and of a false positive (C2).
    search : {"exhaustive", "hull"}, default="exhaustive"
        ``"exhaustive"`` solves Eq. 41 for every candidate (Algorithm 1). ``"hull"``
        solves it only for the candidates on the lower-left convex hull of the points
        (b, d): the optimum is always among them (see :mod:`models.variants.csboost.adadb`).
    solver : callable, optional
        ``solver(b, d, tp, tn, c1, c2) -> alpha`` (arrays) for the ``"hull"`` search
        (default: the vectorised Newton solver of Eq. 41).

    References
    ----------
    Masnadi-Shirazi & Vasconcelos (2007), Algorithm 1 and Eqs. 40-45.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        max_bins: int,
        sample_weight: np.ndarray | None,
        c1: float,
        c2: float,
        search: str = "exhaustive",
        solver: Callable[..., np.ndarray] | None = None,
    ) -> None:
        self.hist = BinnedHistogram(X, y, max_bins, sample_weight)
        self.pos = np.asarray(y) > 0
        self.c1, self.c2 = float(c1), float(c2)
        self.search = search
        self.solver = solver or (lambda *args: alpha_loss_many(*args)[0])
        self.n_features = self.hist.n_features
        self.n_solved_: list[int] = []

    def _errors(
        self, left: np.ndarray, right: np.ndarray, tp: float, tn: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(b, d, left predicts +1) of every split, in the polarity with L'(0) < 0."""
        b = right[..., 1]  # left -> +1, right -> -1: misses are positives on the right
        d = left[..., 0]  # false positives are negatives on the left
        left_pos = self.c1 * (tp - 2 * b) + self.c2 * (tn - 2 * d) > 0
        b = np.clip(np.where(left_pos, b, tp - b), 0.0, tp)  # clip cumsum rounding
        d = np.clip(np.where(left_pos, d, tn - d), 0.0, tn)
        # rounding residue of an empty cell (differences of cumulative sums) is no error
        b[b <= 1e-13 * tp] = 0.0
        d[d <= 1e-13 * tn] = 0.0
        return b, d, left_pos

    def _min_losses(self, b: np.ndarray, d: np.ndarray, tp: float, tn: float) -> np.ndarray:
        """Loss (40) at the root of Eq. 41 of every candidate (inf where not solved)."""
        if self.search == "exhaustive":
            self.n_solved_.append(b.size)
            return alpha_loss_many(b, d, tp, tn, self.c1, self.c2)[1]
        loss = np.full(b.shape, np.inf)
        hull = lower_left_hull(b, d)
        self.n_solved_.append(hull.size)
        alpha = self.solver(b[hull], d[hull], tp, tn, self.c1, self.c2)
        loss[hull] = loss_eq40(alpha, b[hull], d[hull], tp, tn, self.c1, self.c2)
        return loss

    def fit_round(self, w: np.ndarray) -> tuple[Stump, np.ndarray]:
        """Best stump (or constant learner) for weights ``w`` and its training outputs."""
        tp, tn = float(w[self.pos].sum()), float(w[~self.pos].sum())
        s = self.hist.split_sums(w)
        left, right, miss = s.left, s.right, s.missing
        valid, nan = self.hist.valid, self.hist.binned.has_missing
        b_l, d_l, pos_l = self._errors(left + miss, right, tp, tn)  # NaN joins the left
        b_r, d_r, pos_r = self._errors(left[nan], right[nan] + miss[nan], tp, tn)
        # candidates: NaN-left splits, NaN-right splits (features with NaN), 2 constants
        b = np.concatenate([b_l[valid], b_r[valid[nan]], [0.0, tp]])
        d = np.concatenate([d_l[valid], d_r[valid[nan]], [tn, 0.0]])
        loss = self._min_losses(b, d, tp, tn)
        n_l = int(valid.sum())
        loss_l = np.full(valid.shape, np.inf)
        loss_l[valid] = loss[:n_l]
        loss_r, pos_r_all = loss_l.copy(), pos_l.copy()
        part = np.full(b_r.shape, np.inf)
        part[valid[nan]] = loss[n_l:-2]
        loss_r[nan], pos_r_all[nan] = part, pos_r
        best = np.minimum(loss_l, loss_r)
        const_loss = loss[-2:]
        n = self.hist.binned.n_samples
        if not np.isfinite(best).any() or const_loss.min() < best.min():
            return constant_stump(1.0 if const_loss[0] <= const_loss[1] else -1.0, n)
        j, k = first_minimum(best)
        if loss_l[j, k] != loss_r[j, k]:
            miss_left = bool(loss_l[j, k] < loss_r[j, k])
        else:  # no NaN in training (or a tie): NaN follows the heavier side, as AdaBoost's
            miss_left = bool(left[j, k].sum() - right[j, k].sum() >= 0)
        left_pos = bool(pos_l[j, k] if miss_left else pos_r_all[j, k])
        vl, vr = (1.0, -1.0) if left_pos else (-1.0, 1.0)
        vm = vl if miss_left else vr
        stump = Stump(j, self.hist.threshold(j, k), vl, vr, vm)
        return stump, self.hist.outputs(j, k, vl, vr, vm)

    def assemble(self, learners: list[object], alphas: np.ndarray) -> Ensemble:
        """Pack the kept stumps into a ``"stumps"`` :class:`Ensemble`."""
        return stumps_ensemble(learners, alphas, self.n_features)  # type: ignore[arg-type]


class GradientDirectionTrainer:
    """Wraps a core trainer: fits it to the functional-gradient weights c(y_i) w_i.

    References
    ----------
    Nikolaou et al. (2016), Eq. 11 (weights = negative derivative of the loss) applied
    to the loss exp(-c(y) y F) of CSAda (Table 3).
    """

    def __init__(self, inner: Any, cost: np.ndarray) -> None:
        self.inner = inner
        self.cost = cost

    def fit_round(self, w: np.ndarray) -> tuple[object, np.ndarray]:
        return self.inner.fit_round(w * self.cost)  # type: ignore[no-any-return]

    def assemble(self, learners: list[object], alphas: np.ndarray) -> Ensemble:
        return self.inner.assemble(learners, alphas)  # type: ignore[no-any-return]


class CostSensitiveAdaBoost(CostSensitiveMixin, BaseBoosting):
    """Cost-sensitive AdaBoost (CSAda), Algorithm 1 of Masnadi-Shirazi & Vasconcelos.

    Minimises the empirical loss E[I(y=1) e^{-C1 F} + I(y=-1) e^{C2 F}] (Eq. 33; Table 3
    of Nikolaou et al.: exp(-c(y) y F)) stagewise: joint choice of learner and step
    (Eq. 38) as the smallest loss (40) over all stumps, each at its root of Eq. 41; weight
    update Eq. 39. C1 = c_fn (cost of a miss), C2 = c_fp (cost of a false positive),
    normalised to C1 + C2 = 2 (only their ratio matters; see
    :mod:`models.variants.csboost._common`). With c_fp == c_fn it is AdaBoost (Eq. 41 -> Eq. 24).

    Parameters
    ----------
    n_estimators : int, default=100
        Maximum number of rounds M.
    c_fp : float, default=1.0
        Cost of a false positive (C2).
    c_fn : float, default=1.0
        Cost of a false negative / miss (C1).
    weak_learner : {"stump", "tree", "logistic"}, default="stump"
        ``"stump"``: exhaustive joint search (Algorithm 1); otherwise the learner is fitted
        to the gradient weights c(y) w (see the module docstring).
    max_depth : int, default=3
        Depth of ``"tree"`` learners.
    max_bins : int, default=256
        Bins per feature for stumps (including the NaN bin).
    score_kind : {"logistic", "vote"}, default="logistic"
        Raw score: s'(x) = 1/(1+exp(-2F)) (Eq. 25 of Nikolaou et al.; with normalised
        costs the skew-removed score is the posterior of Eq. 61) or the vote fraction.
    init_weights : {"uniform", "class_balanced"}, default="uniform"
        D^1 (see :mod:`models.variants.csboost._common`).
    random_state : int, RandomState or None, default=None
        Seeds ``"tree"`` learners.

    Attributes
    ----------
    classes_, n_features_in_, ensemble_, estimator_alphas_, estimator_errors_,
    n_estimators_, termination_reason_
        As for :class:`~models.boosting.adaboost.AdaBoost` (alphas for the normalised costs).
    c1_, c2_ : float
        Normalised C1 (miss) and C2 (false positive), C1 + C2 = 2.
    roots_solved_ : ndarray of int
        Step-size equations (41) solved to score the candidates of each round attempted
        (stumps only; empty otherwise).
    training_cost_matrix_ : ndarray of shape (2, 2)
        [[0, c_fp], [c_fn, 0]] (rows = truth), for serving.

    References
    ----------
    Masnadi-Shirazi, H. and Vasconcelos, N. (2007). "Cost-Sensitive Boosting", SVCL-TR
    2007/06: Eqs. 33, 36-45, Algorithm 1, Appendix B (later IEEE TPAMI 33(2), 2011).
    Nikolaou, N. et al. (2016). "Cost-sensitive boosting algorithms: do we really need
    them?", Machine Learning 104: Tables 1-4 (CSAda), Eq. 11, footnotes 5 and 9.
    """

    __init__ = declared_init(
        n_estimators=100,
        c_fp=1.0,
        c_fn=1.0,
        weak_learner="stump",
        max_depth=3,
        max_bins=256,
        score_kind="logistic",
        init_weights="uniform",
        random_state=None,
    )

    def _check_params(self) -> None:
        n = self.n_estimators
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise InvalidInput(f"n_estimators must be an integer >= 1, got {n!r}")
        for name, allowed in (("weak_learner", binary_names()), ("score_kind", SCORES)):
            if getattr(self, name) not in allowed:
                raise InvalidInput(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        self._check_init_weights()
        self._set_costs()

    # ----------------------------------------------------------------- hooks
    def _setup(self, y: np.ndarray, sample_weight: np.ndarray) -> None:
        """Per-example costs c(y_i): C1 for positives, C2 for negatives (Eq. 3 of 000)."""
        self._cost = np.where(y > 0, self.c1_, self.c2_)

    def _initial_weights(self, y: np.ndarray, sample_weight: np.ndarray) -> np.ndarray:
        """D^1 per ``init_weights`` (Algorithm 1 prints the class-balanced form)."""
        return initial_weights(y, sample_weight, self.init_weights)

    def _make_trainer(self, X: np.ndarray, y: np.ndarray, sw: np.ndarray) -> Any:
        if self.weak_learner == "stump":
            trainer: Any = CostSensitiveStumpTrainer(X, y, self.max_bins, sw, self.c1_, self.c2_)
        else:
            trainer = GradientDirectionTrainer(super()._make_trainer(X, y, sw), self._cost)
        self._trainer = trainer
        return trainer

    def _alpha(self, y: np.ndarray, h: np.ndarray, w: np.ndarray) -> float:
        """alpha_m: the root of Eq. 41 (Brent's method), 0 if no positive step exists."""
        b, d, tp, tn = class_errors(y, h, w)
        return alpha_eq41(b, d, tp, tn, self.c1_, self.c2_)

    def _update_weights(
        self, y: np.ndarray, h: np.ndarray, w: np.ndarray, alpha: float
    ) -> np.ndarray:
        """Eq. 39: w_i exp(-C1 alpha g(x_i)) (i in I+), w_i exp(C2 alpha g(x_i)) (i in I-)."""
        return w * np.exp(-alpha * self._cost * y * h)

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> CostSensitiveAdaBoost:
        """Run the boosting loop of :class:`~models.boosting.loop.BaseBoosting` with these hooks.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric features; NaN allowed.
        y : array-like of shape (n_samples,)
            Two labels; ``classes_[1]`` is the positive class (cost of a miss: c_fn).
        sample_weight : array-like of shape (n_samples,), optional
            D^1 is proportional to it (per class with ``init_weights="class_balanced"``).

        Returns
        -------
        self
        """
        super().fit(X, y, sample_weight)
        trainer = self.__dict__.pop("_trainer", None)
        solved = getattr(trainer, "n_solved_", None)
        self.roots_solved_ = np.asarray(solved if solved is not None else [], dtype=np.int64)
        return self


SPEC = make_spec(
    CostSensitiveAdaBoost,
    name="csada",
    title="CSAda / cost-sensitive AdaBoost",
    equations="Masnadi-Shirazi & Vasconcelos 2007: loss Eq. 33, minimiser Eq. 36, joint "
    "learner/step Eqs. 38-45 (Algorithm 1, step = root of Eq. 41 by Brent's method), weight "
    "update Eq. 39; Nikolaou et al. 2016: Tables 1-4 (CSAda)",
    params=cost_params(),
    properties=table4(True, True, False),
    notes="Exhaustive search: every stump (feature x threshold x NaN side x polarity) is "
    "scored at its own root of Eq. 41 each round, so a round costs several times an AdaBoost "
    "round. Costs are normalised to C1 + C2 = 2 (alphas and F on that scale). Equal costs "
    "give AdaBoost. Asymmetry-swapping loss (Nikolaou et al. section 3.3, Fig. 2).",
)
