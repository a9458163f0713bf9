"""Multiclass boosting: angle-based cost-sensitive boosting, SAMME, one-vs-rest AdaBoost.

Modules (each cites the equations it implements):

* :mod:`~models.multiclass.angle` -- ``AngleAdaBoost`` (Algorithm 1) and
  ``AngleLogitBoost`` (Algorithm 2) of Yang et al., API ``angle_adaboost`` /
  ``angle_logitboost``;
* :mod:`~models.multiclass.samme` -- ``SAMME`` (Zhu et al. 2009), API ``samme`` (calibrated);
* :mod:`~models.multiclass.calibrated` -- ``CalibratedMulticlass`` (per-class calibration);
* :mod:`~models.multiclass.ovr` -- ``OneVsRestAdaBoost``, API ``ovr_adaboost``.

What they serve lives in :mod:`models.inference` (``vote_ensemble``, ``simplex``,
``multiclass_scorers``: scorer kinds ``angle``, ``samme``, ``ovr``); their weak learners in
:mod:`models.weak.multiclass`; training cost matrices in :mod:`models.decisions.training_costs`.
Estimators are imported lazily so that loading an artifact does not import training code.
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
    "simplex_vertices": "models.inference.simplex",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'models.multiclass' has no attribute {name!r}")
