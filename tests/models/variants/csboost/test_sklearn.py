"""scikit-learn's estimator checks for the csboost estimators (none expected to fail)."""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from models.variants.csboost.adadb import AdaDB
from models.variants.csboost.cs_adaboost import CostSensitiveAdaBoost
from models.variants.csboost.cs_logitboost import CostSensitiveLogitBoost
from models.variants.csboost.cs_realboost import CostSensitiveRealBoost


@parametrize_with_checks(
    [
        CostSensitiveAdaBoost(n_estimators=10, c_fn=2.0),
        AdaDB(n_estimators=10, c_fn=2.0),
        CostSensitiveRealBoost(n_estimators=10, c_fn=2.0),
        CostSensitiveLogitBoost(n_estimators=10, c_fp=3.0, weights="symmetric"),
        CostSensitiveRealBoost(n_estimators=10, c_fn=2.0, weak_learner="histogram"),
        CostSensitiveLogitBoost(n_estimators=10, c_fp=3.0, weak_learner="linear"),
    ],
    expected_failed_checks=lambda est: {},
)
def test_sklearn_compatible(estimator, check) -> None:  # type: ignore[no-untyped-def]
    check(estimator)
