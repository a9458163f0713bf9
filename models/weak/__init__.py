"""Pluggable weak learners: each is a *trainer* built once per fit and asked for one
learner per boosting round (see :class:`models.weak.base.RoundTrainer`), declared once
as a :class:`~models.specs.weak_learner.WeakLearnerSpec` in :data:`WEAK_LEARNERS`
(:mod:`models.weak.registry`, where the built-ins are declared):

* ``"stump"`` -- :class:`~models.weak.stump.StumpTrainer`, weighted decision stump over
  pre-binned features (default, fast);
* ``"tree"`` -- :class:`~models.weak.tree.TreeTrainer`, histogram tree of depth 1..8 over
  the same binned features (compiled kernel, :mod:`models.kernels.histogram`);
* ``"logistic"`` -- :class:`~models.weak.logistic.LogisticTrainer`, univariate logistic
  regression (the base learner of the paper's experiments), exported as a stump;
* ``"oblique"`` -- :class:`~models.weak.oblique.ObliqueTrainer`, ``sign(w.x + b)`` of a
  ridge-regularised weighted logistic regression on all (standardised) features,
  exported as an ``"oblique"`` ensemble;
* ``"histogram"`` and ``"linear"`` -- the learners of cost-sensitive RealBoost and
  LogitBoost (:mod:`models.variants.csboost`), fitted by those algorithms only.

:mod:`models.weak.multiclass` holds the K-class trainers of the same learners.
"""

from __future__ import annotations

from models.weak.base import RoundTrainer, Stump
from models.weak.logistic import LogisticTrainer
from models.weak.oblique import ObliqueTrainer
from models.weak.registry import (
    WEAK_LEARNERS,
    get_weak_learner,
    register_weak_learner,
    unregister_weak_learner,
)
from models.weak.stump import STUMP_CRITERIA, StumpTrainer
from models.weak.tree import TreeTrainer

__all__ = [
    "LogisticTrainer",
    "ObliqueTrainer",
    "RoundTrainer",
    "STUMP_CRITERIA",
    "Stump",
    "StumpTrainer",
    "TreeTrainer",
    "WEAK_LEARNERS",
    "get_weak_learner",
    "register_weak_learner",
    "unregister_weak_learner",
]
