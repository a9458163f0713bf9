"""Training class priors follow ``sample_weight``, as the calibrator fitted with it does."""

from __future__ import annotations

import numpy as np
import pytest

from models.auto import AutoCalibrated
from models.boosting.calibrated import CalibratedBoosting
from models.decisions.rule import class_priors
from models.exceptions import InvalidInput
from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.ovr import OneVsRestAdaBoost
from models.multiclass.samme import SAMME


def test_weighted_shares_and_errors() -> None:
    y = np.array([0, 0, 0, 1])
    assert class_priors(y, 2).tolist() == [0.75, 0.25]
    assert class_priors(y, 2, [1.0, 1.0, 1.0, 3.0]).tolist() == [0.5, 0.5]
    with pytest.raises(InvalidInput, match="class index 1 has total weight 0"):
        class_priors(y, 2, [1.0, 1.0, 1.0, 0.0])
    with pytest.raises(InvalidInput, match="sample_weight"):
        class_priors(y, 2, [1.0, -1.0, 1.0, 1.0])


def _data(k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=300), np.linspace(-1, 1, k + 1)[1:-1])
    return X, y


@pytest.mark.parametrize(
    "make, k",
    [
        (lambda: CalibratedBoosting(split="kfold", n_folds=3), 2),
        (
            lambda: CalibratedMulticlass(
                SAMME(n_estimators=5), calibration_split="kfold", n_folds=3
            ),
            3,
        ),
        (lambda: OneVsRestAdaBoost(n_estimators=5, calibration_split="kfold", n_folds=3), 3),
        (lambda: SAMME(n_estimators=5), 3),
        (lambda: AutoCalibrated(grid=(("stump", 1, 20),), n_folds=3), 2),
        (lambda: AutoCalibrated(grid=(("stump", 1, 20),), n_folds=3), 3),
    ],
)
def test_estimators_record_weighted_priors(make, k: int) -> None:  # type: ignore[no-untyped-def]
    X, y = _data(k)
    w = np.where(y == 0, 3.0, 1.0)
    est = make().fit(X, y, sample_weight=w)
    expected = np.bincount(y, weights=w) / w.sum()
    np.testing.assert_allclose(est.class_priors_, expected)
    assert not np.allclose(est.class_priors_, np.bincount(y) / len(y))
