"""Training: train a calibrated model and register it as a new version.

- :mod:`~app.services.training.trainer`: :class:`Trainer`, the one door (inputs, limits,
  job or now, the unit of work that registers), used by the API, the job runner and
  the CLI.
- :mod:`~app.services.training.spec`: what to train (:class:`TrainingSpec`) on which
  rows (:class:`TrainingData`), and the checks made before training.
- :mod:`~app.services.training.fit`: fitting the catalog's estimator and measuring it
  on held-out rows (:func:`fit_model`).
"""

from app.services.training.fit import FittedModel, fit_model
from app.services.training.spec import (
    AUTO,
    TrainingData,
    TrainingSpec,
    planned_rounds,
    validate_training,
)
from app.services.training.trainer import JOB_LIMIT_SETTING, Mode, Trainer

__all__ = [
    "AUTO",
    "JOB_LIMIT_SETTING",
    "FittedModel",
    "Mode",
    "Trainer",
    "TrainingData",
    "TrainingSpec",
    "fit_model",
    "planned_rounds",
    "validate_training",
]
