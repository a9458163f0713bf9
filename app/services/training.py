"""Use case: train a calibrated model and register it as a new version (one unit of work)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit
from sqlalchemy.orm import Session, sessionmaker

from app.db import database_errors
from app.errors import InvalidArgument
from app.registry.repository import Registry
from app.registry.validation import check_tags
from app.services.core_errors import core_errors
from app.services.deadline import LIMIT_SETTING, training_deadline
from app.services.evaluation import evaluation_metrics
from app.services.inputs import fingerprint
from app.services.model_registry import VersionView, version_view
from app.services.plots.precompute import PlotRow, plot_rows
from models.algorithms import get_algorithm, validate_params
from models.artifacts import dump_model
from models.calibrated import CalibratedBoosting
from models.inference import InferenceModel
from models.progress import report
from models.scorers import BinaryScorer

log = logging.getLogger(__name__)


AUTO = "auto"
"""The default algorithm: calibrated AdaBoost/SAMME choosing its own capacity (models.auto)."""

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
    evaluation_fraction: float = 0.2
    random_state: int | None = 0

    def __post_init__(self) -> None:
        given = [name for name in _CAPACITY_FIELDS if getattr(self, name) is not None]
        if self.algorithm is None:
            object.__setattr__(self, "algorithm", "adaboost" if given else AUTO)
        if self.algorithm != AUTO:
            for name in _CAPACITY_FIELDS:
                if getattr(self, name) is None:
                    object.__setattr__(self, name, _CAPACITY_DEFAULTS[name])

    @property
    def algorithm_name(self) -> str:
        """The algorithm (always set after construction)."""
        return str(self.algorithm)


def _check_auto(spec: TrainingSpec) -> None:
    """``auto`` chooses the capacity and needs cross-fitted calibrated probabilities."""
    if spec.algorithm != AUTO:
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
            "expected 'platt' or 'isotonic' (or name an algorithm such as 'adaboost' for "
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


@dataclass(frozen=True)
class TrainingData:
    X: np.ndarray
    y: np.ndarray
    feature_names: list[str] | None = None


def _evaluation_split(
    y: np.ndarray, fraction: float, seed: int | None
) -> tuple[np.ndarray, np.ndarray]:
    n = len(y)
    if fraction <= 0:
        return np.arange(n), np.arange(0)
    _, y_index, counts = np.unique(y, return_inverse=True, return_counts=True)
    need = int(np.ceil(2.0 / fraction))
    if counts.min() < need:
        raise InvalidArgument(
            f"labels: the smallest class has {counts.min()} rows; an evaluation split of "
            f"{fraction:.3g} needs at least {need} rows of each class (or set "
            "evaluation_fraction to 0)",
            field="labels",
        )
    split = StratifiedShuffleSplit(n_splits=1, test_size=fraction, random_state=seed)
    train_idx, eval_idx = next(split.split(np.zeros(n), y_index))
    return train_idx, eval_idx


_REQUEST_COSTS = {
    "threshold": "the request's costs (one setting, a matrix or one per row) decide on these "
    "probabilities by least expected cost",
    "skew_change": "uncalibrated scores of a model trained with costs: the training skew is "
    "removed (odds times z_tr / (1 - z_tr)), then the request's costs decide (change-of-skew "
    "rule, section 5.1 of Nikolaou et al.)",
    "fixed": "decides only under its training cost matrix (or a positive multiple); other "
    "costs and deployment priors are refused with 422",
}


@dataclass(frozen=True)
class FittedModel:
    """What training produced: the served model and the facts recorded beside it."""

    inference: InferenceModel
    metrics: dict[str, Any]
    calibration: dict[str, Any]
    fitted: dict[str, Any]
    decision: dict[str, Any]
    plots: list[PlotRow] = field(default_factory=list)  # held-out plot rows (plot_data)


def _check_classes(y: np.ndarray, family: str) -> None:  # family "any": 2 or more
    classes = np.unique(y)
    if family == "binary" and len(classes) != 2:
        raise InvalidArgument(
            f"labels: this algorithm needs exactly two classes, got {len(classes)} "
            f"({classes.tolist()[:10]})",
            field="labels",
        )
    if len(classes) < 2:
        raise InvalidArgument(
            f"labels: at least two classes are needed, got {classes.tolist()}", field="labels"
        )


def _set_supported(estimator: Any, **values: Any) -> None:
    """Pass the request's calibration settings to estimators that take them."""
    if hasattr(estimator, "get_params"):
        known = estimator.get_params(deep=False)
        estimator.set_params(**{k: v for k, v in values.items() if k in known})


def _calibrated(estimator: Any, spec: TrainingSpec) -> CalibratedBoosting:
    """A plain binary booster wrapped in the request's calibration (not fitted)."""
    return CalibratedBoosting(
        estimator,
        method=spec.calibration,
        split=spec.calibration_split,
        calibration_fraction=spec.calibration_fraction,
        n_folds=spec.n_folds,
        random_state=spec.random_state,
    )


def _common_params(spec: TrainingSpec) -> dict[str, Any]:
    return {
        "n_estimators": spec.n_estimators,
        "weak_learner": spec.weak_learner,
        "max_depth": spec.max_depth,
        "score_kind": spec.score,
        "random_state": spec.random_state,
    }


_CALIBRATION_FIELDS = ("calibration", "calibration_split", "calibration_fraction", "n_folds")


def _calibration_params(spec: TrainingSpec) -> dict[str, Any]:
    """The calibration settings, passed to estimators that take them (same names)."""
    return {name: getattr(spec, name) for name in _CALIBRATION_FIELDS}


def planned_rounds(spec: TrainingSpec, n_classes: int) -> int:
    """Boosting rounds a training of ``spec`` reports as its ``total`` (its progress count).

    The estimator's own ``progress_total`` (:mod:`models.progress`): ``n_estimators``, times
    ``n_folds + 1`` with cross-fitted calibration, times ``delta - 1`` for JOUS-Boost's
    q-classifiers, times the classes for one-vs-rest. Call after :func:`validate_training`
    (the algorithm and its parameters are known to be valid).
    """
    with core_errors("params"):  # the same translation as fit_model's (no 500 here)
        algorithm = get_algorithm(spec.algorithm_name)
        estimator = algorithm.build(_common_params(spec), validate_params(algorithm, spec.params))
    if hasattr(estimator, "to_inference"):
        _set_supported(estimator, **_calibration_params(spec))
    else:
        estimator = _calibrated(estimator, spec)
    total = getattr(estimator, "progress_total", None)
    return int(spec.n_estimators or 0) if total is None else int(total(n_classes))


def fit_model(data: TrainingData, spec: TrainingSpec) -> FittedModel:
    """Fit the algorithm (with calibration) and measure it on a stratified evaluation split.

    Plain binary boosters are wrapped in :class:`CalibratedBoosting` (the request's
    calibration: the calibrated form of every variant, or ``none``); estimators that
    serve themselves (multiclass, JOUS) provide ``to_inference`` and take the calibration
    settings as parameters where they have them.
    """
    with core_errors("algorithm"):
        algorithm = get_algorithm(spec.algorithm_name)
    with core_errors("params"):
        params = validate_params(algorithm, spec.params)
    _check_auto(spec)
    _check_classes(data.y, algorithm.family)
    train_idx, eval_idx = _evaluation_split(data.y, spec.evaluation_fraction, spec.random_state)
    calibration = _calibration_params(spec)
    with core_errors("params"):
        estimator = algorithm.build(_common_params(spec), params)
    X, y = data.X[train_idx], data.y[train_idx]
    report(0, 0, "binning")  # until the first boosting round: binning and set-up
    with core_errors("labels"):
        if hasattr(estimator, "to_inference"):
            _set_supported(estimator, **calibration)
            estimator.fit(X, y)
            booster = estimator
            calibration_info = dict(
                getattr(estimator, "calibration_info_", None) or {"method": spec.calibration}
            )
        else:
            wrapped = _calibrated(estimator, spec).fit(X, y)
            booster, estimator = wrapped.estimator_, wrapped
            calibration_info = dict(wrapped.calibration_info_)
        inference = estimator.to_inference(data.feature_names)
        if isinstance(inference.scorer, BinaryScorer):  # which raw score (s or s'), recorded
            calibration_info.setdefault("score", inference.scorer.score_kind)
        report(0, 0, "evaluating")
        metrics = evaluation_metrics(inference, data.X[eval_idx], data.y[eval_idx])
        capacity = getattr(estimator, "capacity_", None)
        plots = plot_rows(inference, data.X[eval_idx], data.y[eval_idx], capacity=capacity)
    fitted: dict[str, Any] = {
        k: (v.item() if isinstance(v, np.generic) else v)
        for k in ("n_estimators_", "termination_reason_")
        if isinstance(v := getattr(booster, k, None), int | str | np.integer)
    }
    if capacity is not None:  # what the automatic capacity chose, and its validation curves
        fitted["capacity_"] = capacity
    costs = inference.training_costs
    decision = {
        "rule": inference.rule,
        "trains_with_costs": algorithm.trains_with_costs,
        "training_costs": None if costs is None else costs.tolist(),
        "paper_rule": algorithm.decision_rule,
        "request_costs": _REQUEST_COSTS[inference.rule],
    }
    return FittedModel(
        inference,
        metrics,
        calibration_info,
        {k.rstrip("_"): v for k, v in fitted.items()},
        decision,
        plots,
    )


def train_and_register(
    sessions: sessionmaker[Session],
    name: str,
    data: TrainingData,
    spec: TrainingSpec,
    *,
    description: str | None = None,
    tags: dict[str, str] | None = None,
    max_seconds: float | None = None,
    limit_setting: str = LIMIT_SETTING,
    within: Callable[[Session, int], None] | None = None,
    stop: threading.Event | None = None,
) -> VersionView:
    """Train, then register version + artifact in one transaction (nothing on failure).

    A training that runs longer than ``max_seconds`` is stopped and raises
    :class:`app.errors.TrainingTimeLimit` naming ``limit_setting`` (see
    :mod:`app.services.deadline`). ``within(session, version)`` runs inside the
    registering transaction (a training job records its outcome there, so that the
    version and the job's success are committed together or not at all). When ``stop``
    is set (server shutdown) the training stops at its next round and raises
    :class:`app.errors.Unavailable`; nothing is registered.
    """
    if tags is not None:
        check_tags(tags)  # before spending time on training
    started = time.perf_counter()
    with training_deadline(max_seconds, limit_setting, stop=stop) as checkpoint:
        fit = fit_model(data, spec)
        checkpoint("registering")
    model = fit.inference
    params = {**asdict(spec), "fitted": fit.fitted, "decision": fit.decision}
    blob, sha = dump_model(model, metadata={"algorithm": spec.algorithm_name, "params": params})
    classes = list(model.classes)
    info = {
        "n_rows": int(len(data.y)),
        "n_features": int(data.X.shape[1]),
        "feature_names": data.feature_names,
        "classes": classes,
        "class_counts": {str(c): int((data.y == c).sum()) for c in classes},
        "positive_class": classes[1] if len(classes) == 2 else None,
        "fingerprint": fingerprint(data.X, data.y),
        "missing_values": int(np.isnan(data.X).sum()),
    }
    seconds = time.perf_counter() - started
    with database_errors(), sessions.begin() as session:
        reg = Registry(session)
        m = reg.get_or_create_model(name, description=description, tags=tags)
        if description is not None:
            m.description = description
        if tags is not None:
            m.tags = dict(tags)
        v = reg.add_version(
            m,
            algorithm=spec.algorithm_name,
            params=params,
            calibration=fit.calibration,
            data=info,
            metrics=fit.metrics,
            training_seconds=seconds,
            artifact=blob,
            artifact_sha256=sha,
        )
        reg.add_plots(v, fit.plots)
        if within is not None:
            within(session, v.version)
        view = version_view(name, v, [])
    log.info("registered %s v%d (%d rows, %.2fs)", name, view.version, len(data.y), seconds)
    return view


def validate_training(data: TrainingData, spec: TrainingSpec) -> None:
    """The checks :func:`fit_model` makes before training, without training (for jobs).

    Raises the same :class:`app.errors.InvalidArgument` errors, so that a job is never
    created for input that would fail at once.
    """
    with core_errors("algorithm"):
        algorithm = get_algorithm(spec.algorithm_name)
    with core_errors("params"):
        validate_params(algorithm, spec.params)
    _check_auto(spec)
    _check_classes(data.y, algorithm.family)
    _evaluation_split(data.y, spec.evaluation_fraction, spec.random_state)
