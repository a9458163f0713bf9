"""Compiled prediction kernels: the same bits as the numpy forms they replace."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from models.artifacts import dump_model, load_model
from models.auto import AutoCalibratedMulticlass
from models.ensemble import row_sums
from models.multiclass.multinomial import MultinomialCalibrator, _logits, softmax_rows
from models.multiclass.vote_ensemble import pack_nodes
from models.multiclass.weak import make_trainer
from models.predict_kernels import (
    as_kernel_input,
    normalise_exp,
    pairwise_sum,
    shifted_logits,
    tree_votes,
)


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


def _votes_numpy(vote, X: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The numpy form the kernel replaced: row_sums(Phi(X) == k, beta) per class."""
    h = vote.learner_classes(X)
    return np.stack([row_sums(h == k, vote.betas) for k in range(vote.n_classes)], axis=1)


@pytest.mark.parametrize(("k", "depth", "rounds"), [(3, 1, 5), (4, 3, 150), (6, 6, 300)])
def test_tree_votes_equal_the_numpy_walk_bit_for_bit(k: int, depth: int, rounds: int) -> None:
    rng = np.random.default_rng(k)
    X = rng.normal(size=(400, 7))
    X[rng.random(size=X.shape) < 0.1] = np.nan  # missing values take their learned side
    y = rng.integers(0, k, size=400)
    tr = make_trainer("tree", X, y, k, max_depth=depth, seed=0)
    learners = [tr.fit_costs(rng.uniform(size=(400, k)))[0] for _ in range(rounds)]
    vote = tr.assemble(learners, rng.exponential(size=rounds) * 10.0 ** rng.uniform(-2, 2, rounds))
    ref = _votes_numpy(vote, X)
    assert np.array_equal(vote.votes(X), ref)
    assert np.array_equal(vote.vote_fractions(X), np.clip(ref / vote.total, 0.0, 1.0))
    # 70 rows: a block of 64 walked tree by tree, then 6 walked side by side (lockstep)
    assert np.array_equal(vote.votes(X[:70]), ref[:70])
    alone = np.vstack([vote.vote_fractions(X[i : i + 1]) for i in range(0, 400, 13)])
    assert np.array_equal(alone, vote.vote_fractions(X)[::13])
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
    nodes = pack_nodes(-ids - 1, np.zeros(1), ids, ids, ids == 0, ids)  # one leaf
    got = tree_votes(
        empty, ids, -ids - 1, np.zeros(1), ids, ids, ids == 0, ids, nodes, 0, np.ones(1), 3, 0.0
    )
    assert got.shape == (0, 3)


def test_a_served_multiclass_model_uses_the_kernels_the_warm_up_compiles() -> None:
    """A loaded artifact (read-only arrays) predicting on read-only rows compiles nothing
    beyond what models.warmup compiled: no compilation on the request path."""
    code = """
import numpy as np
import models.predict_kernels as k
from models.warmup import compile_kernels
from models.artifacts import dump_model, load_model
from models.auto import AutoCalibratedMulticlass
compile_kernels()
before = {n: len(getattr(k, n).signatures) for n in ("tree_votes", "shifted_logits", "normalise_exp")}
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 4)); y = rng.integers(0, 3, size=300)
model = AutoCalibratedMulticlass(grid=(("tree", 3, 20),), n_folds=3, random_state=0).fit(X, y)
served = load_model(dump_model(model.to_inference())[0])
rows = X[:5].copy(); rows.flags.writeable = False
served.predict_proba(rows); served.decide(rows[:1], 1 - np.eye(3))
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
