"""Inductive Venn-ABERS (models.calibration.venn_abers): the O(m) step functions against
isotonic regression refitted with each test score added, the merge, the state."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from models.calibration.calibrators import calibrator_from_state, make_calibrator
from models.calibration.venn_abers import VennAbersCalibrator
from models.exceptions import ArtifactError, NotFitted, TrainingError


def _refit(s: np.ndarray, y: np.ndarray, w: np.ndarray, t: float, label: int) -> float:
    """The definition: isotonic regression with (t, label) added (weight: the mean), at t."""
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    iso.fit(np.r_[s, t], np.r_[y, label], sample_weight=np.r_[w / w.mean(), 1.0])
    return float(iso.predict([t])[0])


def _probe_points(x: np.ndarray) -> np.ndarray:
    """Below, at, between and above the distinct calibration scores."""
    mids = (x[:-1] + x[1:]) / 2
    return np.r_[x[0] - 1.0, x, mids, x[-1] + 1.0]


@pytest.mark.parametrize("case", range(60))
def test_the_steps_are_isotonic_regression_refitted_with_the_new_score(case: int) -> None:
    rng = np.random.default_rng(case)
    n = int(rng.integers(2, 40))
    # ties (few distinct scores) on even cases, weights on every third
    s = rng.integers(0, 6, n) / 5.0 if case % 2 == 0 else rng.random(n)
    y = (rng.random(n) < s).astype(float)
    y[:2] = [0.0, 1.0]
    w = rng.random(n) * 2 + 0.05 if case % 3 == 0 else np.ones(n)
    va = VennAbersCalibrator().fit(s, y, sample_weight=w)
    t = _probe_points(np.unique(s))
    p0, p1 = va.predict_interval(t)
    want0 = [_refit(s, y, w, v, 0) for v in t]
    want1 = [_refit(s, y, w, v, 1) for v in t]
    np.testing.assert_allclose(p0, want0, atol=1e-12)
    np.testing.assert_allclose(p1, want1, atol=1e-12)
    assert np.all(p0 <= p1 + 1e-12)
    np.testing.assert_allclose(va.predict(t), p1 / (1.0 - p0 + p1))


def test_merged_probability_is_calibrated_and_never_certain_beyond_the_data() -> None:
    rng = np.random.default_rng(3)
    s = rng.random(20000)
    y = (rng.random(20000) < s**2).astype(float)
    va = make_calibrator("venn_abers").fit(s[:10000], y[:10000])
    p = va.predict(s[10000:])
    truth = s[10000:] ** 2
    assert np.mean(np.abs(p - truth)) < 0.03
    lo, hi = va.predict(np.array([-5.0, 5.0]))
    assert 0.0 < lo < 0.01 and 0.5 < hi < 1.0  # p1 = 1 above the data, p0 its fit
    # non-decreasing in the score
    grid = np.linspace(-0.1, 1.1, 2001)
    assert np.all(np.diff(va.predict(grid)) >= -1e-15)
    # the dropped thresholds change nothing: every calibration score predicts the same
    x, inv = np.unique(s[:10000], return_inverse=True)
    assert len(va.x_thresholds_) < len(x)


def test_state_round_trip_and_refused_states() -> None:
    rng = np.random.default_rng(1)
    s = rng.random(500)
    y = (rng.random(500) < s).astype(float)
    va = make_calibrator("venn_abers").fit(s, y)
    state = json.loads(json.dumps(va.to_state(), allow_nan=False))
    assert set(state) == {"method", "x_thresholds", "p0", "p1"}
    again = calibrator_from_state(state)
    grid = np.r_[np.linspace(-1, 2, 301), s]
    assert np.array_equal(again.predict(grid), va.predict(grid))
    x = state["x_thresholds"]
    bad = [
        ({**state, "p0": state["p0"][:-1]}, f"'p0': expected {len(x) + 1} values"),
        ({**state, "p1": [*state["p1"][:-1], 1.5]}, r"'p1': values must lie in \[0, 1\]"),
        ({**state, "x_thresholds": [x[0], *x[:-1]]}, "'x_thresholds': must be increasing"),
        ({**state, "p0": state["p0"][::-1]}, "non-decreasing"),
        ({**state, "extra": 1}, "unexpected fields"),
    ]
    for st, match in bad:
        with pytest.raises(ArtifactError, match=match):
            calibrator_from_state(st)


def test_errors_of_the_protocol() -> None:
    with pytest.raises(NotFitted):
        VennAbersCalibrator().predict([0.5])
    with pytest.raises(NotFitted):
        VennAbersCalibrator().to_state()
    with pytest.raises(TrainingError, match="only positive"):
        VennAbersCalibrator().fit([0.1, 0.2], [1, 1])
    assert "n_thresholds" in repr(VennAbersCalibrator().fit([0.1, 0.2, 0.3], [0, 1, 1]))
