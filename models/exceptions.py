"""Exceptions of the numerical core.

Every error raised on purpose by :mod:`models` derives from :class:`CoreError` and
from the builtin exception a scikit-learn user would expect (``ValueError`` for bad
arguments), so that ``except ValueError`` keeps working in notebooks while the
service can translate the whole tree once.
"""

from __future__ import annotations

from sklearn.exceptions import NotFittedError as _SklearnNotFittedError


class CoreError(Exception):
    """Base class of every error raised deliberately by the numerical core."""


class InvalidInput(CoreError, ValueError):
    """Feature matrix, labels or weights are malformed (shape, dtype, NaN, infinity)."""


class InvalidCostMatrix(CoreError, ValueError):
    """A cost setting is negative, non-finite, of the wrong shape or degenerate."""


class InvalidPriors(CoreError, ValueError):
    """Deployment class priors are not a probability vector matching the classes."""


class NotExplainable(CoreError, ValueError):
    """A model cannot attribute its score to its features (its layout, scorer or number
    of classes has no exact attribution); the message says which and why."""


class NoInterval(CoreError, ValueError):
    """A model cannot give an interval for its probabilities (not a two-class fold
    ensemble, see :mod:`models.uncertainty`); the message says which and why."""


class TrainingError(CoreError, ValueError):
    """Training cannot produce a model (one class only, too few rows, no useful learner)."""


class ClusterUnavailable(TrainingError):
    """A distributed training could not reach its Dask scheduler, or lost its workers or
    scheduler for good (:mod:`models.distributed`); nothing was returned."""


class NotFitted(CoreError, _SklearnNotFittedError):
    """An estimator was used before ``fit``."""


class ArtifactError(CoreError, ValueError):
    """A model artifact cannot be read (malformed, unknown kind or format version)."""


class ArtifactIntegrityError(ArtifactError):
    """A model artifact's bytes do not match their recorded sha256 digest."""


class TrainingCancelled(CoreError):
    """Training was stopped by the progress callback (for example a time limit).

    Raised from inside a boosting loop by the callback installed with
    :func:`models.boosting.progress.progress_callback`; the estimator is left unfitted. It is
    not a ``ValueError``: nothing about the inputs is wrong.
    """
