"""Use case: recalibrate a registered version without retraining (one unit of work).

A version's calibration is refitted (``platt`` or ``isotonic``; for K > 2 classes one
map per class, normalised) on the parent's raw scores (one per class for K > 2) of
labelled rows -- rows sent with the request (features and labels), or predictions of
that version in the prediction log whose outcomes were reported (their logged raw
scores: no features needed) -- and registered as the next version of the model. The new version shares the parent's booster: its artifact holds
the new map and names the artifact that holds the booster arrays
(:mod:`models.inference.artifacts`, format version 3), so they are stored once. Its records say
where it came from (``params.recalibration``: parent and base versions, method, source,
the window of outcomes) and which rows it used (``data``: counts per class and a
fingerprint of the rows, or of the prediction ids), and its ``metrics`` give Brier score,
log loss and ECE before (the parent) and after on a held-out part of those rows
(:mod:`models.feedback.recalibration`). The version row, its artifact and its plots are committed
together or not at all.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument, PayloadTooLarge
from app.registry.log_window import LogWindow, utc_iso
from app.registry.prediction_log import LabelledRows, PredictionLog
from app.registry.repository import reading
from app.services.common.core_errors import core_errors
from app.services.common.inputs import check_limits, features_matrix, fingerprint, records_matrix
from app.services.decisions.evaluation import labels_index
from app.services.model_registry.registration import NewVersion, register_version
from app.services.model_registry.service import VersionView
from app.services.model_registry.stored_models import read_stored
from app.services.plots.precompute import PlotRow, plot_rows, plot_rows_from
from models.evaluation.metrics import summarize
from models.feedback.recalibration import (
    Recalibration,
    check_recalibratable,
    raw_scores,
    recalibrate_scores,
)
from models.inference.artifacts import dump_model
from models.inference.model import InferenceModel

log = logging.getLogger(__name__)

__all__ = ["LabelledInput", "Recalibrator"]


@dataclass(frozen=True)
class LabelledInput:
    """Labelled rows sent with the request: ``instances`` or ``records``, and ``labels``."""

    labels: Sequence[Any]
    instances: Sequence[Sequence[float | None]] | None = None
    records: Sequence[Mapping[str, float | None]] | None = None


@dataclass(frozen=True)
class _Parent:
    version: int
    algorithm: str
    params: dict[str, Any]
    calibration: dict[str, Any]
    data: dict[str, Any]
    model: InferenceModel
    root: bytes  # the artifact that holds the booster arrays
    root_version: int


def _finite(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, int | float) and bool(np.isfinite(x))


def _logged_score(raw: Any, n_classes: int) -> float | list[float] | None:
    """A logged raw score as the calibration takes it (a number for two classes, one per
    class for more), or None when the row has none (e.g. logged by another kind of model)."""
    if n_classes == 2:
        return float(raw) if _finite(raw) else None
    if isinstance(raw, list) and len(raw) == n_classes and all(_finite(x) for x in raw):
        return [float(x) for x in raw]
    return None


def _before_calibration(scores: np.ndarray) -> np.ndarray | None:
    """The raw scores the calibration map takes, as the probabilities "before calibration"
    of the reliability plot (:func:`models.evaluation.plots.uncalibrated_proba` on rows):
    two classes, ``s(x)`` in [0, 1] as ``[1 - s, s]``; K classes, the K scores normalised."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim == 1:
        return np.column_stack([1.0 - s, s]) if np.all((s >= 0) & (s <= 1)) else None
    total = s.sum(axis=1, keepdims=True)
    if np.any(s < 0) or np.any(total <= 0):
        return None
    return s / total


def _ids_fingerprint(ids: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for pid in ids:
        digest.update(pid.encode())
        digest.update(b"\n")
    return digest.hexdigest()


class Recalibrator:
    """Recalibrates registered versions (the door of ``POST .../recalibrate``)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        max_rows: int = 1_000_000,
        max_features: int = 10_000,
        max_cells: int = 50_000_000,
    ) -> None:
        self._sessions = sessions
        self.max_rows = max_rows
        self.max_features = max_features
        self.max_cells = max_cells

    # ------------------------------------------------------------------ reading
    def _parent(
        self, name: str, version: int, window: LogWindow | None
    ) -> tuple[_Parent, LabelledRows | None]:
        with reading(self._sessions) as reg:
            s = reg.session
            v = reg.get_version(name, version)
            stored = read_stored(reg, v)
            logged = None
            if window is not None:
                logged = PredictionLog(s).labelled_rows(name, version, window)
            fields = (
                v.algorithm,
                dict(v.params or {}),
                dict(v.calibration or {}),
                dict(v.data or {}),
            )
        model = stored.load()
        with core_errors("version"):
            check_recalibratable(model)
        root = stored.base if stored.base is not None else stored.blob
        root_version = stored.base_version if stored.base_version is not None else version
        return _Parent(version, *fields, model, root, root_version), logged

    def _from_rows(self, model: InferenceModel, rows: LabelledInput) -> tuple[np.ndarray, ...]:
        field = "instances" if rows.instances is not None else "records"
        data: Sequence[Any] = rows.instances if rows.instances is not None else rows.records or []
        check_limits(
            len(data),
            model.n_features,
            max_rows=self.max_rows,
            max_features=self.max_features,
            max_cells=self.max_cells,
            field=field,
        )
        if rows.instances is not None:
            X = features_matrix(rows.instances, field="instances", n_features=model.n_features)
        else:
            X = records_matrix(rows.records or [], model.feature_names)
        y = labels_index(rows.labels, model.classes, len(X))
        with core_errors(field):
            scores = raw_scores(model, X)
        return X, y, scores

    def _from_log(
        self, name: str, version: int, logged: LabelledRows, window: LogWindow, n_classes: int
    ) -> tuple[np.ndarray, np.ndarray]:
        field = "from_outcomes"
        span = window.between()
        if len(logged) == 0:
            raise InvalidArgument(
                f"{field}: version {version} of model {name!r} has no logged predictions with "
                f"a reported outcome {span}; report outcomes (POST /v1/models/{name}/outcomes) "
                "or widen since/until",
                field=field,
            )
        if len(logged) > self.max_rows:
            raise PayloadTooLarge(
                f"{field}: {len(logged)} labelled predictions {span}, over the limit of "
                f"{self.max_rows} rows (setting COSTWISE_MAX_TRAIN_ROWS); narrow since/until",
                field=field,
            )
        k = n_classes
        scores = np.empty(len(logged) if k == 2 else (len(logged), k), dtype=np.float64)
        for i, raw in enumerate(logged.raw_scores):
            value = _logged_score(raw, k)
            if value is None:
                expected = "a number" if k == 2 else f"{k} numbers, one per class"
                raise InvalidArgument(
                    f"{field}: logged prediction {logged.prediction_ids[i]!r} has no raw score "
                    f"of this model's calibration ({expected}; got {raw!r:.80}); it cannot be "
                    "used",
                    field=field,
                )
            scores[i] = value
        return scores, np.asarray(logged.labels, dtype=np.int64)

    # ------------------------------------------------------------------ the use case
    def recalibrate(
        self,
        name: str,
        version: int,
        *,
        method: str = "platt",
        rows: LabelledInput | None = None,
        outcomes: LogWindow | None = None,
        holdout_fraction: float = 0.3,
        random_state: int | None = 0,
    ) -> VersionView:
        """Fit a new calibration map for ``version`` and register it as the next version.

        Exactly one of ``rows`` and ``outcomes`` gives the labelled rows. Raises
        :class:`app.errors.InvalidArgument` (422) for a model that cannot be recalibrated
        (no calibration map over a raw score: angle-based, JOUS-Boost), rows with the wrong features, labels that are not the model's
        classes, too few labelled rows or one class only, and a window without labelled
        predictions; NotFound for an unknown model or version. Nothing is written then.
        """
        if (rows is None) == (outcomes is None):
            raise InvalidArgument(
                "give labelled rows (instances or records, and labels) or from_outcomes, "
                "not both or neither",
                field="from_outcomes",
            )
        started = time.perf_counter()
        parent, logged = self._parent(name, version, outcomes)
        model = parent.model
        X: np.ndarray | None = None
        if rows is not None:
            X, y, scores = self._from_rows(model, rows)
            label_field = "labels"
        else:
            assert outcomes is not None and logged is not None
            scores, y = self._from_log(name, version, logged, outcomes, model.n_classes)
            label_field = "from_outcomes"
        with core_errors(label_field):
            rec = recalibrate_scores(
                model,
                scores,
                y,
                method,
                holdout_fraction=holdout_fraction,
                random_state=random_state,
            )
        source: dict[str, Any] = {"source": "rows" if rows is not None else "outcomes"}
        if outcomes is not None and logged is not None:
            source.update(
                **outcomes.iso("microseconds"),
                first_prediction_at=utc_iso(logged.created_at[0], "microseconds"),
                last_prediction_at=utc_iso(logged.created_at[-1], "microseconds"),
            )
        recalibration = {
            "parent_version": parent.version,
            "base_version": parent.root_version,
            "method": method,
            "holdout_fraction": holdout_fraction,
            "random_state": random_state,
            **source,
        }
        blob, sha = dump_model(rec.model, {"recalibration": recalibration}, base=parent.root)
        documents = self._documents(parent, rec, recalibration, y, scores, X, logged)
        hold = rec.holdout_rows
        classes = np.asarray(model.classes, dtype=object)
        plots: list[PlotRow]
        if X is not None:  # the held-out rows' plots, as training computes them
            plots = plot_rows(rec.model, X[hold], classes[y[hold]])
        else:  # the same plots from the held-out logged scores (no features are logged)
            plots = plot_rows_from(
                rec.model,
                classes[y[hold]],
                rec.holdout_proba,
                _before_calibration(scores[hold]),
                y_index=y[hold],
            )
        seconds = time.perf_counter() - started
        new = NewVersion(
            algorithm=parent.algorithm,
            params=documents["params"],
            calibration=documents["calibration"],
            data=documents["data"],
            metrics=documents["metrics"],
            training_seconds=seconds,
            artifact=blob,
            artifact_sha256=sha,
            plots=plots,
        )
        view = register_version(self._sessions, name, new)
        log.info(
            "recalibrated %s v%d -> v%d (%s, %d rows)",
            name,
            version,
            view.version,
            method,
            len(y),
        )
        return view

    @staticmethod
    def _documents(
        parent: _Parent,
        rec: Recalibration,
        recalibration: dict[str, Any],
        y: np.ndarray,
        scores: np.ndarray,
        X: np.ndarray | None,
        logged: LabelledRows | None,
    ) -> dict[str, dict[str, Any]]:
        """The new version's params, calibration, data and metrics records."""
        classes = list(parent.model.classes)
        used: dict[str, Any] = {
            "source": recalibration["source"],
            "n_rows": int(len(y)),
            "n_features": parent.model.n_features,
            "feature_names": parent.data.get("feature_names"),
            "classes": classes,
            "class_counts": {
                str(c): int(n) for c, n in zip(classes, rec.class_counts, strict=True)
            },
        }
        if len(classes) == 2:
            used["positive_class"] = classes[1]
        if X is not None:
            used["fingerprint"] = fingerprint(X, y)
            used["missing_values"] = int(np.isnan(X).sum())
        elif logged is not None:
            used["prediction_ids_sha256"] = _ids_fingerprint(logged.prediction_ids)
            used["first_prediction_id"] = logged.prediction_ids[0]
            used["last_prediction_id"] = logged.prediction_ids[-1]
        hold = rec.holdout_rows
        if len(classes) == 2:
            headline = summarize(y[hold], rec.holdout_proba[:, 1])
        else:  # multiclass Brier (sum over classes), log loss, top-label ECE
            headline = {m: rec.after.get(m) for m in ("brier", "log_loss", "ece")}
        metrics: dict[str, Any] = {
            "n_evaluation": int(hold.size),
            **{k: v for k, v in headline.items() if v is not None},
            "recalibration": {"before": rec.before, "after": rec.after},
        }
        calibration = {
            "method": rec.method,
            "split": "recalibration",
            "n_calibration": int(rec.fit_rows.size),
            "n_holdout": int(rec.holdout_rows.size),
            "parent_version": parent.version,
            "parent_method": parent.calibration.get("method"),
            # the same raw score (s or s') as the parent's: its booster is shared
            "score": parent.calibration.get("score"),
        }
        params = {**parent.params, "recalibration": recalibration}
        return {"params": params, "calibration": calibration, "data": used, "metrics": metrics}
