"""The ``"trees"`` layout: depth-limited trees, their nodes concatenated.

Arrays (nodes of all trees, ``tree_offsets`` of shape ``(M + 1,)``): ``node_feature``
(int32, -1 for a leaf), ``node_threshold`` (float64), ``node_left`` / ``node_right``
(int32, child index *local to its tree*, -1 for a leaf), ``node_missing_left`` (uint8, 1
if NaN goes left), ``node_value`` (float64, the leaf output), ``tree_offsets`` (int64).
Node 0 of each tree is its root; children have larger local indices than their parent,
which rules out cycles.

Rows walk the trees in one compiled call (:func:`models.kernels.predict.tree_leaves`):
the rows are coded once, and the trees walked eight at a time on 8-byte node records
(:mod:`models.kernels.tree_records`) without a branch; the class votes of trees whose
leaves are class indices likewise (:func:`models.kernels.predict.tree_votes`, each
class's votes summed in numpy's pairwise order: the bits of
``row_sums(classes == k, betas)`` without one numpy call per tree level and class). The
kernel module imports numba on first use; :mod:`models.catalog.warmup` compiles it ahead
of serving.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.exceptions import ArtifactError
from models.inference.layouts.attribution import tag_map
from models.inference.layouts.rows import CHUNK, block, row_sums
from models.kernels.tree_records import pack_nodes
from models.specs.layout import EnsembleLayout

__all__ = ["LAYOUT", "tree_nodes", "walk_arrays"]

ARRAYS: dict[str, type] = {
    "node_feature": np.int32,
    "node_threshold": np.float64,
    "node_left": np.int32,
    "node_right": np.int32,
    "node_missing_left": np.uint8,
    "node_value": np.float64,
    "tree_offsets": np.int64,
}


def _fail(msg: str) -> None:
    raise ArtifactError(msg)


def _prepare(alphas: np.ndarray, arrays: dict[str, np.ndarray], n_features: int) -> dict[str, Any]:
    """Validate the node arrays; return global child indices, the depth and leaf values."""
    m = alphas.size
    off = arrays["tree_offsets"]
    n_nodes = arrays["node_feature"].size
    if off.shape != (m + 1,) or off[0] != 0 or off[-1] != n_nodes or np.any(np.diff(off) < 1):
        _fail(f"'tree_offsets' must be {m + 1} increasing offsets from 0 to {n_nodes}")
    for name in ARRAYS:
        if name != "tree_offsets" and arrays[name].shape != (n_nodes,):
            _fail(f"array {name!r} must have shape ({n_nodes},)")
    feat, left, right = arrays["node_feature"], arrays["node_left"], arrays["node_right"]
    if np.any(arrays["node_missing_left"] > 1):
        _fail("array 'node_missing_left' must hold 0 or 1")
    leaf = feat == -1
    if np.any(~leaf & ((feat < 0) | (feat >= n_features))):
        _fail(f"array 'node_feature' must hold -1 (leaf) or indices in [0, {n_features})")
    if np.any(leaf & ((left != -1) | (right != -1))):
        _fail("leaves must have node_left == node_right == -1")
    tree_of = np.repeat(np.arange(m), np.diff(off))
    local = np.arange(n_nodes) - off[tree_of]
    size = np.diff(off)[tree_of]
    inner = ~leaf
    for name, child in (("node_left", left), ("node_right", right)):
        c = child[inner]
        if np.any((c <= local[inner]) | (c >= size[inner])):
            _fail(f"array {name!r}: a child index is out of range or not after its parent")
    glob_l = np.where(leaf, np.arange(n_nodes), left + off[tree_of])
    glob_r = np.where(leaf, np.arange(n_nodes), right + off[tree_of])
    parents = np.bincount(np.concatenate([glob_l[inner], glob_r[inner]]), minlength=n_nodes)
    expected = np.ones(n_nodes, dtype=np.int64)
    expected[off[:-1]] = 0
    if not np.array_equal(parents, expected):
        _fail("tree nodes must form trees: every non-root node needs exactly one parent")
    depth, level = 0, off[:-1]
    while True:  # terminates: children are after parents, every node visited once
        level = np.concatenate([glob_l[level][inner[level]], glob_r[level][inner[level]]])
        if level.size == 0:
            break
        depth += 1
    return {
        "left": glob_l.astype(np.intp),
        "right": glob_r.astype(np.intp),
        "depth": depth,
        "leafF": arrays["node_value"],
        "leafV": (arrays["node_value"] > 0).astype(np.float64),
    }


def walk_arrays(ensemble: Any) -> dict[str, Any]:
    """The arrays of the compiled walk (:mod:`models.kernels.predict`), made on the first
    prediction (training makes many ensembles it never walks) and kept with the
    ensemble: the flat node arrays with global child indices and the node records of
    :func:`models.kernels.tree_records.pack_nodes`. Writeable contiguous copies: an
    artifact's arrays are read-only, which numba would compile as another type."""
    k: dict[str, Any] | None = ensemble._derived.get("walk")
    if k is not None:
        return k
    a, g = ensemble.arrays, ensemble._derived
    roots = np.array(a["tree_offsets"][:-1], dtype=np.int64)
    feature = np.array(a["node_feature"], dtype=np.int64)
    threshold = np.array(a["node_threshold"], dtype=np.float64)
    left = np.array(g["left"], dtype=np.int64)
    right = np.array(g["right"], dtype=np.int64)
    missing_left = np.array(a["node_missing_left"] == 1)
    nodes, node_roots, order, cuts, cut_offsets = pack_nodes(
        roots, feature, threshold, left, right, missing_left, int(ensemble.n_features)
    )
    k = dict(
        roots=roots, feature=feature, threshold=threshold, left=left, right=right,
        missing_left=missing_left, node_ids=np.arange(feature.size, dtype=np.int64),
        nodes=nodes, node_roots=node_roots, record_node=order, cuts=cuts,
        cut_offsets=cut_offsets,
    )  # fmt: skip
    ensemble._derived["walk"] = k  # the same arrays whichever thread gets here first
    return k


def tree_nodes(ensemble: Any, xc: np.ndarray) -> np.ndarray:
    """Leaf index reached by every row of ``xc`` in every tree, shape (rows, M)."""
    from models.kernels.predict import as_kernel_input, tree_leaves  # numba, on first use

    k = walk_arrays(ensemble)
    return tree_leaves(  # type: ignore[no-any-return]
        as_kernel_input(xc), k["roots"], k["feature"], k["threshold"], k["left"],
        k["right"], k["missing_left"], k["node_ids"], k["nodes"], k["node_roots"],
        k["record_node"], k["cuts"], k["cut_offsets"], ensemble._derived["depth"],
    )  # fmt: skip


def _outputs(ensemble: Any, X: np.ndarray) -> np.ndarray:
    return ensemble.arrays["node_value"][tree_nodes(ensemble, X)]  # type: ignore[no-any-return]


def _sums(ensemble: Any, X: np.ndarray, tag: str) -> np.ndarray:
    out = np.empty(X.shape[0])
    leaf_values = ensemble._derived[f"leaf{tag}"]
    for i in range(0, X.shape[0], CHUNK):
        leaves = tree_nodes(ensemble, block(X, i))
        out[i : i + CHUNK] = row_sums(leaf_values[leaves], ensemble.alphas)
    return out


def _explain_arrays(ensemble: Any, tag: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The path tables of the attribution, made on the first explanation and kept with
    the ensemble: ``(root values (M,), features (depth, nodes), terms (depth, nodes))``.

    Column ``n`` of the tables lists the edges from node ``n`` up to its root: edge ``l``
    leaves the ``l``-th ancestor's split on ``features[l, n]`` and carries
    ``alpha_t (value(child) - value(parent))`` (0 above the root). An inner node's value is
    the mean of its two children's (each branch weighted equally: the artifact keeps no
    training counts per node); leaves keep their output under ``g`` of ``tag``.
    """
    key = f"explain{tag}"
    found: tuple[np.ndarray, np.ndarray, np.ndarray] | None = ensemble._derived.get(key)
    if found is not None:
        return found
    a, g = ensemble.arrays, ensemble._derived
    off = a["tree_offsets"]
    inner = np.flatnonzero(a["node_feature"] != -1)
    left, right = g["left"][inner], g["right"][inner]
    values = tag_map(tag)(a["node_value"]).copy()
    depth = int(g["depth"])
    for _ in range(depth):  # each pass fixes one more level, from the leaves up
        values[inner] = (values[left] + values[right]) / 2.0
    parent = np.full(values.size, -1, dtype=np.intp)
    parent[left] = inner
    parent[right] = inner
    alpha = np.repeat(ensemble.alphas, np.diff(off))  # each node's tree weight
    feature = a["node_feature"].astype(np.intp)
    features = np.zeros((depth, values.size), dtype=np.intp)
    terms = np.zeros((depth, values.size))
    cur = np.arange(values.size)
    for level in range(depth):
        up = parent[cur]
        moved = up >= 0
        up = np.where(moved, up, cur)
        features[level] = np.where(moved, feature[up], 0)
        terms[level] = np.where(moved, values[cur] - values[up], 0.0) * alpha
        cur = up
    found = (values[off[:-1]], features, terms)
    ensemble._derived[key] = found
    return found


def _explain(ensemble: Any, X: np.ndarray, tag: str) -> tuple[float, np.ndarray]:
    """Path attribution (Saabas): along the path of a row to its leaf in tree ``t``, each
    inner node's feature gets ``alpha_t (value(child) - value(node))``; the bias is
    ``sum_t alpha_t value(root_t)``. The differences telescope, so bias plus
    contributions is the sum of the leaves' values. The leaves are those the served sums
    reach (:func:`tree_nodes`), their paths read from :func:`_explain_arrays`."""
    roots, features, terms = _explain_arrays(ensemble, tag)
    d = int(ensemble.n_features)
    out = np.empty((X.shape[0], d))
    for i in range(0, X.shape[0], CHUNK):
        xc = block(X, i)
        rows = xc.shape[0]
        leaves = tree_nodes(ensemble, xc)
        base = (np.arange(rows, dtype=np.intp) * d)[:, None]
        acc = np.zeros(rows * d)
        for level in range(features.shape[0]):
            cells = base + features[level][leaves]
            acc += np.bincount(
                cells.ravel(), weights=terms[level][leaves].ravel(), minlength=rows * d
            )
        out[i : i + rows] = acc.reshape(rows, d)
    return float(ensemble.alphas @ roots), out


class _Votes:
    """Votes (``total = 0``) or vote fractions (divided and clipped in the same call) of
    trees whose leaves are class indices, compiled; a class, not a closure, so that a
    fitted estimator holding it pickles."""

    def __init__(self, ensemble: Any, k: int) -> None:
        self.walk = w = walk_arrays(ensemble)
        self.leaf_class = np.array(ensemble.arrays["node_value"], dtype=np.int64)
        order = w["record_node"]
        # each record's leaf class (-1 at an internal node)
        self.node_class = np.where(w["feature"][order] < 0, self.leaf_class[order], -1).astype(
            np.int32
        )
        self.depth = int(ensemble._derived["depth"])
        self.beta = np.array(ensemble.alphas, dtype=np.float64)
        self.k = k

    def __call__(self, X: np.ndarray, total: float) -> np.ndarray:
        from models.kernels.predict import as_kernel_input, tree_votes  # numba, on first use

        w = self.walk
        return tree_votes(  # type: ignore[no-any-return]
            as_kernel_input(X), w["roots"], w["feature"], w["threshold"], w["left"],
            w["right"], w["missing_left"], self.leaf_class, w["nodes"], w["node_roots"],
            self.node_class, w["cuts"], w["cut_offsets"], self.depth, self.beta, self.k, total,
        )  # fmt: skip


DESCRIPTION = (
    "a depth-limited tree: x[feature] <= threshold goes left, NaN per node_missing_left, "
    "leaves hold node_value"
)
LAYOUT = EnsembleLayout(
    "trees", DESCRIPTION, ARRAYS, _prepare, _outputs, _sums, _Votes, offsets="tree_offsets",
    class_arrays=("node_value",), cuts=("node_feature", "node_threshold"), explain=_explain,
)  # fmt: skip
