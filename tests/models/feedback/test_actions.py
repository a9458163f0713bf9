"""Realised cost of the column each logged decision took, and figures per action."""

from __future__ import annotations

import numpy as np
import pytest

from models.exceptions import InvalidCostMatrix, InvalidInput
from models.feedback.actions import action_figures, taken_costs
from models.feedback.monitoring import realised_cost, realised_from_rows


def test_taken_costs_of_mixed_widths_equal_plain_loops() -> None:
    rng = np.random.default_rng(0)
    n = 50
    widths = rng.choice([2, 3, 4], size=n)
    stack = np.full((n, 2, 4), np.nan)
    y = rng.integers(0, 2, n)
    column = np.array([rng.integers(0, w) for w in widths])
    for r, w in enumerate(widths):
        stack[r, :, :w] = rng.uniform(0, 10, (2, w))
    got = taken_costs(y, column, stack)
    want = [stack[r][y[r]][column[r]] for r in range(n)]
    assert got.tolist() == want


def test_square_matrices_price_as_realised_cost_does() -> None:
    rng = np.random.default_rng(1)
    y, d = rng.integers(0, 3, 40), rng.integers(0, 3, 40)
    c = rng.uniform(1, 5, (40, 3, 3))
    c[:, np.arange(3), np.arange(3)] = 0.0  # a correct decision costs nothing
    reported = np.where(rng.random(40) < 0.2, 1.5, np.nan)
    a = realised_cost(y, d, c, None, reported)
    b = realised_from_rows(taken_costs(y, d, c), None, reported)
    assert a.per_row.tolist() == b.per_row.tolist() and a.total == b.total


def test_a_column_beyond_the_rows_matrix_names_the_row() -> None:
    stack = np.array([[[0.0, 1.0, 2.0], [3.0, 0.0, 2.0]], [[0.0, 1.0, np.nan], [3.0, 0.0, np.nan]]])
    with pytest.raises(InvalidCostMatrix, match="row 1"):
        taken_costs([0, 0], [2, 2], stack)
    with pytest.raises(InvalidInput, match="column: row 0"):
        taken_costs([0, 0], [3, 0], stack)


def test_action_figures_count_and_sum_per_action() -> None:
    names = np.array(["review", None, "approve", "review", "approve"], dtype=object)
    labelled = np.array([True, True, False, True, True])
    realised = np.array([4.0, 7.0, 4.5, 0.0])  # rows 0, 1, 3, 4
    expected = np.array([4.0, 1.0, 0.2, 4.5, 0.1])
    out = action_figures(names, labelled, realised, expected)
    assert out == [
        {"action": "review", "taken": 2, "share": 0.4, "labelled": 2, "realised_cost": 8.5,
         "mean_realised_cost": 4.25, "expected_cost": 8.5},
        {"action": "approve", "taken": 2, "share": 0.4, "labelled": 1, "realised_cost": 0.0,
         "mean_realised_cost": 0.0, "expected_cost": 0.1},
    ]  # fmt: skip
    assert action_figures(np.array([None, None], dtype=object), labelled[:2], realised[:2],
                          expected[:2]) is None  # fmt: skip
