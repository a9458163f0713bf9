"""Plot data (models/evaluation/plots.py) against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve

from models.boosting.calibrated import CalibratedBoosting
from models.decisions.rule import CostMatrix, decide
from models.evaluation.metrics import (
    PAPER_COST_RATIOS,
    brier_curve,
    mean_cost,
    normalized_cost_loss,
    summarize,
)
from models.evaluation.plots import (
    brier_curve_plot,
    cost_curve,
    reliability_diagram,
    reliability_plot,
    roc_curve,
    roc_one_vs_rest,
    stratified_sample,
    top_label,
    uncalibrated_proba,
    whatif,
)
from models.exceptions import InvalidCostMatrix, InvalidInput


def _scores(n: int = 2000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.int8)
    p = np.clip(rng.beta(2, 5, n) + 0.35 * y, 0.0, 1.0)
    return y, p


def _hull_area(fpr: np.ndarray, tpr: np.ndarray) -> float:
    """Area under the ROC convex hull (max over chords), computed independently."""
    pts = sorted(zip(fpr, tpr, strict=True))
    best = [pts[0]]
    for x, y in pts[1:]:
        while len(best) >= 2:
            (x0, y0), (x1, y1) = best[-2], best[-1]
            if (x1 - x0) * (y - y0) - (y1 - y0) * (x - x0) >= 0:
                best.pop()
            else:
                break
        best.append((x, y))
    xs, ys = np.array(best).T
    return float(np.trapezoid(ys, xs))


def test_brier_curve_plot_matches_metrics_and_has_the_diagonals() -> None:
    y, p = _scores()
    out = brier_curve_plot(y, p)
    curve = brier_curve(y, p)
    assert len(out["z"]) == 21 and out["area"] == curve.area
    assert out["area"] == pytest.approx(summarize(y, p)["brier_curve_area"])
    np.testing.assert_allclose(out["q"], curve.q)
    for z, q, r in zip(out["z"], out["q"], out["cost_ratios"], strict=True):
        assert z == pytest.approx(1 / (1 + r))
        assert q == pytest.approx(normalized_cost_loss(y, p, z))
    np.testing.assert_allclose(out["all_positive"], out["z"])
    np.testing.assert_allclose(out["all_negative"], 1 - np.array(out["z"]))
    assert sorted(out["cost_ratios"]) == sorted(PAPER_COST_RATIOS)
    # the trivial classifiers are exactly the diagonals (Eq. 26)
    ones, zeros = np.ones_like(p), np.zeros_like(p)
    np.testing.assert_allclose(brier_curve(y, ones * 0 + 1.0).q, out["all_positive"], atol=1e-12)
    np.testing.assert_allclose(brier_curve(y, zeros).q[:-1], out["all_negative"][:-1], atol=1e-12)


def test_reliability_matches_sklearn_calibration_curve() -> None:
    y, p = _scores(seed=3)
    out = reliability_diagram(y, p, n_bins=10)
    frac, mean = calibration_curve(y, p, n_bins=10, strategy="uniform")
    counts = np.array(out["count"])
    assert counts.sum() == len(y)
    got_mean = [m for m, c in zip(out["mean_predicted"], counts, strict=True) if c]
    got_frac = [f for f, c in zip(out["fraction_positive"], counts, strict=True) if c]
    np.testing.assert_allclose(got_mean, mean, rtol=1e-12)
    np.testing.assert_allclose(got_frac, frac, rtol=1e-12)
    ece = sum(
        c / len(y) * abs(f - m)
        for f, m, c in zip(got_frac, got_mean, counts[counts > 0], strict=True)
    )
    assert out["ece"] == pytest.approx(ece)


def test_reliability_plot_empty_bins_are_null_and_before_is_optional() -> None:
    y = np.array([0, 1, 0, 1])
    p = np.array([0.05, 0.95, 0.1, 0.9])
    out = reliability_plot(y, p, n_bins=4)
    assert out["bins"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert out["after"]["count"] == [2, 0, 0, 2]
    assert out["after"]["mean_predicted"][1] is None
    assert out["before"] is None and out["ece_before"] is None
    both = reliability_plot(y, p, np.full(4, 0.5), n_bins=4)
    assert both["before"]["count"] == [0, 0, 4, 0] and both["ece_before"] == pytest.approx(0.0)


def test_roc_curve_auc_and_points_match_sklearn() -> None:
    y, p = _scores(n=500, seed=1)
    p = np.round(p, 2)  # ties
    out = roc_curve(y, p, max_points=10_000)
    assert out["auc"] == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    fpr, tpr, _ = sk_roc_curve(y, p, drop_intermediate=False)
    np.testing.assert_allclose(out["fpr"], fpr)
    np.testing.assert_allclose(out["tpr"], tpr)
    assert float(np.trapezoid(out["tpr"], out["fpr"])) == pytest.approx(out["auc"])


def test_roc_downsampling_keeps_the_convex_hull() -> None:
    y, p = _scores(n=20_000, seed=2)
    full = roc_curve(y, p, max_points=100_000)
    thin = roc_curve(y, p)
    assert len(full["fpr"]) > 5000 and len(thin["fpr"]) <= 200
    assert thin["fpr"][0] == 0 and thin["tpr"][0] == 0
    assert thin["fpr"][-1] == 1 and thin["tpr"][-1] == 1
    assert np.all(np.diff(thin["fpr"]) >= 0) and np.all(np.diff(thin["tpr"]) >= 0)
    assert _hull_area(np.array(thin["fpr"]), np.array(thin["tpr"])) == pytest.approx(
        _hull_area(np.array(full["fpr"]), np.array(full["tpr"])), abs=1e-12
    )
    assert float(np.trapezoid(thin["tpr"], thin["fpr"])) == pytest.approx(thin["auc"], abs=2e-3)


def test_cost_curve_equals_mean_cost_of_the_decisions() -> None:
    y, p = _scores(seed=4)
    out = cost_curve(y, p, 0.05, 20.0, n_points=41)
    assert out["ratio_min"] == 0.05 and out["ratio_max"] == 20.0
    assert out["ratios"][0] == pytest.approx(0.05) and out["ratios"][-1] == pytest.approx(20.0)
    proba = np.column_stack([1 - p, p])
    for r, cost, pos, neg in zip(
        out["ratios"], out["mean_cost"], out["all_positive"], out["all_negative"], strict=True
    ):
        costs = CostMatrix.from_binary(1.0, r)
        assert cost == pytest.approx(mean_cost(y, decide(proba, costs).labels_index, costs))
        assert cost == pytest.approx(whatif(y, p, 1.0, r)["mean_cost"])
        assert pos == pytest.approx(mean_cost(y, np.ones_like(y, dtype=np.int64), costs))
        assert neg == pytest.approx(mean_cost(y, np.zeros_like(y, dtype=np.int64), costs))
        assert cost <= min(pos, neg) + 0.05  # a useful model beats the trivial ones


@pytest.mark.parametrize(
    ("lo", "hi", "field"),
    [(0.0, 1.0, "ratio_min"), (-1.0, 1.0, "ratio_min"), (1.0, float("inf"), "ratio_max"),
     (2.0, 2.0, "ratio_max"), (5.0, 1.0, "ratio_max"), (float("nan"), 1.0, "ratio_min")],
)  # fmt: skip
def test_cost_curve_refuses_bad_ranges_naming_the_field(lo: float, hi: float, field: str) -> None:
    y, p = _scores(n=50)
    with pytest.raises(InvalidInput, match=f"^{field}:"):
        cost_curve(y, p, lo, hi)


def test_whatif_counts_like_an_independent_loop() -> None:
    y, p = _scores(n=300, seed=5)
    out = whatif(y, p, c_fp=2.0, c_fn=7.0, c_tp=0.5, c_tn=0.25)
    t = (2.0 - 0.25) / ((2.0 - 0.25) + (7.0 - 0.5))
    assert out["threshold"] == pytest.approx(t)
    cm = [[0, 0], [0, 0]]
    cost = 0.0
    table = {(0, 0): 0.25, (0, 1): 2.0, (1, 0): 7.0, (1, 1): 0.5}
    for yi, pi in zip(y.tolist(), p.tolist(), strict=True):
        d = int(pi >= t)
        cm[yi][d] += 1
        cost += table[(yi, d)]
    assert out["confusion_matrix"] == cm
    assert out["total_cost"] == pytest.approx(cost)
    assert out["mean_cost"] == pytest.approx(cost / 300)
    assert out["accuracy"] == pytest.approx((cm[0][0] + cm[1][1]) / 300) and out["n"] == 300
    with pytest.raises(InvalidCostMatrix, match="^c_fn:"):
        whatif(y, p, 1.0, -1.0)


@pytest.mark.parametrize(
    ("c_fp", "c_fn"), [(1e308, 1e308), (1.7976931348623157e308, 1.0), (1.0, 1e308)]
)
def test_whatif_total_over_the_largest_float_is_none_and_the_mean_a_number(
    c_fp: float, c_fn: float
) -> None:
    """Regression: costs near 1e308 on 300 rows overflowed the total to inf, which the
    API sent as null where its schema said number (and the mean too). The total is now
    None (documented nullable), the mean always a finite number."""
    y, p = _scores(n=300, seed=5)
    out = whatif(y, p, c_fp=c_fp, c_fn=c_fn)
    (tn, fp), (fn, tp) = out["confusion_matrix"]
    exact = (fp / 300) * c_fp + (fn / 300) * c_fn  # the mean without forming the total
    if math.isinf(fp * c_fp + fn * c_fn):
        assert out["total_cost"] is None
        assert out["mean_cost"] == pytest.approx(exact, rel=1e-12)
    else:  # an error-free decision under these costs: the total is representable
        assert out["total_cost"] == pytest.approx(fp * c_fp + fn * c_fn)
    assert math.isfinite(out["mean_cost"]) and out["mean_cost"] <= max(c_fp, c_fn)


def test_top_label_and_one_vs_rest() -> None:
    proba = np.array([[0.7, 0.2, 0.1], [0.1, 0.45, 0.45], [0.2, 0.3, 0.5], [0.3, 0.4, 0.3]])
    y = np.array([0, 1, 2, 2])
    correct, conf = top_label(proba, y)
    assert correct.tolist() == [1, 0, 1, 0]  # the tie in row 1 goes to class 2, as decide does
    np.testing.assert_allclose(conf, [0.7, 0.45, 0.5, 0.4])
    out = roc_one_vs_rest(y, proba, ["a", "b", "c"])
    assert [c["label"] for c in out["curves"]] == ["a", "b", "c"]
    for k, c in enumerate(out["curves"]):
        assert c["auc"] == pytest.approx(roc_auc_score(y == k, proba[:, k]))
    assert out["auc"] == pytest.approx(np.mean([c["auc"] for c in out["curves"]]))


def test_stratified_sample_is_capped_proportional_and_deterministic() -> None:
    y = np.array([0] * 9000 + [1] * 900 + [2] * 100 + [3] * 3)
    idx = stratified_sample(y, 1000, seed=0)
    assert len(idx) == 1000 and np.all(np.diff(idx) > 0)
    counts = np.bincount(y[idx])
    assert counts[0] == pytest.approx(900, abs=2) and counts[1] == pytest.approx(90, abs=2)
    assert counts[3] >= 1
    np.testing.assert_array_equal(idx, stratified_sample(y, 1000, seed=0))
    np.testing.assert_array_equal(stratified_sample(y[:50], 1000), np.arange(50))


def test_uncalibrated_proba_is_the_input_of_the_calibration_map() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=400) > 0).astype(int)
    fitted = CalibratedBoosting(random_state=0).fit(X, y)
    model = fitted.to_inference()
    raw = uncalibrated_proba(model, X)
    assert raw is not None
    np.testing.assert_allclose(raw[:, 1], fitted.estimator_.score_samples(X))
    np.testing.assert_allclose(fitted.calibrator_.predict(raw[:, 1]), model.predict_proba(X)[:, 1])
