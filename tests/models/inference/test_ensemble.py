"""Tests of models.inference.ensemble.Ensemble (semantics, speed path, round trip, validation)."""

from __future__ import annotations

import numpy as np
import pytest

from models.boosting.adaboost import AdaBoost
from models.exceptions import ArtifactError, InvalidInput
from models.inference.ensemble import Ensemble


def _stumps() -> Ensemble:
    arrays = {
        "feature": np.array([0, 1, 0], dtype=np.int32),
        "threshold": np.array([0.0, 1.0, 2.0]),
        "value_left": np.array([-1.0, 1.0, -1.0]),
        "value_right": np.array([1.0, -1.0, 1.0]),
        "value_missing": np.array([1.0, -1.0, -1.0]),
    }
    return Ensemble("stumps", np.array([0.5, 1.0, 0.25]), arrays, 2)


def _trees() -> Ensemble:
    # tree 0: x0 <= 0 ? (x1 <= 1 ? -1 : +1) : +1 ; tree 1: a single leaf +1
    arrays = {
        "node_feature": np.array([0, 1, -1, -1, -1, -1], dtype=np.int32),
        "node_threshold": np.array([0.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
        "node_left": np.array([1, 2, -1, -1, -1, -1], dtype=np.int32),
        "node_right": np.array([4, 3, -1, -1, -1, -1], dtype=np.int32),
        "node_missing_left": np.array([1, 0, 0, 0, 0, 0], dtype=np.uint8),
        "node_value": np.array([0.0, 0.0, -1.0, 1.0, 1.0, 1.0]),
        "tree_offsets": np.array([0, 5, 6], dtype=np.int64),
    }
    return Ensemble("trees", np.array([2.0, 0.5]), arrays, 2)


def _manual_stumps(ens: Ensemble, X: np.ndarray) -> np.ndarray:
    a = ens.arrays
    out = np.zeros((X.shape[0], ens.n_learners))
    for i, x in enumerate(X):
        for t in range(ens.n_learners):
            v = x[a["feature"][t]]
            if np.isnan(v):
                out[i, t] = a["value_missing"][t]
            else:
                out[i, t] = a["value_left"][t] if v <= a["threshold"][t] else a["value_right"][t]
    return out


def test_stumps_semantics_eq7_eq24_eq25() -> None:
    ens = _stumps()
    X = np.array([[-1.0, 0.0], [0.0, 1.0], [1.0, 5.0], [np.nan, 0.0], [3.0, np.nan]])
    h = _manual_stumps(ens, X)
    np.testing.assert_array_equal(ens.learner_outputs(X), h)
    F = h @ ens.alphas
    np.testing.assert_allclose(ens.decision_function(X), F)
    s = ((h > 0) * ens.alphas).sum(1) / ens.alphas.sum()
    np.testing.assert_allclose(ens.vote_fraction(X), s)
    np.testing.assert_allclose(ens.score(X, "vote"), (F / ens.alphas.sum() + 1) / 2)
    np.testing.assert_allclose(ens.score(X, "logistic"), 1 / (1 + np.exp(-2 * F)))
    with pytest.raises(InvalidInput, match="score kind"):
        ens.score(X, "platt")


def test_large_input_uses_chunks_consistently() -> None:
    ens = _stumps()
    X = np.random.default_rng(0).normal(size=(10_000, 2))
    X[::7, 1] = np.nan
    np.testing.assert_allclose(ens.decision_function(X), _manual_stumps(ens, X) @ ens.alphas)


def test_trees_semantics() -> None:
    ens = _trees()
    X = np.array([[-1.0, 0.0], [-1.0, 2.0], [1.0, 0.0], [np.nan, 2.0], [-1.0, np.nan]])
    h = ens.learner_outputs(X)
    np.testing.assert_array_equal(h[:, 0], [-1, 1, 1, 1, 1])
    np.testing.assert_array_equal(h[:, 1], [1, 1, 1, 1, 1])
    np.testing.assert_allclose(ens.decision_function(X), h @ ens.alphas)
    np.testing.assert_allclose(ens.vote_fraction(X), ((h > 0) * ens.alphas).sum(1) / 2.5)


def test_wrong_number_of_columns() -> None:
    with pytest.raises(InvalidInput, match="2 columns"):
        _stumps().decision_function(np.zeros((3, 3)))


@pytest.mark.parametrize("learner", ["stump", "tree", "logistic"])
def test_round_trip_is_exact(learner: str) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)
    X[rng.random(X.shape) < 0.05] = np.nan
    ens = AdaBoost(15, weak_learner=learner, random_state=0).fit(X, y).ensemble_
    arrays = ens.to_arrays()
    assert all(a.dtype.kind in "biuf" for a in arrays.values())
    back = Ensemble.from_arrays(arrays, ens.kind, ens.n_features)
    for name, a in back.to_arrays().items():
        assert a.dtype == arrays[name].dtype
        np.testing.assert_array_equal(a, arrays[name])
    np.testing.assert_array_equal(back.decision_function(X), ens.decision_function(X))
    np.testing.assert_array_equal(back.vote_fraction(X), ens.vote_fraction(X))


def test_from_arrays_copies_and_freezes() -> None:
    arrays = _stumps().to_arrays()
    ens = Ensemble.from_arrays(arrays, "stumps", 2)
    arrays["threshold"][0] = 99.0
    assert ens.arrays["threshold"][0] == 0.0
    with pytest.raises(ValueError):
        ens.arrays["threshold"][0] = 1.0


def _broken(kind: str, name: str, value: object) -> dict[str, object]:
    arrays: dict[str, object] = dict((_stumps() if kind == "stumps" else _trees()).to_arrays())
    if value is KeyError:
        del arrays[name]
    else:
        arrays[name] = value
    return arrays


MALFORMED = [
    ("stumps", "feature", np.array([0, 1, 0], dtype=np.int64), "int32"),
    ("stumps", "feature", np.array([0, 2, 0], dtype=np.int32), "indices"),
    ("stumps", "feature", np.array([0, -1, 0], dtype=np.int32), "indices"),
    ("stumps", "threshold", np.array([0.0, np.inf, 1.0]), "finite"),
    ("stumps", "threshold", np.array([0.0, 1.0]), "shape"),
    ("stumps", "threshold", np.zeros((3, 1)), "1-D"),
    ("stumps", "value_left", np.array([np.nan, 1.0, 1.0]), "finite"),
    ("stumps", "value_missing", KeyError, "exactly"),
    ("stumps", "extra", np.zeros(3), "exactly"),
    ("stumps", "alphas", np.array([0.5, np.nan, 1.0]), "alphas"),
    ("stumps", "alphas", np.array([0.5, -1.0, 1.0]), "alphas"),
    ("stumps", "alphas", np.array([1, 1, 1], dtype=np.int64), "alphas"),
    ("stumps", "alphas", "not an array", "alphas"),
    ("trees", "node_left", np.array([1, 7, -1, -1, -1, -1], dtype=np.int32), "node_left"),
    ("trees", "node_left", np.array([0, 2, -1, -1, -1, -1], dtype=np.int32), "node_left"),
    ("trees", "node_right", np.array([4, 0, -1, -1, -1, -1], dtype=np.int32), "node_right"),
    ("trees", "node_right", np.array([2, 3, -1, -1, -1, -1], dtype=np.int32), "parent"),
    ("trees", "node_feature", np.array([0, 5, -1, -1, -1, -1], dtype=np.int32), "node_feature"),
    ("trees", "node_feature", np.array([0, 1, 0, -1, -1, -1], dtype=np.int32), "node_left"),
    ("trees", "node_missing_left", np.array([2, 0, 0, 0, 0, 0], dtype=np.uint8), "0 or 1"),
    ("trees", "node_value", np.array([0, 0, -1, 1, 1, np.inf]), "finite"),
    ("trees", "tree_offsets", np.array([0, 5, 5, 6], dtype=np.int64), "offsets"),
    ("trees", "tree_offsets", np.array([0, 4, 6], dtype=np.int64), "parent"),
    ("trees", "tree_offsets", np.array([0, 5, 7], dtype=np.int64), "offsets"),
]


@pytest.mark.parametrize(("kind", "name", "value", "match"), MALFORMED)
def test_malformed_arrays_are_refused(kind: str, name: str, value: object, match: str) -> None:
    with pytest.raises(ArtifactError, match=match):
        Ensemble.from_arrays(_broken(kind, name, value), kind, 2)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "n_features", "match"),
    [("forest", 2, "kind"), ("stumps", 0, "n_features"), ("stumps", 1.5, "n_features")],
)
def test_bad_kind_or_width(kind: str, n_features: object, match: str) -> None:
    with pytest.raises(ArtifactError, match=match):
        Ensemble.from_arrays(_stumps().to_arrays(), kind, n_features)  # type: ignore[arg-type]


def test_empty_ensemble_refused() -> None:
    arrays = {k: v[:0] for k, v in _stumps().to_arrays().items()}
    with pytest.raises(ArtifactError, match="at least one"):
        Ensemble.from_arrays(arrays, "stumps", 2)


@pytest.mark.parametrize("learner", ["stump", "tree"])
def test_scores_of_a_row_do_not_depend_on_the_batch(learner: str) -> None:
    """Bit-for-bit: one row alone equals the same row inside a 10,000-row batch."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(10_000, 6))
    X[rng.random(size=X.shape) < 0.03] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.normal(size=10_000) > 0).astype(int)
    model = AdaBoost(n_estimators=60, weak_learner=learner, max_depth=3).fit(X[:2000], y[:2000])
    batch = model.decision_function(X)
    for i in (0, 1, 4095, 4096, 9999):
        assert model.decision_function(X[i : i + 1])[0] == batch[i]
