"""Training cost matrix validation for the angle-based algorithms."""

from __future__ import annotations

import numpy as np
import pytest

from models.decisions.training_costs import check_cost_matrix, zero_one_costs
from models.exceptions import InvalidInput


def test_none_is_zero_one_costs() -> None:
    np.testing.assert_array_equal(check_cost_matrix(None, 3), 1.0 - np.eye(3))
    np.testing.assert_array_equal(zero_one_costs(2), [[0.0, 1.0], [1.0, 0.0]])


def test_valid_matrix_is_copied_as_float() -> None:
    c = [[0, 1, 2], [3, 0, 1], [1, 1, 0]]
    out = check_cost_matrix(c, 3)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, c)


@pytest.mark.parametrize(
    ("value", "n", "message"),
    [
        ([[0, 1, 2], [1, 0, 1]], None, r"square K x K matrix .* got shape \(2, 3\)"),
        ([[0, 1], [1, 0]], 3, "expected a 3 x 3 matrix, one row and column per class"),
        ([[0]], None, "at least 2 classes"),
        ([[0, -1], [1, 0]], None, r"cost_matrix\[0\]\[1\] \(truth 0, prediction 1\): cost must "
         r"be finite and >= 0, got -1.0"),
        ([[0, 1], [float("nan"), 0]], None, r"cost_matrix\[1\]\[0\].*finite"),
        ([[0, 1], [float("inf"), 0]], None, r"cost_matrix\[1\]\[0\].*finite"),
        ([[0, 1], [1, 0.5]], None, r"cost_matrix\[1\]\[1\]: the diagonal must be 0.*subtracting"),
        ([[0, 0], [0, 0]], None, "at least one misclassification cost must be > 0"),
        ([["a", 1], [1, 0]], None, "square matrix of numbers"),
    ],
)  # fmt: skip
def test_invalid_matrices_name_the_entry(value: object, n: int | None, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        check_cost_matrix(value, n)


def test_where_prefixes_the_message() -> None:
    with pytest.raises(InvalidInput, match=r"^params\.cost_matrix\[0\]\[0\]"):
        check_cost_matrix([[1, 1], [1, 0]], where="params.cost_matrix")
