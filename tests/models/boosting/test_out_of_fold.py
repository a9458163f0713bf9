"""Out-of-fold calibrated probabilities of the training rows (models.boosting.crossfit.OutOfFold)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from models.auto import AutoCalibrated
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.boosting.crossfit import cross_calibrated, fold_indices, provides_out_of_fold
from models.calibration.calibrators import make_calibrator
from models.evaluation.metrics import brier_score
from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.samme import SAMME


def test_no_row_is_calibrated_by_a_map_that_saw_it() -> None:
    n = 60
    y = np.arange(n) % 2
    folds = fold_indices(y, 5, 0, np.array([0, 1]))
    scores = np.arange(n, dtype=np.float64)  # each score names its row

    def fit_map(s: np.ndarray, _y: np.ndarray, _w: np.ndarray | None) -> set[float]:
        return set(s.tolist())

    def apply_map(seen: set[float], s: np.ndarray) -> np.ndarray:
        hit = np.array([v in seen for v in s.tolist()], dtype=np.float64)
        return np.column_stack([1.0 - hit, hit])

    p = cross_calibrated(fit_map, apply_map, scores, y, None, folds)
    assert p.shape == (n, 2)
    assert np.all(p[:, 1] == 0.0)  # no row's own score was among its map's training scores


def test_the_cross_fitted_maps_are_less_optimistic_than_the_served_map() -> None:
    # isotonic regression fitted on the scores it is evaluated on flatters itself most
    X, y = make_classification(400, 8, flip_y=0.15, random_state=3)
    model = CalibratedBoosting(
        AdaBoost(n_estimators=40), method="isotonic", split="kfold", random_state=0
    ).fit(X, y)
    raw = model.oof_.raw[:, 1]
    in_sample = make_calibrator("isotonic").fit(raw, y).predict(raw)
    assert brier_score(y, model.oof_.proba[:, 1]) > brier_score(y, in_sample)


@pytest.mark.parametrize("k", [2, 3])
def test_auto_reports_honest_out_of_fold_probabilities(k: int) -> None:
    X, y = make_classification(1500, 8, n_informative=5, n_classes=k, flip_y=0.05, random_state=1)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
    model = AutoCalibrated(grid=[("stump", 1, 60), ("tree", 3, 30)], random_state=0).fit(Xtr, ytr)
    oof = model.oof_
    assert oof.proba.shape == (len(ytr), k) and oof.raw.shape == (len(ytr), k)
    assert np.allclose(oof.proba.sum(axis=1), 1.0) and np.allclose(oof.raw.sum(axis=1), 1.0)
    assert np.array_equal(oof.rows, np.arange(len(ytr)))
    assert oof.info == {"scheme": "cross-fitted calibration", "n_folds": 5}

    def multi_brier(p: np.ndarray, yy: np.ndarray) -> float:
        return float(np.mean(np.sum((p - np.eye(k)[yy]) ** 2, axis=1)))

    reported = multi_brier(oof.proba, ytr)
    test = multi_brier(model.predict_proba(Xte), yte)
    # an estimate of the served model's Brier score on new rows: not a flattering one (the
    # fold models saw 80% of the rows, the served one all of them: if anything pessimistic)
    assert 0.9 * test < reported < 1.5 * test


def test_large_data_out_of_fold_comes_from_the_final_cross_fitting() -> None:
    X, y = make_classification(700, 5, random_state=2)
    model = AutoCalibrated(grid=[("stump", 1, 20)], max_search_rows=300, random_state=0).fit(X, y)
    assert model.capacity_["search_rows"] == 300
    assert model.oof_.proba.shape == (700, 2) and model.oof_.info["n_folds"] == 3


def test_which_calibrated_wrappers_provide_out_of_fold() -> None:
    X, y = make_classification(300, 5, random_state=0)
    kfold = CalibratedBoosting(AdaBoost(n_estimators=10), split="kfold", random_state=0)
    holdout = CalibratedBoosting(AdaBoost(n_estimators=10), split="holdout", random_state=0)
    none = CalibratedBoosting(AdaBoost(n_estimators=10), method="none", split="kfold")
    assert [provides_out_of_fold(m) for m in (kfold, holdout, none)] == [True, False, False]
    assert kfold.fit(X, y).oof_.proba.shape == (300, 2)
    assert holdout.fit(X, y).oof_ is None and none.fit(X, y).oof_ is None
    assert provides_out_of_fold(AdaBoost()) is False  # no calibration step at all
    assert provides_out_of_fold(AutoCalibrated()) is True

    X3, y3 = make_classification(300, 5, n_informative=3, n_classes=3, random_state=0)
    multi = CalibratedMulticlass(SAMME(n_estimators=10), calibration_split="kfold").fit(X3, y3)
    assert provides_out_of_fold(multi) and multi.oof_.proba.shape == (300, 3)
    held = CalibratedMulticlass(SAMME(n_estimators=10)).fit(X3, y3)
    assert not provides_out_of_fold(held) and held.oof_ is None


def test_binary_out_of_fold_keeps_one_column_each_and_gives_the_same_values() -> None:
    from models.boosting.crossfit import OutOfFold

    X, y = make_classification(500, 5, random_state=3)
    model = CalibratedBoosting(
        AdaBoost(n_estimators=10, weak_learner="tree", max_depth=2), split="kfold", n_folds=3
    ).fit(X, y)
    oof = model.oof_
    assert oof is not None and oof.all_rows and len(oof) == 500
    p1, s = oof.positive, oof.raw_positive
    assert p1.shape == s.shape == (500,)
    np.testing.assert_array_equal(oof.proba, np.column_stack([1.0 - p1, p1]))
    np.testing.assert_array_equal(oof.raw, np.column_stack([1.0 - s, s]))
    np.testing.assert_array_equal(oof.rows, np.arange(500))
    # the columns are the second columns of the general (n, K) form
    general = OutOfFold(oof.proba, oof.raw, oof.rows, oof.info)
    assert not general.all_rows
    np.testing.assert_array_equal(general.positive, p1)
    np.testing.assert_array_equal(general.raw_positive, s)
