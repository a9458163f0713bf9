"""Cost settings among named actions: a request's ``actions`` and ``(K, A)`` costs, and
two-class named costs with ``c_review``, checked into arrays for
:func:`models.decisions.actions.decide_actions`.

Every error is a 400 ``INVALID_ARGUMENT`` naming the request field: ``actions`` (names
not distinct, or not one per cost column), the cost field (rows not ``K``, a bad entry,
naming the row of per-row costs) or ``costs.c_review`` (a multiclass model, a bad value).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from app.errors import InvalidArgument
from app.services.common.core_errors import core_errors
from models.decisions.actions import (
    review_matrix,
    validate_action_matrix,
    validate_action_names,
    validate_row_action_matrices,
)

__all__ = ["REVIEW_ACTIONS", "REVIEW_CLASSES", "action_matrix", "action_names", "with_review"]

#: The actions of two-class named costs with ``c_review``: decide ``classes[0]``, decide
#: ``classes[1]``, or send to review (``c_review`` whatever the truth); in this order,
#: so a tie goes to the negative class, then to the positive one, review last.
REVIEW_ACTIONS = ("negative", "positive", "review")
#: The class each of them stands for (-1: none).
REVIEW_CLASSES = (0, 1, -1)


def action_names(actions: Any, field: str) -> tuple[str, ...]:
    """The request's action names, checked (distinct, non-empty); errors name ``field``."""
    with core_errors(field):
        return validate_action_names(actions)


def action_matrix(
    a: Any, names: tuple[str, ...], n_rows: int, n_classes: int, *, field: str, actions_field: str
) -> np.ndarray:
    """One ``(K, A)`` matrix, or per-row ``(n, K, A)`` matrices (told by the number of
    dimensions), for the named actions. A column count other than the number of names is
    the names' error (``actions_field``); anything else the costs' (``field``)."""
    with core_errors(field):
        try:
            c = np.asarray(a, dtype=np.float64)
        except (TypeError, ValueError):
            validate_action_matrix(a, n_classes, names)  # names the ragged row
            raise
        rows_ok = c.ndim == 2 or (c.ndim == 3 and c.shape[0] == n_rows)
        if rows_ok and c.shape[-2] == n_classes and c.shape[-1] != len(names):
            raise InvalidArgument(
                f"{actions_field}: {len(names)} action names for {c.shape[-1]} cost columns; "
                "expected one name per column of the cost matrix (columns = actions, in the "
                "order named)",
                field=actions_field,
            )
        if c.ndim == 3:
            return validate_row_action_matrices(c, n_rows, n_classes, names)[0]
        return validate_action_matrix(c, n_classes, names)[0]


def with_review(
    binary: np.ndarray, c_review: Sequence[float] | np.ndarray | float, field: str
) -> np.ndarray:
    """Two-class ``(.., 2, 2)`` costs with the review column ``c_review`` (a number or one
    per row): ``(.., 2, 3)``, actions :data:`REVIEW_ACTIONS`. Errors name ``field``."""
    with core_errors(field):
        try:
            return review_matrix(binary, c_review)
        except ValueError as exc:  # the core's message names c_review or the row
            detail = str(exc)
            if detail.startswith("c_review:"):
                detail = detail[len("c_review:") :].lstrip()
            raise InvalidArgument(f"{field}: {detail}", field=field) from None


def multiclass_review(field: str, n_classes: int) -> InvalidArgument:
    """The error of ``c_review`` for a model of more than two classes."""
    return InvalidArgument(
        f"{field}: c_review is for two-class models, this model has {n_classes} classes; "
        "for a review action among more classes, name the actions in `actions` and give "
        f"their costs as a {n_classes} x A cost_matrix",
        field=field,
    )
