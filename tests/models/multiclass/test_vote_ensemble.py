"""VoteEnsemble: numpy-only weighted class votes, validation, persistence."""

from __future__ import annotations

import numpy as np
import pytest

from models.exceptions import ArtifactError, InvalidInput
from models.inference.ensemble import Ensemble
from models.inference.vote_ensemble import VoteEnsemble
from models.weak.registry import multiclass_trainer


def _fitted(learner: str, k: int = 4, nan: bool = True) -> tuple[VoteEnsemble, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    if nan:
        X[rng.random(size=X.shape) < 0.05] = np.nan
    y = rng.integers(0, k, size=300)
    tr = multiclass_trainer(learner, X, y, k, max_depth=2, seed=0)
    learners = [tr.fit_costs(rng.uniform(size=(300, k)))[0] for _ in range(7)]
    return tr.assemble(learners, rng.uniform(0.1, 2.0, size=7)), X


@pytest.mark.parametrize("learner", ["stump", "tree"])
def test_votes_equal_the_weighted_count_of_learner_classes(learner: str) -> None:
    vote, X = _fitted(learner)
    h = vote.learner_classes(X)
    brute = np.stack([((h == k) * vote.betas).sum(1) for k in range(4)], axis=1)
    np.testing.assert_allclose(vote.votes(X), brute, atol=1e-12)
    frac = vote.vote_fractions(X)
    np.testing.assert_allclose(frac.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(vote.staged_votes(X)[-1], vote.votes(X), atol=1e-12)
    np.testing.assert_allclose(vote.votes(X[:1]), vote.votes(X)[:1], atol=1e-12)


@pytest.mark.parametrize("learner", ["stump", "tree"])
def test_arrays_round_trip(learner: str) -> None:
    vote, X = _fitted(learner)
    again = VoteEnsemble.from_arrays(vote.to_arrays(), vote.ensemble.kind, 5, 4)
    np.testing.assert_array_equal(again.votes(X), vote.votes(X))


def test_invalid_class_values_and_counts_are_refused() -> None:
    vote, X = _fitted("stump")
    arrays = vote.to_arrays()
    with pytest.raises(ArtifactError, match="class indices"):
        VoteEnsemble.from_arrays(arrays, "stumps", 5, 2)  # values up to 3 but K = 2
    bad = dict(arrays, value_left=arrays["value_left"] + 0.5)
    with pytest.raises(ArtifactError, match="class indices"):
        VoteEnsemble.from_arrays(bad, "stumps", 5, 4)
    with pytest.raises(ArtifactError, match="n_classes"):
        VoteEnsemble(Ensemble.from_arrays(arrays, "stumps", 5), 1)
    with pytest.raises(InvalidInput, match="5 columns"):
        vote.votes(X[:, :3])


@pytest.mark.parametrize("learner", ["stump", "tree"])
def test_votes_of_a_row_do_not_depend_on_the_batch(learner: str) -> None:
    """Bit-for-bit: a row scored alone, in a small batch or in a large one."""
    vote, X = _fitted(learner)
    big = np.tile(X, (20, 1))  # 6,000 rows: more than one scoring block
    alone = np.vstack([vote.votes(X[i : i + 1]) for i in range(0, 300, 37)])
    assert np.array_equal(alone, vote.votes(big)[0:300:37])
    assert np.array_equal(vote.votes(X[5:9]), vote.votes(big)[5:9])
