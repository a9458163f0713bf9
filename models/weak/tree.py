"""Depth-limited decision trees fitted by scikit-learn and exported to node arrays."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from models.ensemble import Ensemble
from models.exceptions import InvalidInput

__all__ = ["TreeArrays", "TreeTrainer", "export_tree"]

_BIG = float(np.finfo(np.float64).max)


class TreeArrays(NamedTuple):
    """Node arrays of one tree (local child indices, -1 for leaves)."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    missing_left: np.ndarray
    value: np.ndarray


def export_tree(clf: DecisionTreeClassifier, nan_features: np.ndarray) -> TreeArrays:
    """Export a fitted binary ``DecisionTreeClassifier`` (classes -1, +1) to node arrays.

    Parameters
    ----------
    clf : DecisionTreeClassifier
        Fitted on labels {-1, +1}.
    nan_features : ndarray of bool, shape (n_features,)
        Which features had a NaN in the training rows. For a split on a feature without
        NaN, a NaN at prediction time goes to the child holding more training weight
        (ties: left); otherwise to the side scikit-learn learned (``missing_go_to_left``).

    Returns
    -------
    TreeArrays
        Leaves output +1 where the weighted fraction of class +1 exceeds 1/2, else -1
        (scikit-learn's argmax, ties to the first class).
    """
    t = clf.tree_
    leaf = t.children_left == -1
    feature = np.where(leaf, -1, t.feature).astype(np.int32)
    thr = np.where(leaf, 0.0, t.threshold)
    thr = np.where(np.isposinf(thr), _BIG, thr)  # "all non-missing values go left"
    left = t.children_left.astype(np.int32)
    right = t.children_right.astype(np.int32)
    wn = t.weighted_n_node_samples
    heavier_left = wn[np.where(leaf, 0, left)] >= wn[np.where(leaf, 0, right)]
    learned = np.asarray(t.missing_go_to_left, dtype=bool)
    seen = nan_features[np.where(leaf, 0, feature)]
    missing_left = np.where(leaf, 0, np.where(seen, learned, heavier_left)).astype(np.uint8)
    frac = t.value[:, 0, :]  # classes_ == [-1, 1]: the loop always passes both labels
    value = np.where(frac[:, 1] > frac[:, 0], 1.0, -1.0)
    return TreeArrays(feature, thr.astype(np.float64), left, right, missing_left, value)


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


class TreeTrainer:
    """Fits ``DecisionTreeClassifier(max_depth)`` with sample weights, once per round.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training matrix (finite or NaN; scikit-learn >= 1.3 trees handle NaN).
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    max_depth : int, default=3
        Depth limit in [1, 8].
    random_state : numpy Generator
        Source of one tree seed per round (scikit-learn permutes features randomly).

    References
    ----------
    Nikolaou et al., "Cost-sensitive boosting algorithms: do we really need them?",
    Machine Learning 104 (2016), section 2.2 (weak learner fitted to the weights D^t).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        max_depth: int = 3,
        random_state: np.random.Generator | None = None,
    ) -> None:
        if isinstance(max_depth, bool) or not isinstance(max_depth, int | np.integer):
            raise InvalidInput(f"max_depth must be an integer in [1, 8], got {max_depth!r}")
        if not 1 <= max_depth <= 8:
            raise InvalidInput(f"max_depth must be an integer in [1, 8], got {max_depth!r}")
        self.max_depth = int(max_depth)
        self._X = X
        self._X32 = np.asarray(X, dtype=np.float32)
        self._y = y
        self._nan = np.isnan(X).any(axis=0)
        self._rng = random_state if random_state is not None else np.random.default_rng(0)
        self.n_features = X.shape[1]

    def fit_round(self, w: np.ndarray) -> tuple[TreeArrays, np.ndarray]:
        """Fit one tree to weights ``w``; return its node arrays and training outputs."""
        seed = int(self._rng.integers(np.iinfo(np.int32).max))
        clf = DecisionTreeClassifier(max_depth=self.max_depth, random_state=seed)
        clf.fit(self._X32, self._y, sample_weight=w)
        tree = export_tree(clf, self._nan)
        single = trees_ensemble([tree], np.ones(1), self.n_features)
        return tree, single.learner_outputs(self._X)[:, 0]

    def assemble(self, learners: list[object], alphas: np.ndarray) -> Ensemble:
        """Pack the kept trees into a ``"trees"`` :class:`Ensemble`."""
        return trees_ensemble(learners, alphas, self.n_features)  # type: ignore[arg-type]
