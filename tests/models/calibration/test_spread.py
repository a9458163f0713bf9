"""The spread of a fold ensemble's mean score (models.calibration.spread)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from models.calibration import spread
from models.calibration.calibrators import calibrator_from_state, make_calibrator
from models.exceptions import ArtifactError


@pytest.mark.parametrize("method", ["platt", "isotonic", "beta", "venn_abers"])
def test_the_spread_map_is_the_map_of_the_spread_score(method: str) -> None:
    rng = np.random.default_rng(0)
    s = rng.random(400)
    y = (rng.random(400) < s).astype(float)
    cal = make_calibrator(method).fit(s, y)
    sp = spread.ScoreSpread(center=0.45, factor=1.3)
    out = spread.spread_map(cal, sp)
    grid = np.linspace(0.0, 1.0, 101)
    np.testing.assert_allclose(out.predict(grid), cal.predict(sp.apply(grid)), atol=1e-12)
    again = calibrator_from_state(json.loads(json.dumps(out.to_state())))
    assert np.array_equal(again.predict(grid), out.predict(grid))
    # Platt and isotonic keep their own state's fields: a saved model needs nothing new
    if method != "beta":
        assert set(out.to_state()) == set(cal.to_state())
    assert spread.spread_map(cal, spread.IDENTITY) is cal


def _fold_scores(n: int, k: int, own: float, seed: int) -> tuple[np.ndarray, ...]:
    """k boosters' scores: a shared part m, own noise of sd ``own`` out of sample; the
    boosters that saw a row are pulled toward its label (and agree more there)."""
    rng = np.random.default_rng(seed)
    m = rng.normal(0.5, 0.15, n)
    y = (rng.random(n) < np.clip(m, 0, 1)).astype(float)
    fold = rng.integers(0, k, n)
    scores = m[:, None] + rng.normal(0.0, own, (n, k))
    seen = np.ones((n, k), dtype=bool)
    seen[np.arange(n), fold] = False
    pulled = 0.6 * m[:, None] + 0.4 * y[:, None] + rng.normal(0.0, own / 3, (n, k))
    scores = np.where(seen, pulled, scores)
    return scores[np.arange(n), fold], scores, fold


def test_the_factor_is_the_variance_ratio_of_one_score_to_the_mean() -> None:
    k, own = 5, 0.1
    oof, scores, fold = _fold_scores(40000, k, own, seed=1)
    fitted = spread.fit(oof, scores, fold)
    v_single = 0.15**2 + own**2
    v_mean = 0.15**2 + own**2 / k
    assert fitted.factor == pytest.approx(v_single / v_mean, rel=0.03)
    assert fitted.center == pytest.approx(0.5, abs=0.01)


def test_no_own_noise_no_spread_and_bad_states_refused() -> None:
    oof, scores, fold = _fold_scores(5000, 5, 0.0, seed=2)
    assert spread.fit(oof, scores, fold).factor == pytest.approx(1.0, abs=0.02)
    assert spread.from_state({"center": 0.4, "factor": 1.2}) == spread.ScoreSpread(0.4, 1.2)
    for bad in [{"center": 0.4}, {"center": 0.4, "factor": 0.5}, {"center": "x", "factor": 1}]:
        with pytest.raises(ArtifactError):
            spread.from_state(bad)
