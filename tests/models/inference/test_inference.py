"""The inference object's decision rules: threshold at request costs, change of skew."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedAdaMEC
from models.decisions.rule import CostMatrix
from models.exceptions import InvalidInput
from models.inference.model import InferenceModel, check_features, remove_training_skew


@pytest.fixture(scope="module")
def model() -> InferenceModel:
    X, y = make_classification(300, 4, random_state=0)
    return CalibratedAdaMEC(AdaBoost(n_estimators=10), random_state=0).fit(X, y).to_inference()


def test_skew_change_equals_thresholding_at_z_prime() -> None:
    """Section 5.1: z_dep = z_tr z' / (z_tr z' + (1 - z_tr)(1 - z'))."""
    rng = np.random.default_rng(0)
    p = rng.random(2000)
    proba = np.column_stack([1 - p, p])
    for z_tr in (0.1, 0.3, 0.5, 0.8):
        adjusted = remove_training_skew(proba, z_tr)[:, 1]
        for z_prime in (0.05, 0.2, 0.5, 0.9):
            z_dep = z_tr * z_prime / (z_tr * z_prime + (1 - z_tr) * (1 - z_prime))
            np.testing.assert_array_equal(adjusted >= z_dep - 1e-12, p >= z_prime - 1e-12)


def test_skew_change_with_training_costs_is_the_sign_rule(model: InferenceModel) -> None:
    X = make_classification(300, 4, random_state=0)[0]
    costs = CostMatrix.from_binary(c_fp=1, c_fn=9).matrix
    skewed = InferenceModel(
        model.classes,
        None,
        model.scorer,
        model.train_priors,
        training_costs=costs,
        rule="skew_change",
    )
    assert skewed.training_skew == pytest.approx(0.1)
    d = skewed.decide(X, costs)  # deployed under its own training costs
    p1 = model.predict_proba(X)[:, 1]
    np.testing.assert_array_equal(d.labels_index, (p1 >= 0.5).astype(int))


def test_rule_validation(model: InferenceModel) -> None:
    with pytest.raises(InvalidInput, match="skew_change"):
        InferenceModel(model.classes, None, model.scorer, model.train_priors, rule="skew_change")
    with pytest.raises(InvalidInput, match="rule"):
        InferenceModel(model.classes, None, model.scorer, model.train_priors, rule="vibes")


def test_check_features_messages() -> None:
    with pytest.raises(InvalidInput, match="each row must have 3 features, got 2"):
        check_features([[1, 2]], 3)
    with pytest.raises(InvalidInput, match="row 1, feature 0: infinite"):
        check_features([[1, 2], [np.inf, 1]], 2)
    assert np.isnan(check_features([[None, 1.0]], 2)[0, 0])


def test_scored_proba_returns_the_score_the_calibrator_took(model: InferenceModel) -> None:
    X, _ = make_classification(50, 4, random_state=1)
    priors = [0.3, 0.7]
    proba, raw = model.scored_proba(X, priors)
    np.testing.assert_array_equal(proba, model.decision_proba(X, priors))
    assert raw is not None and raw.shape == (50,)
    scorer = model.scorer
    np.testing.assert_array_equal(raw, scorer.ensemble.score(X, scorer.score_kind))  # type: ignore[attr-defined]
    np.testing.assert_array_equal(scorer.proba_from_raw(raw), model.predict_proba(X))  # type: ignore[attr-defined]


def test_scored_proba_of_per_class_calibration_has_one_score_per_class() -> None:
    from models.multiclass.calibrated import CalibratedMulticlass
    from models.multiclass.samme import SAMME

    X, y = make_classification(
        300, 5, n_informative=4, n_redundant=1, n_classes=3, n_clusters_per_class=1,
        random_state=4,
    )  # fmt: skip
    m = CalibratedMulticlass(SAMME(10), random_state=0).fit(X, y).to_inference()
    proba, raw = m.scored_proba(X[:20])
    assert raw is not None and raw.shape == (20, 3)
    np.testing.assert_array_equal(proba, m.predict_proba(X[:20]))
