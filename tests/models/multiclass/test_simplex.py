"""Simplex encoding of Eq. 1 (Yang et al.) and the vote -> score identities."""

from __future__ import annotations

import numpy as np
import pytest

from models.exceptions import InvalidInput
from models.inference.simplex import (
    angle_vectors,
    cos_theta,
    scores_from_votes,
    simplex_vertices,
)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 7, 10])
def test_vertices_unit_norm_equal_angles_centred(k: int) -> None:
    w = simplex_vertices(k)
    assert w.shape == (k, k - 1)
    np.testing.assert_allclose(np.linalg.norm(w, axis=1), 1.0, atol=1e-12)
    gram = w @ w.T
    off = gram[~np.eye(k, dtype=bool)]
    np.testing.assert_allclose(off, -1.0 / (k - 1), atol=1e-12)
    assert cos_theta(k) == pytest.approx(1.0 / (1.0 - k))
    np.testing.assert_allclose(w.sum(axis=0), 0.0, atol=1e-12)  # centred at the origin


def test_two_classes_are_plus_and_minus_one() -> None:
    np.testing.assert_allclose(simplex_vertices(2), [[1.0], [-1.0]])


@pytest.mark.parametrize("k", [2, 3, 5])
def test_scores_from_votes_equal_inner_products(k: int) -> None:
    rng = np.random.default_rng(k)
    votes = rng.uniform(0, 3, size=(20, k))
    total = float(votes.sum(axis=1)[0])
    votes[:, -1] += total - votes.sum(axis=1)  # every row votes the same total weight
    f = angle_vectors(votes)  # f = sum_k V_k w_k
    direct = f @ simplex_vertices(k).T  # <f, w_k>
    np.testing.assert_allclose(scores_from_votes(votes, total), direct, atol=1e-10)
    np.testing.assert_allclose(direct.sum(axis=1), 0.0, atol=1e-10)  # sum-to-zero for free
    # the least-angle rule is the argmax of the votes
    np.testing.assert_array_equal(np.argmax(direct, axis=1), np.argmax(votes, axis=1))


@pytest.mark.parametrize("bad", [1, 0, -3, 2.0, True, "3"])
def test_invalid_number_of_classes(bad: object) -> None:
    with pytest.raises(InvalidInput, match="n_classes"):
        simplex_vertices(bad)  # type: ignore[arg-type]
