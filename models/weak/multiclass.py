"""Multiclass weak learners: stumps and histogram trees over binned features, and the
oblique (linear argmax) learner of :mod:`models.weak.oblique` (SAMME only).

Each round a learner ``Phi: x -> {0..K-1}`` is fitted in one of two ways:

``fit_costs(cost)``
    The cost-weighted criterion of Lemmas 1 and 2 of Yang et al.:
    ``Phi = argmin_Phi sum_i cost[i, Phi(x_i)]`` with ``cost`` the ``(n, K)`` matrix
    ``alpha^{(m)}_{i,k}`` (cost of putting row ``i`` in class ``k``).
``fit_weighted(w)``
    Ordinary weighted classification of the training labels (step 2(a) of SAMME,
    Zhu et al. 2009): ``"error"`` = ``fit_costs(w_i I(k != y_i))``, the weighted error;
    ``"gini"`` = weighted Gini, like ``DecisionTreeClassifier``.

:class:`MulticlassStumpTrainer` solves both *exactly* over the binned thresholds of
:func:`models.features.binning.bin_features`: one sparse product ``A @ G`` gives the per-bin
sums of the ``(n, K)`` matrix ``G`` for every feature; cumulative sums over the bins
give every split at once. With ``K = 2`` and the error criterion it reproduces the
core's :class:`models.weak.StumpTrainer` float for float.

:class:`MulticlassTreeTrainer` grows a histogram tree of depth ``max_depth`` on the same
binned features with the compiled kernel of :mod:`models.kernels.histogram`: every split
minimises ``sum_i cost[i, Phi(x_i)]`` over the split's two sides (each side answering its
cheapest class), the weighted error for ``fit_weighted``; leaves hold the exact
``argmin_k`` of the summed costs of their training rows (``"gini"``: the heaviest class).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import scipy.sparse as sp

from models.exceptions import InvalidInput
from models.features.binning import bin_features
from models.inference.ensemble import Ensemble
from models.inference.vote_ensemble import VoteEnsemble
from models.weak.base import CRITERIA, Stump, checked_criterion, stumps_ensemble
from models.weak.oblique import (
    N_NEWTON,
    ObliqueLearner,
    Standardised,
    default_ridge,
    oblique_ensemble,
    weighted_logistic,
)
from models.weak.tree import (
    MODE_COST,
    MODE_GINI,
    TreeArrays,
    check_depth,
    grow_binned_tree,
    grow_labels_tree,
    trees_ensemble,
)

__all__ = [
    "STUMP_CRITERIA",
    "MulticlassTrainer",
    "MulticlassObliqueTrainer",
    "MulticlassStumpTrainer",
    "MulticlassTreeTrainer",
]

STUMP_CRITERIA = CRITERIA


class MulticlassTrainer(Protocol):
    """Fits one class-valued learner per round on fixed training rows.

    References
    ----------
    Yang, Guo and Chang (2020), Lemmas 1-2 (``fit_costs``); Zhu et al. (2009), SAMME
    step 2(a) (``fit_weighted``).
    """

    def fit_costs(self, cost: np.ndarray) -> tuple[object, np.ndarray]: ...

    def fit_weighted(self, w: np.ndarray) -> tuple[object, np.ndarray]: ...

    def assemble(self, learners: list[object], betas: np.ndarray) -> VoteEnsemble: ...


class MulticlassStumpTrainer:
    """Exact multiclass decision stump over binned features (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Training matrix (finite or NaN), binned once.
    y : ndarray of shape (n,)
        Class indices ``0..K-1`` (used by :meth:`fit_weighted`).
    n_classes : int
        ``K``.
    max_bins : int
        Codes per feature including the missing bin, in [3, 256].
    criterion : {"error", "gini"}
        Criterion of :meth:`fit_weighted`.
    sample_weight : ndarray, optional
        Rows with weight 0 do not define thresholds.

    Notes
    -----
    Each side predicts its cheapest class (``"gini"``: its heaviest class); ties go to
    the lower class index. NaN joins the side with the better criterion, or the side
    with more total weight (ties: left), as in the core stump.

    References
    ----------
    Yang, Guo and Chang (2020), Lemma 1 / Lemma 2 (``Phi = argmin sum_i alpha_{i,Phi(x_i)}``);
    Zhu et al. (2009), SAMME step 2(a).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        max_bins: int = 256,
        criterion: str = "error",
        sample_weight: np.ndarray | None = None,
    ) -> None:
        self.criterion = checked_criterion(criterion, "stump_criterion")
        self.n_classes = int(n_classes)
        self.binned = bin_features(X, max_bins, sample_weight)
        n_features, n = self.binned.codes.shape
        self.n_features = n_features
        self._nb = nb = self.binned.max_bins
        self._onehot = (np.asarray(y)[:, None] == np.arange(self.n_classes)).astype(np.float64)
        indices = np.empty(n_features * n, dtype=np.int32)
        counts = np.empty((n_features, nb), dtype=np.int64)
        for j in range(n_features):  # row (j, b) of A holds the examples of bin b, in order
            indices[j * n : (j + 1) * n] = np.argsort(self.binned.codes[j], kind="stable")
            counts[j] = np.bincount(self.binned.codes[j], minlength=nb)
        indptr = np.zeros(n_features * nb + 1, dtype=np.int64)
        np.cumsum(counts.ravel(), out=indptr[1:])
        self._A = sp.csr_matrix(
            (np.ones(indices.size), indices, indptr), shape=(indptr.size - 1, n)
        )
        self._valid = np.arange(nb - 2)[None, :] < self.binned.n_thresholds[:, None]

    def _criterion(self, left: np.ndarray, right: np.ndarray, mode: str) -> np.ndarray:
        """Criterion (lower is better) of class sums ``left``/``right`` (.., K, bins)."""
        if mode == "cost":
            return left.min(axis=-2) + right.min(axis=-2)
        wl, wr = left.sum(axis=-2), right.sum(axis=-2)
        with np.errstate(invalid="ignore", divide="ignore"):
            gl = np.where(wl > 0, (left * left).sum(axis=-2) / wl, 0.0)
            gr = np.where(wr > 0, (right * right).sum(axis=-2) / wr, 0.0)
        return -(gl + gr)

    def _fit(self, G: np.ndarray, mode: str) -> tuple[Stump, np.ndarray]:
        nb, k = self._nb, self.n_classes
        pick = np.argmin if mode == "cost" else np.argmax
        hist = np.ascontiguousarray(
            np.asarray(self._A @ G).reshape(self.n_features, nb, k).transpose(0, 2, 1)
        )  # (features, K, bins): sums over bins run along the contiguous last axis
        cl = np.cumsum(hist[:, :, : nb - 2], axis=2)
        total = hist[:, :, : nb - 1].sum(axis=2, keepdims=True)
        cr, miss = total - cl, hist[:, :, nb - 1 :]
        s_left = np.where(self._valid, self._criterion(cl + miss, cr, mode), np.inf)
        s_right = np.where(self._valid, self._criterion(cl, cr + miss, mode), np.inf)
        best = np.minimum(s_left, s_right)
        codes = self.binned.codes
        if not np.isfinite(best).any():  # no feature can be split: constant learner
            v = float(pick(G.sum(axis=0)))
            return Stump(0, 0.0, v, v, v), np.full(codes.shape[1], int(v))
        j, t = np.unravel_index(int(np.argmin(best)), best.shape)
        if s_left[j, t] != s_right[j, t]:
            miss_left = bool(s_left[j, t] < s_right[j, t])
        else:
            miss_left = bool(cl[j, :, t].sum() - cr[j, :, t].sum() >= 0)
        h = hist[j]
        lsum, rsum = h[:, : t + 1].sum(axis=1), h[:, t + 1 : nb - 1].sum(axis=1)
        if miss_left:
            lsum = lsum + h[:, nb - 1]
        else:
            rsum = rsum + h[:, nb - 1]
        vl, vr = int(pick(lsum)), int(pick(rsum))
        vm = vl if miss_left else vr
        c = codes[j]
        phi = np.where(c <= t, vl, vr)
        if self.binned.has_missing[j]:
            phi[c == nb - 1] = vm
        stump = Stump(int(j), float(self.binned.thresholds[j, t]), float(vl), float(vr), float(vm))
        return stump, phi

    def fit_costs(self, cost: np.ndarray) -> tuple[Stump, np.ndarray]:
        """Stump minimising ``sum_i cost[i, Phi(x_i)]`` exactly; returns it and ``Phi(x_i)``."""
        return self._fit(cost, "cost")

    def fit_weighted(self, w: np.ndarray) -> tuple[Stump, np.ndarray]:
        """Stump minimising the weighted error (or weighted Gini) of the labels."""
        if self.criterion == "error":
            return self._fit(w[:, None] * (1.0 - self._onehot), "cost")
        return self._fit(w[:, None] * self._onehot, "gini")

    def assemble(self, learners: list[object], betas: np.ndarray) -> VoteEnsemble:
        """Pack the kept stumps into a :class:`VoteEnsemble` of kind ``"stumps"``."""
        ens = stumps_ensemble(learners, betas, self.n_features)  # type: ignore[arg-type]
        return VoteEnsemble(ens, self.n_classes)


class MulticlassTreeTrainer:
    """Multiclass histogram tree of depth ``max_depth`` (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Training matrix (finite or NaN), binned once (:func:`bin_features`).
    y : ndarray of shape (n,)
        Class indices ``0..K-1``.
    n_classes : int
        ``K``.
    max_depth : int
        Depth limit in [1, 8] (depth 1: multiclass stumps, as scikit-learn's SAMME uses).
    random_state : numpy Generator, optional
        Accepted for compatibility; the histogram tree is deterministic.
    max_bins : int
        Codes per feature including the missing bin, in [3, 256].
    criterion : {"error", "gini"}
        Criterion of :meth:`fit_weighted` (``fit_costs`` always minimises the cost).
    sample_weight : ndarray, optional
        Rows with weight 0 do not define thresholds.

    References
    ----------
    Yang, Guo and Chang (2020), Lemmas 1-2 and section 5 (trees as weak learners);
    Zhu et al. (2009), SAMME step 2(a).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        max_depth: int = 3,
        random_state: np.random.Generator | None = None,
        max_bins: int = 256,
        criterion: str = "error",
        sample_weight: np.ndarray | None = None,
    ) -> None:
        self.max_depth = check_depth(max_depth)
        self.criterion = checked_criterion(criterion, "stump_criterion")
        self.n_classes = int(n_classes)
        self.n_features = X.shape[1]
        self._X = X
        self.binned = bin_features(X, max_bins, sample_weight)
        self._y = np.ascontiguousarray(y, dtype=np.int32)
        self._onehot = (np.asarray(y)[:, None] == np.arange(self.n_classes)).astype(np.float64)

    def _leaves(self, tree: TreeArrays) -> np.ndarray:
        """Local leaf index reached by every training row (float64 path, as served)."""
        marked = tree._replace(value=np.arange(tree.value.size, dtype=np.float64))
        single: Ensemble = trees_ensemble([marked], np.ones(1), self.n_features)
        return single.learner_outputs(self._X)[:, 0].astype(np.intp)

    def _grow(self, H: np.ndarray, mode: int) -> tuple[TreeArrays, np.ndarray]:
        tree, value, leaf_of = grow_binned_tree(self.binned, H, self.max_depth, mode)
        return tree, value[leaf_of].astype(np.intp)

    def fit_weighted(self, w: np.ndarray) -> tuple[TreeArrays, np.ndarray]:
        """Tree minimising the weighted error (or Gini) of the labels; returns it and Phi.

        The error with more than two classes is grown from class-weight histograms
        (:func:`~models.weak.tree.grow_labels_tree`, the cost matrix ``w_i [k != y_i]``
        never built); with two, from that cost matrix, as the binary tree."""
        if self.criterion == "error" and self.n_classes > 2:
            tree, value, leaf_of = grow_labels_tree(
                self.binned, self._y, w, self.n_classes, self.max_depth
            )
            return tree, value[leaf_of].astype(np.intp)
        if self.criterion == "error":
            return self._grow(w[:, None] * (1.0 - self._onehot), MODE_COST)
        return self._grow(w[:, None] * self._onehot, MODE_GINI)

    def fit_costs(self, cost: np.ndarray) -> tuple[TreeArrays, np.ndarray]:
        """Tree minimising ``sum_i cost[i, Phi(x_i)]``, split by split; leaves the argmin."""
        return self._grow(np.asarray(cost, dtype=np.float64), MODE_COST)

    def assemble(self, learners: list[object], betas: np.ndarray) -> VoteEnsemble:
        """Pack the kept trees into a :class:`VoteEnsemble` of kind ``"trees"``."""
        ens = trees_ensemble(learners, betas, self.n_features)  # type: ignore[arg-type]
        return VoteEnsemble(ens, self.n_classes)


class MulticlassObliqueTrainer:
    """K-class oblique learner ``argmax_k (w_k.x + b_k)`` for SAMME's weighted rounds.

    Each round fits one ridge-regularised weighted logistic regression per class (class
    k against the rest, warm-started from the previous round) and answers the class of
    largest linear score. Only :meth:`fit_weighted` (SAMME step 2(a), Zhu et al. 2009)
    is offered: the cost-weighted criterion of the angle-based algorithm is not a
    weighted classification (:meth:`fit_costs` refuses).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Training matrix (finite or NaN; not pre-binned codes).
    y : ndarray of shape (n,)
        Class indices ``0..K-1``.
    n_classes : int
        ``K``.
    ridge : float, optional
        Ridge on the standardised coefficients; default
        :func:`models.weak.oblique.default_ridge` (``1 / n``).
    n_newton : int
        Newton steps per class and round.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        ridge: float | None = None,
        n_newton: int = N_NEWTON,
    ) -> None:
        self._data = Standardised(X)
        self.n_features = self._data.n_features
        self.n_classes = int(n_classes)
        self._onehot = (np.asarray(y)[:, None] == np.arange(self.n_classes)).astype(np.float64)
        self.ridge = default_ridge(len(self._onehot)) if ridge is None else float(ridge)
        self.n_newton = int(n_newton)
        self._start: list[tuple[np.ndarray, float] | None] = [None] * self.n_classes

    def fit_weighted(self, w: np.ndarray) -> tuple[ObliqueLearner, np.ndarray]:
        """The argmax-class learner for weights ``w``; returns it and ``Phi(x_i)``."""
        data = self._data
        wn = w / w.sum()
        coefs, offs = [], []
        for k in range(self.n_classes):
            coef, b = weighted_logistic(
                data.Z, self._onehot[:, k], wn, self._start[k], self.ridge, self.n_newton
            )
            self._start[k] = (coef, b)
            c, off = data.raw(coef, b)
            coefs.append(c)
            offs.append(off)
        learner = ObliqueLearner(
            coef=np.vstack(coefs),
            intercept=np.asarray(offs, dtype=np.float64),
            value=np.arange(self.n_classes, dtype=np.float64),
            fill=data.mu.copy(),
        )
        return learner, data.outputs(learner).astype(np.intp)

    def fit_costs(self, cost: np.ndarray) -> tuple[ObliqueLearner, np.ndarray]:
        """Refused: the oblique learner fits weighted classification (SAMME) only."""
        raise InvalidInput(
            "weak_learner 'oblique' fits SAMME's weighted classification rounds only, not "
            "the angle-based cost-weighted criterion (use 'stump' or 'tree')"
        )

    def assemble(self, learners: list[object], betas: np.ndarray) -> VoteEnsemble:
        """Pack the kept learners into a :class:`VoteEnsemble` of kind ``"oblique"``."""
        ens = oblique_ensemble(learners, betas, self.n_features)  # type: ignore[arg-type]
        return VoteEnsemble(ens, self.n_classes)
