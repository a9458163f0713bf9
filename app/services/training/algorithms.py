"""Use case: describe the trainable algorithms (names, parameters, properties)."""

from __future__ import annotations

from typing import Any

from models.catalog.algorithms import algorithms


def list_algorithms() -> list[dict[str, Any]]:
    """Every algorithm's JSON-able description, sorted by name."""
    return [spec.describe() for spec in algorithms().values()]
