"""The one vocabulary of ``auto``'s parameters, and their checks.

The binary (:class:`~models.auto.estimators.AutoCalibratedBoosting`), the multiclass
(:class:`~models.auto.estimators.AutoCalibratedMulticlass`) and the any-classes estimator
(:class:`~models.auto.estimators.AutoCalibrated`) take the same name for the same setting:
:data:`PARAMS` (the any-classes one adds ``multiclass_calibration``). The names are those
of the HTTP API (``calibration``, ``n_folds``, ``metric``, ``serve``; docs/training.md).

:data:`ALIASES` maps a former spelling to its name: the binary estimator took the
calibration map as ``method`` (the name :class:`~models.boosting.calibrated.CalibratedBoosting`
uses); every ``auto`` estimator still accepts it, in the constructor and in
``set_params``, and reads it back as an attribute, but ``get_params`` reports the one
name only, so ``clone`` and parameter round-trips see a single vocabulary.

Imports nothing of the estimators (they import it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from models.calibration.calibrators import CALIBRATION_METHODS
from models.exceptions import InvalidInput

__all__ = [
    "ALIASES",
    "METRICS",
    "MULTICLASS_CALIBRATIONS",
    "PARAMS",
    "SCORE_KINDS",
    "CALIBRATION_CHOICES",
    "SEARCH_METHODS",
    "SERVE",
    "canonical_params",
    "check_n_folds",
    "check_search_params",
]

PARAMS: tuple[str, ...] = (
    "grid",
    "calibration",
    "n_folds",
    "metric",
    "max_search_rows",
    "max_rounds",
    "time_budget",
    "score_kind",
    "random_state",
    "n_jobs",
    "serve",
)
"""The parameters of the binary and the multiclass estimator, in constructor order."""

ALIASES: dict[str, str] = {"method": "calibration"}
"""Former spelling -> name. ``method`` was the binary estimator's name of the map."""

METRICS = ("log_loss", "brier")
"""Out-of-fold losses of the calibrated probabilities that can choose the capacity."""
CALIBRATION_CHOICES = ("platt", "isotonic", "beta")
"""The maps ``calibration="auto"`` chooses among, by out-of-fold log loss. Venn-ABERS is
not one of them: among them it was picked on 10 of 48 trainings of the smaller shared
sets and raised the decision cost (``bench/quality/served_calibration.py``,
docs/training.md)."""
SEARCH_METHODS = (*(m for m in CALIBRATION_METHODS if m != "none"), "auto")
"""Calibration maps of two-class scores, or ``auto``: the map of least out-of-fold log
loss among :data:`CALIBRATION_CHOICES` (the search itself runs with Platt's); the
multiclass estimator adds ``multinomial``."""
SCORE_KINDS = ("vote", "logistic")
"""Raw scores that are calibrated: vote fractions (Eq. 24) or the logistic score."""
SERVE = ("folds", "refit")
"""What serves a model: the fold boosters (small data: the search's k; large data: the
final cross-fitting's) with the map fitted on their out-of-fold scores
(:mod:`models.inference.fold_ensemble`), or one booster refitted on all rows with that map."""
MULTICLASS_CALIBRATIONS = ("multinomial", "per_class")
"""How :class:`~models.auto.estimators.AutoCalibrated` calibrates more than two classes:
one softmax map of the K vote fractions (:mod:`models.calibration.multinomial`, the
default) or one Platt or isotonic map per class, normalised (``calibration``)."""


def canonical_params(
    owner: str, given: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``given`` under the vocabulary's names (each alias of :data:`ALIASES` renamed).

    ``defaults`` (the constructor's): a name left at its default yields to its alias;
    without them (``set_params``) both must agree. Naming a setting twice with two
    values raises TypeError, as Python does for a keyword given twice.
    """
    out = {k: v for k, v in given.items() if k not in ALIASES}
    for old, new in ALIASES.items():
        if old not in given:
            continue
        explicit = new in given and (defaults is None or given[new] != defaults.get(new))
        if explicit and given[new] != given[old]:
            raise TypeError(
                f"{owner}: {new}={given[new]!r} and its former name {old}={given[old]!r} "
                f"disagree; give {new} only"
            )
        out[new] = given[old]
    return out


def check_aliases(owner: str, extra: Mapping[str, Any]) -> None:
    """Keyword arguments beyond the signature must be aliases (TypeError otherwise)."""
    unknown = sorted(set(extra) - set(ALIASES))
    if unknown:
        raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r}")


def check_n_folds(k: Any) -> None:
    if isinstance(k, bool) or int(k) != k or int(k) < 2:
        raise InvalidInput(f"n_folds must be an integer >= 2, got {k!r}")


def check_search_params(
    metric: Any,
    calibration: Any,
    methods: tuple[str, ...],
    n_folds: Any,
    max_search_rows: Any,
) -> None:
    """The settings every fit checks first (InvalidInput naming the parameter)."""
    if metric not in METRICS:
        raise InvalidInput(f"metric must be one of {list(METRICS)}, got {metric!r}")
    if calibration not in methods:
        raise InvalidInput(
            f"calibration must be one of {list(methods)} with automatic capacity "
            f"(the rounds are chosen on calibrated probabilities), got {calibration!r}"
        )
    check_n_folds(n_folds)
    if int(max_search_rows) < 100:
        raise InvalidInput(f"max_search_rows must be >= 100, got {max_search_rows!r}")


def check_serving_params(score_kind: Any, serve: Any) -> None:
    if score_kind not in SCORE_KINDS:
        raise InvalidInput(f"score_kind must be 'vote' or 'logistic', got {score_kind!r}")
    if serve not in SERVE:
        raise InvalidInput(f"serve must be one of {list(SERVE)}, got {serve!r}")
