"""The candidate capacities: the grids of (weak learner, depth, rounds) ``auto`` searches.

A grid entry is ``(weak_learner, max_depth, maximum rounds)``; a grid lists entries by
increasing capacity. This module holds the default grids, the check of a given one (and
its cap by ``max_rounds``), the relative cost of a round of each entry, and the rule that
offers the oblique entry only on small data (:data:`OBLIQUE_MAX_CELLS`, read at call
time so that a caller may lower it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.exceptions import InvalidInput
from models.features.binning import is_codes

__all__ = [
    "DEFAULT_GRID",
    "MULTICLASS_GRID",
    "OBLIQUE_MAX_CELLS",
    "Entry",
    "checked_grid",
    "offers_oblique",
    "progress_units",
    "unit_cost",
]

Entry = tuple[str, int, int]
"""(weak_learner, max_depth, maximum rounds)."""

DEFAULT_GRID: tuple[tuple[str, int, int], ...] = (
    ("stump", 1, 400),
    ("tree", 3, 200),
    ("tree", 6, 100),
    ("oblique", 1, 50),
)
"""(weak_learner, max_depth, maximum rounds), by increasing capacity.

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

MULTICLASS_GRID: tuple[tuple[str, int, int], ...] = (
    ("stump", 1, 400),
    ("tree", 3, 200),
    ("tree", 6, 300),
    ("oblique", 1, 50),
)
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


def unit_cost(weak_learner: str, depth: int) -> float:
    """Relative cost of one round (stump = 1); a histogram tree costs about one per level,
    an oblique learner (a few Newton steps on small data) about two."""
    if weak_learner == "oblique":
        return 2.0
    return float(depth) if weak_learner == "tree" else 1.0


def offers_oblique(grid: list[Entry], X: Any, search_rows: int, n_classes: int) -> bool:
    """Whether the search tries the grid's oblique entries on these rows.

    Only on raw values (not pre-binned codes) whose search rows x features x logistic fits
    per round is at most :data:`OBLIQUE_MAX_CELLS`; an oblique-only grid is always tried
    (the caller's explicit choice).
    """
    fits = 1 if n_classes == 2 else n_classes  # oblique fits per round
    cells = search_rows * X.shape[1] * fits
    return (not is_codes(X) and cells <= OBLIQUE_MAX_CELLS) or all(e[0] == "oblique" for e in grid)


def progress_units(grid: list[Entry], n_folds: int) -> tuple[list[int], int]:
    """Progress units of a fit: per grid entry its fold fits (``n_folds x rounds``), and
    the final stage (``(n_folds + 1) x`` the largest round cap)."""
    k = int(n_folds)
    search = [k * m for _, _, m in grid]
    final = (k + 1) * max(m for _, _, m in grid)
    return search, final
