"""costwise numerical core: boosting, calibration, cost-sensitive decisions, artifacts.

numpy, scipy, scikit-learn and numba (compiled kernels) only; importable from a notebook
without the service.
The names a notebook user needs are importable from here (loaded on first use, so that
``import models.inference.artifacts`` stays light)::

    from models import CalibratedBoosting, CostMatrix, decide, dump_model, load_model

Where things are, one room per concept: :mod:`models.boosting` (the boosting loop,
AdaBoost, calibrated AdaMEC, cross-fitting), :mod:`models.weak` (weak learners),
:mod:`models.multiclass`, :mod:`models.variants` (the other papers' boosters),
:mod:`models.auto` (the default), :mod:`models.calibration` (calibration maps),
:mod:`models.decisions` (costs and the decision rule), :mod:`models.inference` (what is
served, and the artifact format), :mod:`models.kernels` (compiled loops),
:mod:`models.features` (binning, input checks), :mod:`models.evaluation` (metrics, plot
data), :mod:`models.feedback` (monitoring, priors, recalibration), :mod:`models.specs` and
:mod:`models.catalog` (how algorithms declare themselves, and the catalog of them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what static checkers and IDEs see; at run time see __getattr__
    from models.boosting.adaboost import AdaBoost
    from models.boosting.calibrated import CalibratedBoosting
    from models.catalog.algorithms import get_algorithm
    from models.decisions.rule import CostMatrix, Decisions, decide
    from models.evaluation.metrics import brier_score, log_loss, roc_auc, total_cost
    from models.exceptions import CoreError
    from models.inference.artifacts import dump_model, load_model
    from models.inference.model import InferenceModel
    from models.multiclass.calibrated import CalibratedMulticlass
    from models.multiclass.samme import SAMME
    from models.variants.jous import JOUSBoost

#: Public name -> module that defines it.
_EXPORTS: dict[str, str] = {
    "AdaBoost": "models.boosting.adaboost",
    "CalibratedBoosting": "models.boosting.calibrated",
    "CalibratedMulticlass": "models.multiclass.calibrated",
    "CoreError": "models.exceptions",
    "CostMatrix": "models.decisions.rule",
    "Decisions": "models.decisions.rule",
    "InferenceModel": "models.inference.model",
    "JOUSBoost": "models.variants.jous",
    "SAMME": "models.multiclass.samme",
    "brier_score": "models.evaluation.metrics",
    "decide": "models.decisions.rule",
    "dump_model": "models.inference.artifacts",
    "get_algorithm": "models.catalog.algorithms",
    "load_model": "models.inference.artifacts",
    "log_loss": "models.evaluation.metrics",
    "roc_auc": "models.evaluation.metrics",
    "total_cost": "models.evaluation.metrics",
}

__all__ = [  # the keys of _EXPORTS, sorted case-insensitively (tests/models/test_exports.py)
    "AdaBoost",
    "brier_score",
    "CalibratedBoosting",
    "CalibratedMulticlass",
    "CoreError",
    "CostMatrix",
    "decide",
    "Decisions",
    "dump_model",
    "get_algorithm",
    "InferenceModel",
    "JOUSBoost",
    "load_model",
    "log_loss",
    "roc_auc",
    "SAMME",
    "total_cost",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'models' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
