"""The registry of weak learners: one :class:`~models.specs.weak_learner.WeakLearnerSpec`
per ``weak_learner`` name, the built-ins declared here.

Everything that names weak learners reads :data:`WEAK_LEARNERS`: the boosting loops
build their trainers through :func:`binary_trainer` and :func:`multiclass_trainer`, the
catalog lists an algorithm's learners from it, ``auto``'s default grids are made of the
learners' :class:`~models.specs.weak_learner.GridPlace`, and the service's accepted
values and the docs table are its names. A program adds a learner with
:func:`register_weak_learner` (and takes it away with :func:`unregister_weak_learner`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from models.exceptions import InvalidInput
from models.specs.weak_learner import GridPlace, WeakLearnerSpec
from models.weak.logistic import LogisticTrainer
from models.weak.multiclass import (
    MulticlassObliqueTrainer,
    MulticlassStumpTrainer,
    MulticlassTreeTrainer,
)
from models.weak.oblique import ObliqueTrainer
from models.weak.stump import StumpTrainer
from models.weak.tree import TreeTrainer

__all__ = [
    "WEAK_LEARNERS",
    "binary_names",
    "binary_trainer",
    "get_weak_learner",
    "multiclass_learner",
    "multiclass_names",
    "multiclass_trainer",
    "register_weak_learner",
    "unregister_weak_learner",
]

#: ``weak_learner`` name -> declaration, in registration order (built-ins first).
WEAK_LEARNERS: dict[str, WeakLearnerSpec] = {}


def register_weak_learner(spec: WeakLearnerSpec) -> WeakLearnerSpec:
    """Add ``spec`` to :data:`WEAK_LEARNERS`; its layout must be registered.

    Raises
    ------
    ValueError
        The name is taken, or the layout is not one of
        :data:`models.inference.layouts.ENSEMBLE_LAYOUTS`.
    """
    from models.inference.layouts import ENSEMBLE_LAYOUTS

    if spec.name in WEAK_LEARNERS:
        raise ValueError(f"weak learner {spec.name!r} is already registered")
    if spec.layout not in ENSEMBLE_LAYOUTS:
        raise ValueError(
            f"weak learner {spec.name!r}: layout {spec.layout!r} is not one of "
            f"{sorted(ENSEMBLE_LAYOUTS)}"
        )
    WEAK_LEARNERS[spec.name] = spec
    return spec


def unregister_weak_learner(name: str) -> None:
    """Remove the learner called ``name`` (KeyError if there is none)."""
    del WEAK_LEARNERS[name]


def binary_names() -> tuple[str, ...]:
    """The learners the boosting loop trains (those with a two-class trainer)."""
    return tuple(n for n, s in WEAK_LEARNERS.items() if s.binary is not None)


def multiclass_names() -> tuple[str, ...]:
    """The learners the multiclass boosters train (those with a K-class trainer)."""
    return tuple(n for n, s in WEAK_LEARNERS.items() if s.multiclass is not None)


def get_weak_learner(name: object) -> WeakLearnerSpec:
    """The learner called ``name``; InvalidInput naming the registered ones otherwise."""
    found = WEAK_LEARNERS.get(name) if isinstance(name, str) else None
    if found is None:
        raise InvalidInput(f"weak_learner must be one of {tuple(WEAK_LEARNERS)}, got {name!r}")
    return found


def _settings(spec: WeakLearnerSpec, settings: Mapping[str, Any]) -> dict[str, Any]:
    return {k: settings[k] for k in spec.params}


def binary_trainer(
    weak_learner: str,
    X: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None,
    settings: Mapping[str, Any],
) -> Any:
    """The two-class trainer of ``weak_learner`` (``y`` in {-1, +1}), given the booster's
    ``settings`` (:data:`models.specs.weak_learner.SETTINGS`)."""
    spec = get_weak_learner(weak_learner)
    if spec.binary is None:
        raise InvalidInput(
            f"weak_learner must be one of {binary_names()}, got {weak_learner!r} (fitted "
            "only by the algorithms that list it in their weak_learners)"
        )
    return spec.binary(X, y, sample_weight, _settings(spec, settings))


def multiclass_learner(weak_learner: object) -> WeakLearnerSpec:
    """The learner's declaration if it has a K-class trainer, else InvalidInput."""
    spec = WEAK_LEARNERS.get(weak_learner) if isinstance(weak_learner, str) else None
    if spec is None or spec.multiclass is None:
        why = f" ({weak_learner!r} is binary only)" if spec is not None else ""
        raise InvalidInput(
            f"weak_learner must be one of {multiclass_names()} for multiclass boosting, got "
            f"{weak_learner!r}{why}"
        )
    return spec


def multiclass_trainer(
    weak_learner: str,
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    max_depth: int = 3,
    max_bins: int = 256,
    criterion: str = "error",
    seed: int = 0,
    sample_weight: np.ndarray | None = None,
) -> Any:
    """The K-class trainer of ``weak_learner`` (``y`` class indices ``0..K-1``)."""
    spec = multiclass_learner(weak_learner)
    settings = {"max_depth": max_depth, "max_bins": max_bins, "criterion": criterion, "seed": seed}
    assert spec.multiclass is not None
    return spec.multiclass(X, y, n_classes, sample_weight, _settings(spec, settings))


# ------------------------------------------------------------------ built-ins
register_weak_learner(
    WeakLearnerSpec(
        name="stump",
        description="weighted decision stump over pre-binned features (the default)",
        layout="stumps",
        binary=lambda X, y, sw, s: StumpTrainer(X, y, s["max_bins"], s["criterion"], sw),
        multiclass=lambda X, y, k, sw, s: MulticlassStumpTrainer(
            X, y, k, s["max_bins"], s["criterion"], sw
        ),
        params=("max_bins", "criterion"),
        grid=GridPlace(order=0, binary=((1, 400),), multiclass=((1, 400),)),
    )
)
register_weak_learner(
    WeakLearnerSpec(
        name="tree",
        description="histogram tree of depth max_depth (1 to 8) over the same binned features",
        layout="trees",
        binary=lambda X, y, sw, s: TreeTrainer(
            X, y, s["max_depth"], max_bins=s["max_bins"], criterion=s["criterion"], sample_weight=sw
        ),
        multiclass=lambda X, y, k, sw, s: MulticlassTreeTrainer(
            X, y, k, s["max_depth"], None, s["max_bins"], s["criterion"], sw
        ),
        params=("max_depth", "max_bins", "criterion"),
        grid=GridPlace(order=1, binary=((3, 200), (6, 100)), multiclass=((3, 200), (6, 300))),
    )
)
register_weak_learner(
    WeakLearnerSpec(
        name="logistic",
        description="univariate logistic regression (the paper's base learner), stored as a stump",
        layout="stumps",
        binary=lambda X, y, sw, s: LogisticTrainer(X, y),
    )
)
register_weak_learner(
    WeakLearnerSpec(
        name="oblique",
        description="sign(w.x + b) of a weighted ridge logistic regression on all features "
        "(K classes: the argmax of one fit per class)",
        layout="oblique",
        binary=lambda X, y, sw, s: ObliqueTrainer(X, y),
        multiclass=lambda X, y, k, sw, s: MulticlassObliqueTrainer(X, y, k),
        cost_rounds=False,
        raw_values=True,
        round_cost=2.0,
        grid=GridPlace(order=2, binary=((1, 50),), multiclass=((1, 50),), small_data_only=True),
    )
)
register_weak_learner(
    WeakLearnerSpec(
        name="histogram",
        description="per-feature weighted histograms, the learner of cost-sensitive RealBoost "
        "(Eq. 49 of Masnadi-Shirazi & Vasconcelos), stored as trees",
        layout="trees",
        binary=None,
    )
)
register_weak_learner(
    WeakLearnerSpec(
        name="linear",
        description="a x[j] + b on one feature, the learner of cost-sensitive LogitBoost "
        "(Eqs. 50-53 of Masnadi-Shirazi & Vasconcelos)",
        layout="linear",
        binary=None,
    )
)
