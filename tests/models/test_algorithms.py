"""The algorithm catalog: names, parameter validation, descriptions."""

from __future__ import annotations

import pytest

from models.algorithms import ParamSpec, algorithms, get_algorithm, validate_params
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
