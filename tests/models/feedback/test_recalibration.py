"""Recalibration without retraining: better calibration on shifted data, the same booster."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from sklearn.datasets import make_classification

from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.decisions.rule import CostMatrix
from models.evaluation.metrics import brier_score, expected_calibration_error
from models.exceptions import ArtifactError, ArtifactIntegrityError, InvalidInput, TrainingError
from models.feedback.monitoring import reliability
from models.feedback.recalibration import raw_scores, recalibrate, recalibrate_scores
from models.inference.artifacts import artifact_base, dump_model, load_model
from models.multiclass.angle import AngleAdaBoost
from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.ovr import OneVsRestAdaBoost
from models.multiclass.samme import SAMME
from models.variants.adac import AdaC2


def _population(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(
        n, 8, n_informative=4, weights=[0.5, 0.5], flip_y=0.05, random_state=seed
    )
    return X, y


def _shifted(X: np.ndarray, y: np.ndarray, pos_share: float, n: int, seed: int) -> tuple:
    """Label shift: resample so that positives are ``pos_share`` of the rows."""
    rng = np.random.default_rng(seed)
    n_pos = int(round(n * pos_share))
    pos = rng.choice(np.flatnonzero(y == 1), n_pos, replace=True)
    neg = rng.choice(np.flatnonzero(y == 0), n - n_pos, replace=True)
    idx = rng.permutation(np.r_[pos, neg])
    return X[idx], y[idx]


@pytest.fixture(scope="module")
def parent() -> tuple:
    X, y = _population(12000, 0)
    model = CalibratedBoosting(AdaBoost(n_estimators=60), random_state=0).fit(X[:3000], y[:3000])
    return model.to_inference([f"f{i}" for i in range(8)]), X[3000:], y[3000:]


@pytest.mark.parametrize("method", ["platt", "isotonic"])
def test_recalibrated_is_better_calibrated_on_shifted_data(parent: tuple, method: str) -> None:
    served, X, y = parent
    half = len(y) // 2
    X_lab, y_lab = _shifted(X[:half], y[:half], 0.1, 2000, seed=1)
    X_new, y_new = _shifted(X[half:], y[half:], 0.1, 4000, seed=2)  # unseen shifted rows
    rec = recalibrate(served, X_lab, y_lab, method)
    p_old = served.predict_proba(X_new)[:, 1]
    p_new = rec.model.predict_proba(X_new)[:, 1]
    assert brier_score(y_new, p_new) < brier_score(y_new, p_old)
    assert expected_calibration_error(y_new, p_new) < 0.5 * expected_calibration_error(y_new, p_old)
    # the held-out measurement says the same
    assert rec.after["brier"] < rec.before["brier"] and rec.after["ece"] < rec.before["ece"]
    assert rec.summary()["n_fit"] + rec.summary()["n_holdout"] == 2000
    assert rec.class_counts == [int((y_lab == 0).sum()), int((y_lab == 1).sum())]
    assert set(rec.fit_rows).isdisjoint(rec.holdout_rows)
    np.testing.assert_allclose(rec.model.train_priors, [0.9, 0.1], atol=0.01)


def test_new_probabilities_are_the_new_map_of_the_parent_scores(parent: tuple) -> None:
    served, X, y = parent
    rec = recalibrate(served, X[:500], y[:500], "platt")
    np.testing.assert_array_equal(
        rec.model.predict_proba(X[500:600])[:, 1],
        rec.calibrator.predict(raw_scores(served, X[500:600])),
    )
    # ... and fitting on given scores is the same as fitting on the rows
    again = recalibrate_scores(served, raw_scores(served, X[:500]), y[:500], "platt")
    assert again.calibrator.to_state() == rec.calibrator.to_state()


def test_artifact_shares_the_booster_arrays_once(parent: tuple) -> None:
    served, X, y = parent
    base_blob, base_sha = dump_model(served)
    rec = recalibrate(served, X[:600], y[:600], "isotonic")
    blob, sha = dump_model(rec.model, {"recalibration": {"parent_version": 1}}, base=base_blob)
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        assert zf.namelist() == ["manifest.json"]  # no array stored twice
        manifest = json.loads(zf.read("manifest.json"))
    assert manifest["format_version"] == 3
    assert manifest["base"]["sha256"] == base_sha == artifact_base(blob)
    assert len(blob) < len(base_blob)
    assert artifact_base(base_blob) is None
    loaded = load_model(blob, expected_sha256=sha, base=base_blob)
    old = load_model(base_blob, expected_sha256=base_sha)
    _, arrays_new = loaded.scorer.to_parts()
    _, arrays_old = old.scorer.to_parts()
    assert arrays_new.keys() == arrays_old.keys()
    for name in arrays_old:
        assert np.array_equal(arrays_new[name], arrays_old[name])
        assert arrays_new[name].dtype == arrays_old[name].dtype
    np.testing.assert_array_equal(loaded.predict_proba(X[:50]), rec.model.predict_proba(X[:50]))
    assert loaded.metadata["recalibration"] == {"parent_version": 1}
    # decisions under any costs work as for any model
    d = loaded.decide(X[:5], CostMatrix.from_binary(c_fp=1.0, c_fn=5.0))
    assert d.labels_index.shape == (5,)


def test_based_artifact_needs_its_own_base(parent: tuple) -> None:
    served, X, y = parent
    base_blob, _ = dump_model(served)
    rec = recalibrate(served, X[:600], y[:600], "platt")
    blob, sha = dump_model(rec.model, base=base_blob)
    with pytest.raises(ArtifactError, match="base="):
        load_model(blob, expected_sha256=sha)
    other, _ = dump_model(rec.model)  # a format-2 artifact, not the base
    with pytest.raises(ArtifactIntegrityError, match="base artifact"):
        load_model(blob, expected_sha256=sha, base=other)
    with pytest.raises(ArtifactError, match="base of its own"):
        dump_model(rec.model, base=blob)  # one level only


def test_unshared_arrays_stay_in_the_artifact(parent: tuple) -> None:
    served, X, y = parent
    X2, y2 = _population(800, 5)
    other = CalibratedBoosting(AdaBoost(n_estimators=10), random_state=1).fit(X2, y2)
    base_blob, _ = dump_model(other.to_inference())
    blob, sha = dump_model(served, base=base_blob)  # nothing in common with this base
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(blob)).read("manifest.json"))
    assert manifest["base"]["arrays"] == []
    np.testing.assert_array_equal(
        load_model(blob, sha, base=base_blob).predict_proba(X[:20]), served.predict_proba(X[:20])
    )


def test_uncalibrated_cost_trained_parent_becomes_threshold_rule() -> None:
    X, y = _population(3000, 7)
    booster = CalibratedBoosting(AdaC2(c_fp=1.0, c_fn=4.0, n_estimators=30), method="none").fit(
        X[:1500], y[:1500]
    )
    served = booster.to_inference()
    assert served.rule == "skew_change"
    rec = recalibrate(served, X[1500:], y[1500:], "platt")
    assert rec.model.rule == "threshold"
    assert rec.after["brier"] < rec.before["brier"]


@pytest.mark.parametrize(
    ("n", "pos", "error", "match"),
    [
        (20, 10, TrainingError, "too few labelled rows: got 20"),
        (100, 0, TrainingError, "all 100 labelled rows are of class 0"),
        (100, 100, TrainingError, "all 100 labelled rows are of class 1"),
        (100, 4, TrainingError, "class 1 has 4 labelled rows"),
    ],
)
def test_too_few_rows_or_one_class(
    parent: tuple, n: int, pos: int, error: type, match: str
) -> None:
    served, X, y = parent
    Xs = np.r_[X[y == 1][:pos], X[y == 0][: n - pos]]
    ys = np.r_[np.ones(pos, int), np.zeros(n - pos, int)]
    with pytest.raises(error, match=match):
        recalibrate(served, Xs, ys, "platt")


def test_bad_arguments(parent: tuple) -> None:
    served, X, y = parent
    with pytest.raises(InvalidInput, match="method"):
        recalibrate(served, X[:100], y[:100], "none")
    with pytest.raises(InvalidInput, match="holdout_fraction"):
        recalibrate(served, X[:100], y[:100], "platt", holdout_fraction=0.9)
    with pytest.raises(InvalidInput, match="8 features, got 7"):
        recalibrate(served, X[:100, :7], y[:100], "platt")
    with pytest.raises(InvalidInput, match="row 3"):
        recalibrate(served, X[:100], np.r_[y[:3], 2, y[4:100]], "platt")
    with pytest.raises(InvalidInput, match="expected 100 labels"):
        recalibrate(served, X[:100], y[:99], "platt")


@pytest.mark.parametrize(
    ("fraction", "needed"),
    [(1e-10, "needs at least 10000000000 rows"), (5e-324, r"needs more than 2\*\*53 rows")],
)
def test_a_tiny_holdout_fraction_is_refused_saying_how_many_rows(
    parent: tuple, fraction: float, needed: str
) -> None:
    """A subnormal fraction made ``1 / fraction`` infinite (OverflowError in ceil)."""
    served, X, y = parent
    with pytest.raises(TrainingError, match=needed):
        recalibrate(served, X[:100], y[:100], "platt", holdout_fraction=fraction)


def _three_classes(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return make_classification(
        1500, 6, n_informative=4, n_classes=3, n_clusters_per_class=1, random_state=seed
    )


@pytest.mark.parametrize("kind", ["samme", "ovr"])
@pytest.mark.parametrize("method", ["platt", "isotonic"])
def test_multiclass_models_are_recalibrated_per_class(kind: str, method: str) -> None:
    X, y = _three_classes()
    if kind == "samme":
        fitted = CalibratedMulticlass(SAMME(n_estimators=15, random_state=0), random_state=0)
    else:
        fitted = OneVsRestAdaBoost(n_estimators=10, random_state=0)
    served = fitted.fit(X[:600], y[:600]).to_inference()
    # label shift: class 0 is 70% of the rows to recalibrate on
    keep = np.r_[np.flatnonzero(y[600:] == 0), np.flatnonzero(y[600:] != 0)[:130]] + 600
    rec = recalibrate(served, X[keep], y[keep], method)
    assert rec.model.scorer.kind == served.scorer.kind and rec.model.rule == "threshold"
    _, parent_arrays = served.scorer.to_parts()
    _, new_arrays = rec.model.scorer.to_parts()
    assert parent_arrays.keys() == new_arrays.keys()
    assert all(new_arrays[k] is parent_arrays[k] or np.array_equal(new_arrays[k], parent_arrays[k])
               for k in parent_arrays)  # fmt: skip
    assert (
        len(rec.calibrator) == 3
        and rec.summary()["class_counts"] == np.bincount(y[keep], minlength=3).tolist()
    )
    assert rec.after["brier"] < rec.before["brier"]
    assert rec.after["classwise_ece"] < rec.before["classwise_ece"]
    hold = keep[rec.holdout_rows]
    assert np.allclose(rec.model.predict_proba(X[hold]), rec.holdout_proba)
    assert np.allclose(rec.holdout_proba.sum(axis=1), 1.0)
    # the same rows given as the raw class scores give the same maps
    scores = raw_scores(served, X[keep])
    assert scores.shape == (keep.size, 3)
    again = recalibrate_scores(served, scores, y[keep], method)
    assert [c.to_state() for c in again.calibrator] == [c.to_state() for c in rec.calibrator]
    # stored sharing the parent's arrays, loaded back with the new maps
    parent_blob, _ = dump_model(served)
    blob, _ = dump_model(rec.model, base=parent_blob)
    assert zipfile.ZipFile(io.BytesIO(blob)).namelist() == ["manifest.json"]
    loaded = load_model(blob, base=parent_blob)
    assert np.allclose(loaded.predict_proba(X[hold]), rec.holdout_proba)
    with pytest.raises(InvalidInput, match=r"an \(n, 3\) array"):
        recalibrate_scores(served, scores[:, :2], y[keep], method)
    with pytest.raises(InvalidInput, match="expected class index 0 to 2"):
        recalibrate_scores(served, scores, np.r_[y[keep][:-1], 3], method)


def test_multiclass_recalibration_needs_every_class() -> None:
    X, y = _three_classes(1)
    served = OneVsRestAdaBoost(n_estimators=5, random_state=0).fit(X[:600], y[:600]).to_inference()
    two = np.flatnonzero(y[600:] != 2) + 600
    with pytest.raises(TrainingError, match="class 2 has 0 labelled rows"):
        recalibrate(served, X[two], y[two], "platt")


def test_angle_based_model_is_refused_saying_why() -> None:
    X, y = _three_classes()
    model = AngleAdaBoost(n_estimators=5).fit(X[:300], y[:300]).to_inference()
    with pytest.raises(InvalidInput, match="scorer kind 'angle'.*no calibration map"):
        recalibrate(model, X[300:400], y[300:400], "platt")


def test_holdout_metrics_are_those_of_monitoring(parent: tuple) -> None:
    served, X, y = parent
    rec = recalibrate(served, X[:900], y[:900], "platt")
    hold = rec.holdout_rows
    p = rec.model.predict_proba(X[:900][hold])[:, 1]
    assert rec.after["ece"] == pytest.approx(reliability(y[:900][hold], p).ece)
    assert rec.after["n"] == hold.size
