"""``auto``'s one vocabulary: binary, multiclass and any-classes take the same names.

The names are those of the HTTP API (``calibration``, ``n_folds``, ``metric``,
``serve``); the binary estimator's former ``method`` is an alias of ``calibration``,
accepted by every ``auto`` estimator but never reported by ``get_params``.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.base import clone

from models.auto import (
    ALIASES,
    PARAMS,
    AutoCalibrated,
    AutoCalibratedBoosting,
    AutoCalibratedMulticlass,
)
from models.catalog.algorithms import Calibration, build_estimator
from models.exceptions import InvalidInput

ESTIMATORS = (AutoCalibratedBoosting, AutoCalibratedMulticlass, AutoCalibrated)
GRID = (("stump", 1, 20),)


def _names(cls: type) -> list[str]:
    """The constructor's parameters, in order (what get_params and clone see)."""
    return [
        p.name
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.name != "self" and p.kind != p.VAR_KEYWORD
    ]


def test_binary_and_multiclass_take_the_same_names_in_the_same_order() -> None:
    assert _names(AutoCalibratedBoosting) == _names(AutoCalibratedMulticlass) == list(PARAMS)
    # the any-classes estimator: the same, plus how it calibrates more than two classes
    assert [n for n in _names(AutoCalibrated) if n != "multiclass_calibration"] == list(PARAMS)
    for cls in ESTIMATORS:
        assert sorted(cls().get_params()) == sorted(_names(cls))


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize(("old", "new"), sorted(ALIASES.items()))
def test_every_estimator_accepts_every_former_name(cls: type, old: str, new: str) -> None:
    est = cls(**{old: "isotonic"})
    assert getattr(est, new) == "isotonic" == getattr(est, old)  # read back by either name
    assert old not in est.get_params() and est.get_params()[new] == "isotonic"
    assert est.set_params(**{old: "platt"}) is est and getattr(est, new) == "platt"
    setattr(est, old, "isotonic")  # an attribute of that name too (CalibratedBoosting's)
    assert getattr(est, new) == "isotonic"
    with pytest.raises(TypeError, match=f"{new}.*{old}"):
        cls(**{new: "isotonic", old: "platt"})  # two values for one setting
    # a name left at its default yields to its former name (no way to tell it was given)
    default = inspect.signature(cls.__init__).parameters[new].default
    assert getattr(cls(**{new: default, old: "isotonic"}), new) == "isotonic"
    with pytest.raises(TypeError, match=f"{new}.*{old}"):
        est.set_params(**{new: "platt", old: "isotonic"})
    assert getattr(cls(**{new: "isotonic", old: "isotonic"}), new) == "isotonic"


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_unknown_keywords_are_refused_as_python_refuses_them(cls: type) -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'calibraton'"):
        cls(calibraton="isotonic")
    with pytest.raises(ValueError, match="calibraton"):
        cls().set_params(calibraton="isotonic")


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_params_round_trip_through_clone_and_set_params(cls: type) -> None:
    est = cls(method="isotonic", n_folds=3, metric="brier", serve="refit", random_state=7)
    params = est.get_params()
    assert clone(est).get_params() == params
    assert cls().set_params(**params).get_params() == params
    assert "method=" not in repr(est) and "calibration='isotonic'" in repr(est)


def test_the_catalog_sets_the_request_calibration_under_the_vocabulary_names() -> None:
    """build_estimator sets every name of Calibration.as_params that auto takes: the
    request's calibration map and folds reach the estimator."""
    taken = set(Calibration().as_params()) & set(PARAMS)
    assert taken == {"calibration", "n_folds"}
    est = build_estimator(
        "auto", {"score_kind": "vote", "random_state": 0}, {}, Calibration("isotonic", n_folds=3)
    )
    assert est.get_params()["calibration"] == "isotonic" and est.get_params()["n_folds"] == 3


def test_the_former_name_trains_the_same_model() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + rng.normal(scale=0.5, size=300) > 0).astype(int)
    old = AutoCalibratedBoosting(GRID, method="isotonic", n_folds=3, random_state=0).fit(X, y)
    new = AutoCalibratedBoosting(GRID, calibration="isotonic", n_folds=3, random_state=0)
    new.fit(X, y)
    assert old.calibration_info_["method"] == "isotonic"  # the version's record keeps its key
    np.testing.assert_array_equal(old.predict_proba(X), new.predict_proba(X))
    with pytest.raises(InvalidInput, match="calibration must be one of"):
        AutoCalibratedMulticlass(GRID, method="none").fit(X, np.arange(300) % 3)
