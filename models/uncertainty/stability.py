"""Whether a decision survives its probability's interval.

Two classes: the expected cost of every decision (a class, or an action of a ``(2, A)``
matrix) is linear in ``p1``, so the decision of least expected cost, as ``p1`` runs over
``[0, 1]``, takes each decision on one interval of ``p1`` (the lower envelope of lines is
concave). The decision is therefore the same everywhere in ``[low, high]`` exactly when
it is the same at ``low`` and at ``high``: a row is ``stable`` when the decisions at both
ends (with the same tie rules as the served decision: :func:`~models.decisions.rule.decide`
for a square matrix, :func:`~models.decisions.actions.decide_actions` among actions)
are equal.
"""

from __future__ import annotations

import numpy as np

from models.decisions.actions import decide_actions
from models.decisions.rule import decide

__all__ = ["stable_decisions"]


def _two_class(p1: np.ndarray) -> np.ndarray:
    return np.column_stack([1.0 - p1, p1])


def stable_decisions(
    low: np.ndarray, high: np.ndarray, costs: np.ndarray, *, actions: bool = False
) -> np.ndarray:
    """Per row, whether the least-expected-cost decision is the same at ``p1 = low`` and
    at ``p1 = high``, shape (n,), bool.

    ``costs``: one ``(2, 2)`` matrix or an ``(n, 2, 2)`` stack (the decision is a class),
    or with ``actions=True`` one ``(2, A)`` matrix or an ``(n, 2, A)`` stack (the decision
    is an action), already validated.
    """
    lo, hi = _two_class(np.asarray(low, float)), _two_class(np.asarray(high, float))
    if actions:
        a = decide_actions(lo, costs, validated=True).action_index
        b = decide_actions(hi, costs, validated=True).action_index
    else:
        a = decide(lo, costs, validated=True).labels_index
        b = decide(hi, costs, validated=True).labels_index
    return np.asarray(a == b)
