"""Use case: train a calibrated model and register it as a new version (one unit of work)."""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit
from sqlalchemy.orm import Session, sessionmaker

from app.db import database_errors
from app.errors import InvalidArgument
from app.registry.repository import Registry
from app.services._core import core_errors
from app.services.catalog import VersionView, version_view
from app.services.data import fingerprint
from models.algorithms import get_algorithm, validate_params
from models.artifacts import dump_model
from models.calibrated import CalibratedBoosting
from models.metrics import summarize

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainingSpec:
    """Training parameters (see :class:`app.api.schemas.TrainingParams` for their meaning)."""

    algorithm: str = "adaboost"
    params: dict[str, Any] = field(default_factory=dict)
    n_estimators: int = 100
    weak_learner: str = "stump"
    max_depth: int = 3
    score: str = "vote"
    calibration: str = "platt"
    calibration_split: str = "holdout"
    calibration_fraction: float = 1.0 / 3.0
    n_folds: int = 5
    evaluation_fraction: float = 0.2
    random_state: int | None = 0


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


def fit_model(data: TrainingData, spec: TrainingSpec) -> tuple[CalibratedBoosting, dict[str, Any]]:
    """Fit the calibrated model and measure it on a stratified evaluation split."""
    with core_errors("algorithm"):
        algorithm = get_algorithm(spec.algorithm)
    with core_errors("params"):
        params = validate_params(algorithm, spec.params)
    classes = np.unique(data.y)
    if len(classes) != 2:
        raise InvalidArgument(
            f"labels: exactly two classes are needed, got {len(classes)} ({classes.tolist()[:10]})",
            field="labels",
        )
    train_idx, eval_idx = _evaluation_split(data.y, spec.evaluation_fraction, spec.random_state)
    common = {
        "n_estimators": spec.n_estimators,
        "weak_learner": spec.weak_learner,
        "max_depth": spec.max_depth,
        "score_kind": spec.score,
        "random_state": spec.random_state,
    }
    with core_errors("params"):
        booster = algorithm.build(common, params)
    model = CalibratedBoosting(
        booster,
        method=spec.calibration,
        split=spec.calibration_split,
        calibration_fraction=spec.calibration_fraction,
        n_folds=spec.n_folds,
        random_state=spec.random_state,
    )
    with core_errors("labels"):
        model.fit(data.X[train_idx], data.y[train_idx])
    metrics: dict[str, Any] = {"n_evaluation": int(len(eval_idx))}
    if len(eval_idx):
        p1 = model.predict_proba(data.X[eval_idx])[:, 1]
        y01 = (data.y[eval_idx] == model.classes_[1]).astype(np.int8)
        summary = summarize(y01, p1)
        metrics.update(
            {k: None if v is None or not np.isfinite(v) else float(v) for k, v in summary.items()}
        )
    return model, metrics


def train_and_register(
    sessions: sessionmaker[Session],
    name: str,
    data: TrainingData,
    spec: TrainingSpec,
    *,
    description: str | None = None,
    tags: dict[str, str] | None = None,
) -> VersionView:
    """Train, then register version + artifact in one transaction (nothing on failure)."""
    started = time.perf_counter()
    model, metrics = fit_model(data, spec)
    booster = model.estimator_
    inference = model.to_inference(data.feature_names)
    params = asdict(spec)
    fitted = {
        "n_estimators": int(booster.n_estimators_),
        "termination_reason": str(booster.termination_reason_),
    }
    blob, sha = dump_model(
        inference, metadata={"algorithm": spec.algorithm, "params": params, "fitted": fitted}
    )
    classes = model.classes_.tolist()
    counts = {str(c): int((data.y == c).sum()) for c in model.classes_}
    info = {
        "n_rows": int(len(data.y)),
        "n_features": int(data.X.shape[1]),
        "feature_names": data.feature_names,
        "classes": classes,
        "class_counts": counts,
        "positive_class": classes[1],
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
            algorithm=spec.algorithm,
            params={**params, "fitted": fitted},
            calibration=dict(model.calibration_info_),
            data=info,
            metrics=metrics,
            training_seconds=seconds,
            artifact=blob,
            artifact_sha256=sha,
        )
        view = version_view(name, v, [])
    log.info("registered %s v%d (%d rows, %.2fs)", name, view.version, len(data.y), seconds)
    return view
