"""Cost-sensitive RealBoost: Algorithm 2 of Masnadi-Shirazi & Vasconcelos.

Minimises the empirical cost-sensitive exponential loss (33) with real-valued weak
learners (Theorem 4):

* weights: w_i = D^1_i exp(-c(y_i) y_i F(x_i)) (the recursion (48) in closed form, with
  c = C1 on positives, C2 on negatives), normalised;
* learner: for every stump (feature x threshold, three cells: left, right, NaN), each
  cell gets G = 1/(C1 + C2) log[(W+ + eps) C1 / ((W- + eps) C2)] (Eq. 49), where W+/W- are
  the cell's weights of positives/negatives (the re-weighted posteriors P^(w) of Eq. 49
  estimated by a weighted histogram, as the paper suggests) and eps is the histogram
  regularisation the paper asks for ("to avoid empty histogram bins"; we use the
  Schapire-Singer smoothing eps = ``smoothing`` / N with weights summing to 1, N the
  total sample weight: the number of rows without sample weights);
* selection: the stump of smallest loss sum_cells W+ e^{-C1 G} + W- e^{C2 G} (Eq. 47);
* F <- F + G_m (Eq. 46, 17); the output rule is sgn[F] (Algorithm 2).

``weak_learner="histogram"`` is the learner as section 4.3 states it: for every feature
phi_k, P^(w)(y | phi_k(x)) of Eq. 49 is read from the weighted histogram of the feature
response over ALL its bins (the core's quantile bins, ``max_bins`` per feature including
the NaN bin), so G_phi is a step function of phi_k(x) with one value per bin (same
regularisation eps); the feature of smallest loss (47) is chosen. It is exported as a
tree on that one feature (a balanced binary tree over the bin thresholds under a root that
sends NaN to the NaN bin's value), one tree per round. The default ``"stump"`` is the
coarsest histogram (two value cells chosen by the loss) and was this module's only
learner before the paper's was added; both are kept.

With C1 = C2 (c_fp == c_fn; normalised costs C1 = C2 = 1) Eq. 49 is RealBoost's
G = 1/2 log(W+ / W-) (Eq. 27) and the loss (47) RealBoost's. Costs are normalised to
C1 + C2 = 2 (:mod:`models.variants.csboost._common`), so F is on the scale of Eq. 36 with
C1 + C2 = 2 and the ``"logistic"`` score s'(x) = 1/(1+exp(-2F)) is the posterior under
the training skew; the change-of-skew rule then serves the posterior of Eq. 61.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from models.exceptions import InvalidInput
from models.inference.ensemble import Ensemble
from models.specs.algorithm import ParamSpec
from models.specs.estimator_params import declared_init
from models.variants.csboost._common import cost_params, initial_weights, make_spec
from models.variants.csboost._histogram import BinnedHistogram, first_minimum
from models.variants.csboost._real import RealValuedBoosting, catalog_build, cell_sums, pick_stump
from models.weak.base import constant_stump
from models.weak.tree import TreeArrays, trees_ensemble

__all__ = ["CostSensitiveRealBoost", "histogram_tree"]


class CostSensitiveRealBoost(RealValuedBoosting):
    """Cost-sensitive RealBoost (Algorithm 2 of Masnadi-Shirazi & Vasconcelos).

    ``weak_learner="histogram"`` uses the paper's per-feature weighted histograms
    (Eq. 49, section 4.3); ``"stump"`` (default) three-cell real stumps.

    Parameters
    ----------
    n_estimators : int, default=100
        Maximum number of rounds M.
    c_fp : float, default=1.0
        Cost of a false positive (C2).
    c_fn : float, default=1.0
        Cost of a false negative / miss (C1).
    max_bins : int, default=256
        Bins per feature (including the NaN bin): the histogram of Eq. 49 (the stump's
        candidate thresholds, or the histogram learner's bins).
    smoothing : float, default=0.5
        Histogram regularisation: eps = smoothing / N added to W+ and W- in Eq. 49
        (weights sum to 1; N = total sample weight, the number of rows by default); > 0.
    init_weights : {"uniform", "class_balanced"}, default="uniform"
        D^1 (Algorithm 2 prints the class-balanced form; see :mod:`models.variants.csboost._common`).
    weak_learner : {"stump", "histogram"}, default="stump"
        ``"stump"``: three-cell real-valued stumps; ``"histogram"``: the per-feature
        weighted histogram of Eq. 49 / section 4.3 (one value per bin, see above).
    score_kind : {"logistic"}, default="logistic"
        s'(x) = 1/(1+exp(-2F)).
    random_state : None
        Unused (deterministic); kept for the common API.

    Attributes
    ----------
    classes_, n_features_in_, ensemble_, n_estimators_, termination_reason_
        As for :class:`~models.boosting.adaboost.AdaBoost`; ``ensemble_`` holds real cell values
        and unit alphas.
    estimator_alphas_ : ndarray
        All ones (the steps are inside the learners, Eq. 46).
    train_loss_ : ndarray
        Empirical loss (33), sum_i D^1_i exp(-c(y_i) y_i F(x_i)), after each round.
    c1_, c2_, training_cost_matrix_
        Normalised costs and [[0, c_fp], [c_fn, 0]].

    References
    ----------
    Masnadi-Shirazi, H. and Vasconcelos, N. (2007). "Cost-Sensitive Boosting", SVCL-TR
    2007/06: Eqs. 27 (RealBoost), 33, 36, 46-49, Algorithm 2, Appendix C.
    Schapire, R. E. and Singer, Y. (1999). "Improved boosting algorithms using
    confidence-rated predictions", Machine Learning 37 (smoothing of the cell outputs).
    """

    _weak_learners: ClassVar[tuple[str, ...]] = ("stump", "histogram")

    __init__ = declared_init(
        n_estimators=100,
        c_fp=1.0,
        c_fn=1.0,
        max_bins=256,
        smoothing=0.5,
        init_weights="uniform",
        weak_learner="stump",
        score_kind="logistic",
        random_state=None,
    )

    def _check_params(self) -> None:
        super()._check_params()
        self._check_init_weights()
        s = self.smoothing
        if isinstance(s, bool) or not isinstance(s, int | float) or not (0 < float(s) < np.inf):
            raise InvalidInput(f"smoothing must be a finite number > 0, got {s!r}")

    def _start(self, y: np.ndarray, sw: np.ndarray) -> None:
        with np.errstate(divide="ignore"):  # rows of weight 0 get log 0 = -inf
            self._log_d1 = np.log(initial_weights(y, sw, self.init_weights))
        self._cost = np.where(y > 0, self.c1_, self.c2_)

    def _weights(self, y: np.ndarray, F: np.ndarray) -> np.ndarray:
        """w_i proportional to D^1_i exp(-c(y_i) y_i F(x_i)) (Eq. 48 unrolled), sum 1."""
        with np.errstate(divide="ignore"):
            lw = self._log_d1 - self._cost * y * F
        w = np.exp(lw - lw.max())
        return w / w.sum()

    def _loss(self, y: np.ndarray, sw: np.ndarray, F: np.ndarray) -> float:
        """sum_i D^1_i exp(-c(y_i) y_i F(x_i)) (Eq. 33 with the initial weights)."""
        return float(np.exp(self._log_d1 - self._cost * y * F).sum())

    def _cells(self, wp: np.ndarray, wn: np.ndarray, eps: float) -> tuple[np.ndarray, ...]:
        """Cell outputs G (Eq. 49) and cell losses (the terms of Eq. 47)."""
        c1, c2 = self.c1_, self.c2_
        g = (np.log(wp + eps) - np.log(wn + eps) + np.log(c1 / c2)) / (c1 + c2)
        return g, wp * np.exp(-c1 * g) + wn * np.exp(c2 * g)

    def _round(
        self, hist: BinnedHistogram, y: np.ndarray, sw: np.ndarray, F: np.ndarray
    ) -> tuple[Any, np.ndarray] | None:
        w = self._weights(y, F)
        eps = float(self.smoothing) / float(sw.sum())  # 1/N without sample weights
        if self.weak_learner == "histogram":
            return self._histogram_round(hist, w, eps)
        left, right, miss = cell_sums(hist.split_sums(w), hist.binned.has_missing)
        g_l, loss_l = self._cells(left[..., 1], left[..., 0], eps)
        g_r, loss_r = self._cells(right[..., 1], right[..., 0], eps)
        g_m, loss_m = self._cells(miss[..., 1], miss[..., 0], eps)
        picked = pick_stump(hist, loss_l + loss_r + loss_m, (g_l, g_r, g_m))
        if picked is None:  # no feature can be split: one cell
            g, _ = self._cells(w[y > 0].sum(), w[y < 0].sum(), eps)
            return constant_stump(float(g), y.shape[0])
        return picked

    def _histogram_round(
        self, hist: BinnedHistogram, w: np.ndarray, eps: float
    ) -> tuple[TreeArrays, np.ndarray]:
        """Eq. 49 on every bin of every feature, the feature of smallest loss (47)."""
        h = hist.hist(w)  # (F, B, 2): negatives, positives per bin
        g, loss = self._cells(h[..., 1], h[..., 0], eps)
        has_nan = hist.binned.has_missing
        nb = hist.nb
        g[:, nb - 1] = np.where(has_nan, g[:, nb - 1], 0.0)  # unseen NaN: F unchanged
        j, _ = first_minimum(loss.sum(axis=1, keepdims=True))
        k = int(hist.binned.n_thresholds[j])
        values = g[j, : k + 1]
        tree = histogram_tree(j, hist.binned.thresholds[j, :k], values, float(g[j, nb - 1]))
        return tree, g[j][hist.binned.codes[j]]

    def _export(self, learners: list[Any], n_features: int) -> Ensemble:
        if self.weak_learner == "histogram":
            return trees_ensemble(learners, np.ones(len(learners)), n_features)
        return super()._export(learners, n_features)


def histogram_tree(
    feature: int, thresholds: np.ndarray, values: np.ndarray, missing: float
) -> TreeArrays:
    """A step function of one feature as tree node arrays: ``values[b]`` on value bin b
    (``thresholds[b-1] < x <= thresholds[b]``), ``missing`` on NaN.

    The root compares with the largest float (every finite x goes left, NaN right to a
    leaf holding ``missing``); below it a balanced binary tree over the thresholds, so a
    row takes ceil(log2(len(values))) + 1 comparisons.
    """
    nodes: list[list[float]] = []  # feature, threshold, left, right, missing_left, value

    def add(row: list[float]) -> int:
        nodes.append(row)
        return len(nodes) - 1

    def grow(lo: int, hi: int) -> int:
        if lo == hi:
            return add([-1, 0.0, -1, -1, 0, float(values[lo])])
        mid = (lo + hi) // 2
        node = add([feature, float(thresholds[mid]), -1, -1, 0, 0.0])
        nodes[node][2] = grow(lo, mid)
        nodes[node][3] = grow(mid + 1, hi)
        return node

    root = add([feature, float(np.finfo(np.float64).max), -1, -1, 0, 0.0])
    nodes[root][2] = grow(0, len(values) - 1)
    nodes[root][3] = add([-1, 0.0, -1, -1, 0, float(missing)])
    a = np.asarray(nodes, dtype=np.float64)
    return TreeArrays(
        a[:, 0].astype(np.int32),
        a[:, 1].copy(),
        a[:, 2].astype(np.int32),
        a[:, 3].astype(np.int32),
        a[:, 4].astype(np.uint8),
        a[:, 5].copy(),
    )


SPEC = make_spec(
    CostSensitiveRealBoost,
    name="cs_realboost",
    title="Cost-sensitive RealBoost",
    equations="Masnadi-Shirazi & Vasconcelos 2007: loss Eq. 33, minimiser Eq. 36, learner "
    "Eq. 49 (weighted histograms of the feature response, section 4.3: weak_learner "
    "'histogram'; or two-cell real stumps: 'stump'), selection Eq. 47, update Eq. 48, "
    "Algorithm 2; reduces to RealBoost (Eq. 27) for equal costs",
    build=catalog_build(CostSensitiveRealBoost, "cs_realboost"),
    params=cost_params(
        ParamSpec(
            "max_bins",
            "int",
            256,
            "bins per feature including the NaN bin (the core's quantile bins): the stumps' "
            "candidate thresholds, or the cells of the histogram learner of Eq. 49 (fewer "
            "bins: more rows per cell on small data)",
            minimum=3,
            maximum=256,
        ),
        ParamSpec(
            "smoothing",
            "float",
            0.5,
            "histogram regularisation of Eq. 49: eps = smoothing / N added to each cell's "
            "class weights",
            minimum=0.0,
            exclusive_minimum=True,
        ),
    ),
    properties=None,
    weak_learners=("stump", "histogram"),  # real-valued leaves: not the discrete tree kernel
    notes="weak_learner 'histogram' is the paper's learner (Eq. 49, section 4.3): per "
    "feature, one real value per bin of the weighted histogram of the feature response "
    "(the core's 256 quantile bins, NaN its own bin), exported as one tree per round. "
    "'stump' (default): real-valued stumps (three cells: left, right, NaN) over the same "
    "bins, exported as stumps. Unit alphas. The raw score is always s'(x) = "
    "1/(1+exp(-2F)) (the 'score' setting does not apply). Costs are normalised to "
    "C1 + C2 = 2. Not in Nikolaou et al.'s Table 4.",
)
