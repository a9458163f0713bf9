"""One weak learner declared once: :class:`WeakLearnerSpec` (and its :class:`GridPlace`).

A weak learner family is everything the rest of the package needs to know about it:
its ``weak_learner`` name, a one-line description, the factories of its per-fit
trainers (two classes; optionally K classes), the ensemble layout its learners are
stored in (:mod:`models.inference.layouts`), the settings it reads and where it sits in
the automatic default's grids. :mod:`models.weak` keeps the registry of them; the
boosting loops, the catalog, ``auto``'s grids, the API's and CLI's accepted values and
the docs table all read the registry, so a new learner is one declaration and one call
to :func:`models.weak.register_weak_learner`.

Factories take the training matrix, the labels, the sample weights and a mapping of the
booster's settings, of which the learner reads the names in ``params``:

``binary(X, y, sample_weight, settings)``
    ``y`` in {-1, +1}; returns a :class:`models.weak.base.RoundTrainer` (``fit_round``,
    ``assemble`` into an :class:`~models.inference.ensemble.Ensemble`).
``multiclass(X, y, n_classes, sample_weight, settings)``
    ``y`` class indices; returns a :class:`models.weak.multiclass.MulticlassTrainer`.

The settings a booster passes are ``max_depth``, ``max_bins``, ``criterion`` (the split
criterion, ``"error"`` or ``"gini"``) and ``seed`` (multiclass).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["SETTINGS", "GridPlace", "WeakLearnerSpec"]

#: The booster settings a learner may read (``WeakLearnerSpec.params``).
SETTINGS = ("max_depth", "max_bins", "criterion", "seed")


@dataclass(frozen=True)
class GridPlace:
    """Where a learner sits in the automatic default's grids (:mod:`models.auto.grid`).

    ``order`` sorts the learners by increasing capacity (the grid is read in that
    order); ``binary`` and ``multiclass`` are its ``(max_depth, maximum rounds)`` entries
    for two and for more classes. ``small_data_only``: tried after every other entry,
    outside their stopping rule, and only on raw values of small data
    (:data:`models.auto.grid.OBLIQUE_MAX_CELLS`), as the oblique learner is.
    """

    order: int
    binary: tuple[tuple[int, int], ...]
    multiclass: tuple[tuple[int, int], ...]
    small_data_only: bool = False


@dataclass(frozen=True)
class WeakLearnerSpec:
    """A weak learner family (see the module docstring).

    Parameters
    ----------
    name : str
        The ``weak_learner`` value.
    description : str
        One line for the docs table and the API description.
    layout : str
        The ensemble layout its learners are stored in (a name of
        :data:`models.inference.layouts.ENSEMBLE_LAYOUTS`).
    binary : callable or None
        Trainer factory of the boosting loop (two classes). None: the learner is fitted
        only by the algorithms that name it in their own ``weak_learners`` (e.g.
        ``"histogram"`` of cost-sensitive RealBoost).
    multiclass : callable or None
        Trainer factory of the multiclass boosters; None: binary only.
    params : tuple of str
        The booster settings it reads (of :data:`SETTINGS`); ``"max_depth"`` among them
        makes the depth part of what it is (capacity records, plot labels, cost).
    cost_rounds : bool
        Whether its multiclass trainer fits the angle-based cost-weighted rounds
        (``fit_costs``) besides weighted classification (``fit_weighted``).
    raw_values : bool
        Needs raw feature values: it cannot train on pre-binned codes.
    round_cost : float
        Cost of one round relative to a stump (times the depth when it reads
        ``max_depth``): how ``auto`` estimates the time of an entry.
    grid : GridPlace or None
        Its place in ``auto``'s default grids; None: not in them.
    """

    name: str
    description: str
    layout: str
    binary: Callable[..., Any] | None
    multiclass: Callable[..., Any] | None = None
    params: tuple[str, ...] = ()
    cost_rounds: bool = True
    raw_values: bool = False
    round_cost: float = 1.0
    grid: GridPlace | None = None

    def __post_init__(self) -> None:
        unknown = sorted(set(self.params) - set(SETTINGS))
        if not self.name or unknown:
            raise ValueError(f"weak learner {self.name!r}: unknown settings {unknown}")

    def unit_cost(self, depth: int) -> float:
        """Relative cost of one round at ``depth`` (a stump round = 1)."""
        return self.round_cost * (float(depth) if "max_depth" in self.params else 1.0)

    def depth(self, depth: int) -> int:
        """The depth a capacity record states: ``depth`` if it reads it, else 1."""
        return int(depth) if "max_depth" in self.params else 1
