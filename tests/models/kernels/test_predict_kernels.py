"""Compiled prediction kernels: the same bits as the numpy forms they replace."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from models.auto import AutoCalibratedMulticlass
from models.calibration.multinomial import MultinomialCalibrator, _logits, softmax_rows
from models.inference.artifacts import dump_model, load_model
from models.inference.layouts import oblique as oblique_layout
from models.inference.layouts.rows import row_sums
from models.inference.layouts.trees import tree_nodes
from models.kernels.predict import (
    as_kernel_input,
    class_sums,
    normalise_exp,
    pairwise_sum,
    shifted_logits,
    tree_votes,
)
from models.kernels.tree_records import pack_nodes
from models.weak.registry import multiclass_trainer


def test_pairwise_sum_is_numpys_sum_to_the_last_bit() -> None:
    rng = np.random.default_rng(0)
    sizes = [*range(1, 300), 383, 511, 512, 513, 1000, 1029, 2048, 4100]
    for m in sizes:
        # values over six orders of magnitude: any other order of additions rounds
        # differently somewhere
        a = rng.exponential(size=m) * 10.0 ** rng.uniform(-3, 3, size=m)
        a[rng.random(m) < 0.4] = 0.0
        assert pairwise_sum(a, 0, m) == np.add.reduce(a), m
        assert pairwise_sum(a, 3, m - 3) == a[3:].sum() if m > 3 else True
        # and the row sums of a (rows, m) block, whatever the number of rows
        block = np.vstack([a, a[::-1]])
        assert pairwise_sum(a[::-1].copy(), 0, m) == row_sums(block, np.ones(m))[1], m


def _leaves_reference(ensemble, X: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The leaf (global node index) each row reaches in each tree: the plain one-tree
    walk on the artifact's arrays (local child indices), one row and node at a time."""
    a = ensemble.arrays
    starts = a["tree_offsets"][:-1].tolist()
    feat, thr = a["node_feature"].tolist(), a["node_threshold"].tolist()
    lft, rgt, ml = a["node_left"].tolist(), a["node_right"].tolist(), a["node_missing_left"]
    out = np.empty((X.shape[0], len(starts)), dtype=np.int64)
    for r, row in enumerate(X.tolist()):
        for m, s in enumerate(starts):
            node = s
            while feat[node] >= 0:
                x = row[feat[node]]
                go_left = x <= thr[node] if x == x else bool(ml[node])
                node = s + (lft[node] if go_left else rgt[node])
            out[r, m] = node
    return out


def _votes_numpy(vote, X: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The votes by definition: row_sums(Phi(X) == k, beta) per class, Phi from the
    reference walk."""
    h = vote.ensemble.arrays["node_value"][_leaves_reference(vote.ensemble, X)]
    return np.stack([row_sums(h == k, vote.betas) for k in range(vote.n_classes)], axis=1)


def _records(roots, feature, threshold, left, right, missing, leaf_class, n_features):  # type: ignore[no-untyped-def]
    """:func:`pack_nodes` with each record's leaf class (what tree_votes takes)."""
    nodes, node_roots, order, cuts, offsets = pack_nodes(
        roots, feature, threshold, left, right, missing, n_features
    )
    node_class = np.where(feature[order] < 0, leaf_class[order], -1).astype(np.int32)
    return nodes, node_roots, node_class, cuts, offsets


@pytest.mark.parametrize(("k", "depth", "rounds"), [(3, 1, 5), (4, 3, 150), (6, 6, 300)])
def test_tree_votes_equal_the_numpy_walk_bit_for_bit(k: int, depth: int, rounds: int) -> None:
    rng = np.random.default_rng(k)
    X = rng.normal(size=(400, 7))
    X[rng.random(size=X.shape) < 0.1] = np.nan  # missing values take their learned side
    y = rng.integers(0, k, size=400)
    tr = multiclass_trainer("tree", X, y, k, max_depth=depth, seed=0)
    learners = [tr.fit_costs(rng.uniform(size=(400, k)))[0] for _ in range(rounds)]
    vote = tr.assemble(learners, rng.exponential(size=rounds) * 10.0 ** rng.uniform(-2, 2, rounds))
    ref = _votes_numpy(vote, X)
    assert np.array_equal(vote.votes(X), ref)
    assert np.array_equal(vote.vote_fractions(X), np.clip(ref / vote.total, 0.0, 1.0))
    # 70 rows: a block of 64, then a block of 6
    assert np.array_equal(vote.votes(X[:70]), ref[:70])
    alone = np.vstack([vote.vote_fractions(X[i : i + 1]) for i in range(0, 400, 13)])
    assert np.array_equal(alone, vote.vote_fractions(X)[::13])
    # rows on the thresholds themselves (x <= t exactly when the codes compare so),
    # infinities and signed zeros: a row alone (coded walk) as in a batch (flat walk)
    a = vote.ensemble.arrays
    edges = rng.choice(np.concatenate([a["node_threshold"][a["node_feature"] >= 0],
                                       [np.inf, -np.inf, 0.0, -0.0, np.nan]]), size=(64, 7))  # fmt: skip
    on_edges = _votes_numpy(vote, edges)
    assert np.array_equal(np.vstack([vote.votes(edges[i : i + 1]) for i in range(64)]), on_edges)
    # an artifact's arrays are read-only, a request's rows may be too: same results
    again = type(vote).from_arrays(vote.to_arrays(), "trees", 7, k)
    ro = X.copy()
    ro.flags.writeable = False
    assert np.array_equal(again.votes(ro), ref)
    assert np.array_equal(again.votes(np.asfortranarray(X)), ref)


def test_the_multinomial_map_gives_the_bits_of_the_numpy_softmax() -> None:
    rng = np.random.default_rng(1)
    for k in (2, 3, 6, 11):
        s = rng.dirichlet(np.ones(k), size=500)
        y = rng.integers(0, k, size=500)
        y[:k] = np.arange(k)
        cal = MultinomialCalibrator("full", l2=0.1).fit(s, y)
        cal.W_ = cal.W_ * 10.0 ** rng.uniform(-3, 3, size=cal.W_.shape)  # hard sums
        ref = softmax_rows(_logits(s, cal.W_, cal.b_))
        assert np.array_equal(cal.predict_proba(s), ref), k
        assert np.array_equal(cal.predict_proba(s[7:8]), ref[7:8]), k


def test_kernels_refuse_nothing_and_keep_the_input() -> None:
    s = np.array([[0.2, 0.3, 0.5]])
    W, b = np.eye(3), np.zeros(3)
    z = shifted_logits(s, W, b)
    assert z.max() == 0.0 and np.array_equal(s, [[0.2, 0.3, 0.5]])
    e = normalise_exp(np.exp(z))
    assert np.array_equal(e, softmax_rows(_logits(s, W, b)))
    a = np.arange(6.0).reshape(2, 3)[:, ::2]
    out = as_kernel_input(a)
    assert out.flags.c_contiguous and out.flags.writeable and np.array_equal(out, a)
    c = np.zeros((2, 2))
    assert as_kernel_input(c) is c  # no copy when it already is one
    empty = np.empty((0, 3))
    ids = np.zeros(1, dtype=np.int64)
    packed = _records(ids, -ids - 1, np.zeros(1), ids, ids, ids == 0, ids, 3)  # one leaf
    got = tree_votes(
        empty, ids, -ids - 1, np.zeros(1), ids, ids, ids == 0, ids, *packed, 0, np.ones(1), 3, 0.0
    )
    assert got.shape == (0, 3)


def test_class_sums_are_the_pairwise_sums_of_each_class_to_the_last_bit() -> None:
    rng = np.random.default_rng(3)
    for m in [*range(1, 140), 255, 256, 257, 1000, 1470, 4100]:
        for k in (2, 3, 6):
            beta = rng.exponential(size=m) * 10.0 ** rng.uniform(-3, 3, size=m)
            cls = rng.integers(0, k, size=m).astype(np.int32)
            out = np.empty(k)
            class_sums(cls, beta, out, np.empty((k, 8)), np.empty((65, k)))
            ref = [pairwise_sum(np.where(cls == j, beta, 0.0), 0, m) for j in range(k)]
            assert out.tolist() == ref, (m, k)
            assert ref == [np.add.reduce(np.where(cls == j, beta, 0.0)) for j in range(k)]


def test_node_records_put_the_children_side_by_side_whatever_the_flat_layout() -> None:
    """A tree whose right child comes before its left one (a layout the artifact format
    allows): the records are renumbered breadth first; the walk reaches the right leaves."""
    # root 0 splits x0 <= 0.5: left is node 2 (a leaf, class 1), right is node 1 (x1 <= 0:
    # node 3 class 0, node 4 class 2); NaN at the root goes right
    feature = np.array([0, 1, -1, -1, -1])
    threshold = np.array([0.5, 0.0, 0.0, 0.0, 0.0])
    left = np.array([2, 3, 2, 3, 4])
    right = np.array([1, 4, 2, 3, 4])
    missing = np.array([False, True, False, False, False])
    leaf_class = np.array([-1, -1, 1, 0, 2])
    roots = np.zeros(1, dtype=np.int64)
    packed = _records(roots, feature, threshold, left, right, missing, leaf_class, 2)
    nodes = packed[0]
    assert np.all(nodes["left"][[0, 2]] == [1, 3])  # children side by side
    X = np.array([[0.1, 9.0], [0.9, -1.0], [0.9, 1.0], [np.nan, np.nan], [0.9, np.nan]])
    expected = np.array([1, 0, 2, 0, 0])  # NaN x1 goes left
    args = (roots, feature, threshold, left, right, missing, leaf_class, *packed, 2,
            np.ones(1), 3, 0.0)  # fmt: skip
    for r in range(len(X)):  # one row: the record walk
        assert tree_votes(X[r : r + 1], *args).argmax(1)[0] == expected[r], r
    many = np.repeat(X, 4, axis=0)  # 20 rows in one block
    assert np.array_equal(tree_votes(many, *args).argmax(1), np.repeat(expected, 4))


def test_a_served_multiclass_model_uses_the_kernels_the_warm_up_compiles() -> None:
    """A loaded artifact (read-only arrays) predicting on read-only rows compiles nothing
    beyond what models.catalog.warmup compiled: no compilation on the request path."""
    code = """
import numpy as np
import models.kernels.predict as k
from models.catalog.warmup import compile_kernels
from models.inference.artifacts import dump_model, load_model
from models.auto import AutoCalibratedMulticlass
compile_kernels()
from models.auto import AutoCalibratedBoosting
names = ("tree_votes", "tree_leaves", "oblique_outputs", "shifted_logits", "normalise_exp")
before = {n: len(getattr(k, n).signatures) for n in names}
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 4)); y = rng.integers(0, 3, size=300)
rows = X[:5].copy(); rows.flags.writeable = False
model = AutoCalibratedMulticlass(grid=(("tree", 3, 20),), n_folds=3, random_state=0).fit(X, y)
served = load_model(dump_model(model.to_inference())[0])
served.predict_proba(rows); served.decide(rows[:1], 1 - np.eye(3))
for grid in ((("tree", 3, 20),), (("oblique", 1, 5),)):  # two classes: trees, oblique
    model = AutoCalibratedBoosting(grid=grid, n_folds=3, random_state=0).fit(X, y % 2)
    served = load_model(dump_model(model.to_inference())[0])
    served.predict_proba(rows); served.decide(rows[:1], 1 - np.eye(2))
after = {n: len(getattr(k, n).signatures) for n in before}
print(before == after, before)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("True"), out.stdout


def test_a_loaded_multiclass_artifact_predicts_the_bits_of_the_fitted_model() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 4))
    X[rng.random(size=X.shape) < 0.05] = np.nan
    y = rng.integers(0, 3, size=300)
    model = AutoCalibratedMulticlass(grid=(("tree", 4, 30),), n_folds=3, random_state=0).fit(X, y)
    inference = model.to_inference()
    served = load_model(dump_model(inference)[0])
    scorer = served.scorer
    ref = softmax_rows(
        _logits(
            np.clip(_votes_numpy(scorer.ensemble, X) / scorer.ensemble.total, 0.0, 1.0),
            scorer.joint.W_,
            scorer.joint.b_,
        )
    )
    assert np.array_equal(served.predict_proba(X), ref)
    assert np.array_equal(inference.predict_proba(X), ref)


def _oblique_numpy(ens, X: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The numpy form the kernel replaced: h_m(x) from (rows, M, R, d) products summed
    along the contiguous feature axis (numpy's pairwise sum), NaN -> the learner's fill,
    a NaN score never chosen, the first best function's value."""
    d = ens._derived
    coef, b, value, fill = d["coef"], d["intercept"], d["value"], d["fill"]
    m = coef.shape[0]
    x = np.broadcast_to(X[:, None, :], (X.shape[0], m, X.shape[1]))
    x = np.where(np.isnan(x), fill, x)
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.multiply(x[:, :, None, :], coef).sum(axis=3) + b
    s = np.where(np.isnan(s), -np.inf, s)
    return value[np.arange(m)[None, :], np.argmax(s, axis=2)]  # type: ignore[no-any-return]


@pytest.mark.parametrize(("d", "r", "m"), [(3, 2, 5), (8, 2, 95), (9, 3, 40), (36, 6, 30)])
def test_oblique_outputs_equal_the_numpy_form_bit_for_bit(d: int, r: int, m: int) -> None:
    """The compiled oblique outputs give the bits of the numpy form, a row alone as in a
    batch, on floats and on pre-binned codes."""
    from models.features.binning import codes_as_float
    from models.inference.ensemble import Ensemble

    rng = np.random.default_rng(d * 100 + r)
    arrays = {
        "alphas": rng.exponential(size=m),
        # weights over six orders of magnitude: another order of additions rounds elsewhere
        "coef": rng.normal(size=m * r * d) * 10.0 ** rng.uniform(-3, 3, size=m * r * d),
        "intercept": rng.normal(size=m * r),
        "value": np.tile([-1.0, 1.0] if r == 2 else np.arange(r, dtype=np.float64), m),
        "fill": rng.normal(size=m * d),
    }
    ens = Ensemble.from_arrays(arrays, kind="oblique", n_features=d)
    X = rng.normal(size=(300, d)) * 10.0 ** rng.uniform(-2, 2, size=(300, d))
    X[rng.random(size=X.shape) < 0.1] = np.nan
    X[5, 0] = 1e308  # absurd: inf - inf somewhere, never chosen
    ref = _oblique_numpy(ens, X)
    assert np.array_equal(oblique_layout.learner_outputs(ens, X), ref)
    alone = np.vstack([oblique_layout.learner_outputs(ens, X[i : i + 1]) for i in range(300)])
    assert np.array_equal(alone, ref)
    codes = rng.integers(0, 256, size=(5000, d)).astype(np.uint8)  # more than one block
    assert np.array_equal(
        oblique_layout.learner_outputs(ens, codes), _oblique_numpy(ens, codes_as_float(codes))
    )
    loaded = Ensemble.from_arrays(  # an artifact's arrays are read-only
        {k: _read_only(v) for k, v in ens.to_arrays().items()}, kind="oblique", n_features=d
    )
    assert np.array_equal(loaded.decision_function(X[:1]), ens.decision_function(X)[:1])


def _read_only(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


def test_a_model_the_records_cannot_code_takes_the_flat_walk() -> None:
    """More distinct thresholds on one feature than a 16-bit code holds: no records,
    one row walks the flat arrays, the same votes as in a batch."""
    n_trees = 70_000  # one stump per tree, each on its own threshold of feature 0
    ids = np.arange(n_trees, dtype=np.int64)
    feature = np.stack([np.zeros(n_trees), -np.ones(n_trees), -np.ones(n_trees)], 1).ravel()
    feature = feature.astype(np.int64)
    threshold = np.repeat(np.linspace(-1.0, 1.0, n_trees), 3)
    base = 3 * ids
    left = np.stack([base + 1, base + 1, base + 2], 1).ravel()
    right = np.stack([base + 2, base + 1, base + 2], 1).ravel()
    missing = np.zeros(3 * n_trees, dtype=bool)
    leaf_class = np.tile([-1, 0, 1], n_trees)
    packed = _records(base, feature, threshold, left, right, missing, leaf_class, 1)
    assert packed[0].shape == (0,)  # no records
    X = np.array([[-0.5], [0.25], [2.0]])
    args = (base, feature, threshold, left, right, missing, leaf_class, *packed, 1,
            np.ones(n_trees), 2, 0.0)  # fmt: skip
    batch = tree_votes(np.repeat(X, 4, axis=0), *args)[::4]
    alone = np.vstack([tree_votes(X[i : i + 1], *args) for i in range(3)])
    assert np.array_equal(alone, batch)
    assert batch[:, 0].tolist() == [float((threshold[::3] >= x).sum()) for x in X[:, 0]]


@pytest.mark.parametrize("depth", [1, 3, 6])
def test_two_class_trees_reach_the_leaves_of_the_one_tree_walk(depth: int) -> None:
    """Two classes: the compiled walk (tree_leaves) reaches the reference walk's leaves,
    a row alone as in a batch, NaN, thresholds and infinities included; the scores are
    then the same sums (bit for bit) whatever the batch."""
    from models.boosting.adaboost import AdaBoost
    from models.inference.ensemble import Ensemble

    rng = np.random.default_rng(depth)
    X = rng.normal(size=(500, 6))
    X[rng.random(size=X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) * np.nan_to_num(X[:, 1]) > 0).astype(int)
    ens = AdaBoost(60, weak_learner="tree", max_depth=depth).fit(X, y).ensemble_
    a = ens.arrays
    edges = rng.choice(np.concatenate([a["node_threshold"][a["node_feature"] >= 0],
                                       [np.inf, -np.inf, 0.0, -0.0, np.nan]]), size=(64, 6))  # fmt: skip
    rows = np.vstack([X, edges])
    ref = _leaves_reference(ens, rows)
    assert np.array_equal(tree_nodes(ens, rows), ref)
    assert np.array_equal(np.vstack([tree_nodes(ens, rows[i : i + 1]) for i in range(564)]), ref)
    loaded = Ensemble.from_arrays(
        {k: _read_only(v) for k, v in ens.to_arrays().items()}, kind="trees", n_features=6
    )
    ro = _read_only(rows)
    batch = loaded.decision_function(ro)
    assert np.array_equal(batch, ens.decision_function(rows))
    alone = np.concatenate([loaded.vote_fraction(rows[i : i + 1]) for i in range(0, 564, 7)])
    assert np.array_equal(alone, loaded.vote_fraction(rows)[::7])
    assert tree_nodes(ens, np.empty((0, 6))).shape == (0, ens.n_learners)
