"""Tests for models.calibration.calibrators (Platt scaling, isotonic, identity; state round trips)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.isotonic import IsotonicRegression

from models.calibration.calibrators import (
    CALIBRATION_METHODS,
    BetaCalibrator,
    Calibrator,
    IdentityCalibrator,
    IsotonicCalibrator,
    PlattCalibrator,
    calibrator_from_state,
    make_calibrator,
)
from models.exceptions import ArtifactError, InvalidInput, NotFitted, TrainingError


def _logistic_data(n: int, a: float, b: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    p = 1.0 / (1.0 + np.exp(a * s + b))
    y = (rng.random(n) < p).astype(float)
    return s, y


def _reference_platt(s: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """Independent fit: minimise the cross-entropy with Platt's corrected targets."""
    w = np.ones_like(s) if w is None else w
    keep = w > 0
    s, y, w = s[keep], y[keep], w[keep]
    n_pos, n_neg = np.sum(y == 1), np.sum(y == 0)
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def nll(ab: np.ndarray) -> float:
        f = ab[0] * s + ab[1]
        return float(np.sum(w * (np.logaddexp(0, f) - (1 - t) * f)))

    def grad(ab: np.ndarray) -> np.ndarray:
        f = ab[0] * s + ab[1]
        g = w * (t - 1.0 / (1.0 + np.exp(f)))
        return np.array([np.dot(g, s), g.sum()])

    res = minimize(
        nll, np.zeros(2), jac=grad, method="BFGS", options={"gtol": 1e-10, "maxiter": 1000}
    )
    return res.x


# ------------------------------------------------------------------------------ Platt


def test_platt_uses_corrected_targets_and_matches_independent_minimiser() -> None:
    s, y = _logistic_data(500, -3.0, 1.0, seed=1)
    cal = PlattCalibrator().fit(s, y)
    n_pos, n_neg = y.sum(), (1 - y).sum()
    assert cal.targets_ == pytest.approx((1 / (n_neg + 2), (n_pos + 1) / (n_pos + 2)))
    a_ref, b_ref = _reference_platt(s, y)
    fitted = (cal.A_, cal.B_)
    assert fitted == pytest.approx((a_ref, b_ref), abs=1e-6)


def test_platt_targets_differ_from_plain_logistic_fit() -> None:
    # On a small sample the correction visibly moves (A, B) away from the 0/1-target fit.
    s, y = _logistic_data(40, -3.0, 1.0, seed=2)
    cal = PlattCalibrator().fit(s, y)

    def nll01(ab: np.ndarray) -> float:
        f = ab[0] * s + ab[1]
        return float(np.sum(np.logaddexp(0, f) - (1 - y) * f))

    plain = minimize(nll01, np.zeros(2), method="BFGS").x
    assert abs(cal.A_ - plain[0]) + abs(cal.B_ - plain[1]) > 1e-3


def test_platt_weighted_matches_independent_minimiser_and_zero_weights_drop_rows() -> None:
    s, y = _logistic_data(400, -5.0, 2.0, seed=3)
    w = np.random.default_rng(4).uniform(0.1, 3.0, s.size)
    w[:50] = 0.0
    cal = PlattCalibrator().fit(s, y, sample_weight=w)
    a_ref, b_ref = _reference_platt(s, y, w)
    fitted = (cal.A_, cal.B_)
    assert fitted == pytest.approx((a_ref, b_ref), abs=1e-6)
    dropped = PlattCalibrator().fit(s[50:], y[50:], sample_weight=w[50:])
    assert fitted == pytest.approx((dropped.A_, dropped.B_), abs=1e-9)


def test_platt_recovers_known_logistic_model() -> None:
    s, y = _logistic_data(20000, -4.0, 2.0, seed=5)
    cal = PlattCalibrator().fit(s, y)
    a_fit, b_fit = cal.A_, cal.B_
    assert a_fit == pytest.approx(-4.0, abs=0.25)
    assert b_fit == pytest.approx(2.0, abs=0.15)
    assert cal.n_iter_ < 30


@pytest.mark.parametrize(
    "scores, labels",
    [
        # perfectly separable (positives all above negatives)
        (np.r_[np.linspace(0, 0.4, 50), np.linspace(0.6, 1, 50)], np.r_[np.zeros(50), np.ones(50)]),
        # constant score
        (np.full(100, 0.5), np.r_[np.zeros(30), np.ones(70)]),
        # huge scores (would overflow a naive exp)
        (np.r_[np.full(50, -1e6), np.full(50, 1e6)], np.r_[np.zeros(50), np.ones(50)]),
        # tiny calibration set, one of each class
        (np.array([0.2, 0.8]), np.array([0.0, 1.0])),
    ],
)
def test_platt_newton_stays_finite(scores: np.ndarray, labels: np.ndarray) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            cal = PlattCalibrator().fit(scores, labels)
            p = cal.predict(scores)
    assert math.isfinite(cal.A_) and math.isfinite(cal.B_)
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))
    if np.ptp(scores) == 0:  # constant score: p = (weighted) mean of the corrected targets
        n_pos, n_neg = labels.sum(), (1 - labels).sum()
        t = np.where(labels == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
        assert p[0] == pytest.approx(t.mean(), abs=1e-6)


def test_platt_separable_optimum_is_finite_thanks_to_targets() -> None:
    s = np.r_[np.linspace(0, 0.4, 50), np.linspace(0.6, 1, 50)]
    y = np.r_[np.zeros(50), np.ones(50)]
    cal = PlattCalibrator().fit(s, y)
    a_ref, b_ref = _reference_platt(s, y)
    fitted = (cal.A_, cal.B_)
    assert fitted == pytest.approx((a_ref, b_ref), rel=1e-5)
    p = cal.predict(s)
    assert p.max() < 1.0 and p.min() > 0.0


def test_platt_predict_formula() -> None:
    cal = calibrator_from_state({"method": "platt", "A": -4.0, "B": 2.0})
    s = np.array([0.0, 0.5, 1.0])
    assert np.allclose(cal.predict(s), 1 / (1 + np.exp(-4.0 * s + 2.0)), rtol=1e-15)


# ------------------------------------------------------------------------------ isotonic


def test_isotonic_monotone_and_matches_sklearn() -> None:
    s, y = _logistic_data(2000, -6.0, 3.0, seed=6)
    w = np.random.default_rng(7).uniform(0.5, 2.0, s.size)
    cal = IsotonicCalibrator().fit(s, y, sample_weight=w)
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(s, y, sample_weight=w)
    grid = np.linspace(-0.5, 1.5, 5001)
    ours = cal.predict(grid)
    assert np.all(np.diff(ours) >= 0)
    assert np.allclose(ours, ref.predict(grid), atol=1e-12)
    assert np.allclose(cal.predict(s), ref.predict(s), atol=1e-12)
    assert ours[0] == cal.y_thresholds_[0] and ours[-1] == cal.y_thresholds_[-1]


def test_isotonic_predict_is_numpy_only_after_state_round_trip() -> None:
    s, y = _logistic_data(300, -6.0, 3.0, seed=8)
    cal = IsotonicCalibrator().fit(s, y)
    again = calibrator_from_state(json.loads(json.dumps(cal.to_state())))
    assert isinstance(again, IsotonicCalibrator)
    grid = np.linspace(0, 1, 101)
    assert np.array_equal(again.predict(grid), cal.predict(grid))


# ------------------------------------------------------------------------------ identity / factory


def test_identity_clips() -> None:
    cal = make_calibrator("none").fit([0.1], [1])
    assert np.array_equal(cal.predict([-0.5, 0.25, 1.5]), [0.0, 0.25, 1.0])
    assert cal.to_state() == {"method": "none"}


@pytest.mark.parametrize("method", CALIBRATION_METHODS)
def test_make_calibrator_and_round_trip(method: str) -> None:
    s, y = _logistic_data(300, -4.0, 2.0, seed=9)
    cal = make_calibrator(method)
    assert isinstance(cal, Calibrator) and cal.method == method
    cal.fit(s, y)
    state = cal.to_state()
    text = json.dumps(state, allow_nan=False)  # JSON-able, finite
    again = calibrator_from_state(json.loads(text))
    assert type(again) is type(cal)
    assert np.array_equal(again.predict(s), cal.predict(s))


def test_make_calibrator_unknown_lists_valid_names() -> None:
    with pytest.raises(
        InvalidInput, match="'platt', 'isotonic', 'beta', 'venn_abers', 'none'.*'sigmoid'"
    ):
        make_calibrator("sigmoid")


# ------------------------------------------------------------------------------ errors


@pytest.mark.parametrize("cls", [PlattCalibrator, IsotonicCalibrator])
def test_fit_one_class_or_empty_raises_training_error(cls: type) -> None:
    with pytest.raises(TrainingError, match="only positive"):
        cls().fit([0.1, 0.2, 0.9], [1, 1, 1])
    with pytest.raises(TrainingError, match="only negative"):
        cls().fit([0.1, 0.2, 0.9], [0, 0, 0])
    with pytest.raises(TrainingError, match="only negative"):  # positives all have weight 0
        cls().fit([0.1, 0.2, 0.9], [0, 1, 0], sample_weight=[1, 0, 1])
    with pytest.raises(TrainingError, match="empty"):
        cls().fit([], [])


@pytest.mark.parametrize(
    "scores, labels, weights, match",
    [
        ([0.1, np.nan], [0, 1], None, r"scores: row 1: expected a finite number"),
        ([[0.1, 0.2]], [0, 1], None, r"scores: expected a 1-D array"),
        ([0.1, 0.2], [0, 2], None, r"y01: row 1: expected a label 0 or 1, got 2"),
        ([0.1, 0.2], [0, 1, 1], None, r"y01: expected 2 labels"),
        ([0.1, 0.2], [0, 1], [1.0, -1.0], r"sample_weight: row 1: expected a weight >= 0"),
        ([0.1, 0.2], [0, 1], [1.0], r"sample_weight: expected 2 weights"),
        (["a", "b"], [0, 1], None, r"scores: expected a 1-D array of numbers"),
    ],
)
def test_fit_invalid_input(scores, labels, weights, match: str) -> None:  # noqa: ANN001
    with pytest.raises(InvalidInput, match=match):
        PlattCalibrator().fit(scores, labels, sample_weight=weights)


@pytest.mark.parametrize("cls", [PlattCalibrator, IsotonicCalibrator])
def test_not_fitted(cls: type) -> None:
    with pytest.raises(NotFitted):
        cls().predict([0.5])
    with pytest.raises(NotFitted):
        cls().to_state()


@pytest.mark.parametrize(
    "state, match",
    [
        ([1, 2], "expected an object"),
        ({}, "'method'"),
        ({"method": "pickle"}, "'method'.*got 'pickle'"),
        ({"method": "platt", "A": 1.0}, "'B'"),
        ({"method": "platt", "A": float("nan"), "B": 0.0}, "'A'"),
        ({"method": "platt", "A": "1", "B": 0.0}, "'A'"),
        ({"method": "platt", "A": True, "B": 0.0}, "'A'"),
        ({"method": "platt", "A": 1.0, "B": 0.0, "C": 1}, "unexpected fields"),
        ({"method": "none", "A": 1.0}, "unexpected fields"),
        ({"method": "isotonic", "x_thresholds": [0.0, 1.0]}, "'y_thresholds'"),
        ({"method": "isotonic", "x_thresholds": [], "y_thresholds": []}, "non-empty"),
        ({"method": "isotonic", "x_thresholds": [0, 1], "y_thresholds": [0.1]}, "2 values"),
        ({"method": "isotonic", "x_thresholds": [1, 0], "y_thresholds": [0, 1]}, "non-decreasing"),
        ({"method": "isotonic", "x_thresholds": [0, 1], "y_thresholds": [1, 0]}, "non-decreasing"),
        ({"method": "isotonic", "x_thresholds": [0, 1], "y_thresholds": [0, 2]}, r"\[0, 1\]"),
        (
            {"method": "isotonic", "x_thresholds": [0, float("inf")], "y_thresholds": [0, 1]},
            "finite",
        ),
        ({"method": "isotonic", "x_thresholds": "01", "y_thresholds": [0, 1]}, "list"),
    ],
)
def test_from_state_rejects_malformed(state, match: str) -> None:  # noqa: ANN001
    with pytest.raises(ArtifactError, match=match):
        calibrator_from_state(state)


def test_repr_is_informative() -> None:
    assert "A_=" in repr(calibrator_from_state({"method": "platt", "A": -1.0, "B": 0.5}))
    assert repr(IdentityCalibrator()) == "IdentityCalibrator()"


def test_platt_in_place_work_arrays_give_the_expressions_bits() -> None:
    from models.calibration.calibrators import _affine, _platt_objective, _sigmoid_neg

    rng = np.random.default_rng(5)
    s = rng.normal(size=1001) * 30.0  # large |f| too (logaddexp's overflow-free range)
    t = np.where(rng.random(1001) < 0.4, 0.97, 0.01)
    w = rng.random(1001)
    f = np.empty_like(s)
    work = (np.empty_like(s), np.empty_like(s))
    for a, b in ((0.0, 0.3), (-1.7, 2.5), (3.1, -0.2)):
        assert _affine(a, s, b, f).tobytes() == (a * s + b).tobytes()
        assert _platt_objective(f, t, w, work) == _platt_objective(a * s + b, t, w)
        assert _sigmoid_neg(f, out=work[0]).tobytes() == _sigmoid_neg(a * s + b).tobytes()


# ------------------------------------------------------------------------------ beta


def _beta_scores(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores of positives ~ Beta(4, 2), of negatives ~ Beta(2, 4), equal priors: the
    posterior is exactly a beta map, ``a = 4 - 2 = 2``, ``b = 4 - 2 = 2``,
    ``c = ln B(2, 4) / B(4, 2) = 0`` (Kull et al. 2017, section 3)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.where(y == 1, rng.beta(4.0, 2.0, n), rng.beta(2.0, 4.0, n))
    return s, y.astype(float)


def test_beta_recovers_the_parameters_of_beta_distributed_scores() -> None:
    s, y = _beta_scores(40000, seed=0)
    cal = BetaCalibrator().fit(s, y)
    assert cal.a_ == pytest.approx(2.0, abs=0.12) and cal.b_ == pytest.approx(2.0, abs=0.12)
    assert cal.c_ == pytest.approx(0.0, abs=0.1)
    grid = np.linspace(0.02, 0.98, 49)
    truth = 1.0 / (1.0 + (grid / (1 - grid)) ** -2.0)  # s^2 / (s^2 + (1 - s)^2)
    assert np.max(np.abs(cal.predict(grid) - truth)) < 0.02


def test_beta_fits_what_platt_cannot_on_held_out_rows() -> None:
    # the posterior s^2 / (s^2 + (1 - s)^2) is not a sigmoid of s: on new rows beta
    # calibration's log loss is lower than Platt scaling's, fitted on the same rows
    s, y = _beta_scores(5000, seed=1)
    s_new, y_new = _beta_scores(20000, seed=2)

    def log_loss(p: np.ndarray) -> float:
        return float(-np.mean(y_new * np.log(p) + (1 - y_new) * np.log1p(-p)))

    beta = log_loss(BetaCalibrator().fit(s, y).predict(s_new))
    platt = log_loss(PlattCalibrator().fit(s, y).predict(s_new))
    assert beta < platt


def test_beta_is_non_decreasing_and_finite_at_0_and_1() -> None:
    rng = np.random.default_rng(3)
    s = rng.random(500)
    y = (rng.random(500) < 1 - s).astype(float)  # scores ordered the wrong way round
    cal = BetaCalibrator().fit(s, y)
    assert cal.a_ >= 0 and cal.b_ >= 0  # bounded: the map cannot decrease
    p = cal.predict(np.array([0.0, 0.3, 0.7, 1.0]))
    assert np.all(np.isfinite(p)) and np.all(np.diff(p) >= 0)


def test_beta_state_round_trips_and_refuses_bad_fields() -> None:
    s, y = _beta_scores(500, seed=4)
    cal = BetaCalibrator().fit(s, y)
    assert set(cal.to_state()) == {"method", "a", "b", "c"}
    again = calibrator_from_state(json.loads(json.dumps(cal.to_state())))
    assert np.array_equal(again.predict(s), cal.predict(s))
    for bad, match in [
        ({**cal.to_state(), "a": -1.0}, ">= 0"),
        ({**cal.to_state(), "center": 0.5}, "go together"),
        ({**cal.to_state(), "center": 0.5, "factor": 0.0}, "> 0"),
        ({**cal.to_state(), "d": 1.0}, "unexpected"),
    ]:
        with pytest.raises(ArtifactError, match=match):
            calibrator_from_state(bad)
