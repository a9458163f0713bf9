"""Depth-limited histogram trees (compiled kernel) exported to ``"trees"`` node arrays.

:class:`TreeTrainer` grows one tree per boosting round on the pre-binned features of
:mod:`models.features.binning` with :mod:`models.kernels.histogram` (it replaced a scikit-learn
``DecisionTreeClassifier`` refitted every round, about 100 times slower).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from models.exceptions import InvalidInput
from models.features.binning import BinnedFeatures, bin_features
from models.inference.ensemble import Ensemble
from models.kernels.cores import spare_cores
from models.weak.base import CRITERIA, checked_criterion

__all__ = [
    "TREE_CRITERIA",
    "TreeArrays",
    "TreeTrainer",
    "check_depth",
    "grow_binned_tree",
    "grow_labels_tree",
    "trees_ensemble",
]

TREE_CRITERIA = CRITERIA
MODE_COST, MODE_GINI = 0, 1  # as in models.kernels.histogram (imported lazily: numba)


class TreeArrays(NamedTuple):
    """Node arrays of one tree (local child indices, -1 for leaves)."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    missing_left: np.ndarray
    value: np.ndarray


def trees_ensemble(trees: list[TreeArrays], alphas: np.ndarray, n_features: int) -> Ensemble:
    """Concatenate exported trees into a ``"trees"`` :class:`Ensemble`."""
    sizes = [t.feature.size for t in trees]
    offsets = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    names: tuple[str, ...] = ("node_feature", "node_threshold", "node_left", "node_right")
    names += ("node_missing_left", "node_value")
    arrays = {n: np.concatenate([t[i] for t in trees]) for i, n in enumerate(names)}
    arrays["tree_offsets"] = offsets
    return Ensemble("trees", np.asarray(alphas, dtype=np.float64), arrays, int(n_features))


def check_depth(max_depth: object) -> int:
    """``max_depth`` as an int in [1, 8], else :class:`InvalidInput` naming the field."""
    if isinstance(max_depth, bool) or not isinstance(max_depth, int | np.integer):
        raise InvalidInput(f"max_depth must be an integer in [1, 8], got {max_depth!r}")
    if not 1 <= max_depth <= 8:
        raise InvalidInput(f"max_depth must be an integer in [1, 8], got {max_depth!r}")
    return int(max_depth)


def grow_binned_tree(
    binned: BinnedFeatures, H: np.ndarray, max_depth: int, mode: int
) -> tuple[TreeArrays, np.ndarray, np.ndarray]:
    """Grow one histogram tree (:func:`models.kernels.histogram.grow_tree`) and export it.

    Returns the node arrays (``value`` holds the leaf's class *index* as float64), the
    class index of every leaf node (int, -1 elsewhere) and every training row's leaf.
    Thresholds are the binning's raw-value cut points, so ``x <= threshold`` goes left
    exactly when the row's bin code does (see :mod:`models.features.binning`).
    """
    from models.kernels.histogram import PARALLEL_OK, grow_tree

    grown = grow_tree(
        binned.codes,
        np.ascontiguousarray(H, dtype=np.float64),
        binned.n_thresholds,
        binned.max_bins,
        int(max_depth),
        int(mode),
        PARALLEL_OK and spare_cores(),
    )
    return _exported(binned, grown)


def grow_labels_tree(
    binned: BinnedFeatures, y: np.ndarray, w: np.ndarray, n_classes: int, max_depth: int
) -> tuple[TreeArrays, np.ndarray, np.ndarray]:
    """:func:`grow_binned_tree` of the weighted error of class indices ``y`` (``H[i, k] =
    w_i [k != y_i]``, ``MODE_COST``) from class-weight histograms
    (:func:`models.kernels.histogram.grow_tree_labels`: one addition per row and feature
    instead of K - 1)."""
    from models.kernels.histogram import PARALLEL_OK, grow_tree_labels

    grown = grow_tree_labels(
        binned.codes,
        np.ascontiguousarray(y, dtype=np.int32),
        np.ascontiguousarray(w, dtype=np.float64),
        int(n_classes),
        binned.n_thresholds,
        binned.max_bins,
        int(max_depth),
        PARALLEL_OK and spare_cores(),
    )
    return _exported(binned, grown)


def _exported(
    binned: BinnedFeatures, grown: tuple[np.ndarray, ...]
) -> tuple[TreeArrays, np.ndarray, np.ndarray]:
    feat, kbin, left, right, mleft, value, leaf_of = grown
    leaf = feat == -1
    thr = np.where(leaf, 0.0, binned.thresholds[np.where(leaf, 0, feat), kbin])
    tree = TreeArrays(feat, thr.astype(np.float64), left, right, mleft, value.astype(np.float64))
    return tree, value, leaf_of


class TreeTrainer:
    """Histogram tree of depth ``max_depth`` minimising the weighted error, once per round.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training matrix (finite or NaN), binned once here (:func:`bin_features`).
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    max_depth : int, default=3
        Depth limit in [1, 8].
    random_state : numpy Generator, optional
        Accepted for compatibility; the histogram tree is deterministic.
    max_bins : int, default=256
        Codes per feature including the missing bin (see :mod:`models.features.binning`).
    criterion : {"error", "gini"}, default="error"
        ``"error"``: every split minimises the weighted misclassification error (section
        2.2), equal errors broken by the weighted Gini index; ``"gini"``: weighted Gini.
    sample_weight : ndarray, optional
        Initial weights; rows with weight 0 do not define bin thresholds.

    Notes
    -----
    Leaves output the weighted majority class, +1 or -1 (ties: -1), the discrete
    AdaBoost learner. NaN follows the direction learned per split (see
    :mod:`models.kernels.histogram`). The training outputs come from the rows' leaves
    as tracked during growth, and equal what the exported trees predict bit for bit.

    References
    ----------
    Nikolaou et al., "Cost-sensitive boosting algorithms: do we really need them?",
    Machine Learning 104 (2016), section 2.2 (weak learner minimising eps_t).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        max_depth: int = 3,
        random_state: np.random.Generator | None = None,
        max_bins: int = 256,
        criterion: str = "error",
        sample_weight: np.ndarray | None = None,
    ) -> None:
        self.max_depth = check_depth(max_depth)
        self.criterion = checked_criterion(criterion, "tree criterion")
        self._mode = MODE_COST if criterion == "error" else MODE_GINI
        self.binned: BinnedFeatures = bin_features(X, max_bins, sample_weight)
        self.n_features = int(np.asarray(X).shape[1])
        pos = np.asarray(y) > 0
        # MODE_COST: column k = cost of answering class k (-1, +1); MODE_GINI: class weight.
        self._pos_col = 0 if criterion == "error" else 1
        self._pos = pos
        self._neg = ~pos
        self._H = np.zeros((pos.size, 2))

    def fit_round(self, w: np.ndarray) -> tuple[TreeArrays, np.ndarray]:
        """Grow one tree for weights ``w``; return its node arrays and training outputs."""
        H = self._H
        # w where the row is positive, else 0 (w >= 0 and finite, so w * True is w and
        # w * False is +0.0, as np.where gives), written into H without a temporary
        np.multiply(w, self._pos, out=H[:, self._pos_col])
        np.multiply(w, self._neg, out=H[:, 1 - self._pos_col])
        tree, value, leaf_of = grow_binned_tree(self.binned, H, self.max_depth, self._mode)
        out = np.where(value > 0, 1.0, -1.0)  # class index 1 is +1
        tree = tree._replace(value=out)
        return tree, out[leaf_of]

    def assemble(self, learners: list[object], alphas: np.ndarray) -> Ensemble:
        """Pack the kept trees into a ``"trees"`` :class:`Ensemble`."""
        return trees_ensemble(learners, alphas, self.n_features)  # type: ignore[arg-type]
