"""One entry of the algorithm catalog: :class:`AlgorithmSpec` and its :class:`ParamSpec`.

Algorithm modules describe themselves with these value types (a module-level ``SPEC``
or ``SPECS``); :mod:`models.catalog.algorithms` collects them, validates parameters and
assembles the estimator to train. Kept apart from the catalog so that algorithm modules
never import the catalog (which imports the calibrated wrapper, which imports AdaBoost).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from models.exceptions import InvalidInput

__all__ = ["PARAM_TYPES", "AlgorithmSpec", "ParamSpec"]

PARAM_TYPES = ("int", "float", "str", "bool", "matrix")


@dataclass(frozen=True)
class ParamSpec:
    """One algorithm-specific parameter.

    ``type`` is one of ``int``, ``float``, ``str``, ``bool``, ``matrix`` (a list of
    lists of floats). Ranges are inclusive unless ``exclusive_minimum`` is set.
    """

    name: str
    type: str
    default: Any
    description: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple[Any, ...] | None = None

    def check(self, value: Any) -> Any:
        """Return ``value`` converted to this parameter's type, or raise InvalidInput."""
        where = f"params.{self.name}"
        if self.type == "bool":
            if not isinstance(value, bool):
                raise InvalidInput(f"{where}: expected true or false, got {value!r}")
            return value
        if self.type == "str":
            if not isinstance(value, str) or (self.choices and value not in self.choices):
                raise InvalidInput(
                    f"{where}: expected one of {list(self.choices or [])}, got {value!r}"
                )
            return value
        if self.type == "matrix":
            return _check_matrix(where, value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidInput(f"{where}: expected a number, got {value!r}")
        if self.type == "int":
            if float(value) != int(value):
                raise InvalidInput(f"{where}: expected an integer, got {value!r}")
            value = int(value)
        value_f = float(value)
        if not math.isfinite(value_f):
            raise InvalidInput(f"{where}: expected a finite number, got {value!r}")
        low_ok = self.minimum is None or (
            value_f > self.minimum if self.exclusive_minimum else value_f >= self.minimum
        )
        if not low_ok or (self.maximum is not None and value_f > self.maximum):
            raise InvalidInput(f"{where}: expected a value in {self.range_text()}, got {value!r}")
        return value if self.type == "int" else value_f

    def range_text(self) -> str:
        lo = "-inf" if self.minimum is None else f"{self.minimum:g}"
        hi = "inf" if self.maximum is None else f"{self.maximum:g}"
        return f"{'(' if self.exclusive_minimum else '['}{lo}, {hi}]"

    def describe(self) -> dict[str, Any]:
        """JSON-able description for ``GET /v1/algorithms``."""
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "default": self.default,
            "description": self.description,
        }
        if self.minimum is not None or self.maximum is not None:
            out["range"] = self.range_text()
        if self.choices:
            out["choices"] = list(self.choices)
        return out


def _check_matrix(where: str, value: Any) -> list[list[float]]:
    if not isinstance(value, list) or not value or not all(isinstance(r, list) for r in value):
        raise InvalidInput(f"{where}: expected a square matrix (list of lists of numbers)")
    k = len(value)
    out: list[list[float]] = []
    for i, row in enumerate(value):
        if len(row) != k:
            raise InvalidInput(
                f"{where}[{i}]: expected {k} entries (a square matrix), got {len(row)}"
            )
        try:
            out.append([float(v) for v in row])
        except (TypeError, ValueError):
            raise InvalidInput(f"{where}[{i}]: expected numbers") from None
    return out


@dataclass(frozen=True)
class AlgorithmSpec:
    """Description of one trainable algorithm (see the module docstring)."""

    name: str
    title: str
    family: str  # "binary" | "multiclass" | "any" (two or more classes)
    source: str
    equations: str
    trains_with_costs: bool
    decision_rule: str
    build: Callable[..., Any]
    params: tuple[ParamSpec, ...] = ()
    properties: Mapping[str, bool] | None = None
    # Whether the probabilities that DEFINE the algorithm are calibrated estimates of
    # P(y | x): true for the algorithms the service wraps in the request's calibration map
    # (their raw score is only an input to it; calibration "none" serves the raw score)
    # and for JOUS (calibrated by its quantile construction); false where the algorithm
    # is its uncalibrated probability link (P-AdaBoost's p = 1/(1+exp(-2F)), Eq. 1 of
    # Mease et al., which they show diverges to 0/1) or has no probabilities (angle-based).
    calibrated_probabilities: bool = True
    notes: str = ""
    aliases: tuple[str, ...] = field(default=())
    # The ``weak_learner`` values this algorithm fits (its paper allows a general weak
    # learner for all of them unless ``notes`` says otherwise): "binary", every
    # registered learner with a two-class trainer (models.weak.WEAK_LEARNERS, read by the
    # catalog when it lists the algorithms); "multiclass", every one with a K-class
    # trainer; or exactly the names given.
    weak_learners: tuple[str, ...] | Literal["binary", "multiclass"] = "binary"

    def describe(self) -> dict[str, Any]:
        """JSON-able description for ``GET /v1/algorithms``."""
        return {
            "name": self.name,
            "title": self.title,
            "family": self.family,
            "source": self.source,
            "equations": self.equations,
            "trains_with_costs": self.trains_with_costs,
            "decision_rule": self.decision_rule,
            "calibrated_probabilities": self.calibrated_probabilities,
            "properties": None if self.properties is None else dict(self.properties),
            "params": [p.describe() for p in self.params],
            "weak_learners": []
            if isinstance(self.weak_learners, str)
            else list(self.weak_learners),
            "notes": self.notes,
        }
