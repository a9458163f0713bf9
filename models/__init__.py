"""costwise numerical core: boosting, calibration, cost-sensitive decisions, artifacts.

Pure numpy / scipy / scikit-learn; importable from a notebook without the service.
The names a notebook user needs are importable from here (loaded on first use, so that
``import models.artifacts`` stays light)::

    from models import CalibratedBoosting, CostMatrix, decide, dump_model, load_model

Where things are: estimators in :mod:`models.adaboost`, :mod:`models.calibrated`,
:mod:`models.jous`, :mod:`models.variants`, :mod:`models.csboost` and
:mod:`models.multiclass`; the cost matrix and the decision rule in
:mod:`models.decisions`; metrics in :mod:`models.metrics`; the artifact format in
:mod:`models.artifacts`; the algorithm catalog in :mod:`models.algorithms` (``get_algorithm``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what static checkers and IDEs see; at run time see __getattr__
    from models.adaboost import AdaBoost
    from models.algorithms import get_algorithm
    from models.artifacts import dump_model, load_model
    from models.calibrated import CalibratedBoosting
    from models.decisions import CostMatrix, Decisions, decide
    from models.exceptions import CoreError
    from models.inference import InferenceModel
    from models.jous import JOUSBoost
    from models.metrics import brier_score, log_loss, roc_auc, total_cost
    from models.multiclass.calibrated import CalibratedMulticlass
    from models.multiclass.samme import SAMME

#: Public name -> module that defines it.
_EXPORTS: dict[str, str] = {
    "AdaBoost": "models.adaboost",
    "CalibratedBoosting": "models.calibrated",
    "CalibratedMulticlass": "models.multiclass.calibrated",
    "CoreError": "models.exceptions",
    "CostMatrix": "models.decisions",
    "Decisions": "models.decisions",
    "InferenceModel": "models.inference",
    "JOUSBoost": "models.jous",
    "SAMME": "models.multiclass.samme",
    "brier_score": "models.metrics",
    "decide": "models.decisions",
    "dump_model": "models.artifacts",
    "get_algorithm": "models.algorithms",
    "load_model": "models.artifacts",
    "log_loss": "models.metrics",
    "roc_auc": "models.metrics",
    "total_cost": "models.metrics",
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
