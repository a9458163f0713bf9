"""The registries of weak learners and ensemble layouts: what derives from them, and
what registering refuses."""

from __future__ import annotations

import numpy as np
import pytest

from models.auto.grid import DEFAULT_GRID, MULTICLASS_GRID, default_grid, unit_cost
from models.catalog.algorithms import algorithms
from models.inference.layouts import ENSEMBLE_LAYOUTS, get_layout, register_layout
from models.specs.weak_learner import GridPlace, WeakLearnerSpec
from models.weak import WEAK_LEARNERS, register_weak_learner, unregister_weak_learner
from models.weak.registry import binary_names, multiclass_names


def test_the_built_ins_and_what_derives_from_them() -> None:
    assert list(WEAK_LEARNERS) == ["stump", "tree", "logistic", "oblique", "histogram", "linear"]
    assert list(ENSEMBLE_LAYOUTS) == ["stumps", "trees", "linear", "oblique"]
    assert binary_names() == ("stump", "tree", "logistic", "oblique")
    assert multiclass_names() == ("stump", "tree", "oblique")
    assert DEFAULT_GRID == (
        ("stump", 1, 400),
        ("tree", 3, 200),
        ("tree", 6, 100),
        ("oblique", 1, 50),
    )
    assert MULTICLASS_GRID == (
        ("stump", 1, 400), ("tree", 3, 200), ("tree", 6, 300), ("oblique", 1, 50),
    )  # fmt: skip
    assert [unit_cost(w, d) for w, d, _ in DEFAULT_GRID] == [1.0, 3.0, 6.0, 2.0]
    assert algorithms()["adaboost"].weak_learners == binary_names()
    assert algorithms()["samme"].weak_learners == multiclass_names()


def test_a_registered_learner_joins_the_grid_and_the_catalog_until_removed() -> None:
    spec = WeakLearnerSpec(
        name="wide_stump",
        description="a stump with a place between stumps and trees",
        layout="stumps",
        binary=WEAK_LEARNERS["stump"].binary,
        params=("max_bins", "criterion"),
        grid=GridPlace(order=0, binary=((1, 30),), multiclass=()),
    )
    register_weak_learner(spec)
    try:
        assert default_grid(2)[:2] == (("stump", 1, 400), ("wide_stump", 1, 30))
        assert "wide_stump" not in [e[0] for e in default_grid(3)]
        assert "wide_stump" in algorithms()["adaboost"].weak_learners
        assert "wide_stump" not in algorithms()["samme"].weak_learners
        with pytest.raises(ValueError, match="already registered"):
            register_weak_learner(spec)
    finally:
        unregister_weak_learner("wide_stump")
    assert default_grid(2) == DEFAULT_GRID and "wide_stump" not in binary_names()


def test_registering_refuses_unknown_layouts_settings_and_taken_names() -> None:
    with pytest.raises(ValueError, match="layout 'nope'"):
        register_weak_learner(WeakLearnerSpec("x", "x", "nope", None))
    with pytest.raises(ValueError, match="unknown settings"):
        WeakLearnerSpec("x", "x", "stumps", None, params=("depth",))
    with pytest.raises(ValueError, match="already registered"):
        register_layout(get_layout("trees"))
    assert "x" not in WEAK_LEARNERS


def test_an_unknown_layout_is_an_artifact_error_naming_the_registered_ones() -> None:
    from models.exceptions import ArtifactError
    from models.inference.ensemble import Ensemble

    with pytest.raises(ArtifactError, match=r"kind must be one of \['linear', 'oblique'"):
        Ensemble("forest", np.ones(1), {}, 1)
