"""Training: train a calibrated model and register it as a new version.

- :mod:`~app.services.training.trainer`: :class:`Trainer`, the one door (inputs, limits,
  job or now, the unit of work that registers), used by the API, the job runner and
  the CLI.
- :mod:`~app.services.training.spec`: what to train (:class:`TrainingSpec`) on which
  rows (:class:`TrainingData`), and the checks made before training.
- :mod:`~app.services.training.fit`: fitting the catalog's estimator and measuring it
  on held-out rows (:func:`fit_model`).
- :mod:`~app.services.training.dataset`: training rows read from a dataset reference.
- :mod:`~app.services.training.distributed`: ``"distributed": true``: what a Dask
  cluster can train (checked at once) and the job's fit on it
  (:mod:`models.distributed`), measured and described as any other training.
- :mod:`~app.services.training.deadline`: the training time limit, enforced through the
  core's progress hook.
- :mod:`~app.services.training.algorithms`: the trainable algorithms described (names,
  parameters, properties) and the weak learner names a request may give.

May import :mod:`~app.services.datasets`, :mod:`~app.services.decisions`,
:mod:`~app.services.model_registry`, :mod:`~app.services.plots` and
:mod:`~app.services.common`; never prediction, the feedback loop, batch or jobs.
"""

from app.services.training.fit import FittedModel, fit_model
from app.services.training.spec import (
    AUTO,
    TrainingData,
    TrainingSpec,
    planned_rounds,
    validate_training,
)
from app.services.training.trainer import JOB_LIMIT_SETTING, Mode, Trainer, TrainingJobRequest

__all__ = [
    "AUTO",
    "JOB_LIMIT_SETTING",
    "FittedModel",
    "Mode",
    "Trainer",
    "TrainingJobRequest",
    "TrainingData",
    "TrainingSpec",
    "fit_model",
    "planned_rounds",
    "validate_training",
]
