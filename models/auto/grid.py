"""The candidate capacities: the grids of (weak learner, depth, rounds) ``auto`` searches.

A grid entry is ``(weak_learner, max_depth, maximum rounds)``; a grid lists entries by
increasing capacity. This module holds the default grids (made of the registered weak
learners' :class:`~models.specs.weak_learner.GridPlace`, :func:`default_grid`), the check
of a given one (and its cap by ``max_rounds``), the relative cost of a round of each
entry (the learner's ``round_cost``), and the rule that offers the small-data entries
(the oblique learner's) only on small data (:data:`OBLIQUE_MAX_CELLS`, read at call
time so that a caller may lower it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.exceptions import InvalidInput
from models.features.binning import is_codes
from models.specs.weak_learner import WeakLearnerSpec
from models.weak import WEAK_LEARNERS

__all__ = [
    "DEFAULT_GRID",
    "MULTICLASS_GRID",
    "OBLIQUE_MAX_CELLS",
    "Entry",
    "checked_grid",
    "default_grid",
    "small_data_only",
    "offers_oblique",
    "progress_units",
    "unit_cost",
]

Entry = tuple[str, int, int]
"""(weak_learner, max_depth, maximum rounds)."""


def default_grid(n_classes: int) -> tuple[Entry, ...]:
    """The default grid for ``n_classes`` classes: every registered learner with a
    :class:`~models.specs.weak_learner.GridPlace`, by its ``order``, with its entries."""
    placed = sorted(
        (s for s in WEAK_LEARNERS.values() if s.grid is not None),
        key=lambda s: s.grid.order,  # type: ignore[union-attr]
    )
    return tuple(
        (s.name, depth, rounds)
        for s in placed
        for depth, rounds in (s.grid.binary if n_classes == 2 else s.grid.multiclass)  # type: ignore[union-attr]
    )


DEFAULT_GRID: tuple[Entry, ...] = default_grid(2)
"""The built-in learners' grid for two classes (the estimators' default ``grid``;
``auto`` in the catalog reads :func:`default_grid` when it fits, so that a learner
registered later with a place joins it), by increasing capacity:
``("stump", 1, 400), ("tree", 3, 200), ("tree", 6, 100), ("oblique", 1, 50)``.

Stumps with many rounds are the additive end (a generalised additive model); depth 3
captures pairwise-to-three-way interactions; depth 6 strong interactions. The round caps
shrink as depth grows so that every entry costs about the same: a histogram tree round
costs roughly one stump round per level.

The last entry, the oblique learner (:mod:`models.weak.oblique`: ``sign(w.x + b)`` of a
weighted ridge logistic regression on all features), is the linear end: a strong learner
that needs few rounds. It is tried only on small data (:data:`OBLIQUE_MAX_CELLS`, raw
values), after the axis-aligned entries and outside their stopping rule, so it cannot
change which of them is best; it is chosen only when its out-of-fold loss is lower.
"""

OBLIQUE_MAX_CELLS = 200_000
"""The oblique entry is offered when the search's rows x features x logistic fits per
round (1 with two classes, K with K > 2: one per class) is at most this (its Newton steps
cost ``O(rows x features^2)`` per fit). Before 2026-11-27 the K was not counted: on
satimage (4,504 search rows x 36 features x 6 classes) the oblique entry then took 106 of
the search's 141 s and was not chosen."""

MULTICLASS_GRID: tuple[Entry, ...] = default_grid(3)
"""The grid for more than two classes: depth-6 trees get up to 300 rounds. With 100
(:data:`DEFAULT_GRID`) the search chose depth 6 at or next to the cap on every seed of
vehicle, splice and satimage; offered depth 6 with up to 300 rounds (and depth 8 with
200, chosen once) it chose 170 to 300 rounds, and splice went from 1.124 to 1.020 times
the best baseline's cost, vehicle from 1.081 to 1.070
(bench/results/multiclass-calibration-2026-11-25.md)."""


def checked_grid(grid: Any, max_rounds: Any) -> list[Entry]:
    """``grid`` as a list of entries, each capped at ``max_rounds`` rounds when given.

    Raises
    ------
    InvalidInput
        ``max_rounds`` not an integer >= 1 (or None), an empty grid, or an entry with
        rounds < 1 or a depth outside [1, 8].
    """
    entries = [(str(w), int(d), int(m)) for w, d, m in grid]
    if max_rounds is not None:  # the service's COSTWISE_MAX_ROUNDS bounds every entry
        cap = max_rounds
        if isinstance(cap, bool) or not isinstance(cap, int | np.integer) or cap < 1:
            raise InvalidInput(f"max_rounds must be an integer >= 1 or None, got {cap!r}")
        entries = [(w, d, min(m, int(cap))) for w, d, m in entries]
    if not entries:
        raise InvalidInput("grid must hold at least one (weak_learner, max_depth, rounds)")
    for w, d, m in entries:
        if m < 1 or not 1 <= d <= 8:
            raise InvalidInput(f"grid entry {(w, d, m)!r}: rounds >= 1, depth in [1, 8]")
    return entries


def _learner(weak_learner: str) -> WeakLearnerSpec | None:
    return WEAK_LEARNERS.get(weak_learner)  # None: refused when the entry is fitted


def small_data_only(weak_learner: str) -> bool:
    """Whether the learner's entries are tried only on small data, after the others and
    outside their stopping rule (:attr:`GridPlace.small_data_only`: the oblique learner)."""
    spec = _learner(weak_learner)
    return spec is not None and spec.grid is not None and spec.grid.small_data_only


def unit_cost(weak_learner: str, depth: int) -> float:
    """Relative cost of one round (stump = 1): the learner's ``round_cost``, times the
    depth for a learner that reads it (a histogram tree costs about one per level, an
    oblique learner, a few Newton steps on small data, about two)."""
    spec = _learner(weak_learner)
    return 1.0 if spec is None else spec.unit_cost(depth)


def offers_oblique(grid: list[Entry], X: Any, search_rows: int, n_classes: int) -> bool:
    """Whether the search tries the grid's small-data entries (oblique) on these rows.

    Only on raw values (not pre-binned codes) whose search rows x features x logistic fits
    per round is at most :data:`OBLIQUE_MAX_CELLS`; a grid of small-data entries only is
    always tried (the caller's explicit choice).
    """
    fits = 1 if n_classes == 2 else n_classes  # oblique fits per round
    cells = search_rows * X.shape[1] * fits
    return (not is_codes(X) and cells <= OBLIQUE_MAX_CELLS) or all(
        small_data_only(e[0]) for e in grid
    )


def progress_units(grid: list[Entry], n_folds: int) -> tuple[list[int], int]:
    """Progress units of a fit: per grid entry its fold fits (``n_folds x rounds``), and
    the final stage (``(n_folds + 1) x`` the largest round cap)."""
    k = int(n_folds)
    search = [k * m for _, _, m in grid]
    final = (k + 1) * max(m for _, _, m in grid)
    return search, final
