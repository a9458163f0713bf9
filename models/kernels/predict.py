"""Compiled prediction kernels: SAMME tree votes and the multinomial map's logits.

The numpy forms of these computations (:meth:`models.inference.vote_ensemble.VoteEnsemble.votes`
on trees, :func:`models.calibration.multinomial.softmax_rows` of the logits) cost one
numpy call per tree level and per class: about 30 calls for depth-6 trees and 6
classes, which dominate a one-row request (about 100 us in all). These kernels do the
same arithmetic in one compiled call per step, **bit for bit**:

* the tree walk takes the same branch as the numpy walk (``x <= threshold`` goes left,
  NaN goes to its learned side);
* class ``k``'s vote ``sum_m beta_m I(Phi_m(x) = k)`` is summed with numpy's pairwise
  summation (:func:`pairwise_sum`, the scheme of ``np.add.reduce`` over a contiguous
  axis: blocks of at most 128 values summed with 8 accumulators, larger ranges split in
  two at a multiple of 8), over the same values (``beta_m`` or ``0.0``) in the same
  order as :func:`models.inference.layouts.rows.row_sums`;
* the logits ``b + sum_j s_j W[j]`` are accumulated column by column as in
  :func:`models.calibration.multinomial._logits` (a product, then a sum: no fused
  multiply-add, numba compiles without fast-math) and shifted by the row maximum. The
  exponential is left to numpy (its SIMD ``exp`` may differ from libm's in the last
  bit), the normalisation by the sum taken column by column is compiled again.

``tests/models/kernels/test_predict_kernels.py`` checks each against its numpy form bit for bit
(many ensemble sizes, classes and NaN patterns).

The module imports numba, so it is imported on the first tree-vote or multinomial
prediction, not with the artifacts (importing :mod:`models.inference.artifacts` stays free of
numba). ``cache=True`` stores the machine code beside this file (or in
``NUMBA_CACHE_DIR``); :mod:`models.catalog.warmup` compiles it ahead of serving.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "as_kernel_input",
    "class_sums",
    "oblique_outputs",
    "normalise_exp",
    "pairwise_sum",
    "shifted_logits",
    "tree_leaves",
    "tree_votes",
]


def as_kernel_input(a: np.ndarray) -> np.ndarray:
    """``a`` as a writeable C-contiguous float64 array (a copy only when it is not one).

    numba compiles one machine-code version per argument type, and a read-only or
    strided array is another type: an artifact's arrays are read-only, a request's rows
    may be a read-only view of a buffer. Passing every kernel the one type that
    :mod:`models.catalog.warmup` compiles keeps compilation off the request path.
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
    multiple of 8, down to blocks of at most 128; a block is :func:`_block_sum`. Longer
    ranges are :func:`class_sums` with one class, which walks that tree of additions.
    """
    if n <= _PW_BLOCK:
        return _block_sum(a, start, n)
    out = np.empty(1)
    class_sums(np.zeros(n, dtype=np.int32), a[start : start + n], out, np.empty((1, 8)),
               np.empty((65, 1)))  # fmt: skip
    return out[0]


_ROW_BLOCK = 64  # rows walked through a group of trees before the next: its nodes stay in cache
_TREE_GROUP = 16  # trees a block of rows goes through before the next group


@njit(nogil=True, cache=True)
def _class_block(cls, beta, start, n, res, acc):  # pragma: no cover - compiled
    """:func:`_block_sum` of ``beta[m] if cls[m] == k else 0`` for every class k at once.

    Adding 0.0 to a partial sum of non-negative values leaves it unchanged, so adding
    each ``beta[m]`` only to its class's accumulator (the one numpy's scheme gives its
    position) yields, for every class, the bits of the sum over the zero-filled vector.
    """
    k_count = res.shape[0]
    for k in range(k_count):
        res[k] = 0.0
    if n < 8:
        for i in range(n):
            res[cls[start + i]] += beta[start + i]
        return
    for k in range(k_count):
        for j in range(8):
            acc[k, j] = 0.0
    stop = n - (n % 8)
    for i in range(stop):
        acc[cls[start + i], i & 7] += beta[start + i]
    for k in range(k_count):
        res[k] = ((acc[k, 0] + acc[k, 1]) + (acc[k, 2] + acc[k, 3])) + (
            (acc[k, 4] + acc[k, 5]) + (acc[k, 6] + acc[k, 7])
        )
    for i in range(stop, n):
        res[cls[start + i]] += beta[start + i]


@njit(nogil=True, cache=True)
def class_sums(cls, beta, out, acc, values):  # pragma: no cover - compiled
    """``out[k] = pairwise_sum(where(cls == k, beta, 0))`` for every class, in one pass.

    numpy's tree of additions (halves of ``n // 2`` rounded down to a multiple of 8,
    down to blocks of at most 128), walked with an explicit stack (numba cannot cache a
    self-recursive function), on vectors of K partial sums (:func:`_class_block`).
    ``acc`` (K, 8) and ``values`` (65, K) are scratch space.
    """
    n = cls.shape[0]
    k_count = out.shape[0]
    if n <= _PW_BLOCK:
        _class_block(cls, beta, 0, n, out, acc)
        return
    depth = 64
    seg_start = np.empty(depth, dtype=np.int64)
    seg_n = np.empty(depth, dtype=np.int64)
    seg_split = np.zeros(depth, dtype=np.bool_)
    seg_start[0] = 0
    seg_n[0] = n
    top = 0
    nv = 0
    while top >= 0:
        s0 = seg_start[top]
        n0 = seg_n[top]
        if n0 <= _PW_BLOCK:
            _class_block(cls, beta, s0, n0, values[nv], acc)
            nv += 1
            top -= 1
        elif seg_split[top]:
            for k in range(k_count):
                values[nv - 2, k] = values[nv - 2, k] + values[nv - 1, k]
            nv -= 1
            seg_split[top] = False
            top -= 1
        else:
            seg_split[top] = True
            n2 = n0 // 2
            n2 -= n2 % 8
            seg_start[top + 1] = s0 + n2
            seg_n[top + 1] = n0 - n2
            seg_split[top + 1] = False
            seg_start[top + 2] = s0
            seg_n[top + 2] = n2
            seg_split[top + 2] = False
            top += 2
    for k in range(k_count):
        out[k] = values[0, k]


_NAN_CODE = 0xFFFF  # models.kernels.tree_records.NAN_CODE


@njit(nogil=True, cache=True)
def _row_codes(xr, cuts, cut_offsets, codes):  # pragma: no cover - compiled
    """Each feature's code of the row ``xr``: how many of its cuts are below the value
    (``x <= cuts[i]`` exactly when the code is ``<= i``); NaN: ``_NAN_CODE``. Returns
    whether the row holds a NaN."""
    has_nan = False
    for j in range(xr.shape[0]):
        x = xr[j]
        if x != x:
            codes[j] = _NAN_CODE
            has_nan = True
            continue
        lo = cut_offsets[j]
        hi = cut_offsets[j + 1]
        first = lo
        while lo < hi:  # the first cut >= x
            mid = (lo + hi) >> 1
            if cuts[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        codes[j] = lo - first
    return has_nan


@njit(nogil=True, cache=True, inline="always")
def _step(nodes, codes, c, nan):  # pragma: no cover - compiled
    """The record after ``c`` for the coded row: ``left + 1 - go_left``, no branch.
    ``nan=False`` (the row holds no NaN) skips the learned side of a missing value."""
    nd = nodes[c]
    fm = np.int64(nd.feature_missing)
    code = codes[fm >> 1]
    go = code <= nd.cut
    if nan:  # NaN (code _NAN_CODE, above every cut) goes to its learned side
        go = go | ((code == _NAN_CODE) & ((fm & 1) != 0))
    return nd.left + 1 - np.int32(go)


@njit(nogil=True, cache=True)
def _walk_group(nodes, roots, node_class, codes, m0, g_n, depth, cls, nan):  # pragma: no cover
    """Leaf classes of trees ``m0 .. m0 + g_n`` for one coded row into ``cls[m0:]``:
    eight trees side by side in registers (eight chains of loads in flight)."""
    m = m0
    stop = m0 + g_n
    while m + 8 <= stop:
        c0 = roots[m]
        c1 = roots[m + 1]
        c2 = roots[m + 2]
        c3 = roots[m + 3]
        c4 = roots[m + 4]
        c5 = roots[m + 5]
        c6 = roots[m + 6]
        c7 = roots[m + 7]
        for _ in range(depth):
            c0 = _step(nodes, codes, c0, nan)
            c1 = _step(nodes, codes, c1, nan)
            c2 = _step(nodes, codes, c2, nan)
            c3 = _step(nodes, codes, c3, nan)
            c4 = _step(nodes, codes, c4, nan)
            c5 = _step(nodes, codes, c5, nan)
            c6 = _step(nodes, codes, c6, nan)
            c7 = _step(nodes, codes, c7, nan)
        cls[m] = node_class[c0]
        cls[m + 1] = node_class[c1]
        cls[m + 2] = node_class[c2]
        cls[m + 3] = node_class[c3]
        cls[m + 4] = node_class[c4]
        cls[m + 5] = node_class[c5]
        cls[m + 6] = node_class[c6]
        cls[m + 7] = node_class[c7]
        m += 8
    while m < stop:
        c = roots[m]
        for _ in range(depth):
            c = _step(nodes, codes, c, nan)
        cls[m] = node_class[c]
        m += 1


@njit(nogil=True, cache=True)
def _block_leaves(
    X,
    r0,
    r1,
    roots,
    feature,
    threshold,
    left,
    right,
    missing_left,
    flat_value,
    nodes,
    node_roots,
    node_value,
    cuts,
    cut_offsets,
    depth,
    codes,
    nan_rows,
    out,
):  # pragma: no cover - compiled
    """``out[r - r0, m]`` = the value of the leaf row ``r`` reaches in tree ``m``, for the
    rows ``r0 .. r1`` (at most :data:`_ROW_BLOCK`): ``node_value`` of the leaf's record
    on the coded walk, ``flat_value`` of its node on the flat walk (a model without
    records). Trees in groups of :data:`_TREE_GROUP`, each group through every row of
    the block while its records are in cache."""
    m_count = roots.shape[0]
    coded = nodes.shape[0] > 0
    if coded:
        for r in range(r0, r1):
            nan_rows[r - r0] = _row_codes(X[r], cuts, cut_offsets, codes[r - r0])
    for m0 in range(0, m_count, _TREE_GROUP):
        g_n = min(_TREE_GROUP, m_count - m0)
        if not coded:  # tree by tree, each row to its leaf on the flat arrays
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
                    out[r - r0, m0 + g] = flat_value[node]
            continue
        for r in range(r0, r1):  # coded, the group's trees side by side; the constant
            # True / False compiles a walker of its own for each (numba types a literal
            # argument as such): rows without NaN run no missing-value test at all (one
            # call with the runtime flag measured 16% slower on 10,000 rows)
            if nan_rows[r - r0]:
                _walk_group(nodes, node_roots, node_value, codes[r - r0], m0, g_n, depth,
                            out[r - r0], True)  # fmt: skip
            else:
                _walk_group(nodes, node_roots, node_value, codes[r - r0], m0, g_n, depth,
                            out[r - r0], False)  # fmt: skip


@njit(nogil=True, cache=True)
def tree_leaves(
    X,
    roots,
    feature,
    threshold,
    left,
    right,
    missing_left,
    node_ids,
    nodes,
    node_roots,
    record_node,
    cuts,
    cut_offsets,
    depth,
):  # pragma: no cover - compiled
    """The node index of the leaf every row of ``X`` reaches in every tree, (n, M) int64.

    The walk of :func:`tree_votes` (coded rows, 8-byte records, eight trees side by
    side; the flat walk for a model without records), for the two-class ensembles whose
    leaves hold real values (:func:`models.inference.layouts.trees.tree_nodes`): the leaf
    reached is that of the one-tree walk, the caller sums its values as before.
    ``node_ids`` is ``arange(n_nodes)``, ``record_node`` each record's node index.
    """
    n = X.shape[0]
    out = np.empty((n, roots.shape[0]), dtype=np.int64)
    codes = np.empty((_ROW_BLOCK, X.shape[1]), dtype=np.int64)
    nan_rows = np.zeros(_ROW_BLOCK, dtype=np.bool_)
    for r0 in range(0, n, _ROW_BLOCK):
        r1 = min(r0 + _ROW_BLOCK, n)
        _block_leaves(X, r0, r1, roots, feature, threshold, left, right, missing_left,
                      node_ids, nodes, node_roots, record_node, cuts, cut_offsets, depth,
                      codes, nan_rows, out[r0:r1])  # fmt: skip
    return out


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
    node_roots,
    node_class,
    cuts,
    cut_offsets,
    depth,
    beta,
    n_classes,
    total,
):  # pragma: no cover - compiled
    """Class votes of tree learners for every row of ``X``, shape (n, K).

    The nodes come twice: as flat arrays (``roots`` each tree's root, ``feature`` -1 at
    a leaf, ``left`` / ``right`` global node indices, ``leaf_class`` the class a leaf
    votes for) and as 8-byte records, ``nodes`` with ``node_roots``, ``node_class``,
    ``cuts`` and ``cut_offsets`` (:func:`models.kernels.tree_records.pack_nodes`;
    no records: every row takes the flat walk); ``depth`` is the deepest tree's depth.
    With ``total > 0`` the votes are returned as fractions ``min(max(V / total, 0), 1)``
    (:meth:`vote_fractions`).

    Every row is coded once (:func:`_row_codes`, a binary search per feature), then rows
    go through a group of 16 trees in blocks of 64, so that the group's records are read
    from cache for every row of the block; each row walks the group's trees eight at a
    time side by side (:func:`_walk_group`), each taking ``depth`` steps (a leaf steps
    onto itself), without a branch on the comparison (the next record is ``left + 1 -
    go_left``). A walk is a chain of dependent loads: eight independent chains keep the
    memory busy where one would wait on each load (a one-row request reads records that
    are mostly not in cache; those of a fold ensemble of 1,500 depth-6 trees, 1.3 MB,
    mostly fit a core's L2 cache), and a row's comparisons are as good as random to a
    branch predictor: the branching walk on the flat arrays, kept for models without
    records, took 3 to 5 times as long for 10,000 rows. A row without NaN skips the
    missing-value test. The leaves reached are those of the one-tree walk (``x <= t``
    exactly when the codes compare so), and the votes are summed by
    :func:`class_sums`: the same bits.
    """
    n = X.shape[0]
    m_count = roots.shape[0]
    out = np.empty((n, n_classes))
    cls = np.empty((_ROW_BLOCK, m_count), dtype=np.int32)
    codes = np.empty((_ROW_BLOCK, X.shape[1]), dtype=np.int64)
    nan_rows = np.zeros(_ROW_BLOCK, dtype=np.bool_)
    acc = np.empty((n_classes, 8))
    values = np.empty((65, n_classes))
    for r0 in range(0, n, _ROW_BLOCK):
        r1 = min(r0 + _ROW_BLOCK, n)
        _block_leaves(X, r0, r1, roots, feature, threshold, left, right, missing_left,
                      leaf_class, nodes, node_roots, node_class, cuts, cut_offsets, depth,
                      codes, nan_rows, cls)  # fmt: skip
        for r in range(r0, r1):
            class_sums(cls[r - r0], beta, out[r], acc, values)
            if total > 0.0:
                for k in range(n_classes):
                    out[r, k] = min(max(out[r, k] / total, 0.0), 1.0)
    return out


@njit(nogil=True, cache=True)
def oblique_outputs(X, coef, intercept, value, fill):  # pragma: no cover - compiled
    """``h_m(x)`` of every oblique learner for every row of ``X``, shape (n, M).

    The arithmetic of :func:`models.inference.layouts.oblique.learner_outputs`, row by row: a
    NaN feature takes the learner's fill value; function q's score is the pairwise sum
    (:func:`pairwise_sum`) of the products ``x_j * coef[m, q, j]`` plus its intercept,
    a NaN score (``inf - inf`` on absurd input) is never chosen, and the first best
    function's value is the output. One compiled call instead of about ten numpy calls
    on (rows, M, R, d) temporaries, which cost a one-row request about 30 us.
    """
    n, d = X.shape
    m_count, r_count = value.shape
    out = np.empty((n, m_count))
    prod = np.empty(d)
    for r in range(n):
        for m in range(m_count):
            best = 0
            top = -np.inf
            for q in range(r_count):
                for j in range(d):
                    x = X[r, j]
                    if x != x:
                        x = fill[m, j]
                    prod[j] = x * coef[m, q, j]
                s = pairwise_sum(prod, 0, d) + intercept[m, q]
                if s != s:
                    s = -np.inf
                if q == 0 or s > top:
                    top = s
                    best = q
            out[r, m] = value[m, best]
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
