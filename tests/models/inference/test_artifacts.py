"""Artifacts: exact round trip, refusal of tampered or malformed blobs, golden file."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification

from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedAdaMEC
from models.exceptions import ArtifactError, ArtifactIntegrityError
from models.inference.artifacts import SCORER_KINDS, dump_model, load_model, sha256_hex
from tests.models.conftest import rezip

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[3]


def _fitted(weak_learner: str = "stump", method: str = "platt") -> tuple:
    X, y = make_classification(400, 5, n_informative=3, random_state=3)
    X[::17, 2] = np.nan
    clf = CalibratedAdaMEC(
        AdaBoost(n_estimators=25, weak_learner=weak_learner, max_depth=3, random_state=0),
        method=method,
        random_state=0,
    ).fit(X, y)
    return clf, X


@pytest.mark.parametrize("weak_learner", ["stump", "tree", "logistic"])
@pytest.mark.parametrize("method", ["platt", "isotonic", "none"])
def test_round_trip_predicts_exactly_the_same(weak_learner: str, method: str) -> None:
    clf, X = _fitted(weak_learner, method)
    blob, sha = dump_model(clf.to_inference(["a", "b", "c", "d", "e"]))
    assert sha == sha256_hex(blob)
    model = load_model(blob, expected_sha256=sha)
    np.testing.assert_array_equal(model.predict_proba(X), clf.predict_proba(X))
    assert model.feature_names == ("a", "b", "c", "d", "e")
    assert model.classes == (0, 1)


def test_dump_is_deterministic() -> None:
    clf, _ = _fitted()
    assert dump_model(clf.to_inference())[1] == dump_model(clf.to_inference())[1]


def test_flipped_byte_is_refused() -> None:
    clf, _ = _fitted()
    blob, sha = dump_model(clf.to_inference())
    for pos in (10, len(blob) // 2, len(blob) - 30):
        bad = bytearray(blob)
        bad[pos] ^= 0x01
        with pytest.raises(ArtifactIntegrityError):
            load_model(bytes(bad), expected_sha256=sha)


def test_changed_array_is_refused_even_without_the_outer_digest() -> None:
    clf, _ = _fitted()
    blob, _ = dump_model(clf.to_inference())
    arrays = clf.to_inference().scorer.to_parts()[1]
    changed = arrays["ensemble/threshold"].copy()
    changed[0] += 1.0
    buf = io.BytesIO()
    np.save(buf, changed, allow_pickle=False)
    with pytest.raises(ArtifactIntegrityError, match="threshold"):
        load_model(rezip(blob, replace={"arrays/ensemble/threshold.npy": buf.getvalue()}))


def _object_npy() -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)  # what an attacker sends
    return buf.getvalue()


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(format_version=99),
        lambda m: m.update(kind="sklearn.ensemble.AdaBoostClassifier"),
        lambda m: m.update(classes=[0]),
        lambda m: m["scorer"].update(score_kind="magic"),
        lambda m: m["scorer"]["calibrator"].update(method="os.system"),
        lambda m: m.update(train_priors=[0.5, float("nan")]),
        lambda m: m["arrays"].update({"ensemble/feature": "../../etc/passwd"}),
        lambda m: m.update(rule="always_yes"),
        lambda m: m.update(training_costs=[[0, -1], [1, 0]]),
        lambda m: m.update(n_features=2),
    ],
)
def test_malformed_manifests_are_refused(edit) -> None:
    clf, _ = _fitted()
    blob, _ = dump_model(clf.to_inference())
    with pytest.raises(ArtifactError):
        load_model(rezip(blob, edit_manifest=edit))


def test_pickled_array_is_never_loaded() -> None:
    clf, _ = _fitted()
    blob, _ = dump_model(clf.to_inference())
    evil = _object_npy()

    def point_digest(m: dict) -> None:
        m["array_sha256"]["arrays/ensemble/threshold.npy"] = sha256_hex(evil)

    with pytest.raises(ArtifactError):
        load_model(
            rezip(blob, edit_manifest=point_digest, replace={"arrays/ensemble/threshold.npy": evil})
        )


def test_not_a_zip_is_refused() -> None:
    with pytest.raises(ArtifactError):
        load_model(b"definitely not a zip")


@pytest.mark.parametrize("stem", ["v1", "v2", "v4", "v4_oblique"])
def test_golden_artifact_keeps_loading(stem: str) -> None:
    """Artifacts committed to the repository must load and predict as recorded."""
    expected = json.loads((DATA / f"golden_{stem}_expected.json").read_text())
    blob = (DATA / f"golden_{stem}.zip").read_bytes()
    model = load_model(blob, expected_sha256=expected["sha256"])
    X = np.array(expected["X"], dtype=np.float64)
    np.testing.assert_allclose(
        model.predict_proba(X), np.array(expected["proba"]), rtol=0, atol=1e-12
    )
    assert list(model.classes) == expected["classes"]


def test_loading_an_artifact_imports_no_training_code() -> None:
    # The predict path loads artifacts only; the scorers are numpy-only and the allow-list
    # of kinds is written out in models.inference.artifacts, so no estimator module is imported.
    code = (
        "import sys, json, pathlib, models.inference.artifacts as a\n"
        f"for v in ('1', '2', '4', '4_oblique'): "
        f"a.load_model(pathlib.Path({str(DATA)!r}, f'golden_v{{v}}.zip')"
        ".read_bytes())\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    loaded = set(json.loads(out.stdout))
    training = {
        "models.boosting.loop",
        "models.boosting.adaboost",
        "models.boosting.calibrated",
        "models.variants.jous",
        "models.multiclass._base",
        "models.multiclass.calibrated",
        "models.multiclass.samme",
        "models.weak.stump",
        "models.weak.tree",
        "sklearn.model_selection",
        "sklearn.tree",
        "sklearn.isotonic",
    }
    assert sorted(training & loaded) == []
    assert sorted(SCORER_KINDS) == ["angle", "binary", "binary_folds", "jous", "ovr", "samme"]
