"""The comparison's intervals against scipy's own tests, and their coverage by simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from models.exceptions import InvalidInput
from models.feedback.comparison import (
    disagreement,
    paired_cost_difference,
    welch_cost_difference,
)


def _heavy_costs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-row costs like a fraud book's: mostly 0, sometimes a heavy-tailed amount."""
    amount = rng.lognormal(3, 1, n)
    a = np.where(rng.random(n) < 0.1, amount, 0.0)
    b = np.where(rng.random(n) < 0.1, amount, 0.0)
    return a, b


def test_paired_interval_is_scipys_paired_t() -> None:
    rng = np.random.default_rng(0)
    a, b = _heavy_costs(rng, 400)
    d = paired_cost_difference(a, b, 0.9)
    t = stats.ttest_rel(b, a)
    ci = t.confidence_interval(0.9)
    assert d.low == pytest.approx(ci.low) and d.high == pytest.approx(ci.high)
    assert d.mean_difference == pytest.approx(np.mean(b - a))
    assert d.df == 399 and d.n_a == d.n_b == 400


def test_welch_interval_is_scipys_welch() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.exponential(2.0, 300), rng.exponential(1.5, 500)
    d = welch_cost_difference(a, b)
    t = stats.ttest_ind(b, a, equal_var=False)
    ci = t.confidence_interval(0.95)
    assert d.low == pytest.approx(ci.low) and d.high == pytest.approx(ci.high)
    assert d.df == pytest.approx(t.df)
    assert d.excludes_zero == (ci.high < 0 or ci.low > 0)


def test_paired_interval_covers_the_true_difference_about_95_percent() -> None:
    """1,000 simulated comparisons of equal versions (heavy-tailed costs, 300 rows):
    the interval excludes zero in about 5% of them."""
    rng = np.random.default_rng(2)
    excluded = sum(
        paired_cost_difference(*_heavy_costs(rng, 300)).excludes_zero for _ in range(1000)
    )
    assert 25 <= excluded <= 80  # binomial(1000, 0.05): 50 +- 3.3 sd


def test_needed_rows_settles_it_at_the_observed_effect() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(-0.2, 2.0, 200)
    small = paired_cost_difference(np.zeros(200), d)
    assert not small.excludes_zero
    needed = small.needed_rows
    assert needed == int(np.ceil((1.959963984540054 * d.std(ddof=1) / d.mean()) ** 2))
    # the same mean and spread on a few more rows than that: the interval excludes zero
    more = np.resize(d, needed + 10)
    more = (more - more.mean()) / more.std(ddof=1) * d.std(ddof=1) + d.mean()
    enough = paired_cost_difference(np.zeros(needed + 10), more)
    assert enough.high < 0


def test_identical_decisions_show_no_difference() -> None:
    a = np.array([0.0, 5.0, 1.0, 0.0])
    d = paired_cost_difference(a, a.copy())
    assert (d.low, d.high, d.mean_difference) == (0.0, 0.0, 0.0)
    assert not d.excludes_zero and d.needed_rows is None


def test_disagreement_costs_each_side() -> None:
    out = disagreement([0, 1, 1, 0], [0, 0, 1, 1], [0.0, 5.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0])
    assert (out.n_rows, out.n_differ, out.share) == (4, 2, 0.5)
    assert (out.cost_a, out.cost_b) == (5.0, 1.0)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([1.0], [2.0], "at least 2 pairs"),
        ([1.0, 2.0], [1.0], "one per pair"),
        ([1.0, np.nan], [1.0, 2.0], "cost_a[1]"),
        ([[1.0]], [1.0], "1-d"),
    ],
)
def test_bad_inputs_name_what_is_wrong(a: list[float], b: list[float], message: str) -> None:
    with pytest.raises(InvalidInput, match=message.replace("[", r"\[")):
        paired_cost_difference(a, b)
    with pytest.raises(InvalidInput, match="confidence"):
        paired_cost_difference([1.0, 2.0], [1.0, 3.0], confidence=1.0)
