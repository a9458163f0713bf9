"""Tests for models.evaluation.metrics (probability metrics, skew, Q, Brier curve, costs)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn import metrics as skm

from models.decisions.rule import CostMatrix, decide, row_cost_matrices
from models.evaluation.metrics import (
    PAPER_COST_RATIOS,
    brier_curve,
    brier_score,
    class_balanced_brier_score,
    cost_confusion_matrix,
    cost_loss_of_decisions,
    expected_calibration_error,
    log_loss,
    mean_cost,
    multiclass_brier_score,
    multiclass_log_loss,
    normalized_cost_loss,
    roc_auc,
    skew,
    skew_change,
    summarize,
    total_cost,
)
from models.exceptions import InvalidCostMatrix, InvalidInput, InvalidPriors


def _data(n: int, seed: int, pos_rate: float = 0.4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < pos_rate).astype(float)
    p = np.clip(0.35 * y + 0.65 * rng.random(n), 0.0, 1.0)
    return y, p


# ------------------------------------------------------------------------------ parity with sklearn


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_probability_metrics_equal_sklearn(seed: int) -> None:
    y, p = _data(3000, seed)
    assert brier_score(y, p) == pytest.approx(skm.brier_score_loss(y, p), rel=1e-12)
    q = np.clip(p, 1e-6, 1 - 1e-6)
    assert log_loss(y, q) == pytest.approx(skm.log_loss(y, q), rel=1e-12)
    assert roc_auc(y, p) == pytest.approx(skm.roc_auc_score(y, p), rel=1e-12)
    tied = np.round(p, 1)  # many ties: averaged ranks
    assert roc_auc(y, tied) == pytest.approx(skm.roc_auc_score(y, tied), rel=1e-12)


def test_log_loss_clips_extreme_probabilities() -> None:
    y = np.array([1.0, 0.0])
    value = log_loss(y, np.array([0.0, 1.0]))
    assert math.isfinite(value) and value == pytest.approx(-math.log(1e-15), rel=1e-3)


def test_auc_edge_cases() -> None:
    assert roc_auc([0, 1], [0.2, 0.8]) == 1.0
    assert roc_auc([0, 1], [0.8, 0.2]) == 0.0
    assert roc_auc([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5]) == 0.5
    with pytest.raises(InvalidInput, match="only positive"):
        roc_auc([1, 1], [0.2, 0.3])


def test_expected_calibration_error_by_hand() -> None:
    # bins of width 0.5: [0, 0.5) holds p=0.1, 0.2 (labels 0, 1); [0.5, 1] holds 0.9, 1.0 (1, 1)
    y = [0, 1, 1, 1]
    p = [0.1, 0.2, 0.9, 1.0]
    expect = 0.5 * abs(0.5 - 0.15) + 0.5 * abs(1.0 - 0.95)
    assert expected_calibration_error(y, p, n_bins=2) == pytest.approx(expect)
    rng = np.random.default_rng(5)
    pp = rng.random(200_000)
    yy = (rng.random(pp.size) < pp).astype(float)  # calibrated by construction
    assert expected_calibration_error(yy, pp) < 0.01
    assert expected_calibration_error(yy, 0.5 * pp) > 0.2
    with pytest.raises(InvalidInput, match="n_bins"):
        expected_calibration_error(y, p, n_bins=0)


@pytest.mark.parametrize(
    "y, p, match",
    [
        ([0, 2], [0.1, 0.2], r"y01: row 1: expected a label 0 or 1, got 2"),
        ([0, 1], [0.1, 1.2], r"p1: row 1: expected a probability in \[0, 1\], got 1.2"),
        ([0, 1], [0.1, np.nan], r"p1: row 1"),
        ([0, 1], [0.1], r"p1: expected 2 values"),
        ([], [], r"at least one row"),
        ([[0, 1]], [[0.1, 0.2]], r"1-D"),
    ],
)
def test_invalid_binary_inputs(y: list, p: list, match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        brier_score(y, p)


# ------------------------------------------------------------------------------ skew and Q


def test_paper_cost_ratios() -> None:
    r = PAPER_COST_RATIOS
    assert len(r) == 21 and r[0] == 100 and r[10] == 1 and r[-1] == pytest.approx(0.01)
    assert all(a > b for a, b in zip(r, r[1:], strict=False))
    assert all(r[i] * r[20 - i] == pytest.approx(1.0) for i in range(21))
    assert r[7] == 2.5 and r[13] == pytest.approx(0.4)


def test_skew_eq27_and_eq28() -> None:
    assert skew(1.0, 4.0) == pytest.approx(0.2)  # balanced priors: c_fp / (c_fp + c_fn), Eq. 28
    assert skew(1.0, 1.0) == 0.5
    # Eq. 27 with pi_+ = 0.2: z = 0.8 * 1 / (0.8 * 1 + 0.2 * 4) = 0.5
    assert skew(1.0, 4.0, pi_pos=0.2) == pytest.approx(0.5)
    with pytest.raises(InvalidCostMatrix, match="c_fn: cost must be finite"):
        skew(1.0, -1.0)
    with pytest.raises(InvalidCostMatrix, match="skew undefined"):
        skew(0.0, 0.0)
    with pytest.raises(InvalidPriors, match="pi_pos"):
        skew(1.0, 1.0, pi_pos=1.5)


def test_skew_change_inverts_the_deployment_skew_formula() -> None:
    assert skew_change(0.3) == pytest.approx(0.3)  # z_tr = 0.5: z' = z_dep (AdaMEC, section 5.1)
    for z_tr in (0.1, 0.5, 0.8):
        for z_prime in (0.05, 0.3, 0.5, 0.9):
            z_dep = z_tr * z_prime / (z_tr * z_prime + (1 - z_tr) * (1 - z_prime))
            assert skew_change(z_dep, z_tr) == pytest.approx(z_prime)


def test_q_at_half_is_half_the_error_rates() -> None:
    y, p = _data(1000, 7)
    fnr = np.mean(p[y == 1] < 0.5)
    fpr = np.mean(p[y == 0] >= 0.5)
    assert normalized_cost_loss(y, p, 0.5) == pytest.approx(0.5 * (fnr + fpr))


def test_q_eq26_by_hand_and_threshold_argument() -> None:
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0])
    p = np.array([0.9, 0.7, 0.3, 0.1, 0.8, 0.35, 0.2, 0.1, 0.05])
    # theta = z = 0.25: FNR = 1/4 (0.1), FPR = 2/5 (0.8, 0.35)
    assert normalized_cost_loss(y, p, 0.25) == pytest.approx(0.25 * 0.75 + 0.4 * 0.25)
    # explicit theta = 0.5 at z = 0.25: FNR = 2/4, FPR = 1/5
    assert normalized_cost_loss(y, p, 0.25, threshold=0.5) == pytest.approx(0.5 * 0.75 + 0.2 * 0.25)
    # p == theta counts as positive
    assert normalized_cost_loss(y, p, 0.7, threshold=0.7) == pytest.approx(0.5 * 0.3 + 0.2 * 0.7)
    # all-negatives classifier: FNR = 1, FPR = 0, so Q = 1 - z under Eq. 26
    assert normalized_cost_loss(y, np.zeros(9), 0.3) == pytest.approx(0.7)
    with pytest.raises(InvalidInput, match="both classes"):
        normalized_cost_loss(np.ones(3), [0.1, 0.2, 0.3], 0.5)
    with pytest.raises(InvalidInput, match=r"z: expected a skew in \[0, 1\]"):
        normalized_cost_loss(y, p, 1.5)


# ------------------------------------------------------------------------------ Brier curve


def test_brier_curve_points_follow_eq26_at_threshold_z() -> None:
    y, p = _data(800, 8)
    bc = brier_curve(y, p)
    assert bc.z.shape == bc.q.shape == (21,)
    assert np.all(np.diff(bc.z) > 0)
    assert bc.z[0] == pytest.approx(1 / 101) and bc.z[-1] == pytest.approx(100 / 101)
    assert bc.z[10] == 0.5
    for z, q in zip(bc.z, bc.q, strict=True):
        assert q == pytest.approx(normalized_cost_loss(y, p, z))
    zz = np.r_[0.0, bc.z, 1.0]
    qq = np.r_[0.0, bc.q, 0.0]
    assert bc.area == pytest.approx(float(np.sum(np.diff(zz) * (qq[1:] + qq[:-1]) / 2)))
    assert 0.0 <= bc.area <= 0.5


@pytest.mark.parametrize("seed", [0, 1])
def test_brier_curve_area_converges_to_class_balanced_brier_score(seed: int) -> None:
    y, p = _data(2000, seed, pos_rate=0.3)
    exact = 0.5 * (np.mean((1 - p[y == 1]) ** 2) + np.mean(p[y == 0] ** 2))
    assert class_balanced_brier_score(y, p) == pytest.approx(exact)
    errors = []
    for m in (50, 500, 20_000):
        z = np.arange(1, m) / m  # dense uniform interior grid; endpoints added by brier_curve
        area = brier_curve(y, p, ratios=(1 - z) / z).area
        errors.append(abs(area - exact))
    assert errors[-1] < 2e-4
    assert errors[-1] < errors[0]


def test_brier_curve_area_is_the_brier_score_when_classes_are_balanced() -> None:
    rng = np.random.default_rng(9)
    y = np.r_[np.ones(1000), np.zeros(1000)]
    p = np.clip(0.3 * y + 0.7 * rng.random(2000), 0, 1)
    z = np.arange(1, 20_000) / 20_000
    area = brier_curve(y, p, ratios=(1 - z) / z).area
    assert area == pytest.approx(brier_score(y, p), abs=2e-4)


def test_brier_curve_rejects_bad_ratios_and_one_class() -> None:
    y, p = _data(50, 1)
    with pytest.raises(InvalidInput, match="ratios"):
        brier_curve(y, p, ratios=[1.0, 0.0])
    with pytest.raises(InvalidInput, match="ratios"):
        brier_curve(y, p, ratios=[])
    with pytest.raises(InvalidInput, match="both classes"):
        brier_curve(np.zeros(5), np.full(5, 0.3))


# ------------------------------------------------------------------------------ costs


def test_cost_confusion_matrix_total_and_mean_cost() -> None:
    rng = np.random.default_rng(12)
    y, p = _data(1000, 12)
    cm = CostMatrix.from_binary(c_fp=1.0, c_fn=5.0)
    d = decide(np.column_stack([1 - p, p]), cm).labels_index
    yi = y.astype(np.int64)
    conf = cost_confusion_matrix(yi, d, 2)
    assert np.array_equal(conf, skm.confusion_matrix(yi, d, labels=[0, 1]))
    expect = float(np.sum(conf * cm.matrix))
    assert total_cost(yi, d, cm) == pytest.approx(expect)
    assert total_cost(yi, d, cm.matrix) == pytest.approx(expect)
    assert mean_cost(yi, d, cm) == pytest.approx(expect / 1000)
    c_fn = rng.uniform(1, 100, 1000)
    stack = row_cost_matrices(1.0, c_fn)
    by_row = np.where((yi == 1) & (d == 0), c_fn, np.where((yi == 0) & (d == 1), 1.0, 0.0))
    assert total_cost(yi, d, stack) == pytest.approx(by_row.sum())
    assert mean_cost(yi, d, stack) == pytest.approx(by_row.mean())
    k3 = cost_confusion_matrix([0, 1, 2, 2], [0, 2, 2, 1], 3)
    assert np.array_equal(k3, [[1, 0, 0], [0, 0, 1], [0, 1, 1]])


@pytest.mark.parametrize(
    "y, d, costs, exc, match",
    [
        ([0, 1], [0, 2], np.eye(2)[::-1], InvalidInput, r"decision_index: row 1: expected a class index in \[0, 1\]"),
        ([0.5, 1], [0, 1], np.eye(2)[::-1], InvalidInput, r"y_index: expected a 1-D array of class indices"),
        ([0, 1], [0], np.eye(2)[::-1], InvalidInput, r"decision_index: expected 2 values"),
        ([0, 1], [0, 1], [[0, 1], [-1, 0]], InvalidCostMatrix, r"'c_fn'.*finite and >= 0"),
        ([0, 1], [0, 1], np.ones((3, 2, 2)) - np.eye(2), InvalidCostMatrix, r"3 per-row cost matrices for 2 rows"),
        ([0, 1], [0, 1], np.ones(3), InvalidCostMatrix, r"expected shape"),
    ],
)  # fmt: skip
def test_cost_functions_reject_bad_input(y: list, d: list, costs, exc: type, match: str) -> None:  # noqa: ANN001
    with pytest.raises(exc, match=match):
        total_cost(y, d, costs)


# ------------------------------------------------------------------------------ summary


def test_summarize() -> None:
    y, p = _data(500, 13)
    s = summarize(y, p)
    assert set(s) == {"brier", "log_loss", "ece", "auc", "brier_curve_area"}
    assert s["brier"] == pytest.approx(brier_score(y, p))
    assert s["auc"] == pytest.approx(roc_auc(y, p))
    assert s["brier_curve_area"] == pytest.approx(brier_curve(y, p).area)
    one = summarize(np.ones(4), [0.2, 0.5, 0.9, 1.0])
    assert one["auc"] is None and one["brier_curve_area"] is None
    assert all(math.isfinite(one[k]) for k in ("brier", "log_loss", "ece"))


def test_multiclass_brier_and_log_loss_match_the_binary_forms_and_sklearn() -> None:
    y, p1 = _data(400, 7)
    y_index = y.astype(np.intp)
    proba = np.column_stack([1.0 - p1, p1])
    assert multiclass_brier_score(y_index, proba) == pytest.approx(2 * brier_score(y, p1))
    assert multiclass_log_loss(y_index, proba) == pytest.approx(log_loss(y, p1))
    rng = np.random.default_rng(3)
    p3 = rng.dirichlet(np.ones(3), size=300)
    y3 = rng.integers(0, 3, size=300)
    assert multiclass_log_loss(y3, p3) == pytest.approx(skm.log_loss(y3, p3, labels=[0, 1, 2]))
    onehot = np.eye(3)[y3]
    assert multiclass_brier_score(y3, p3) == pytest.approx(((p3 - onehot) ** 2).sum(1).mean())
    with pytest.raises(InvalidInput, match="proba"):
        multiclass_brier_score(y3, p3[:10])
    with pytest.raises(InvalidInput, match="y_index"):
        multiclass_log_loss(np.full(300, 3), p3)


def test_cost_loss_of_decisions_is_eq26_at_the_thresholded_decisions() -> None:
    y, p1 = _data(500, 11)
    for z in (0.1, 0.5, 0.8):
        decided = (p1 >= z).astype(np.intp)
        confusion = cost_confusion_matrix(y.astype(np.intp), decided, 2)
        assert cost_loss_of_decisions(confusion, z) == pytest.approx(normalized_cost_loss(y, p1, z))
    with pytest.raises(InvalidInput, match="both classes"):
        cost_loss_of_decisions([[3, 1], [0, 0]], 0.5)
    with pytest.raises(InvalidInput, match="z"):
        cost_loss_of_decisions([[3, 1], [1, 2]], 1.5)
