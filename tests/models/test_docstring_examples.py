"""The examples in the core's docstrings run and print what they claim (doctest)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import models

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(models.__path__, prefix="models.") if not m.ispkg
)
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.IGNORE_EXCEPTION_DETAIL


def _examples(module_name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(module_name)
    return [t for t in doctest.DocTestFinder().find(module) if t.examples]


WITH_EXAMPLES = [name for name in MODULES if _examples(name)]


def test_the_main_estimators_and_the_decision_rule_have_examples() -> None:
    for name in (
        "models.boosting.adaboost",
        "models.boosting.calibrated",
        "models.decisions.rule",
        "models.variants.jous",
        "models.multiclass.samme",
    ):
        assert name in WITH_EXAMPLES, f"{name} has no runnable docstring example"


@pytest.mark.parametrize("module_name", WITH_EXAMPLES)
def test_docstring_examples_run(module_name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    for test in _examples(module_name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {module_name}"
