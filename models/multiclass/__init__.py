"""Multiclass boosting: angle-based cost-sensitive boosting, SAMME, one-vs-rest AdaBoost.

Modules (each cites the equations it implements):

* :mod:`~models.multiclass.simplex` -- simplex vertex encoding, Eq. 1 of Yang et al.;
* :mod:`~models.multiclass.training_costs` -- training cost matrices (rows = truth);
* :mod:`~models.multiclass.vote_ensemble` -- numpy-only weighted class votes;
* :mod:`~models.multiclass.weak` -- exact multiclass stumps and histogram trees;
* :mod:`~models.multiclass.angle` -- ``AngleAdaBoost`` (Algorithm 1) and
  ``AngleLogitBoost`` (Algorithm 2), API ``angle_adaboost`` / ``angle_logitboost``;
* :mod:`~models.multiclass.samme` -- ``SAMME`` (Zhu et al. 2009), API ``samme`` (calibrated);
* :mod:`~models.multiclass.calibrated` -- ``CalibratedMulticlass`` (per-class calibration);
* :mod:`~models.multiclass.ovr` -- ``OneVsRestAdaBoost``, API ``ovr_adaboost``;
* :mod:`~models.multiclass.scorers` -- scorer kinds ``angle``, ``samme``, ``ovr``.

Estimators are imported lazily so that loading an artifact (which imports only the
scorers) does not import the training code.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AngleAdaBoost": "models.multiclass.angle",
    "AngleLogitBoost": "models.multiclass.angle",
    "SAMME": "models.multiclass.samme",
    "CalibratedMulticlass": "models.multiclass.calibrated",
    "OneVsRestAdaBoost": "models.multiclass.ovr",
    "simplex_vertices": "models.multiclass.simplex",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'models.multiclass' has no attribute {name!r}")
