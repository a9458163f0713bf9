"""The search's validation curve: each checkpoint's map warm-started from the previous."""

from __future__ import annotations

import numpy as np

from models.auto import AutoCalibratedMulticlass
from models.auto.curve import checkpoints, loss, smoothed
from models.auto.search import entry_losses, fit_entry, search_rows
from models.boosting.crossfit import labelled_rows


def _four_classes(n: int = 1200, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    z = X[:, 0] + 0.8 * X[:, 1] * X[:, 2] + rng.logistic(scale=0.6, size=n)
    return X, np.digitize(z, np.quantile(z, [0.25, 0.5, 0.75]))


def test_the_warm_started_curve_is_the_cold_one_and_chooses_the_same_rounds() -> None:
    X, y = _four_classes()
    est = AutoCalibratedMulticlass(random_state=0)
    X, y, classes, y_index, _ = labelled_rows(X, y, two_classes=False)
    est.classes_ = classes
    s = search_rows(est, X, y, y_index, None, classes)
    cps = checkpoints(40)
    _, oof = fit_entry(est, ("tree", 2, 40), s, cps, 5 * 40, 0, 5 * 40)
    warm = entry_losses(est, oof, s)
    cold = np.array(
        [
            loss(
                "log_loss",
                est._probabilities(est._calibrate(o, s.y_index, None), o),
                s.y_index,
                None,
            )
            for o in oof
        ]
    )
    np.testing.assert_allclose(warm, cold, rtol=0, atol=1e-9)
    assert int(np.argmin(smoothed(warm))) == int(np.argmin(smoothed(cold)))
