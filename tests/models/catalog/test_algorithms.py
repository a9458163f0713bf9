"""The algorithm catalog: names, parameter validation, descriptions, assembly."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from models.boosting.calibrated import CalibratedBoosting
from models.catalog.algorithms import (
    Calibration,
    ParamSpec,
    algorithms,
    build_estimator,
    get_algorithm,
    trained_booster,
    validate_params,
)
from models.exceptions import InvalidInput


def test_catalog_lists_adaboost_with_its_properties() -> None:
    spec = get_algorithm("adaboost")
    d = spec.describe()
    assert d["trains_with_costs"] is False and d["family"] == "binary"
    assert d["properties"] == {
        "fgd_consistent": True,
        "cost_consistent": True,
        "asymmetry_preserving": True,
    }
    assert "adaboost" in algorithms()


def test_unknown_algorithm_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidInput, match=r"unknown 'xgboost'; expected one of \[.*'adaboost'"):
        get_algorithm("xgboost")


def test_params_are_checked_and_defaulted() -> None:
    spec = get_algorithm("adaboost")
    assert validate_params(spec, None) == {}
    with pytest.raises(InvalidInput, match=r"unknown parameter\(s\) \['c_fp'\].*valid: none"):
        validate_params(spec, {"c_fp": 1})


@pytest.mark.parametrize(
    ("param", "value", "message"),
    [
        (
            ParamSpec("c_fn", "float", 1.0, "", minimum=0, exclusive_minimum=True),
            0,
            r"params.c_fn: expected a value in \(0, inf\], got 0",
        ),
        (ParamSpec("delta", "int", 10, "", minimum=2), 2.5, "expected an integer"),
        (ParamSpec("delta", "int", 10, "", minimum=2), True, "expected a number"),
        (ParamSpec("nu", "float", 1.0, "", minimum=0), float("nan"), "finite"),
        (ParamSpec("mode", "str", "a", "", choices=("a", "b")), "c", r"one of \['a', 'b'\]"),
        (ParamSpec("C", "matrix", None, ""), [[0, 1], [1]], r"C\[1\]: expected 2 entries"),
    ],
)
def test_param_spec_refuses_bad_values(param: ParamSpec, value: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        param.check(value)


def test_param_spec_converts() -> None:
    assert ParamSpec("d", "int", 1, "", minimum=1).check(3.0) == 3
    assert ParamSpec("C", "matrix", None, "").check([[0, 1], [2, 0]]) == [[0.0, 1.0], [2.0, 0.0]]


COMMON = {
    "n_estimators": 3,
    "weak_learner": "stump",
    "max_depth": 3,
    "score_kind": "vote",
    "random_state": 0,
}


@pytest.mark.parametrize("name", sorted(algorithms()))
def test_the_catalog_assembles_an_estimator_ready_to_serve(name: str) -> None:
    """Plain binary boosters come wrapped in the calibration asked for; self-serving
    estimators get the calibration settings among their parameters."""
    spec = get_algorithm(name)
    common = {**COMMON, "n_estimators": None} if name == "auto" else COMMON
    calibration = Calibration(method="isotonic", split="holdout", fraction=0.25, n_folds=3)
    estimator = build_estimator(name, common, None, calibration)
    assert callable(getattr(estimator, "to_inference", None))
    bare = spec.build(dict(common), validate_params(spec, None))
    if hasattr(bare, "to_inference"):
        assert type(estimator) is type(bare)
        known = bare.get_params(deep=False)
        for key, value in calibration.as_params().items():
            if key in known:
                assert estimator.get_params(deep=False)[key] == value  # type: ignore[attr-defined]
    else:
        assert isinstance(estimator, CalibratedBoosting)
        assert (estimator.method, estimator.split) == ("isotonic", "holdout")
        assert (estimator.calibration_fraction, estimator.n_folds) == (0.25, 3)
        assert estimator.random_state == 0
        assert type(estimator.estimator) is type(bare)


def test_a_fitted_catalog_estimator_serves_and_exposes_its_booster() -> None:
    X, y = make_classification(n_samples=120, n_features=4, random_state=0)
    estimator = build_estimator("adaboost", COMMON).fit(X, y)
    model = estimator.to_inference(["a", "b", "c", "d"])
    np.testing.assert_allclose(model.predict_proba(X), estimator.predict_proba(X))
    assert trained_booster(estimator).n_estimators_ <= 3
    own = build_estimator("jous", COMMON).fit(X, y)
    assert trained_booster(own) is own


def test_the_catalog_refuses_unknown_parameters_when_assembling() -> None:
    with pytest.raises(InvalidInput, match="unknown parameter"):
        build_estimator("adaboost", COMMON, {"nope": 1})
