"""Weighted decision stump searched over pre-binned features with weighted histograms.

Every round, the weighted histogram of (feature, bin, label) is summed over the rows by
the compiled kernel of the histogram tree (:func:`models.kernels.histogram.histogram_all`,
in row order: the same bits as the sparse product ``A @ w`` with a 0/1 matrix that it
replaced, which held 12 bytes per training value). Cumulative sums over the bins then
give, for every feature and every threshold at once, the weights of positives and
negatives left and right of the split; the best split is an ``argmin``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from models.features.binning import BinnedFeatures, bin_features
from models.inference.ensemble import Ensemble
from models.weak.base import CRITERIA, Stump, checked_criterion, constant_stump, stumps_ensemble

__all__ = ["STUMP_CRITERIA", "StumpChoice", "StumpTrainer", "choose_stump", "valid_splits"]

STUMP_CRITERIA = CRITERIA


class StumpChoice(NamedTuple):
    """The stump :func:`choose_stump` picked, in bin terms.

    ``code <= bin`` goes left (``left``), the missing bin to ``missing`` (``left`` or
    ``right``, by ``missing_left``); ``bin == -1`` means no feature can be split and the
    learner is the constant ``left``.
    """

    feature: int
    bin: int
    left: float
    right: float
    missing: float
    missing_left: bool


def valid_splits(n_thresholds: np.ndarray, max_bins: int) -> np.ndarray:
    """(features, max_bins - 2) mask of the bins a split may end at (a real cut point)."""
    k = np.arange(max_bins - 2)
    return k[None, :] < np.asarray(n_thresholds)[:, None]


def _split_scores(
    hist: np.ndarray, valid: np.ndarray, criterion: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Criterion (lower is better) of every split for missing->left and ->right."""
    P, N = hist[:, :, 1], hist[:, :, 0]
    nb = hist.shape[1]
    pl = np.cumsum(P[:, : nb - 2], axis=1)
    nl = np.cumsum(N[:, : nb - 2], axis=1)
    p_all = P[:, : nb - 1].sum(axis=1, keepdims=True)
    n_all = N[:, : nb - 1].sum(axis=1, keepdims=True)
    pm, nm = P[:, nb - 1 :], N[:, nb - 1 :]
    pr, nr = p_all - pl, n_all - nl
    scores = []
    for lp, ln, rp, rn in ((pl + pm, nl + nm, pr, nr), (pl, nl, pr + pm, nr + nm)):
        if criterion == "error":
            s = np.minimum(lp, ln) + np.minimum(rp, rn)
        else:  # weighted Gini: minimise W - sum_children (P^2 + N^2) / W_child
            wl, wr = lp + ln, rp + rn
            with np.errstate(invalid="ignore", divide="ignore"):
                gl = np.where(wl > 0, (lp * lp + ln * ln) / wl, 0.0)
                gr = np.where(wr > 0, (rp * rp + rn * rn) / wr, 0.0)
            s = -(gl + gr)
        scores.append(np.where(valid, s, np.inf))
    return scores[0], scores[1], (pl + nl) - (pr + nr)


def choose_stump(hist: np.ndarray, valid: np.ndarray, criterion: str) -> StumpChoice:
    """The stump of least ``criterion`` given the weighted histogram of its rows.

    The one split search of the stump, whoever summed the histogram: the trainer below
    over its rows, or a driver over the histograms that Dask workers summed over theirs
    (:mod:`models.distributed`).

    Parameters
    ----------
    hist : ndarray of shape (n_features, max_bins, 2)
        Weights per (feature, bin, label), label 1 = +1, missing values in the last bin.
    valid : ndarray of bool, shape (n_features, max_bins - 2)
        :func:`valid_splits` of the binning.
    criterion : {"error", "gini"}
    """
    s_left, s_right, heavier = _split_scores(hist, valid, criterion)
    best = np.minimum(s_left, s_right)
    if not np.isfinite(best).any():
        pos, neg = hist[0, :, 1].sum(), hist[0, :, 0].sum()
        v = 1.0 if pos > neg else -1.0
        return StumpChoice(0, -1, v, v, v, True)
    j, k = np.unravel_index(int(np.argmin(best)), best.shape)
    if s_left[j, k] != s_right[j, k]:
        miss_left = bool(s_left[j, k] < s_right[j, k])
    else:
        miss_left = bool(heavier[j, k] >= 0)
    P, N = hist[j, :, 1], hist[j, :, 0]
    nb = hist.shape[1]
    lp, ln = P[: k + 1].sum(), N[: k + 1].sum()
    rp, rn = P[k + 1 : nb - 1].sum(), N[k + 1 : nb - 1].sum()
    if miss_left:
        lp, ln = lp + P[nb - 1], ln + N[nb - 1]
    else:
        rp, rn = rp + P[nb - 1], rn + N[nb - 1]
    vl = 1.0 if lp > ln else -1.0
    vr = 1.0 if rp > rn else -1.0
    return StumpChoice(int(j), int(k), vl, vr, vl if miss_left else vr, miss_left)


class StumpTrainer:
    """Fits the weighted decision stump that minimises a criterion, once per round.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training matrix (finite or NaN), binned once here.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    max_bins : int, default=256
        Codes per feature including the missing bin (see :mod:`models.features.binning`).
    criterion : {"error", "gini"}, default="error"
        ``"error"``: minimise the weighted misclassification error, the weak learner of
        section 2.2 of Nikolaou et al. ``"gini"``: minimise weighted Gini impurity like
        scikit-learn's ``DecisionTreeClassifier(max_depth=1)`` (used for parity tests).
    sample_weight : ndarray, optional
        Initial weights; rows with weight 0 do not define bin thresholds.

    Notes
    -----
    Each side of the split predicts its weighted majority class (ties: -1), so a stump
    may be constant. NaN follows a learned direction: the missing bin joins the side for
    which the criterion is better; if the training rows had no NaN for that feature (or
    both sides are equally good), NaN goes to the side holding more weight (ties: left).

    References
    ----------
    Nikolaou et al., "Cost-sensitive boosting algorithms: do we really need them?",
    Machine Learning 104 (2016), section 2.2 (weak learner minimising eps_t).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        max_bins: int = 256,
        criterion: str = "error",
        sample_weight: np.ndarray | None = None,
    ) -> None:
        self.criterion = checked_criterion(criterion, "stump criterion")
        self.binned: BinnedFeatures = bin_features(X, max_bins, sample_weight)
        n_features, n = self.binned.codes.shape
        self.n_features = n_features
        self._nb = self.binned.max_bins
        self._pos = np.asarray(y) > 0
        self._H = np.zeros((n, 2))
        self._valid = valid_splits(self.binned.n_thresholds, self._nb)

    def _split_scores(self, hist: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Criterion of every split for missing->left and ->right (:func:`choose_stump`)."""
        return _split_scores(hist, self._valid, self.criterion)

    def histogram(self, w: np.ndarray) -> np.ndarray:
        """Weights per (feature, bin, label): shape (n_features, max_bins, 2), label 1 = +1.

        Summed in row order by the compiled kernel (:func:`histogram_all`), the same
        bits as the sparse product it replaced, without its 12 bytes per value."""
        from models.kernels.cores import spare_cores
        from models.kernels.histogram import PARALLEL_OK, histogram_all  # numba: lazily

        H = self._H
        H[:, 0] = np.where(self._pos, 0.0, w)
        H[:, 1] = np.where(self._pos, w, 0.0)
        return histogram_all(self.binned.codes, H, PARALLEL_OK and spare_cores())[:, : self._nb]

    def fit_round(self, w: np.ndarray) -> tuple[Stump, np.ndarray]:
        """Best stump for weights ``w`` and its outputs on the training rows.

        Returns
        -------
        stump : Stump
            Feature, threshold and the outputs (+-1) left, right and for NaN.
        h : ndarray of shape (n_samples,)
            The stump's outputs on the training rows.
        """
        choice = choose_stump(self.histogram(w), self._valid, self.criterion)
        codes = self.binned.codes
        if choice.bin < 0:  # no feature can be split: constant learner
            return constant_stump(choice.left, codes.shape[1])
        j, k, nb = choice.feature, choice.bin, self._nb
        c = codes[j]
        h = np.where(c <= k, choice.left, choice.right)
        if self.binned.has_missing[j]:
            h[c == nb - 1] = choice.missing
        stump = Stump(
            j, float(self.binned.thresholds[j, k]), choice.left, choice.right, choice.missing
        )
        return stump, h

    def assemble(self, learners: list[object], alphas: np.ndarray) -> Ensemble:
        """Pack the kept stumps into a ``"stumps"`` :class:`Ensemble`."""
        return stumps_ensemble(learners, alphas, self.n_features)  # type: ignore[arg-type]
