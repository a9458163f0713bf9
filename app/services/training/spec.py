"""What a training is asked to do (:class:`TrainingSpec`) and on which rows
(:class:`TrainingData`); the checks made before any training starts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlsplit

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit

from app.errors import InvalidArgument
from app.services.common.core_errors import core_errors
from models.boosting.crossfit import provides_out_of_fold
from models.calibration.calibrators import TRAINING_CALIBRATIONS
from models.catalog.algorithms import (
    AlgorithmSpec,
    Calibration,
    ServableEstimator,
    build_estimator,
    get_algorithm,
    validate_params,
)

AUTO = "auto"
"""The default algorithm: calibrated AdaBoost/SAMME choosing its own capacity (models.auto)."""

DEFAULT_EVALUATION_FRACTION = 0.2
"""Held out for the reported metrics when the estimator has no out-of-fold probabilities
(hold-out or no calibration, JOUS-Boost, angle-based models) and none was asked for."""

_CAPACITY_FIELDS = ("n_estimators", "weak_learner", "max_depth")
_CAPACITY_DEFAULTS: dict[str, Any] = {"n_estimators": 100, "weak_learner": "stump", "max_depth": 3}


@dataclass(frozen=True)
class TrainingSpec:
    """Training parameters (see :class:`app.api.schemas.TrainingParams` for their meaning).

    Without ``algorithm`` the default is :data:`AUTO` (automatic capacity), unless one of
    ``n_estimators``, ``weak_learner``, ``max_depth`` is given: then ``adaboost``, so that
    a request naming them means what it meant before ``auto`` existed. For every
    algorithm but ``auto`` the missing ones take their former defaults (100 rounds of
    stumps, depth 3); with ``auto`` they stay None (chosen at training, recorded under
    ``fitted.capacity``).

    ``evaluation_fraction`` None (the default): the reported metrics and plots come from
    the out-of-fold calibrated probabilities of every training row when the estimator
    cross-fits its calibration (:func:`models.boosting.crossfit.provides_out_of_fold`), else from
    a held-out :data:`DEFAULT_EVALUATION_FRACTION` of the rows; a number: that stratified
    share is held out (0: no evaluation).

    ``distributed``: train on the Dask cluster of COSTWISE_DASK_SCHEDULER from a Parquet
    dataset reference, as a job (:mod:`app.services.training.distributed` says what is
    supported).
    """

    algorithm: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    n_estimators: int | None = None
    weak_learner: str | None = None
    max_depth: int | None = None
    score: str = "vote"
    calibration: str = "platt"
    calibration_split: str = "kfold"
    calibration_fraction: float = 1.0 / 3.0
    n_folds: int = 5
    evaluation_fraction: float | None = None
    random_state: int | None = 0
    distributed: bool = False
    #: the parameters that chose ``adaboost`` when no algorithm was named (for messages)
    implied_by: ClassVar[tuple[str, ...]] = ()
    #: the capacity parameters left out of the request and given their former defaults
    defaulted: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        given = [name for name in _CAPACITY_FIELDS if getattr(self, name) is not None]
        if self.algorithm is None:
            object.__setattr__(self, "algorithm", "adaboost" if given else AUTO)
            object.__setattr__(self, "implied_by", tuple(given))
        if self.algorithm != AUTO:
            missing = tuple(n for n in _CAPACITY_FIELDS if getattr(self, n) is None)
            for name in missing:
                object.__setattr__(self, name, _CAPACITY_DEFAULTS[name])
            object.__setattr__(self, "defaulted", missing)

    @property
    def algorithm_name(self) -> str:
        """The algorithm (always set after construction)."""
        return str(self.algorithm)

    def common_params(self) -> dict[str, Any]:
        """The parameters every algorithm of the catalog takes."""
        return {
            "n_estimators": self.n_estimators,
            "weak_learner": self.weak_learner,
            "max_depth": self.max_depth,
            "score_kind": self.score,
            "random_state": self.random_state,
        }

    def calibration_settings(self) -> Calibration:
        return Calibration(
            method=self.calibration,
            split=self.calibration_split,
            fraction=self.calibration_fraction,
            n_folds=self.n_folds,
        )


@dataclass(frozen=True)
class TrainingData:
    """Rows to train on. ``edges`` set: ``X`` holds uint8 bin codes under these edges
    (read from a dataset reference, :mod:`app.services.training.dataset`); ``source``:
    what was read (:class:`~app.services.training.dataset.DatasetSummary`)."""

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str] | None = None
    edges: Any = None
    source: Any = None


def _choices(names: Iterable[str]) -> str:
    """``'a', 'b' or 'c'``: the calibrations of the core's declaration, for a message."""
    quoted = [repr(n) for n in names]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _check_auto(spec: TrainingSpec) -> None:
    """``auto`` chooses the capacity and needs cross-fitted calibrated probabilities;
    ``calibration: auto`` (the map chosen by out-of-fold log loss) is ``auto``'s."""
    if spec.algorithm != AUTO:
        if spec.calibration == "auto":
            raise InvalidArgument(
                "calibration: 'auto' (the map of least out-of-fold log loss) is chosen by "
                "algorithm 'auto'; with another algorithm name the map: "
                + _choices(m for m in TRAINING_CALIBRATIONS if m != "auto"),
                field="calibration",
            )
        return
    for name in _CAPACITY_FIELDS:
        if getattr(spec, name) is not None:
            raise InvalidArgument(
                f"{name}: algorithm 'auto' chooses the weak learner, depth and rounds itself "
                f"(recorded on the version); leave {name} out, or name an algorithm such as "
                "'adaboost' to set it",
                field=name,
            )
    if spec.calibration == "none":
        raise InvalidArgument(
            "calibration: algorithm 'auto' chooses its capacity on calibrated probabilities; "
            "expected "
            + _choices(m for m in TRAINING_CALIBRATIONS if m != "none")
            + " (or name an algorithm such as 'adaboost' for "
            "uncalibrated scores)",
            field="calibration",
        )
    if spec.calibration_split != "kfold":
        raise InvalidArgument(
            "calibration_split: algorithm 'auto' reuses the k-fold cross-fitting folds for "
            "its search; expected 'kfold' (or name an algorithm such as 'adaboost' for a "
            "hold-out split)",
            field="calibration_split",
        )


def _check_classes(y: np.ndarray, spec: TrainingSpec, family: str, *, show: bool = True) -> None:
    """Two classes (``family`` binary) or at least two (any); the labels are shown in
    the error unless they were fetched from a remote reference (``show`` False: an error
    never echoes a fetched file's content). An algorithm chosen by a capacity parameter
    (no algorithm named) is said to be so, with the algorithms that take more classes."""
    classes = np.unique(y)
    if family == "binary" and len(classes) != 2:
        shown = f" ({classes.tolist()[:10]})" if show else ""
        why = ""
        if spec.implied_by:
            named = ", ".join(spec.implied_by)
            why = (
                f"; it was chosen because {named} was given without an algorithm: name "
                "algorithm 'samme' for more classes, or leave out n_estimators, "
                "weak_learner and max_depth (the default 'auto' takes any number of classes)"
            )
        raise InvalidArgument(
            f"labels: algorithm {spec.algorithm_name!r} needs exactly two classes, got "
            f"{len(classes)}{shown}{why}",
            field="labels",
        )
    if len(classes) < 2:
        shown = f"{classes.tolist()}" if show else f"{len(classes)}"
        raise InvalidArgument(
            f"labels: at least two classes are needed, got {shown}", field="labels"
        )


def evaluation_split(
    y: np.ndarray, fraction: float, seed: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the training rows and of the stratified held-out evaluation rows."""
    n = len(y)
    if fraction <= 0:
        return np.arange(n), np.arange(0)
    _, y_index, counts = np.unique(y, return_inverse=True, return_counts=True)
    per_class = 2.0 / fraction  # infinite for a subnormal fraction such as 5e-324
    need = f"at least {int(np.ceil(per_class))}" if per_class < 2**53 else "more than 2**53"
    if per_class >= 2**53 or counts.min() < per_class:
        raise InvalidArgument(
            f"labels: the smallest class has {counts.min()} rows; an evaluation split of "
            f"{fraction:.3g} needs {need} rows of each class (or set "
            "evaluation_fraction to 0)",
            field="labels",
        )
    split = StratifiedShuffleSplit(n_splits=1, test_size=fraction, random_state=seed)
    try:
        train_idx, eval_idx = next(split.split(np.zeros(n), y_index))
    except ValueError as error:  # e.g. a fraction so near 1 that no training row is left
        raise InvalidArgument(
            f"evaluation_fraction: {fraction!r} leaves no stratified split of the {n} rows: "
            f"{error}",
            field="evaluation_fraction",
        ) from None
    return train_idx, eval_idx


@dataclass(frozen=True)
class Evaluation:
    """How a training measures the model it registers.

    ``out_of_fold``: every row trains; metrics and plots come from the estimator's
    out-of-fold calibrated probabilities (``oof_``). Otherwise ``fraction`` of the rows
    (stratified) is held out of training for them (0: none).
    """

    out_of_fold: bool
    fraction: float


def evaluation_of(spec: TrainingSpec, estimator: Any) -> Evaluation:
    """The evaluation of ``spec`` for its (unfitted) ``estimator`` (see :class:`TrainingSpec`)."""
    if spec.evaluation_fraction is not None:
        return Evaluation(False, float(spec.evaluation_fraction))
    if provides_out_of_fold(estimator):
        return Evaluation(True, 0.0)
    return Evaluation(False, DEFAULT_EVALUATION_FRACTION)


def checked_algorithm(
    data: TrainingData, spec: TrainingSpec
) -> tuple[AlgorithmSpec, dict[str, Any]]:
    """The algorithm and its validated parameters, after the checks of the request
    (:class:`InvalidArgument` naming the field); the evaluation split is checked apart."""
    with core_errors("algorithm"):
        algorithm = get_algorithm(spec.algorithm_name)
    with core_errors("params"):
        params = validate_params(algorithm, spec.params)
    _check_auto(spec)
    remote = data.source is not None and urlsplit(data.source.uri).scheme not in ("", "file")
    _check_classes(data.y, spec, algorithm.family, show=not remote)
    return algorithm, params


def checked_spec(spec: TrainingSpec) -> None:
    """The checks of the request that need no rows (algorithm, parameters, ``auto``'s
    settings): a training from a dataset reference checks its labels while reading."""
    with core_errors("algorithm"):
        algorithm = get_algorithm(spec.algorithm_name)
    with core_errors("params"):
        validate_params(algorithm, spec.params)
    _check_auto(spec)


def validate_training(
    data: TrainingData, spec: TrainingSpec, max_rounds: int | None = None
) -> None:
    """The checks made before training, without training (for jobs: a job is never
    created for input that would fail at once)."""
    algorithm, _ = checked_algorithm(data, spec)
    evaluation = evaluation_of(spec, estimator_of(spec, algorithm, max_rounds))
    evaluation_split(data.y, evaluation.fraction, spec.random_state)


def estimator_of(
    spec: TrainingSpec, algorithm: AlgorithmSpec | None = None, max_rounds: int | None = None
) -> ServableEstimator:
    """The unfitted, ready-to-serve estimator of ``spec`` (assembled by the catalog).

    ``max_rounds`` (COSTWISE_MAX_ROUNDS) caps the rounds of estimators that choose their
    own (``auto``: every grid entry is clamped to it); a given ``n_estimators`` over the
    limit is refused before (:meth:`Trainer.check_rounds`).
    """
    with core_errors("params"):
        estimator = build_estimator(
            algorithm or spec.algorithm_name,
            spec.common_params(),
            spec.params,
            spec.calibration_settings(),
        )
    get_params = getattr(estimator, "get_params", None)
    if max_rounds is not None and get_params is not None and "max_rounds" in get_params(deep=False):
        estimator.set_params(max_rounds=int(max_rounds))  # type: ignore[attr-defined]
    return estimator


def planned_rounds(spec: TrainingSpec, n_classes: int, max_rounds: int | None = None) -> int:
    """Boosting rounds a training of ``spec`` reports as its ``total`` (its progress count).

    The estimator's own ``progress_total`` (:mod:`models.boosting.progress`): ``n_estimators``, times
    ``n_folds + 1`` with cross-fitted calibration, times ``delta - 1`` for JOUS-Boost's
    q-classifiers, times the classes for one-vs-rest. Call after :func:`validate_training`
    (the algorithm and its parameters are known to be valid).
    """
    total = getattr(estimator_of(spec, max_rounds=max_rounds), "progress_total", None)
    return int(spec.n_estimators or 0) if total is None else int(total(n_classes))
