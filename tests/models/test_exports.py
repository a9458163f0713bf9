"""The curated public API of ``models`` (checked like httpx checks its exports)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import models

ROOT = Path(__file__).resolve().parents[2]

PUBLIC = [
    "AdaBoost",
    "brier_score",
    "CalibratedBoosting",
    "CalibratedMulticlass",
    "CoreError",
    "CostMatrix",
    "decide",
    "Decisions",
    "dump_model",
    "get_algorithm",
    "InferenceModel",
    "JOUSBoost",
    "load_model",
    "log_loss",
    "roc_auc",
    "SAMME",
    "total_cost",
]


def test_all_is_the_curated_list_sorted_case_insensitively() -> None:
    # Adding or removing a public name is a decision: change PUBLIC with it.
    assert models.__all__ == sorted(PUBLIC, key=str.casefold)
    assert sorted(models._EXPORTS) == sorted(PUBLIC)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_export_resolves_to_the_object_of_its_home_module(name: str) -> None:
    value = getattr(models, name)
    home = importlib.import_module(models._EXPORTS[name])
    assert value is getattr(home, name)
    assert name in dir(models)
    if isinstance(value, type) or callable(value):
        assert getattr(value, "__module__", "").startswith("models")


def test_star_import_gives_exactly_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from models import *", namespace)
    assert sorted(k for k in namespace if not k.startswith("__")) == sorted(PUBLIC)


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        models.Nope  # noqa: B018


def test_importing_the_package_loads_no_estimator() -> None:
    code = "import sys, json, models; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    loaded = [m for m in json.loads(out.stdout) if m.startswith(("models.", "sklearn"))]
    assert loaded == []
