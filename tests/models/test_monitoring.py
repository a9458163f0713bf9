"""Tests for models.feedback.monitoring against independent computations and simulations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm
from sklearn.calibration import calibration_curve

from models.decisions.rule import CostMatrix
from models.evaluation.metrics import expected_calibration_error
from models.exceptions import InvalidCostMatrix, InvalidInput
from models.feedback.monitoring import (
    calibration_summary,
    classwise_ece,
    hosmer_lemeshow,
    realised_cost,
    reliability,
    spiegelhalter_z,
    top_label_reliability,
)


def _calibrated(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    p = rng.beta(1.0, 3.0, n)
    return (rng.random(n) < p).astype(float), p


def _ece_by_loop(event: np.ndarray, p: np.ndarray, edges: np.ndarray) -> float:
    """ECE by an explicit loop over bins [e_b, e_b+1) (last bin closed)."""
    total = 0.0
    for b in range(len(edges) - 1):
        lo, hi = edges[b], edges[b + 1]
        last = b == len(edges) - 2
        inside = (p >= lo) & ((p <= hi) if last else (p < hi))
        if inside.any():
            total += inside.sum() / p.size * abs(event[inside].mean() - p[inside].mean())
    return total


# ------------------------------------------------------------------- reliability / ECE


def test_ece_known_value() -> None:
    # bin [0.1, 0.2): p = 0.1, 0.1, y = 0, 1 -> gap |0.5 - 0.1| = 0.4, weight 2/4
    # bin [0.9, 1.0]: p = 0.9, 1.0, y = 1, 1 -> gap |1 - 0.95| = 0.05, weight 2/4
    rel = reliability([0, 1, 1, 1], [0.1, 0.1, 0.9, 1.0], n_bins=10)
    assert rel.ece == pytest.approx(0.5 * 0.4 + 0.5 * 0.05)
    assert rel.mce == pytest.approx(0.4)
    assert rel.count.tolist() == [0, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    assert rel.observed[1] == pytest.approx(0.5)
    assert np.isnan(rel.observed[0]) and rel.to_dict()["observed"][0] is None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_uniform_ece_equals_metrics_and_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y, p = _calibrated(700, rng)
    p = np.clip(p * 1.3, 0, 1)  # some miscalibration and some p = 1
    rel = reliability(y, p, n_bins=15)
    assert rel.ece == pytest.approx(expected_calibration_error(y, p, n_bins=15), abs=1e-12)
    assert rel.ece == pytest.approx(_ece_by_loop(y, p, np.linspace(0, 1, 16)), abs=1e-12)
    assert rel.count.sum() == 700


def test_quantile_bins_have_equal_mass_and_loop_ece() -> None:
    rng = np.random.default_rng(3)
    y, p = _calibrated(1000, rng)
    rel = reliability(y, p, n_bins=10, strategy="quantile")
    assert rel.count.tolist() == [100] * 10
    assert rel.edges[0] == p.min() and rel.edges[-1] == p.max()
    assert rel.ece == pytest.approx(_ece_by_loop(y, p, rel.edges), abs=1e-12)
    # sklearn's calibration_curve (quantile) gives the same per-bin frequencies
    frac, mean = calibration_curve(y, p, n_bins=10, strategy="quantile")
    np.testing.assert_allclose(rel.observed, frac, atol=1e-12)
    np.testing.assert_allclose(rel.mean_predicted, mean, atol=1e-12)


def test_quantile_bins_with_ties_keep_every_row() -> None:
    p = np.array([0.1] * 50 + [0.2] * 30 + [0.9] * 20)
    y = np.r_[np.zeros(45), np.ones(5), np.zeros(24), np.ones(6), np.zeros(2), np.ones(18)]
    rel = reliability(y, p, n_bins=10, strategy="quantile")
    assert rel.count.sum() == 100
    assert sorted(rel.count[rel.count > 0].tolist()) == [20, 30, 50]
    # every row of one probability sits in one bin: per-value gaps are exact
    assert rel.ece == pytest.approx((50 * 0 + 30 * 0 + 20 * 0) / 100, abs=1e-12)


def test_calibrated_ece_is_small_and_miscalibrated_large() -> None:
    rng = np.random.default_rng(4)
    y, p = _calibrated(20000, rng)
    assert reliability(y, p).ece < 0.02
    assert reliability(y, np.sqrt(p)).ece > 0.15


def test_top_label_matches_loop_and_classwise_binary_equals_ece() -> None:
    rng = np.random.default_rng(5)
    n, k = 900, 4
    logits = rng.normal(size=(n, k)) * 2
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(k, p=row) for row in proba])
    rel = top_label_reliability(y, proba, n_bins=10)
    conf = proba.max(axis=1)
    hit = (proba.argmax(axis=1) == y).astype(float)
    assert rel.ece == pytest.approx(_ece_by_loop(hit, conf, np.linspace(0, 1, 11)), abs=1e-12)
    cw = np.mean(
        [_ece_by_loop((y == c).astype(float), proba[:, c], np.linspace(0, 1, 11)) for c in range(k)]
    )
    assert classwise_ece(y, proba) == pytest.approx(cw, abs=1e-12)
    # two classes, no p on a bin edge: classwise ECE equals the binary ECE of p1
    y2, p2 = _calibrated(500, rng)
    p2 = np.clip(p2, 0.001, 0.999)
    p2[np.isclose(p2 * 10, np.round(p2 * 10))] += 1e-6
    two = np.column_stack([1 - p2, p2])
    assert classwise_ece(y2.astype(int), two) == pytest.approx(reliability(y2, p2).ece, abs=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_bins": 0}, "n_bins"),
        ({"n_bins": 2.5}, "n_bins"),
        ({"strategy": "kmeans"}, "strategy"),
    ],
)
def test_reliability_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        reliability([0, 1], [0.2, 0.8], **kwargs)


def test_reliability_bad_inputs_name_the_row() -> None:
    with pytest.raises(InvalidInput, match="row 1"):
        reliability([0, 2], [0.2, 0.8])
    with pytest.raises(InvalidInput, match="row 0"):
        reliability([0, 1], [1.2, 0.8])
    with pytest.raises(InvalidInput, match="row 0, class 1"):
        top_label_reliability([0, 1], [[0.5, 1.5], [0.5, 0.5]])


# ------------------------------------------------------------------- Spiegelhalter


def test_spiegelhalter_equals_brier_score_form() -> None:
    rng = np.random.default_rng(6)
    y, p = _calibrated(300, rng)
    p = p**0.8
    # Spiegelhalter (1986): Z = (B - E[B]) / sqrt(Var[B]), B the Brier score,
    # E[B] = mean p(1-p), Var[B] = sum (1-2p)^2 p(1-p) / n^2
    n = y.size
    b = np.mean((y - p) ** 2)
    eb = np.mean(p * (1 - p))
    vb = np.sum((1 - 2 * p) ** 2 * p * (1 - p)) / n**2
    z = (b - eb) / math.sqrt(vb)
    t = spiegelhalter_z(y, p)
    assert t.statistic == pytest.approx(z, rel=1e-10)
    assert t.p_value == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-10)


def test_spiegelhalter_p_value_uniform_when_calibrated() -> None:
    rng = np.random.default_rng(7)
    pv = np.array([spiegelhalter_z(*_calibrated(400, rng)).p_value for _ in range(600)])
    # uniform under the null: Kolmogorov-Smirnov does not reject, size near 5%
    assert stats.kstest(pv, "uniform").pvalue > 0.01
    assert 0.02 < np.mean(pv < 0.05) < 0.09


def test_spiegelhalter_rejects_miscalibration() -> None:
    rng = np.random.default_rng(8)
    rejected = 0
    for _ in range(200):
        y, p = _calibrated(1000, rng)
        rejected += spiegelhalter_z(y, np.clip(p * 1.6, 0, 0.99)).p_value < 0.05
    assert rejected / 200 > 0.9


def test_spiegelhalter_undefined_at_half() -> None:
    with pytest.raises(InvalidInput, match="zero variance"):
        spiegelhalter_z([0, 1, 1], [0.5, 0.5, 1.0])


# ------------------------------------------------------------------- Hosmer-Lemeshow


def test_hosmer_lemeshow_equals_two_cell_chi_square() -> None:
    rng = np.random.default_rng(9)
    y, p = _calibrated(503, rng)
    hl = hosmer_lemeshow(y, p, n_groups=10, ddof=2)
    # independent: Pearson chi-square over the 2 x G table of observed/expected counts
    order = np.argsort(p, kind="stable")
    stat = 0.0
    for g in np.array_split(order, 10):
        e1, o1 = p[g].sum(), y[g].sum()
        e0, o0 = g.size - e1, g.size - o1
        stat += (o1 - e1) ** 2 / e1 + (o0 - e0) ** 2 / e0
    assert hl.statistic == pytest.approx(stat, rel=1e-10)
    assert hl.df == 8 and hl.n_groups == 10
    assert hl.p_value == pytest.approx(stats.chi2.sf(stat, 8), rel=1e-10)


def test_hosmer_lemeshow_null_and_alternative() -> None:
    rng = np.random.default_rng(10)
    pv = np.array([hosmer_lemeshow(*_calibrated(500, rng), ddof=0).p_value for _ in range(400)])
    assert stats.kstest(pv, "uniform").pvalue > 0.01
    bad = [
        hosmer_lemeshow(y, np.sqrt(p), ddof=0).p_value < 0.05
        for y, p in (_calibrated(500, rng) for _ in range(100))
    ]
    assert np.mean(bad) > 0.9


def test_hosmer_lemeshow_skips_degenerate_groups_and_checks_args() -> None:
    y = np.r_[np.zeros(10), np.ones(10), (np.arange(30) % 3 == 0).astype(float)]
    p = np.r_[np.zeros(10), np.ones(10), np.full(30, 1 / 3)]
    hl = hosmer_lemeshow(y, p, n_groups=5, ddof=0)
    assert hl.n_groups == 3  # the all-0 and all-1 groups carry no variance
    with pytest.raises(InvalidInput, match="n_groups"):
        hosmer_lemeshow([0, 1], [0.2, 0.7], n_groups=3)
    with pytest.raises(InvalidInput, match="degrees of freedom"):
        hosmer_lemeshow([0, 1], [0.2, 0.7], n_groups=2, ddof=2)
    with pytest.raises(InvalidInput, match="ddof"):
        hosmer_lemeshow([0, 1], [0.2, 0.7], n_groups=2, ddof=-1)


# ------------------------------------------------------------------- realised cost


def test_realised_cost_per_row_matrices_and_reported_costs() -> None:
    c = np.array(
        [
            [[0, 1], [5, 0]],
            [[0, 2], [10, 0]],
            [[0, 3], [7, 0]],
            [[0, 1], [1, 0]],
        ],
        dtype=float,
    )
    y = [1, 0, 1, 1]
    d = [0, 1, 1, 0]
    r = realised_cost(y, d, c, expected_cost=[1.0, 1.0, 0.5, 0.5])
    assert r.per_row.tolist() == [5.0, 2.0, 0.0, 1.0]
    assert r.total == 8.0 and r.expected_total == 3.0 and r.ratio == pytest.approx(8 / 3)
    r2 = realised_cost(y, d, c, reported_cost=[np.nan, 420.0, np.nan, np.nan])
    assert r2.per_row.tolist() == [5.0, 420.0, 0.0, 1.0] and r2.ratio is None
    one = realised_cost(y, d, CostMatrix.from_binary(c_fp=1.0, c_fn=4.0))
    assert one.total == 4 + 1 + 0 + 4


def test_realised_cost_bad_inputs() -> None:
    c = CostMatrix.from_binary(c_fp=1.0, c_fn=4.0)
    with pytest.raises(InvalidInput, match="row 1"):
        realised_cost([0, 1], [0, 1], c, reported_cost=[1.0, -2.0])
    with pytest.raises(InvalidInput, match="expected 2 values"):
        realised_cost([0, 1], [0, 1], c, expected_cost=[1.0])
    with pytest.raises(InvalidInput, match="row 0"):
        realised_cost([3, 1], [0, 1], c)
    with pytest.raises(InvalidCostMatrix, match="one per row"):
        realised_cost([0, 1], [0, 1], np.zeros((3, 2, 2)) + [[0, 1], [1, 0]])


# ------------------------------------------------------------------- summary


def test_summary_binary_matches_sklearn() -> None:
    rng = np.random.default_rng(11)
    y, p = _calibrated(400, rng)
    s = calibration_summary(y.astype(int), np.column_stack([1 - p, p]))
    assert s["n"] == 400
    assert s["brier"] == pytest.approx(skm.brier_score_loss(y, p), rel=1e-12)
    assert s["log_loss"] == pytest.approx(skm.log_loss(y, p), rel=1e-9)
    assert s["ece"] == pytest.approx(reliability(y, p).ece)
    assert s["spiegelhalter"]["z"] == pytest.approx(spiegelhalter_z(y, p).statistic)
    assert s["hosmer_lemeshow"]["df"] == 10


def test_summary_multiclass_matches_sklearn() -> None:
    rng = np.random.default_rng(12)
    proba = rng.dirichlet([1, 1, 1], 300)
    y = np.array([rng.choice(3, p=row) for row in proba])
    s = calibration_summary(y, proba)
    assert s["log_loss"] == pytest.approx(skm.log_loss(y, proba), rel=1e-9)
    onehot = np.eye(3)[y]
    assert s["brier"] == pytest.approx(np.mean(((proba - onehot) ** 2).sum(axis=1)))
    assert s["spiegelhalter"] is None and s["hosmer_lemeshow"] is None
    assert s["ece"] == pytest.approx(top_label_reliability(y, proba).ece)
