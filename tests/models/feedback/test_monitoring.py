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
    calibration_alarm,
    calibration_summary,
    classwise_ece,
    cox_calibration,
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


def test_hosmer_lemeshow_counts_certain_groups_their_outcomes_contradict() -> None:
    """200 rows at p = 0 of which 20% are positive refute calibration outright."""
    rng = np.random.default_rng(13)
    y, p = _calibrated(800, rng)
    y0 = (rng.random(200) < 0.2).astype(float)
    hl = hosmer_lemeshow(np.r_[y, y0], np.r_[p, np.zeros(200)], ddof=0)
    assert hl.statistic == math.inf and hl.p_value == 0.0 and hl.n_groups == 10
    s = calibration_summary(
        np.r_[y, y0].astype(int),
        np.column_stack([1 - np.r_[p, np.zeros(200)], np.r_[p, np.zeros(200)]]),
    )
    assert s["hosmer_lemeshow"] == {"statistic": None, "df": 10, "p_value": 0.0}  # JSON: no inf
    assert s["alarm"]["fired"] and "hosmer_lemeshow" in s["alarm"]["by"]


# ------------------------------------------------------------------- Cox and the alarm


def _shifted(n: int, rng: np.random.Generator, prior: float) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities calibrated for a base rate of 0.5, outcomes drawn at base rate ``prior``
    (label shift: the true probability is the Bayes update of p by the prior ratio)."""
    p = 1.0 / (1.0 + np.exp(-rng.normal(0.0, 1.5, n)))
    r1, r0 = prior / 0.5, (1.0 - prior) / 0.5
    q = p * r1 / (p * r1 + (1.0 - p) * r0)
    return (rng.random(n) < q).astype(float), p


def test_cox_equals_an_unpenalised_logistic_regression_on_the_logit() -> None:
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(14)
    y, p = _shifted(600, rng, 0.35)
    c = cox_calibration(y, p)
    x = np.log(p / (1 - p))[:, None]
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(x, y)
    assert c.intercept == pytest.approx(lr.intercept_[0], abs=1e-5)
    assert c.slope == pytest.approx(lr.coef_[0, 0], abs=1e-5)
    eta = c.intercept + c.slope * x[:, 0]
    l1 = np.sum(y * eta - np.logaddexp(0, eta))
    l0 = np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))
    assert c.statistic == pytest.approx(2 * (l1 - l0), rel=1e-9)
    assert c.df == 2 and c.p_value == pytest.approx(stats.chi2.sf(c.statistic, 2))
    same = cox_calibration([0, 1, 1], [0.3, 0.3, 0.3])  # one p: the intercept alone
    assert same.df == 1 and same.slope == 1.0
    assert same.intercept == pytest.approx(np.log(2) - np.log(0.3 / 0.7), abs=1e-6)
    with pytest.raises(InvalidInput, match="at least 2 rows"):
        cox_calibration([1], [0.4])


def test_cox_null_uniform_and_power_against_shift_and_scale() -> None:
    rng = np.random.default_rng(15)
    pv = np.array([cox_calibration(*_shifted(500, rng, 0.5)).p_value for _ in range(300)])
    assert stats.kstest(pv, "uniform").pvalue > 0.01
    shifted = [cox_calibration(*_shifted(1000, rng, 0.3)).p_value < 0.01 for _ in range(50)]
    assert np.mean(shifted) > 0.9
    over = []
    for _ in range(50):
        y, p = _shifted(1000, rng, 0.5)
        sharp = 1 / (1 + np.exp(-2 * np.log(p / (1 - p))))  # over-confident: slope 1/2
        over.append(cox_calibration(y, sharp).p_value < 0.01)
    assert np.mean(over) > 0.9


def test_alarm_is_bonferroni_over_the_defined_tests() -> None:
    fired = calibration_alarm({"a": 0.004, "b": 0.5, "c": None})  # level 0.01 / 2
    assert fired is not None and fired.fired and fired.by == ("a",)
    assert fired.p_values == {"a": 0.004, "b": 0.5}
    quiet = calibration_alarm({"a": 0.006, "b": 0.5})
    assert quiet is not None and not quiet.fired and quiet.by == ()
    assert calibration_alarm({"a": None}) is None
    with pytest.raises(InvalidInput, match="alpha"):
        calibration_alarm({"a": 0.1}, alpha=0.0)


def test_summary_alarm_false_alarm_rate_and_power_on_buckets_of_1000() -> None:
    """On calibrated traffic the alarm fires at most about 1% of the time; after a
    base-rate shift from 0.5 to 0.3 it fires in nearly every bucket of 1,000 rows."""
    rng = np.random.default_rng(16)

    def fires(prior: float) -> bool:
        y, p = _shifted(1000, rng, prior)
        return calibration_summary(y.astype(int), np.column_stack([1 - p, p]))["alarm"]["fired"]

    false_alarms = np.mean([fires(0.5) for _ in range(300)])
    assert false_alarms <= 0.03  # 0.01 expected; 0.03 is above its binomial 99.9% bound
    assert np.mean([fires(0.3) for _ in range(100)]) >= 0.95


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
