"""Scorer kinds angle/samme/ovr: artifact round trips through the catalog, Theorem 2."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris

from models.catalog.algorithms import algorithms, get_algorithm, validate_params
from models.exceptions import ArtifactError, InvalidInput
from models.inference.artifacts import dump_model, load_model
from models.inference.multiclass_scorers import normalise_rows, theorem2_probabilities
from tests.models.conftest import rezip

MULTICLASS = ["angle_adaboost", "angle_logitboost", "samme", "ovr_adaboost"]


def _fit(name: str, learner: str = "stump", params: dict | None = None, **settings: object):
    X, y = load_iris(return_X_y=True)
    X = X.copy()
    X[::11, 2] = np.nan  # missing values travel through the artifact too
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    spec = get_algorithm(name)
    common = {"n_estimators": 15, "weak_learner": learner, "max_depth": 2,
              "score_kind": "vote", "random_state": 0}  # fmt: skip
    est = spec.build(common, validate_params(spec, params or {}))
    if settings:
        est.set_params(**settings)
    return est.fit(X, labels), X


def test_catalog_lists_the_multiclass_algorithms() -> None:
    found = {n: s for n, s in algorithms().items() if s.family == "multiclass"}
    assert set(MULTICLASS) <= set(found)
    assert not found["angle_adaboost"].calibrated_probabilities
    assert found["samme"].calibrated_probabilities and not found["samme"].trains_with_costs
    assert [p.name for p in found["angle_logitboost"].params] == ["cost_matrix"]
    assert found["ovr_adaboost"].describe()["family"] == "multiclass"


@pytest.mark.parametrize("name", MULTICLASS)
@pytest.mark.parametrize("learner", ["stump", "tree"])
def test_every_algorithm_round_trips_through_the_artifact(name: str, learner: str) -> None:
    params = {"cost_matrix": [[0, 1, 3], [1, 0, 1], [2, 1, 0]]} if "angle" in name else {}
    est, X = _fit(name, learner, params)
    model = est.to_inference([f"f{i}" for i in range(4)])
    blob, sha = dump_model(model, metadata={"algorithm": name})
    again = load_model(blob, sha)
    assert again.classes == ("setosa", "versicolor", "virginica") == model.classes
    assert again.rule == model.rule and again.feature_names == ("f0", "f1", "f2", "f3")
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(again.train_priors, model.train_priors)
    costs = None if model.rule == "threshold" else model.training_costs
    np.testing.assert_array_equal(
        again.decide(X, costs).labels_index, model.decide(X, costs).labels_index
    )
    assert dump_model(again, metadata={"algorithm": name})[1] == sha  # byte-identical
    if model.rule == "fixed":
        np.testing.assert_array_equal(again.training_costs, params["cost_matrix"])
        np.testing.assert_array_equal(
            again.decide(X, None).labels_index, np.searchsorted(est.classes_, est.predict(X))
        )
    else:
        np.testing.assert_allclose(model.predict_proba(X), est.predict_proba(X), atol=1e-15)


@pytest.mark.parametrize("name", ["samme", "ovr_adaboost"])
@pytest.mark.parametrize("method", ["isotonic", "none"])
def test_calibration_settings_round_trip(name: str, method: str) -> None:
    est, X = _fit(name, calibration=method, calibration_split="kfold", n_folds=3)
    assert est.calibration_info_["method"] == method
    model = est.to_inference()
    again = load_model(dump_model(model)[0])
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))


@pytest.mark.parametrize(
    ("name", "edit", "message"),
    [
        ("angle_adaboost", lambda m: m["scorer"].update(loss="hinge"), "loss"),
        ("angle_adaboost", lambda m: m["scorer"].update(n_classes=2), "class indices"),
        ("samme", lambda m: m["scorer"]["calibrators"].pop(), "calibrator states"),
        ("samme", lambda m: m["scorer"].update(score_kind="max"), "score_kind"),
        ("ovr_adaboost", lambda m: m["scorer"].update(n_classes=4), "member specs"),
    ],
)
def test_malformed_scorer_specs_are_refused(name: str, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    est, _ = _fit(name)
    blob = rezip(dump_model(est.to_inference())[0], edit)
    with pytest.raises(ArtifactError, match=message):
        load_model(blob)


# ------------------------------------------------------------------ Theorem 2
def test_theorem2_two_classes_recovers_the_binary_links() -> None:
    p1 = np.linspace(0.05, 0.95, 19)
    c = 1 - np.eye(2)
    s1 = 0.5 * np.log(p1 / (1 - p1))  # exponential loss: <f*, w_1> = 1/2 log(P1/P2)
    got = theorem2_probabilities(np.column_stack([s1, -s1]), c, "exponential")
    np.testing.assert_allclose(got[:, 0], p1, atol=1e-12)
    s1 = np.log(p1 / (1 - p1))  # logit loss: <f*, w_1> = log(P1/P2)
    got = theorem2_probabilities(np.column_stack([s1, -s1]), c, "logit")
    np.testing.assert_allclose(got[:, 0], p1, atol=1e-12)


@pytest.mark.parametrize("k", [3, 4, 7])
def test_theorem2_inverts_eq16_and_eq10(k: int) -> None:
    rng = np.random.default_rng(k)
    p = rng.dirichlet(np.ones(k), size=50)
    # Eq. 16 (0-1 costs, exponential loss) and back through Eq. 14
    s = np.log(1 - p).mean(axis=1, keepdims=True) - np.log(1 - p)
    np.testing.assert_allclose(theorem2_probabilities(s, 1 - np.eye(k), "exponential"), p,
                               atol=1e-10)  # fmt: skip
    # any invertible C: Eq. 10 gives sum_j C_jt P_j = M exp(-<f*, w_t>), so the
    # population scores are -log(expected cost) centred to sum to zero
    c = rng.uniform(0.5, 3.0, size=(k, k))
    np.fill_diagonal(c, 0.0)
    log_cost = np.log(p @ c)
    s = log_cost.mean(axis=1, keepdims=True) - log_cost
    np.testing.assert_allclose(theorem2_probabilities(s, c, "exponential"), p, atol=1e-9)


def test_theorem2_clips_impossible_estimates_and_refuses_singular_costs() -> None:
    got = theorem2_probabilities(np.array([[5.0, 5.0, -10.0]]), 1 - np.eye(3), "exponential")
    np.testing.assert_allclose(got, [[0.5, 0.5, 0.0]], atol=1e-6)  # raw Eq. 14: (1, 1, -1)
    singular = np.array([[0, 1, 1], [0, 0, 0], [1, 1, 0.0]])
    with pytest.raises(InvalidInput, match="invertible"):
        theorem2_probabilities(np.zeros((1, 3)), singular, "exponential")
    np.testing.assert_allclose(normalise_rows(np.zeros((2, 4))), 0.25)
