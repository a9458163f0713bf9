"""Decisions among named actions (``models.decisions.actions``).

- The action chosen equals an independent computation (plain Python loops over rows,
  classes and actions, written here) for K = 2 and K = 3 with 4 actions, per request and
  per row, with exact ties included: a tie goes to the action listed first.
- A square matrix without action names decides exactly as before: the same decisions,
  expected costs and thresholds, bit for bit, as the committed outputs of
  :func:`models.decisions.rule.decide` on seeded random inputs
  (``data/square_decisions.npz``, written by the code before actions existed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.decisions.actions import (
    decide_actions,
    review_matrix,
    validate_action_matrix,
    validate_action_names,
    validate_row_action_matrices,
)
from models.decisions.rule import decide
from models.exceptions import InvalidCostMatrix

GOLDEN = Path(__file__).parent / "data" / "square_decisions.npz"


def _independent(p: np.ndarray, c: np.ndarray) -> tuple[list[int], list[float]]:
    """argmin_a sum_i p_i C[i][a], ties to the first action, by plain loops."""
    chosen, costs = [], []
    for r in range(p.shape[0]):
        m = c[r] if c.ndim == 3 else c
        best, best_cost = -1, float("inf")
        for a in range(m.shape[1]):
            e = 0.0
            for i in range(m.shape[0]):
                e += float(p[r, i]) * float(m[i, a])
            if e < best_cost:  # strictly less: an equal cost later keeps the first
                best, best_cost = a, e
        chosen.append(best)
        costs.append(best_cost)
    return chosen, costs


def _probabilities(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Random rows, and as many rows of eighths (exact in binary: ties are exact)."""
    p = rng.dirichlet(np.ones(k), size=n)
    counts = rng.multinomial(8, np.ones(k) / k, size=n).astype(np.float64)
    return np.vstack([p, counts / 8.0])


def _costs(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Small integer costs (ties are frequent) with a duplicated action column."""
    c = rng.integers(0, 6, size=shape).astype(np.float64)
    c[..., 3] = c[..., 1]  # action 3 is action 1 again: every row ties, 1 must win
    return c


@pytest.mark.parametrize("k", [2, 3])
def test_one_matrix_equals_the_independent_computation(k: int) -> None:
    rng = np.random.default_rng(k)
    for _ in range(20):
        p = _probabilities(rng, 200, k)
        c = _costs(rng, (k, 4))
        got = decide_actions(p, c)
        chosen, costs = _independent(p, c)
        assert got.action_index.tolist() == chosen
        np.testing.assert_allclose(got.expected_cost, costs, rtol=1e-12, atol=0)
        assert 3 not in chosen  # the duplicate of action 1 never wins its tie
        one = [decide_actions(p[r : r + 1], c) for r in range(20)]  # the one-row path
        assert [d.action_index[0] for d in one] == chosen[:20]
        assert [d.expected_cost[0] for d in one] == got.expected_cost[:20].tolist()


@pytest.mark.parametrize("k", [2, 3])
def test_per_row_matrices_equal_the_independent_computation(k: int) -> None:
    rng = np.random.default_rng(10 + k)
    for _ in range(20):
        p = _probabilities(rng, 200, k)
        c = _costs(rng, (len(p), k, 4))
        got = decide_actions(p, c)
        chosen, costs = _independent(p, c)
        assert got.action_index.tolist() == chosen
        np.testing.assert_allclose(got.expected_cost, costs, rtol=1e-12, atol=0)


def test_exact_ties_go_to_the_action_listed_first() -> None:
    p = np.array([[0.5, 0.5], [0.25, 0.75]])
    c = np.array([[1.0, 3.0, 2.0], [3.0, 1.0, 2.0]])  # row 0: all three cost 2.0
    assert decide_actions(p, c).action_index.tolist() == [0, 1]
    assert decide_actions(p, c[:, ::-1]).action_index.tolist() == [0, 1]  # reversed: first again
    assert decide_actions(p[:1], c[:, [2, 0, 1]]).action_index.tolist() == [0]
    assert decide_actions(p, np.stack([c, c[:, [1, 2, 0]]])).action_index.tolist() == [0, 0]


def test_one_action_is_always_taken() -> None:
    d = decide_actions([[0.2, 0.8], [0.9, 0.1]], [[4.0], [4.0]])
    assert d.action_index.tolist() == [0, 0]
    assert d.expected_cost.tolist() == [4.0, 4.0]


def test_review_matrix_adds_a_column_of_the_review_cost() -> None:
    binary = np.array([[0.0, 1.0], [5.0, 0.0]])
    assert review_matrix(binary, 0.5).tolist() == [[0.0, 1.0, 0.5], [5.0, 0.0, 0.5]]
    stack = review_matrix(np.stack([binary, binary]), [0.5, 2.0])
    assert stack[:, :, 2].tolist() == [[0.5, 0.5], [2.0, 2.0]]
    # review is taken where both errors would cost more in expectation
    d = decide_actions([[0.95, 0.05], [0.7, 0.3], [0.02, 0.98]], review_matrix(binary, 0.5))
    assert d.action_index.tolist() == [0, 2, 1]
    with pytest.raises(InvalidCostMatrix, match="row 1, column 'c_review'"):
        review_matrix(np.stack([binary, binary]), [0.5, -1.0])
    with pytest.raises(InvalidCostMatrix, match="c_review: expected a number or 2 values"):
        review_matrix(np.stack([binary, binary]), [0.5, 1.0, 2.0])


@pytest.mark.parametrize(
    ("matrix", "actions", "message"),
    [
        ([[0, 1, 2]], ["a", "b", "c"], r"expected 2 rows \(one per class"),
        ([[0, 1, 2], [1, 0, 2], [0, 0, 0]], ["a", "b", "c"], "expected 2 rows"),
        ([[0, 1, 2], [1, 0]], ["a", "b", "c"], "row 1 has 2 entries, expected 3"),
        ([[0, 1, 2], [1, 0, 2]], ["a", "b"], "2 names for 3 cost columns"),
        ([[0, 1, 2], [1, 0, 2]], ["a", "b", "a"], r"actions\[2\]: 'a' is listed twice"),
        ([[0, 1, 2], [1, 0, 2]], ["a", "", "c"], r"actions\[1\]: expected a name"),
        ([[0, 1, -2], [1, 0, 2]], ["a", "b", "c"], r"entry \[0\]\[2\] \(truth 0, action 'c'\)"),
        ([[0, 1, float("nan")], [1, 0, 2]], ["a", "b", "c"], "finite and >= 0"),
    ],
)
def test_bad_action_matrices_say_what_is_wrong(
    matrix: list[list[float]], actions: list[str], message: str
) -> None:
    with pytest.raises(InvalidCostMatrix, match=message):
        validate_action_matrix(matrix, 2, actions)


def test_bad_per_row_action_matrices_name_the_row() -> None:
    c = np.zeros((3, 2, 3))
    c[2, 1, 0] = -1.0
    with pytest.raises(InvalidCostMatrix, match=r"row 2, cost matrix entry \[1\]\[0\]"):
        validate_row_action_matrices(c, 3, 2, ["a", "b", "c"])
    with pytest.raises(InvalidCostMatrix, match=r"expected shape \(4, 2, A\)"):
        validate_row_action_matrices(np.zeros((3, 2, 3)), 4, 2, ["a", "b", "c"])
    with pytest.raises(InvalidCostMatrix, match="a list of names"):
        validate_action_names("abc")  # type: ignore[arg-type]


def test_square_matrices_decide_exactly_as_before() -> None:
    with np.load(GOLDEN, allow_pickle=False) as g:
        for k in (2, 3, 4):
            p, c, rc = g[f"p{k}"], g[f"c{k}"], g[f"rc{k}"]
            for d, idx, cost in (
                (decide(p, c), f"idx{k}", f"cost{k}"),
                (decide(p, rc), f"ridx{k}", f"rcost{k}"),
                (decide(p[:1], c), f"oidx{k}", f"ocost{k}"),
            ):
                np.testing.assert_array_equal(d.labels_index, g[idx])
                assert d.expected_cost.tobytes() == g[cost].tobytes()  # bit for bit
            if k == 2:
                assert decide(p, c).threshold.tobytes() == g["t2"].tobytes()  # type: ignore[union-attr]
                assert decide(p, rc).threshold.tobytes() == g["rt2"].tobytes()  # type: ignore[union-attr]


def test_review_band_bounds_the_rows_decide_actions_sends_to_review() -> None:
    """On random valid costs, a grid of p = P(classes[1]): review iff low < p < high,
    negative below, positive above (plain loops over the three expected costs)."""
    from models.decisions.actions import review_band

    rng = np.random.default_rng(7)
    p = np.linspace(0.0, 1.0, 2001)
    proba = np.column_stack([1.0 - p, p])
    seen_band = seen_none = 0
    for _ in range(200):
        c_tn, c_tp = rng.uniform(0, 1, 2)
        c_fp, c_fn = c_tn + rng.uniform(0.1, 5), c_tp + rng.uniform(0.1, 20)
        c_review = float(rng.uniform(0, 4))
        matrix = [[c_tn, c_fp, c_review], [c_fn, c_tp, c_review]]
        taken = decide_actions(proba, matrix).action_index
        band = review_band(c_fp, c_fn, c_review, c_tp, c_tn)
        if band is None:
            seen_none += 1
            assert not (taken == 2).any()
            continue
        seen_band += 1
        low, high = band
        assert 0.0 <= low < high <= 1.0
        clear = (np.abs(p - low) > 1e-9) & (np.abs(p - high) > 1e-9) & (p > 0) & (p < 1)
        inside = (p > low) & (p < high)
        assert ((taken == 2) == inside)[clear].all()
        if c_fn > c_tn and c_fp > c_tp:  # errors dearer: negative below, positive above
            assert (taken[clear & (p < low)] == 0).all()
            assert (taken[clear & (p > high)] == 1).all()
    assert seen_band > 20 and seen_none > 20
