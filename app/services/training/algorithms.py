"""Use case: describe the trainable algorithms (names, parameters, properties) and the
weak learners they may be trained with."""

from __future__ import annotations

from typing import Any

from models.catalog.algorithms import algorithms
from models.weak import WEAK_LEARNERS


def list_algorithms() -> list[dict[str, Any]]:
    """Every algorithm's JSON-able description, sorted by name."""
    return [spec.describe() for spec in algorithms().values()]


def weak_learner_names() -> tuple[str, ...]:
    """The ``weak_learner`` values a training request may name: every registered weak
    learner (:data:`models.weak.WEAK_LEARNERS`); each algorithm lists those it fits."""
    return tuple(WEAK_LEARNERS)
