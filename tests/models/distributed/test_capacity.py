"""The distributed search's Platt fits and staged scores against the single-machine ones,
in one process (the partitions are row slices; no cluster needed)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from models.auto.curve import checkpoints, loss, smoothed
from models.calibration.calibrators import make_calibrator
from models.distributed.capacity import (
    platt_curve,
    platt_sums,
    platt_targets,
    round_cap,
    staged_out_of_fold,
)


def _staged(n: int, c: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Scores in [0, 1] that separate the classes more at later checkpoints, with ties
    at 0 and 1 (clipped), as vote fractions have."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.uint8)
    shift = 0.15 * y[None, :] * np.linspace(0.0, 2.0, c)[:, None]
    return np.clip(rng.normal(0.45 + shift, 0.2), 0.0, 1.0), y


@pytest.mark.parametrize("metric", ["log_loss", "brier"])
def test_the_curve_is_platt_calibrators_curve(metric: str) -> None:
    """Every checkpoint's map is PlattCalibrator's (A, B within 1e-7: the sums are added in
    another order, which moves the point where Newton's method stops within its tolerance),
    its loss models.auto.curve.loss's within 1e-10, and the choice the same."""
    staged, y = _staged(5_000, 20)
    n_pos = int(y.sum())
    targets = platt_targets(n_pos, len(y) - n_pos)
    parts = [slice(0, 1_700), slice(1_700, 3_100), slice(3_100, None)]

    def evaluate(points: np.ndarray) -> np.ndarray:
        rows = [platt_sums(staged[:, p], SimpleNamespace(y_index=y[p]), points, targets)
                for p in parts]  # fmt: skip
        return np.asarray(sum(rows))

    curve = platt_curve(evaluate, np.arange(1, 21), n_pos, len(y) - n_pos, metric)
    expected = []
    for c in range(20):
        cal = make_calibrator("platt").fit(staged[c], y)
        assert abs(cal.A_ - curve.maps[c][0]) < 1e-7 and abs(cal.B_ - curve.maps[c][1]) < 1e-7
        p1 = cal.predict(staged[c])
        expected.append(loss(metric, np.column_stack([1 - p1, p1]), y.astype(np.intp), None))
    np.testing.assert_allclose(curve.losses, expected, rtol=0, atol=1e-10)
    assert curve.best == int(np.argmin(smoothed(np.asarray(expected))))
    # at most two passes a Newton iteration (the halved steps evaluated together)
    assert curve.passes <= 2 * 10


def test_staged_scores_are_the_boosters_vote_fractions() -> None:
    """Each row scored by its fold's booster after each checkpoint's rounds (a booster
    that stopped early keeps its last score), as Ensemble.vote_fraction of the first
    rounds scores it."""
    from models.inference.ensemble import Ensemble
    from models.weak.base import Stump, stumps_ensemble

    rng = np.random.default_rng(1)
    n, d = 300, 3
    codes = rng.integers(0, 20, size=(d, n)).astype(np.uint8)
    codes[1, rng.random(n) < 0.1] = 255  # missing
    fold = rng.integers(0, 2, n).astype(np.int8)
    boosters = []
    for rounds in (7, 3):  # the second stops before the last checkpoints
        stumps = []
        for t in range(rounds):
            split = -1 if t == 1 else int(rng.integers(0, 19))
            stumps.append((int(rng.integers(0, d)), split, 1.0, -1.0, float(rng.choice([-1, 1])),
                           float(rng.uniform(0.1, 1.0))))  # fmt: skip
        boosters.append(stumps)
    cps = np.array([1, 2, 4, 7])
    part = SimpleNamespace(codes=codes, fold=fold)
    staged = staged_out_of_fold(part, boosters, cps)
    X = codes.T.astype(np.float64)
    X[codes.T == 255] = np.nan
    for b, stumps in enumerate(boosters):
        rows = fold == b
        for ci, c in enumerate(cps):
            kept = stumps[: min(c, len(stumps))]
            ensemble: Ensemble = stumps_ensemble(
                [Stump(0, 0.0, s[2], s[2], s[2]) if s[1] < 0
                 else Stump(s[0], s[1] + 0.5, s[2], s[3], s[4]) for s in kept],
                np.array([s[5] for s in kept]), d,
            )  # fmt: skip
            np.testing.assert_allclose(
                staged[ci, rows], ensemble.vote_fraction(X[rows]), rtol=0, atol=1e-15
            )


def test_the_round_cap_is_the_stump_entrys() -> None:
    assert round_cap(None) == 400
    assert round_cap(120) == 120 and round_cap(1000) == 400
    assert len(checkpoints(round_cap(None))) == 59
