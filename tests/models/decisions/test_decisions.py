"""Tests for models.decisions.rule (cost matrices, thresholds, per-row costs, prior shift, decide)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from models.decisions.rule import (
    CostMatrix,
    Decisions,
    apply_prior_shift,
    binary_threshold,
    decide,
    row_cost_matrices,
    validate_cost_matrix,
)
from models.exceptions import InvalidCostMatrix, InvalidInput, InvalidPriors


def _binary_proba(p1: np.ndarray) -> np.ndarray:
    return np.column_stack([1.0 - p1, p1])


def _random_binary_costs(rng: np.random.Generator) -> dict[str, float]:
    c_fp, c_fn = rng.uniform(0.01, 100.0, 2)
    c_tn = rng.uniform(0, c_fp) if rng.random() < 0.5 else 0.0
    c_tp = rng.uniform(0, c_fn) if rng.random() < 0.5 else 0.0
    return {"c_fp": c_fp, "c_fn": c_fn, "c_tp": c_tp, "c_tn": c_tn}


# ------------------------------------------------------------------------------ cost matrix


def test_from_binary_layout_and_threshold() -> None:
    cm = CostMatrix.from_binary(c_fp=1.0, c_fn=4.0, c_tp=0.5, c_tn=0.25)
    assert np.array_equal(cm.matrix, [[0.25, 1.0], [4.0, 0.5]])
    assert cm.n_classes == 2
    assert cm.threshold == pytest.approx(0.75 / (0.75 + 3.5))
    assert binary_threshold(1.0, 4.0) == pytest.approx(0.2)  # c = c_fp / (c_fp + c_fn), Eq. 2
    assert binary_threshold(1.0, 1.0) == 0.5
    assert CostMatrix.from_array([[0.25, 1.0], [4.0, 0.5]], 2) == cm
    with pytest.raises(ValueError):
        cm.matrix[0, 0] = 3.0  # read-only


def test_threshold_only_for_binary() -> None:
    cm = CostMatrix.from_array(1 - np.eye(3), 3)
    with pytest.raises(InvalidCostMatrix, match="only defined for 2 classes"):
        _ = cm.threshold


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"c_fp": -1.0, "c_fn": 1.0}, r"^c_fp: cost must be finite and >= 0, got -1.0$"),
        ({"c_fp": 1.0, "c_fn": float("nan")}, r"^c_fn: cost must be finite and >= 0, got nan$"),
        ({"c_fp": 1.0, "c_fn": float("inf")}, r"^c_fn: cost must be finite and >= 0, got inf$"),
        ({"c_fp": 1.0, "c_fn": 1.0, "c_tp": -0.5}, r"^c_tp: cost must be finite and >= 0"),
        ({"c_fp": 0.0, "c_fn": 0.0}, r"denominator \(c_fp - c_tn\) \+ \(c_fn - c_tp\) must be > 0, got 0.0"),
        ({"c_fp": 2.0, "c_fn": 3.0, "c_tn": 2.0, "c_tp": 3.0}, r"denominator .* must be > 0"),
        ({"c_fp": 1.0, "c_fn": 1.0, "c_tn": 2.0}, r"^c_tn: a correct decision may not cost more than an error, got c_tn=2.0 > c_fp=1.0$"),
        ({"c_fp": 1.0, "c_fn": 1.0, "c_tp": 5.0}, r"^c_tp: .* c_tp=5.0 > c_fn=1.0$"),
        ({"c_fp": [1.0, 2.0], "c_fn": 1.0}, r"^c_fp: expected a single number"),
        ({"c_fp": "abc", "c_fn": 1.0}, r"^c_fp: expected numbers"),
    ],
)  # fmt: skip
def test_invalid_binary_costs(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidCostMatrix, match=match):
        CostMatrix.from_binary(**kwargs)
    with pytest.raises(InvalidCostMatrix, match=match):
        binary_threshold(**kwargs)


@pytest.mark.parametrize(
    "matrix, k, match",
    [
        ([[0, 1], [1, 0], [1, 1]], 2, r"expected shape \(2, 2\) .* got \(3, 2\)"),
        ([0, 1], 2, r"expected shape \(2, 2\)"),
        ([[0, 1], [1, 0]], 3, r"expected shape \(3, 3\)"),
        ([[0, 1], [-1, 0]], 2, r"entry \[1\]\[0\] 'c_fn' \(truth 1, prediction 0\): cost must be finite and >= 0, got -1.0"),
        ([[0, 1, 1], [1, 0, np.inf], [1, 1, 0]], 3, r"entry \[1\]\[2\] \(truth 1, prediction 2\): cost must be finite"),
        ([[0, 1, 1], [1, 3, 1], [1, 1, 0]], 3, r"entry \[1\]\[1\] .* correct decision may not cost more .* C\[1\]\[1\]=3.0 > C\[1\]\[0\]=1.0"),
        ([[1, 1, 1], [2, 2, 2], [0, 0, 0]], 3, r"every decision equally costly"),
        ([[0, 0], [0, 0]], 2, r"denominator"),
    ],
)  # fmt: skip
def test_invalid_cost_matrices(matrix: list, k: int, match: str) -> None:
    with pytest.raises(InvalidCostMatrix, match=match):
        validate_cost_matrix(matrix, k)


def test_validate_cost_matrix_returns_float_copy() -> None:
    a = np.array([[0, 1], [5, 0]])
    out = validate_cost_matrix(a, 2)
    assert out.dtype == np.float64 and np.array_equal(out, a)
    out[0, 1] = 9
    assert a[0, 1] == 1


# ------------------------------------------------------------------------------ decision rules


def test_binary_threshold_equals_2x2_expected_cost_argmin() -> None:
    rng = np.random.default_rng(0)
    p1 = np.r_[rng.random(2000), 0.0, 1.0]
    proba = _binary_proba(p1)
    for _ in range(300):
        c = _random_binary_costs(rng)
        e_neg = proba[:, 0] * c["c_tn"] + proba[:, 1] * c["c_fn"]
        e_pos = proba[:, 0] * c["c_fp"] + proba[:, 1] * c["c_tp"]
        brute = (e_pos <= e_neg).astype(int)  # argmin, ties toward the higher index
        t = binary_threshold(**c)
        by_threshold = (p1 >= t).astype(int)
        d = decide(proba, CostMatrix.from_binary(**c))
        clear = np.abs(e_pos - e_neg) > 1e-9  # ignore rows within rounding of a tie
        assert clear.mean() > 0.99
        assert np.array_equal(brute[clear], by_threshold[clear])
        assert np.array_equal(d.labels_index, by_threshold)
        assert np.allclose(d.expected_cost, np.where(d.labels_index == 1, e_pos, e_neg))
        assert np.all(d.threshold == t)


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_zero_one_matrix_gives_argmax(k: int) -> None:
    rng = np.random.default_rng(k)
    proba = rng.dirichlet(np.ones(k), size=5000)
    d = decide(proba, 1.0 - np.eye(k))
    assert np.array_equal(d.labels_index, proba.argmax(axis=1))
    assert np.allclose(d.expected_cost, 1.0 - proba.max(axis=1))
    assert (d.threshold is None) == (k > 2)


def test_ties_go_to_the_higher_class_index() -> None:
    assert decide([[0.5, 0.5]], 1 - np.eye(2)).labels_index.tolist() == [1]
    assert decide([[0.4, 0.4, 0.2]], 1 - np.eye(3)).labels_index.tolist() == [1]
    assert decide([[0.25, 0.25, 0.25, 0.25]], 1 - np.eye(4)).labels_index.tolist() == [3]
    t = binary_threshold(1.0, 3.0)  # 0.25: p1 == t is positive
    assert decide([[1 - t, t]], CostMatrix.from_binary(1.0, 3.0)).labels_index.tolist() == [1]


def test_kxk_rule_equals_brute_force() -> None:
    rng = np.random.default_rng(11)
    for k in (3, 4, 6):
        proba = rng.dirichlet(np.ones(k), size=500)
        c = rng.uniform(1, 10, (k, k))
        c[np.diag_indices(k)] = rng.uniform(0, 1, k)
        d = decide(proba, c)
        e = np.array(
            [[sum(proba[r, i] * c[i, j] for i in range(k)) for j in range(k)] for r in range(500)]
        )
        assert np.array_equal(d.labels_index, e.argmin(axis=1))
        assert np.allclose(d.expected_cost, e.min(axis=1))


def test_raising_c_fn_never_turns_a_positive_decision_negative() -> None:
    rng = np.random.default_rng(1)
    proba = _binary_proba(rng.random(3000))
    for _ in range(300):
        c = _random_binary_costs(rng)
        before = decide(proba, CostMatrix.from_binary(**c)).labels_index
        c["c_fn"] = c["c_fn"] + rng.exponential(5.0) * rng.choice([1.0, 1e-12, 1e6])
        after = decide(proba, CostMatrix.from_binary(**c)).labels_index
        assert np.all(after >= before)


@pytest.mark.parametrize(
    "ratio", [100, 50, 25, 20, 15, 10, 5, 2.5, 2, 1.5, 1, 1 / 1.5, 0.5, 0.4, 0.2, 0.1, 0.01]
)
def test_theorem1_adamec_rule_equals_threshold_rule(ratio: float) -> None:
    """Ting's AdaMEC (Eq. 9 / Eq. 19) == sign(s(x) - c) (Eq. 20) with s(x) of Eq. 24."""
    rng = np.random.default_rng(int(ratio * 1000))
    n, t = 4000, 25
    alphas = rng.uniform(0.05, 2.0, t)
    votes = np.where(rng.random((n, t)) < rng.random((n, 1)), 1.0, -1.0)  # h_t(x) in {-1, +1}
    c_fp, c_fn = 1.0, float(ratio)
    cost = np.where(votes > 0, c_fn, c_fp)  # c(y) of Eq. 3 for the vote's class y = h_t(x)
    eq9 = np.sum(cost * alphas * votes, axis=1)  # Eq. 9: sum_y c(y) sum_{h=y} alpha h
    s = np.sum(alphas * (votes > 0), axis=1) / alphas.sum()  # Eq. 24: vote fraction
    eq19 = c_fn * s - c_fp * (1 - s)
    c = c_fp / (c_fp + c_fn)  # Eq. 2
    ours = decide(_binary_proba(s), CostMatrix.from_binary(c_fp, c_fn)).labels_index
    clear = np.abs(eq9) > 1e-9 * alphas.sum() * max(c_fp, c_fn)
    assert clear.mean() > 0.99
    assert np.array_equal((eq9 > 0)[clear], (eq19 > 0)[clear])
    assert np.array_equal((eq9 > 0)[clear], (s >= c)[clear])
    assert np.array_equal(ours[clear], (eq9 > 0)[clear].astype(int))


# ------------------------------------------------------------------------------ per-row costs


def test_row_cost_matrices_layout_and_broadcast() -> None:
    out = row_cost_matrices(c_fp=1.0, c_fn=[2.0, 3.0, 4.0], c_tn=[0.0, 0.5, 1.0])
    assert out.shape == (3, 2, 2)
    assert np.array_equal(out[1], [[0.5, 1.0], [3.0, 0.0]])
    assert row_cost_matrices(1.0, 2.0).shape == (1, 2, 2)
    assert row_cost_matrices(1.0, 2.0, n_rows=4).shape == (4, 2, 2)


def test_per_row_decisions_equal_row_by_row_decisions() -> None:
    rng = np.random.default_rng(2)
    n = 400
    proba = _binary_proba(rng.random(n))
    c_fp = rng.uniform(0.1, 5, n)
    c_fn = rng.uniform(0.1, 500, n)  # e.g. a missed fraud costs the transaction amount
    stack = row_cost_matrices(c_fp, c_fn, n_rows=n)
    d = decide(proba, stack)
    for r in range(0, n, 7):
        one = decide(proba[r : r + 1], CostMatrix.from_binary(c_fp[r], c_fn[r]))
        assert one.labels_index[0] == d.labels_index[r]
        assert one.expected_cost[0] == pytest.approx(d.expected_cost[r])
        assert d.threshold[r] == pytest.approx(c_fp[r] / (c_fp[r] + c_fn[r]))


@pytest.mark.parametrize("k", [3, 6, 11])
def test_multiclass_expected_costs_are_batch_invariant_to_the_last_bit(k: int) -> None:
    """A row decided alone gives the same bits as in a batch, for one matrix and per-row
    matrices (BLAS's ``p @ c`` did not: 3,710 of 5,000 rows differed with K = 6)."""
    rng = np.random.default_rng(k)
    n = 3000
    proba = rng.dirichlet(np.ones(k), size=n)
    matrix = rng.uniform(0.0, 100.0, size=(k, k)) * (1 - np.eye(k))
    stack = rng.uniform(0.0, 100.0, size=(n, k, k)) * (1 - np.eye(k))
    for costs in (matrix, stack):
        batch = decide(proba, costs)
        for r in range(0, n, 13):
            alone = decide(proba[r : r + 1], costs if costs.ndim == 2 else costs[r : r + 1])
            assert alone.expected_cost[0] == batch.expected_cost[r]  # exact
            assert alone.labels_index[0] == batch.labels_index[r]
        brute = np.einsum("ni,nij->nj", proba, np.broadcast_to(costs, (n, k, k)))
        np.testing.assert_allclose(
            batch.expected_cost, brute[np.arange(n), batch.labels_index], rtol=1e-12
        )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"c_fp": [1, 2, 3, 4], "c_fn": [1, 1, 1, -1]}, r"^row 3, column 'c_fn': cost must be finite and >= 0, got -1.0$"),
        ({"c_fp": [1, np.nan], "c_fn": 1}, r"^row 1, column 'c_fp': cost must be finite and >= 0, got nan$"),
        ({"c_fp": [1, 0], "c_fn": [1, 0]}, r"^row 1: threshold denominator"),
        ({"c_fp": 1, "c_fn": [1, 1, 1], "c_tn": [0, 0, 2]}, r"^row 2, column 'c_tn': a correct decision may not cost more"),
        ({"c_fp": [1, 2, 3], "c_fn": [1, 2]}, r"^c_fn: expected 3 values \(the other cost arrays\), got 2$"),
        ({"c_fp": [1, 2, 3], "c_fn": 1, "n_rows": 4}, r"^c_fp: expected 4 values \(the number of rows\), got 3$"),
        ({"c_fp": [[1, 2]], "c_fn": 1}, r"^c_fp: expected a number or a 1-D array"),
    ],
)  # fmt: skip
def test_invalid_row_costs(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidCostMatrix, match=match):
        row_cost_matrices(**kwargs)


def test_decide_rejects_row_count_mismatch_and_bad_stacks() -> None:
    proba = _binary_proba(np.array([0.1, 0.5, 0.9]))
    with pytest.raises(InvalidCostMatrix, match="got 2 per-row cost matrices for 3 rows"):
        decide(proba, row_cost_matrices([1, 1], [2, 2]))
    bad = row_cost_matrices([1, 1, 1], [2, 2, 2])
    bad[2, 1, 0] = -3.0
    with pytest.raises(InvalidCostMatrix, match=r"^row 2, column 'c_fn'"):
        decide(proba, bad)
    with pytest.raises(InvalidCostMatrix, match=r"expected shape \(2, 2\)"):
        decide(proba, 1 - np.eye(3))
    with pytest.raises(InvalidCostMatrix, match="expected shape"):
        decide(proba, np.ones((3, 2, 2, 1)))
    with pytest.raises(InvalidCostMatrix):
        decide(proba, CostMatrix.from_array(1 - np.eye(3), 3))


@pytest.mark.parametrize(
    "proba, match",
    [
        ([0.2, 0.8], r"expected shape \(n, K\)"),
        ([[0.2, 0.9]], r"row 0 sums to"),
        (
            [[0.2, 0.8], [np.nan, 0.5]],
            r"row 1, column 0: expected a probability in \[0, 1\], got nan",
        ),
        ([[1.2, -0.2]], r"row 0, column 0"),
        ([[1.0]], r"K >= 2"),
    ],
)
def test_decide_rejects_bad_proba(proba: list, match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        decide(proba, 1 - np.eye(2))


# ------------------------------------------------------------------------------ prior shift


def test_prior_shift_with_equal_priors_is_identity() -> None:
    rng = np.random.default_rng(3)
    proba = rng.dirichlet(np.ones(3), size=100)
    out = apply_prior_shift(proba, [0.2, 0.3, 0.5], [0.2, 0.3, 0.5])
    assert np.allclose(out, proba, rtol=1e-15, atol=1e-15)


def test_prior_shift_formula() -> None:
    out = apply_prior_shift([[0.5, 0.5]], [0.5, 0.5], [0.8, 0.2])
    assert np.allclose(out, [[0.8, 0.2]])
    out = apply_prior_shift([[0.3, 0.7]], [0.7, 0.3], [0.5, 0.5])
    expect = np.array([0.3 / 0.7, 0.7 / 0.3])
    assert np.allclose(out, [expect / expect.sum()])


@pytest.mark.parametrize("k", [2, 3])
def test_shift_then_decide_equals_deciding_with_prior_scaled_costs(k: int) -> None:
    rng = np.random.default_rng(10 + k)
    proba = rng.dirichlet(np.ones(k), size=3000)
    for _ in range(50):
        train = rng.dirichlet(np.ones(k))
        deploy = rng.dirichlet(np.ones(k))
        c = rng.uniform(1, 10, (k, k))
        c[np.diag_indices(k)] = 0.0
        shifted = apply_prior_shift(proba, train, deploy)
        assert np.allclose(shifted.sum(axis=1), 1.0)
        d1 = decide(shifted, c)
        scaled = c * (deploy / train)[:, None]  # row i (truth i) scaled by pi'_i / pi_i
        d2 = decide(proba, scaled)
        e = proba @ scaled
        ordered = np.sort(e, axis=1)
        clear = (ordered[:, 1] - ordered[:, 0]) > 1e-9 * ordered[:, -1]
        assert clear.mean() > 0.99
        assert np.array_equal(d1.labels_index[clear], d2.labels_index[clear])
        norm = (proba * (deploy / train)).sum(axis=1)
        assert np.allclose(d1.expected_cost, d2.expected_cost / norm)


@pytest.mark.parametrize(
    "train, deploy, match",
    [
        ([0.5, 0.5], [0.3, 0.6], r"^deploy_priors: priors must sum to 1 \(within 1e-6\)"),
        ([0.5, 0.5], [1.0, 0.0], r"^deploy_priors\[1\]: every prior must be > 0, got 0.0"),
        ([0.5, 0.5], [1.5, -0.5], r"^deploy_priors\[1\]: every prior must be > 0"),
        ([0.5, 0.5], [0.2, 0.3, 0.5], r"^deploy_priors: expected 2 values \(one per class\)"),
        ([np.nan, 0.5], [0.5, 0.5], r"^train_priors: every prior must be finite"),
        ([0.5, 0.5], "ab", r"^deploy_priors: expected 2 numbers"),
    ],
)
def test_invalid_priors(train: list, deploy: list, match: str) -> None:
    with pytest.raises(InvalidPriors, match=match):
        apply_prior_shift([[0.4, 0.6]], train, deploy)


# ------------------------------------------------------------------------------ speed


def test_deciding_100k_rows_is_vectorised() -> None:
    rng = np.random.default_rng(4)
    n = 100_000
    proba = _binary_proba(rng.random(n))
    stack = row_cost_matrices(rng.uniform(0.1, 1, n), rng.uniform(1, 100, n))
    for costs in (CostMatrix.from_binary(1.0, 5.0), stack):
        best = min(_timed(lambda c=costs: decide(proba, c)) for _ in range(3))
        assert best < 0.2  # a few ms in practice; a per-row Python loop would take ~1 s
    d = decide(proba, stack)
    assert isinstance(d, Decisions) and d.labels_index.dtype == np.int64


def _timed(fn) -> float:  # noqa: ANN001
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def test_validate_row_cost_matrices_names_the_row_and_checks_the_shape() -> None:
    from models.decisions.rule import validate_row_cost_matrices

    ok = [[[0, 1, 2], [1, 0, 1], [1, 1, 0]]] * 2
    out = validate_row_cost_matrices(ok, 2, 3)
    assert out.dtype == np.float64 and out.shape == (2, 3, 3)
    bad = [ok[0], [[0, 1, 2], [1, 0, -1], [1, 1, 0]]]
    with pytest.raises(InvalidCostMatrix, match=r"row 1, entry C\[1\]\[2\]: cost must be"):
        validate_row_cost_matrices(bad, 2, 3)
    with pytest.raises(InvalidCostMatrix, match=r"expected shape \(3, 3, 3\).*got \(2, 3, 3\)"):
        validate_row_cost_matrices(ok, 3, 3)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_a_row_decided_alone_gives_the_bits_of_the_batch_ties_included(k: int) -> None:
    """One row under one matrix takes a path of its own (Python floats, no numpy calls):
    the same threshold, decision and expected cost to the last bit as in a batch, also
    at ties (p1 exactly at the threshold; equal expected costs -> the higher index)."""
    rng = np.random.default_rng(10 + k)
    n = 2000
    proba = rng.dirichlet(np.ones(k), size=n)
    if k == 2:
        matrices = [np.array([[0.0, 1.0], [3.0, 0.0]]), np.array([[0.5, 7.0], [2.5, 0.25]]),
                    np.array([[0.0, 1e308], [1e308, 0.0]])]  # fmt: skip
        proba[:50] = [[0.75, 0.25]] * 50  # exactly at t = 1 / (1 + 3)
    else:
        matrices = [rng.uniform(0.0, 100.0, size=(k, k)) * (1 - np.eye(k)), 1 - np.eye(k)]
        proba[:50] = np.full(k, 1.0 / k)  # every class equally costly: ties
    for c in matrices:
        batch = decide(proba, c)
        for r in [*range(50), *range(50, n, 11)]:
            alone = decide(proba[r : r + 1], c)
            assert alone.labels_index.tolist() == [batch.labels_index[r]]
            assert alone.expected_cost.tolist() == [batch.expected_cost[r]]  # exact
            assert alone.labels_index.dtype == batch.labels_index.dtype == np.int64
            if k == 2:
                assert alone.threshold.tolist() == [batch.threshold[r]]  # type: ignore[union-attr]
            else:
                assert alone.threshold is None and batch.threshold is None
    if k == 2:
        assert decide(proba[:1], matrices[0]).labels_index[0] == 1  # p1 >= t: positive
    else:
        assert decide(proba[:1], matrices[1]).labels_index[0] == k - 1
