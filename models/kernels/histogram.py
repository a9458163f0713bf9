"""Compiled kernel growing one depth-limited histogram tree on pre-binned features.

One function, :func:`grow_tree`, serves the binary tree (:mod:`models.weak.tree`) and the
multiclass trees (:mod:`models.weak.multiclass`); :func:`grow_tree_labels` is the same
growth for SAMME's weighted error of K > 2 labels from class-weight histograms (one
addition per row and feature instead of K - 1: a depth-3 tree of 16,000 x 30 with six
classes about 1.4x faster; the same criterion, its sums rounded in another order, so where
two splits tie exactly a tree may take the other one). It works on a matrix ``H`` of shape
``(n, K)`` whose column ``k`` is, per row, either

* a *cost* (``mode = MODE_COST``): the split minimises ``sum_side min_k sum_rows H[:, k]``
  (the weighted misclassification error when ``H[i, k] = w_i [k != y_i]``, section 2.2
  of Nikolaou et al.; any per-row cost matrix for Lemmas 1-2 of Yang et al.) and a leaf
  outputs ``argmin_k`` of its summed costs; equal errors (within 1e-12 of the node's
  weight) are broken by the weighted Gini index of the summed columns, so among splits
  that lower the error equally (or not at all) the one with purer children is taken;
* a *class weight* (``mode = MODE_GINI``): the split minimises the weighted Gini
  impurity, a leaf outputs ``argmax_k``.

Ties go to the lower class index, feature and bin. Growth is depth first; a node becomes
a leaf at ``max_depth``, when it is pure, or when no split leaves more than 1e-12 of the
node's weight on both sides (a row of weight 0 therefore changes nothing: it adds exact
zeros to the histograms and defines no threshold). NaN (the missing bin) goes
to the side with the better criterion, or to the side holding more weight when both are
equal (ties: left), as in the decision stump.

Speed: per node, the histogram (feature, bin, column) of the smaller child (fewer rows
of positive weight) is summed over its rows and the sibling's is the parent's minus it
(the subtraction trick); that sum runs in parallel over features (``prange``) for large
nodes. Rows are kept
partitioned by node in one index array, so every row's leaf is known when growth ends
and the training outputs cost nothing extra. ``nogil=True`` lets other threads run
while a tree grows; ``cache=True`` compiles once per machine (next to this file in
``__pycache__``, or in ``NUMBA_CACHE_DIR``). Only the histograms of nodes with at least
``_PAR_MIN`` (rows x features x columns) use the parallel loop, and only the split
searches of nodes of at least ``_SPLIT_PAR_ROWS`` rows and ``_SPLIT_PAR_MIN`` (features x
bins x columns; 50 features, 2 columns: about 70 us on one thread; 30 features, 6
columns: about 300 us) spread the features over the threads: smaller ones cost less on
one thread than starting a parallel region, which on a loaded machine can take
milliseconds. The caller passes ``parallel`` False while its cores are busy with other
fits (:func:`models.kernels.cores.spare_cores`). The parallel loops need a thread-safe
numba threading layer when several threads grow trees at once (OpenMP, through the
system's libgomp, or TBB); otherwise the kernel stays on one thread (:data:`PARALLEL_OK`).
"""

from __future__ import annotations

import importlib
import os

import numba
import numpy as np
from numba import njit, prange

__all__ = [
    "MODE_COST",
    "MODE_GINI",
    "PARALLEL_OK",
    "grow_tree",
    "grow_tree_labels",
    "histogram_all",
]


def _threadsafe_layer() -> bool:
    """Whether numba has a threading layer that tolerates concurrent parallel calls."""
    for module in ("numba.np.ufunc.omppool", "numba.np.ufunc.tbbpool"):
        try:
            importlib.import_module(module)
            return True
        except Exception:  # ImportError, or OSError for a missing libgomp / libtbb
            continue
    return False


# Without OpenMP or TBB, numba's fallback "workqueue" layer aborts the process when two
# threads enter a parallel region at once (cross-fitting folds in threads): the kernel
# then stays on one thread.
PARALLEL_OK = _threadsafe_layer()
if PARALLEL_OK and "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "threadsafe"  # type: ignore[attr-defined]
if PARALLEL_OK:
    # Start the threading layer now. A cached function that *calls* the parallel kernel
    # (histogram_all -> _histogram -> _hist_parallel) carries the parallel region in its
    # own machine code; loaded from the cache as a process's first numba call, it runs
    # that region before anything started the layer's threads, and the process dies
    # with a segmentation fault (seen with a cache written by another process, e.g. the
    # warm-up or a test run, then a fresh `costwise serve` training).
    numba.get_num_threads()

MODE_COST = 0
MODE_GINI = 1
_TIE = 1e-12
_NB_MAX = 256
_PAR_MIN = 2_000_000  # (rows x features x columns) of a node below which one thread is faster
_SPLIT_PAR_MIN = 20_000  # (features x bins x columns) of a split search worth two threads
_SPLIT_PAR_ROWS = 4_096  # rows of a node below which its histograms are too sparse to share


@njit(nogil=True, cache=True)
def _hist_feature(cj, rows, g, h):  # pragma: no cover - compiled
    """h[b, :] = sum of g[t, :] over the node's rows t whose code in ``cj`` is b."""
    h[:, :] = 0.0
    K = g.shape[1]
    if K == 2:
        for t in range(rows.size):
            b = cj[rows[t]]
            h[b, 0] += g[t, 0]
            h[b, 1] += g[t, 1]
    else:
        for t in range(rows.size):
            b = cj[rows[t]]
            for k in range(K):
                h[b, k] += g[t, k]


@njit(nogil=True, cache=True, parallel=True)
def _hist_parallel(codes, rows, g, out):  # pragma: no cover - compiled
    for j in prange(codes.shape[0]):
        _hist_feature(codes[j], rows, g, out[j])


@njit(nogil=True, cache=True)
def _histogram(codes, order, start, end, H, out, parallel):  # pragma: no cover - compiled
    """out[j, b, :] = sum of H over the rows of order[start:end] in bin b of feature j."""
    K = H.shape[1]
    m = end - start
    rows = order[start:end]
    if m == H.shape[0]:
        # every row: ``order`` is still the identity (the root, or a child holding all
        # rows of a stable partition), so H is its own gather; no (n, K) copy
        g = H
    else:
        g = np.empty((m, K))
        for t in range(m):
            r = rows[t]
            for k in range(K):
                g[t, k] = H[r, k]
    if parallel:
        _hist_parallel(codes, rows, g, out)
    else:
        for j in range(codes.shape[0]):
            _hist_feature(codes[j], rows, g, out[j])


@njit(nogil=True, cache=True)
def _class_hist_feature(cj, rows, yg, wg, h):  # pragma: no cover - compiled
    """h[b, k] = sum of the weights ``wg[t]`` of the node's rows t of class k in bin b."""
    h[:, :] = 0.0
    for t in range(rows.size):
        h[cj[rows[t]], yg[t]] += wg[t]


@njit(nogil=True, cache=True, parallel=True)
def _class_hist_parallel(codes, rows, yg, wg, out):  # pragma: no cover - compiled
    for j in prange(codes.shape[0]):
        _class_hist_feature(codes[j], rows, yg, wg, out[j])


@njit(nogil=True, cache=True)
def _class_histogram(codes, order, start, end, y, w, out, parallel):  # pragma: no cover
    """out[j, b, k] = the weight of the rows of order[start:end] of class k in bin b of
    feature j: one addition a row and feature, where the cost histogram of the labels'
    error (``H[i, k] = w_i [k != y_i]``) takes K - 1."""
    m = end - start
    rows = order[start:end]
    yg = np.empty(m, dtype=y.dtype)
    wg = np.empty(m)
    for t in range(m):
        r = rows[t]
        yg[t] = y[r]
        wg[t] = w[r]
    if parallel:
        _class_hist_parallel(codes, rows, yg, wg, out)
    else:
        for j in range(codes.shape[0]):
            _class_hist_feature(codes[j], rows, yg, wg, out[j])


@njit(nogil=True, cache=True)
def _error_costs(c, out):  # pragma: no cover - compiled
    """The error's cost histogram from class weights: ``out[j, b, k] = W - c[j, b, k]``
    with ``W`` the bin's weight (its classes summed in order; >= every term, so the
    costs are >= 0, and 0 for a bin of one class)."""
    d, nb, K = c.shape
    for j in range(d):
        for b in range(nb):
            s = 0.0
            for k in range(K):
                s += c[j, b, k]
            for k in range(K):
                out[j, b, k] = s - c[j, b, k]


@njit(nogil=True, cache=True)
def histogram_all(codes, H, parallel):  # pragma: no cover - compiled
    """Histogram (feature, bin, column) of ``H`` over all rows, summed in row order.

    The order of the sums is that of a CSR product ``A @ w`` whose rows list the
    examples of each bin in increasing order, so the stump gets the same bits."""
    d, n = codes.shape
    out = np.empty((d, _NB_MAX, H.shape[1]))
    order = np.arange(n).astype(np.int32)
    _histogram(codes, order, 0, n, H, out, parallel and n * d * H.shape[1] >= _PAR_MIN)
    return out


@njit(nogil=True, cache=True)
def _side_score(s, K, mode):  # pragma: no cover - compiled
    """(primary, secondary) criterion of one side's column sums ``s`` (length K)."""
    w = 0.0
    sq = 0.0
    best = s[0]
    for k in range(K):
        v = s[k]
        w += v
        sq += v * v
        if mode == MODE_COST:
            if v < best:
                best = v
        elif v > best:
            best = v
    gini = -sq / w if w > 0 else 0.0
    if mode == MODE_COST:
        return best, gini
    return gini, 0.0


@njit(nogil=True, cache=True)
def _better(p, s, bp, bs, tol):  # pragma: no cover - compiled
    return p < bp - tol or (p <= bp + tol and s < bs)


@njit(nogil=True, cache=True)
def _option(L, tot, hm, miss_left, K, mode, tol, bp, a, c):  # pragma: no cover - compiled
    """Criterion of one split (left sums L, node sums tot, missing sums hm).

    Returns (primary, secondary, valid); the secondary is computed only when the
    primary is within ``tol`` of the best so far ``bp``; ``a``, ``c`` are buffers."""
    wa = 0.0
    wc = 0.0
    for k in range(K):
        x = L[k] + hm[k] if miss_left else L[k]
        z = tot[k] - L[k] if miss_left else tot[k] - L[k] + hm[k]
        a[k] = x
        c[k] = z
        wa += x
        wc += z
    if not (wa > tol and wc > tol):
        return np.inf, np.inf, False
    if mode == MODE_COST:
        ma = a[0]
        mc = c[0]
        for k in range(1, K):
            ma = min(ma, a[k])
            mc = min(mc, c[k])
        p = ma + mc
        if p > bp + tol:
            return p, np.inf, True
    pa, sa = _side_score(a, K, mode)
    pc, sc = _side_score(c, K, mode)
    return pa + pc, sa + sc, True


@njit(nogil=True, cache=True, inline="always")
def _score2(a0, a1, c0, c1, mode):  # pragma: no cover - compiled
    """(primary, secondary) of a two-column split: sides (a0, a1) and (c0, c1)."""
    wa = a0 + a1
    wc = c0 + c1
    g = -(a0 * a0 + a1 * a1) / wa - (c0 * c0 + c1 * c1) / wc
    if mode == MODE_COST:
        return min(a0, a1) + min(c0, c1), g
    return g, 0.0


@njit(nogil=True, cache=True)
def _split_feature2(h, n_thr, nb, mode, tol):  # pragma: no cover - compiled
    """:func:`_split_feature` for two columns, in scalars (the binary tree's case)."""
    miss = nb - 1
    t0 = 0.0
    t1 = 0.0
    for b in range(nb - 1):
        t0 += h[b, 0]
        t1 += h[b, 1]
    m0 = h[miss, 0]
    m1 = h[miss, 1]
    has_miss = m0 + m1 != 0.0
    l0 = 0.0
    l1 = 0.0
    bp = np.inf
    bs = np.inf
    bk = -1
    bml = 1
    for t in range(n_thr):
        x0 = h[t, 0]
        x1 = h[t, 1]
        if x0 == 0.0 and x1 == 0.0 and t > 0:
            continue  # same partition as t - 1, which wins ties
        l0 += x0
        l1 += x1
        r0 = t0 - l0
        r1 = t1 - l1
        ok1 = l0 + l1 + m0 + m1 > tol and r0 + r1 > tol
        ok2 = ok1
        if has_miss:
            ok2 = l0 + l1 > tol and r0 + r1 + m0 + m1 > tol
        if not (ok1 or ok2):
            continue
        p1 = np.inf
        s1 = np.inf
        p2 = np.inf
        s2 = np.inf
        if ok1:
            p1, s1 = _score2(l0 + m0, l1 + m1, r0, r1, mode)
        if has_miss and ok2:
            p2, s2 = _score2(l0, l1, r0 + m0, r1 + m1, mode)
        elif not has_miss:
            p2 = p1
            s2 = s1
        # NaN to the better side; equal: to the heavier side (ties: left), as the stump
        heavier_left = (l0 + l1) - (r0 + r1) >= 0
        ml = (p1 < p2 if p1 != p2 else heavier_left) if ok1 and ok2 else ok1
        p = p1 if ml else p2
        s = s1 if ml else s2
        if _better(p, s, bp, bs, tol):
            bp = p
            bs = s
            bk = t
            bml = 1 if ml else 0
    return bp, bs, bk, bml


@njit(nogil=True, cache=True)
def _split_feature(h, n_thr, nb, mode, tol):  # pragma: no cover - compiled
    """Best split of one feature: (criterion, tie-break, last left bin, NaN left)."""
    K = h.shape[1]
    if K == 2:
        return _split_feature2(h, n_thr, nb, mode, tol)
    miss = nb - 1
    tot = np.zeros(K)
    for b in range(nb - 1):
        for k in range(K):
            tot[k] += h[b, k]
    hm = h[miss]
    wm = 0.0
    for k in range(K):
        wm += hm[k]
    L = np.zeros(K)
    a = np.empty(K)
    c = np.empty(K)
    bp = np.inf
    bs = np.inf
    bk = -1
    bml = 1
    for t in range(n_thr):
        empty = True
        for k in range(K):
            if h[t, k] != 0.0:
                empty = False
            L[k] += h[t, k]
        if empty and t > 0:
            continue  # same partition as t - 1, which wins ties
        p1, s1, ok1 = _option(L, tot, hm, True, K, mode, tol, bp, a, c)
        if wm != 0.0:
            p2, s2, ok2 = _option(L, tot, hm, False, K, mode, tol, bp, a, c)
        else:
            p2, s2, ok2 = p1, s1, ok1
        if ok1 and ok2:
            if p1 != p2:
                ml = p1 < p2
            else:  # NaN to the heavier side (ties: left), as the stump
                wl = 0.0
                wr = 0.0
                for k in range(K):
                    wl += L[k]
                    wr += tot[k] - L[k]
                ml = wl - wr >= 0
        elif ok1 or ok2:
            ml = ok1
        else:
            continue
        p = p1 if ml else p2
        s = s1 if ml else s2
        if _better(p, s, bp, bs, tol):
            bp = p
            bs = s
            bk = t
            bml = 1 if ml else 0
    return bp, bs, bk, bml


@njit(nogil=True, cache=True)
def _best_splits(hist, n_thr, nb, mode, tol, res_p, res_s, res_k, res_ml):  # pragma: no cover
    """Best split of every feature: criterion, tie-break, bin and NaN direction.

    One thread: with two columns this takes about 70 us for 50 features, less than
    starting a parallel region costs on a busy machine."""
    for j in range(hist.shape[0]):
        res_p[j], res_s[j], res_k[j], res_ml[j] = _split_feature(hist[j], n_thr[j], nb, mode, tol)


@njit(nogil=True, cache=True, parallel=True)
def _best_splits_parallel(
    hist, n_thr, nb, mode, tol, res_p, res_s, res_k, res_ml
):  # pragma: no cover
    """:func:`_best_splits` with the features spread over numba's threads (each feature's
    search is the same code on the same histogram: the same bits)."""
    for j in prange(hist.shape[0]):
        p, s, k, ml = _split_feature(hist[j], n_thr[j], nb, mode, tol)
        res_p[j] = p
        res_s[j] = s
        res_k[j] = k
        res_ml[j] = ml


@njit(nogil=True, cache=True)
def _leaf_value(h, K, mode):  # pragma: no cover - compiled
    """Class of a leaf from its histogram (any feature's bins sum to the node totals)."""
    best = 0
    bv = 0.0
    for k in range(K):
        v = 0.0
        for b in range(h.shape[0]):
            v += h[b, k]
        if k == 0 or (mode == MODE_COST and v < bv) or (mode != MODE_COST and v > bv):
            best = k
            bv = v
    return best


@njit(nogil=True, cache=True)
def grow_tree(codes, H, n_thr, nb, max_depth, mode, parallel):  # pragma: no cover - compiled
    """Grow one tree; see the module docstring and :func:`_grow`."""
    return _grow(codes, H, np.empty(0, dtype=np.int32), H.shape[1], n_thr, nb, max_depth,
                 mode, parallel)  # fmt: skip


@njit(nogil=True, cache=True)
def grow_tree_labels(codes, y, w, K, n_thr, nb, max_depth, parallel):  # pragma: no cover
    """:func:`grow_tree` of the weighted error of labels, ``H[i, k] = w_i [k != y_i]``
    in ``MODE_COST``, from class-weight histograms (:func:`_class_histogram`): one
    addition per row and feature instead of K - 1; the split search reads the cost
    histogram ``W - C_k`` (:func:`_error_costs`), so the same criterion, its sums
    rounded in another order: errors within 1e-12 of the node's weight tie either way,
    but the Gini tie-break between splits of exactly equal error compares floats, so on
    data with many exact ties (integer features, few distinct values) a tree may take the
    other of two equal splits (vehicle: SAMME's trees differ from round 4)

    ``y``: int32 class indices (n,), ``w``: float64 weights >= 0 (n,), ``K`` classes."""
    return _grow(codes, w.reshape(w.size, 1), y, K, n_thr, nb, max_depth, MODE_COST, parallel)


@njit(nogil=True, cache=True)
def _grow(codes, H, y, K, n_thr, nb, max_depth, mode, parallel):  # pragma: no cover - compiled
    """Grow one tree; see the module docstring.

    With ``y`` empty, ``H`` is the (n, K) matrix; else ``H`` is the (n, 1) weights of
    the labels ``y`` (:func:`grow_tree_labels`) and the histograms hold class weights.

    Parameters
    ----------
    codes : uint8 array (d, n)
        Bin codes (:func:`models.features.binning.bin_features`), missing bin ``nb - 1``.
    H : float64 array (n, K)
        Per-row costs (``MODE_COST``) or class weights (``MODE_GINI``), all >= 0.
    n_thr : int64 array (d,)
        Valid thresholds per feature.
    nb : int
        Codes per feature including the missing bin.
    max_depth : int
        Depth limit (>= 1).
    mode : int
        ``MODE_COST`` or ``MODE_GINI``.
    parallel : bool
        Whether large nodes may use the parallel histogram (:data:`PARALLEL_OK`).

    Returns
    -------
    feature, bin, left, right, missing_left, value, leaf_of_row
        Node arrays (``feature == -1`` and ``left == right == -1`` for leaves; ``bin`` is
        the split's last left bin, ``value`` the leaf's class index) and the node index
        of every training row's leaf.
    """
    d, n = codes.shape
    labels = y.size > 0
    w = H[:, 0]
    max_nodes = 2 ** (max_depth + 1) - 1
    feature = np.full(max_nodes, -1, dtype=np.int32)
    split_bin = np.zeros(max_nodes, dtype=np.int32)
    left = np.full(max_nodes, -1, dtype=np.int32)
    right = np.full(max_nodes, -1, dtype=np.int32)
    mleft = np.zeros(max_nodes, dtype=np.uint8)
    value = np.zeros(max_nodes, dtype=np.int32)
    leaf_of = np.empty(n, dtype=np.int32)
    pos = np.zeros(n, dtype=np.uint8)  # 0/1 flags: one byte a row, not eight
    for i in range(n):
        if labels:  # K - 1 >= 1 costs of w_i
            pos[i] = 1 if w[i] != 0.0 else 0
        else:
            for k in range(K):
                if H[i, k] != 0.0:
                    pos[i] = 1
    n_pos = np.zeros(max_nodes, dtype=np.int64)
    n_pos[0] = np.count_nonzero(pos)
    order = np.arange(n).astype(np.int32)
    buf = np.empty(n, dtype=np.int32)
    n_slots = max_depth + 2
    hists = np.empty((n_slots, d, nb, K))
    costs = np.empty((d, nb, K) if labels else (0, 0, 0))  # a node's, from class weights
    free = list(range(n_slots - 1, -1, -1))
    res_p = np.empty(d)
    res_s = np.empty(d)
    res_k = np.empty(d, dtype=np.int64)
    res_ml = np.empty(d, dtype=np.int64)
    # stack entries: node, start, end, depth, slot
    st_node = np.empty(max_depth + 2, dtype=np.int64)
    st_start = np.empty(max_depth + 2, dtype=np.int64)
    st_end = np.empty(max_depth + 2, dtype=np.int64)
    st_depth = np.empty(max_depth + 2, dtype=np.int64)
    st_slot = np.empty(max_depth + 2, dtype=np.int64)
    slot = free.pop()
    if labels:
        _class_histogram(codes, order, 0, n, y, w, hists[slot], parallel and n * d >= _PAR_MIN)
    else:
        _histogram(codes, order, 0, n, H, hists[slot], parallel and n * d * K >= _PAR_MIN)
    top = 0
    st_node[0] = 0
    st_start[0] = 0
    st_end[0] = n
    st_depth[0] = 0
    st_slot[0] = slot
    n_nodes = 1
    tot = np.empty(K)
    while top >= 0:
        node, start, end = st_node[top], st_start[top], st_end[top]
        depth, slot = st_depth[top], st_slot[top]
        top -= 1
        h = hists[slot]
        if labels:
            _error_costs(h, costs)
            h = costs
        wsum = 0.0
        for k in range(K):
            tot[k] = 0.0
            for b in range(nb):
                tot[k] += h[0, b, k]
            wsum += tot[k]
        impurity, _ = _side_score(tot, K, mode)
        if mode != MODE_COST:
            impurity += wsum  # W - sum_k W_k^2 / W >= 0, zero when pure
        tol = _TIE * wsum
        split = depth < max_depth and impurity > tol
        jbest = -1
        if split:
            if parallel and end - start >= _SPLIT_PAR_ROWS and d * nb * K >= _SPLIT_PAR_MIN:
                _best_splits_parallel(h, n_thr, nb, mode, tol, res_p, res_s, res_k, res_ml)
            else:
                _best_splits(h, n_thr, nb, mode, tol, res_p, res_s, res_k, res_ml)
            bp = np.inf
            bs = np.inf
            for j in range(d):
                if res_k[j] >= 0 and _better(res_p[j], res_s[j], bp, bs, tol):
                    bp = res_p[j]
                    bs = res_s[j]
                    jbest = j
        if jbest < 0:
            value[node] = _leaf_value(h[0], K, mode)
            for t in range(start, end):
                leaf_of[order[t]] = node
            free.append(slot)
            continue
        kb = res_k[jbest]
        ml = res_ml[jbest]
        cj = codes[jbest]
        nl = 0
        nr = 0
        pl = 0  # rows of positive weight on the left: they decide which child is summed
        for t in range(start, end):  # stable partition of the node's rows
            r = order[t]
            b = cj[r]
            go_left = b <= kb if b != nb - 1 else ml == 1
            if go_left:
                order[start + nl] = r
                nl += 1
                pl += pos[r]
            else:
                buf[nr] = r
                nr += 1
        for t in range(nr):
            order[start + nl + t] = buf[t]
        lnode, rnode = n_nodes, n_nodes + 1
        n_nodes += 2
        n_pos[lnode] = pl
        n_pos[rnode] = n_pos[node] - pl
        feature[node] = jbest
        split_bin[node] = kb
        left[node] = lnode
        right[node] = rnode
        mleft[node] = ml
        mid = start + nl
        small = free.pop()
        if 2 * pl <= n_pos[node]:
            sm_s, sm_e = start, mid
        else:
            sm_s, sm_e = mid, end
        sm_par = parallel and (sm_e - sm_s) * d * (1 if labels else K) >= _PAR_MIN
        if labels:
            _class_histogram(codes, order, sm_s, sm_e, y, w, hists[small], sm_par)
        else:
            _histogram(codes, order, sm_s, sm_e, H, hists[small], sm_par)
        hists[slot] -= hists[small]
        if 2 * pl <= n_pos[node]:
            big_node, big_s, big_e = rnode, mid, end
            sm_node = lnode
        else:
            big_node, big_s, big_e = lnode, start, mid
            sm_node = rnode
        top += 1
        st_node[top] = big_node
        st_start[top] = big_s
        st_end[top] = big_e
        st_depth[top] = depth + 1
        st_slot[top] = slot
        top += 1
        st_node[top] = sm_node
        st_start[top] = sm_s
        st_end[top] = sm_e
        st_depth[top] = depth + 1
        st_slot[top] = small
    return (
        feature[:n_nodes].copy(),
        split_bin[:n_nodes].copy(),
        left[:n_nodes].copy(),
        right[:n_nodes].copy(),
        mleft[:n_nodes].copy(),
        value[:n_nodes].copy(),
        leaf_of,
    )
