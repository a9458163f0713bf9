"""Compiled prediction kernels: SAMME tree votes and the multinomial map's logits.

The numpy forms of these computations (:meth:`models.multiclass.vote_ensemble.VoteEnsemble.votes`
on trees, :func:`models.multiclass.multinomial.softmax_rows` of the logits) cost one
numpy call per tree level and per class: about 30 calls for depth-6 trees and 6
classes, which dominate a one-row request (about 100 us in all). These kernels do the
same arithmetic in one compiled call per step, **bit for bit**:

* the tree walk takes the same branch as the numpy walk (``x <= threshold`` goes left,
  NaN goes to its learned side);
* class ``k``'s vote ``sum_m beta_m I(Phi_m(x) = k)`` is summed with numpy's pairwise
  summation (:func:`pairwise_sum`, the scheme of ``np.add.reduce`` over a contiguous
  axis: blocks of at most 128 values summed with 8 accumulators, larger ranges split in
  two at a multiple of 8), over the same values (``beta_m`` or ``0.0``) in the same
  order as :func:`models.ensemble.row_sums`;
* the logits ``b + sum_j s_j W[j]`` are accumulated column by column as in
  :func:`models.multiclass.multinomial._logits` (a product, then a sum: no fused
  multiply-add, numba compiles without fast-math) and shifted by the row maximum. The
  exponential is left to numpy (its SIMD ``exp`` may differ from libm's in the last
  bit), the normalisation by the sum taken column by column is compiled again.

``tests/models/test_predict_kernels.py`` checks each against its numpy form bit for bit
(many ensemble sizes, classes and NaN patterns).

The module imports numba, so it is imported on the first tree-vote or multinomial
prediction, not with the artifacts (importing :mod:`models.artifacts` stays free of
numba). ``cache=True`` stores the machine code beside this file (or in
``NUMBA_CACHE_DIR``); :mod:`models.warmup` compiles it ahead of serving.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "as_kernel_input",
    "normalise_exp",
    "pairwise_sum",
    "shifted_logits",
    "tree_votes",
]


def as_kernel_input(a: np.ndarray) -> np.ndarray:
    """``a`` as a writeable C-contiguous float64 array (a copy only when it is not one).

    numba compiles one machine-code version per argument type, and a read-only or
    strided array is another type: an artifact's arrays are read-only, a request's rows
    may be a read-only view of a buffer. Passing every kernel the one type that
    :mod:`models.warmup` compiles keeps compilation off the request path.
    """
    if a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable:
        return a
    return np.array(a, dtype=np.float64, order="C")


_PW_BLOCK = 128  # numpy's PW_BLOCKSIZE


@njit(nogil=True, cache=True)
def _block_sum(a, start, n):  # pragma: no cover - compiled
    """numpy's sum of at most 128 values: 8 accumulators, then the rest in order."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[start + i]
        return res
    r0 = a[start]
    r1 = a[start + 1]
    r2 = a[start + 2]
    r3 = a[start + 3]
    r4 = a[start + 4]
    r5 = a[start + 5]
    r6 = a[start + 6]
    r7 = a[start + 7]
    i = 8
    stop = n - (n % 8)
    while i < stop:
        j = start + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[start + i]
        i += 1
    return res


@njit(nogil=True, cache=True)
def pairwise_sum(a, start, n):  # pragma: no cover - compiled
    """``a[start:start + n].sum()`` in numpy's pairwise order (module docstring).

    numpy recurses: ``sum(a[:n2]) + sum(a[n2:])`` with ``n2 = n // 2`` rounded down to a
    multiple of 8, down to blocks of at most 128. The same tree of additions is walked
    here with an explicit stack (numba cannot cache a self-recursive function).
    """
    if n <= _PW_BLOCK:
        return _block_sum(a, start, n)
    depth = 64  # n halves at every level: 64 levels hold any array
    seg_start = np.empty(depth, dtype=np.int64)
    seg_n = np.empty(depth, dtype=np.int64)
    seg_split = np.zeros(depth, dtype=np.bool_)
    values = np.empty(depth + 1)
    seg_start[0] = start
    seg_n[0] = n
    top = 0  # index of the segment on top of the stack
    nv = 0  # number of finished partial sums on the value stack
    while top >= 0:
        s0 = seg_start[top]
        n0 = seg_n[top]
        if n0 <= _PW_BLOCK:
            values[nv] = _block_sum(a, s0, n0)
            nv += 1
            top -= 1
        elif seg_split[top]:  # both halves done: left + right
            values[nv - 2] = values[nv - 2] + values[nv - 1]
            nv -= 1
            seg_split[top] = False
            top -= 1
        else:
            seg_split[top] = True
            n2 = n0 // 2
            n2 -= n2 % 8
            seg_start[top + 1] = s0 + n2  # the right half, finished second
            seg_n[top + 1] = n0 - n2
            seg_split[top + 1] = False
            seg_start[top + 2] = s0  # the left half, on top: finished first
            seg_n[top + 2] = n2
            seg_split[top + 2] = False
            top += 2
    return values[0]


_ROW_BLOCK = 64  # rows walked through a group of trees before the next: its nodes stay in cache
_TREE_GROUP = 16  # trees walked side by side (independent loads in flight at once)
_LOCKSTEP_ROWS = 8  # blocks of at least this many rows walk each tree to its leaf instead


@njit(nogil=True, cache=True)
def tree_votes(
    X,
    roots,
    feature,
    threshold,
    left,
    right,
    missing_left,
    leaf_class,
    nodes,
    depth,
    beta,
    n_classes,
    total,
):  # pragma: no cover - compiled
    """Class votes of tree learners for every row of ``X``, shape (n, K).

    The nodes come twice: as flat arrays (``feature`` -1 at a leaf, ``left`` / ``right``
    global node indices, ``leaf_class`` the class a leaf votes for) and as 32-byte
    records, ``nodes`` (:func:`models.multiclass.vote_ensemble.pack_nodes`); ``roots``
    is each tree's root, ``depth`` the deepest tree's depth. With ``total > 0`` the votes are returned
    as fractions ``min(max(V / total, 0), 1)`` (:meth:`vote_fractions`).

    Rows go through a group of 16 trees in blocks of 64, so the group's nodes are read
    from cache for every row of the block; such blocks walk each tree to its leaf, row
    by row, on the flat arrays (measured faster there than the records). A block of
    fewer than 8 rows (a one-row request) reads nodes that are mostly not in cache: it
    walks the group's 16 trees side by side on the records (one cache line a step),
    each taking ``depth`` steps (a leaf steps onto itself). A walk is a chain of
    dependent loads; 16 independent chains keep the memory busy where one would wait on
    each load (a fold ensemble of 1,500 depth-6 trees spans about 5 MB of nodes).
    Either way the leaves reached are those of the one-tree walk: the same bits.
    """
    n = X.shape[0]
    m_count = roots.shape[0]
    out = np.empty((n, n_classes))
    cls = np.empty((_ROW_BLOCK, m_count), dtype=np.int32)
    cur = np.empty(_TREE_GROUP, dtype=np.int64)
    buf = np.empty(m_count)
    for r0 in range(0, n, _ROW_BLOCK):
        r1 = min(r0 + _ROW_BLOCK, n)
        for m0 in range(0, m_count, _TREE_GROUP):
            g_n = min(_TREE_GROUP, m_count - m0)
            if r1 - r0 >= _LOCKSTEP_ROWS:  # many rows: tree by tree, each to its leaf
                for g in range(g_n):
                    root = roots[m0 + g]
                    for r in range(r0, r1):
                        node = root
                        while feature[node] >= 0:
                            x = X[r, feature[node]]
                            if x <= threshold[node] or (x != x and missing_left[node]):
                                node = left[node]
                            else:
                                node = right[node]
                        cls[r - r0, m0 + g] = leaf_class[node]
                continue
            for r in range(r0, r1):  # few rows: the group's trees side by side
                for g in range(g_n):
                    cur[g] = roots[m0 + g]
                for _ in range(depth):
                    for g in range(g_n):
                        nd = nodes[cur[g]]
                        x = X[r, nd.feature]
                        if x <= nd.threshold or (x != x and nd.missing_left != 0):  # NaN: learned
                            cur[g] = nd.left
                        else:
                            cur[g] = nd.right
                for g in range(g_n):
                    cls[r - r0, m0 + g] = nodes[cur[g]].leaf_class
        for r in range(r0, r1):
            for k in range(n_classes):
                for m in range(m_count):
                    buf[m] = beta[m] if cls[r - r0, m] == k else 0.0
                v = pairwise_sum(buf, 0, m_count)
                if total > 0.0:
                    v = min(max(v / total, 0.0), 1.0)
                out[r, k] = v
    return out


@njit(nogil=True, cache=True)
def shifted_logits(s, W, b):  # pragma: no cover - compiled
    """``z = b + sum_j s[:, j] W[j]`` (column by column), minus each row's maximum."""
    n, k_in = s.shape
    k = b.shape[0]
    z = np.empty((n, k))
    for r in range(n):
        for c in range(k):
            z[r, c] = b[c]
        for j in range(k_in):
            sj = s[r, j]
            for c in range(k):
                z[r, c] += sj * W[j, c]
        top = z[r, 0]
        for c in range(1, k):
            if z[r, c] > top:
                top = z[r, c]
        for c in range(k):
            z[r, c] -= top
    return z


@njit(nogil=True, cache=True)
def normalise_exp(e):  # pragma: no cover - compiled
    """Rows of ``e`` divided in place by their sums taken column by column."""
    n, k = e.shape
    for r in range(n):
        total = e[r, 0]
        for c in range(1, k):
            total += e[r, c]
        for c in range(k):
            e[r, c] /= total
    return e
