"""Tree nodes as 8-byte records for the compiled walk, and the row codes they compare.

Both tree ensembles (:class:`models.inference.ensemble.Ensemble` with two classes and
:class:`models.inference.vote_ensemble.VoteEnsemble`) keep their validated flat node
arrays (the artifact format); :func:`pack_nodes` derives, once per loaded model, the
records the kernels of :mod:`models.kernels.predict` walk. numpy only: this module does
not import numba.
"""

from __future__ import annotations

import numpy as np

from models.exceptions import ArtifactError

__all__ = ["NAN_CODE", "NODE_DTYPE", "pack_nodes"]


NODE_DTYPE = np.dtype([("cut", np.uint16), ("feature_missing", np.uint16), ("left", np.int32)])
"""One tree node of the compiled walk (:mod:`models.kernels.predict`), 8 bytes (eight to
a cache line).

A row is first coded feature by feature: ``code_f(x)`` is the number of the model's
distinct thresholds on feature f that are below ``x`` (:data:`NAN_CODE` for NaN), and
``x <= t`` exactly when ``code_f(x) <= code_f`` index of ``t``, so a node stores its
threshold's index ``cut`` among its feature's thresholds instead of the float.
``feature_missing`` is ``2 * feature + missing_left``; the children are ``left`` and
``left + 1``, so a step is ``left + 1 - go_left``, without a branch. A leaf always goes
left onto itself: cut :data:`NAN_CODE`, feature 0, missing left, ``left`` its own
index; a walk may take more steps than the leaf's depth and stay on it. Half the bytes
of a record holding the float threshold: a fold ensemble of 1,500 depth-6 trees spans
1.3 MB instead of 2.6 MB, mostly within a core's L2 cache."""

NAN_CODE = 0xFFFF
"""The code of NaN, above every threshold index (at most ``NAN_CODE - 1`` per feature)."""


def pack_nodes(
    roots: np.ndarray,
    feature: np.ndarray,
    threshold: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    missing_left: np.ndarray,
    n_features: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The flat node arrays of a tree ensemble as :data:`NODE_DTYPE` records.

    ``roots`` are the trees' first nodes, ``feature`` is -1 at a leaf, ``left`` /
    ``right`` are global node indices. Returns the records, each tree's root among
    them, each record's node index (``order``: record ``i`` is node ``order[i]``), and
    the sorted distinct thresholds of every feature, concatenated
    (``cuts``), with each feature's first index into them (``cut_offsets``, n_features
    + 1 values). The records keep the nodes' order when every internal node's right
    child follows its left one (as the trainers lay trees out); otherwise the trees are
    renumbered breadth first so that the children are next to each other.

    Records that cannot code a model (more than 32,767 features, more than 65,534
    distinct thresholds on one feature, or a NaN threshold) are not made: zero records
    are returned and every row takes the flat walk.
    """
    feature = np.asarray(feature)
    threshold = np.asarray(threshold, dtype=np.float64)
    leaf = feature < 0
    n = len(leaf)
    inner = ~leaf
    cut_offsets = np.zeros(n_features + 1, dtype=np.int64)
    none = np.zeros(0, dtype=NODE_DTYPE), np.zeros(0, np.int64), np.zeros(0, np.int64)
    if n_features > 0x7FFF or np.isnan(threshold[inner]).any():
        return (*none, np.zeros(0), cut_offsets)
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    order = np.arange(n)  # record index -> node index
    if np.any(right[inner] != left[inner] + 1):
        order = _adjacent_children_order(np.asarray(roots, np.int64), leaf, left, right)
    where = np.empty(n, dtype=np.int64)  # node index -> record index
    where[order] = np.arange(n)
    lf = leaf[order]
    f = np.where(lf, 0, feature[order]).astype(np.int64)
    t = threshold[order]
    # each internal node's threshold index among its feature's distinct thresholds: one
    # sort by (feature, threshold), a new group at every change (-0.0 == 0.0: one group)
    inner_at = np.flatnonzero(~lf)
    o = np.lexsort((t[inner_at], f[inner_at]))
    sf, st = f[inner_at][o], t[inner_at][o]
    new = np.ones(o.size, dtype=bool)
    new[1:] = (sf[1:] != sf[:-1]) | (st[1:] != st[:-1])
    group = np.cumsum(new) - 1  # index of the (feature, threshold) pair among all pairs
    cut_offsets[1:] = np.cumsum(np.bincount(sf[new], minlength=n_features))
    if np.diff(cut_offsets).max(initial=0) >= NAN_CODE:
        return (*none, np.zeros(0), cut_offsets)
    cut = np.full(n, NAN_CODE, dtype=np.int64)
    cut[inner_at[o]] = group - cut_offsets[sf]
    cuts = np.ascontiguousarray(st[new], dtype=np.float64)
    nodes = np.zeros(n, dtype=NODE_DTYPE)
    nodes["cut"] = cut
    nodes["feature_missing"] = 2 * f + np.where(lf, 1, np.asarray(missing_left, np.int64)[order])
    nodes["left"] = np.where(lf, np.arange(n), where[left[order]])
    return nodes, where[np.asarray(roots, np.int64)], order, cuts, cut_offsets


def _adjacent_children_order(
    roots: np.ndarray, leaf: np.ndarray, left: np.ndarray, right: np.ndarray
) -> np.ndarray:
    """Node indices in breadth-first order per tree, each node's children side by side."""
    order: list[int] = []
    for root in roots.tolist():
        order.append(root)
        i = len(order) - 1
        while i < len(order):
            node = order[i]
            if not leaf[node]:
                order += [int(left[node]), int(right[node])]
            i += 1
    if len(order) != len(leaf):
        raise ArtifactError("tree nodes not reachable from exactly one root")
    return np.asarray(order, dtype=np.int64)
