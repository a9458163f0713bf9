"""The inference object's decision rules: threshold at request costs, change of skew."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from models.adaboost import AdaBoost
from models.calibrated import CalibratedAdaMEC
from models.decisions import CostMatrix
from models.exceptions import InvalidInput
from models.inference import InferenceModel, check_features, remove_training_skew


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
