"""The one door for training: :class:`Trainer`, built once by the app factory.

It owns what a training request brings (JSON rows or a CSV upload, turned into checked
arrays), the limits (rows, features, cells, classes, rounds, synchronous trainings at
once), the choice between training now and a training job, and the unit of work
(:meth:`Trainer.register`: train, then write the version and its artifact in one
transaction, nothing on failure). The HTTP route only parses and calls it; the job
runner and the ``costwise train`` command call :meth:`Trainer.register` too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, Literal, Protocol

import numpy as np
from anyio import to_thread
from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument, Unavailable
from app.registry.validation import check_tags
from app.services.common.inputs import (
    check_classes,
    check_limits,
    feature_names_checked,
    features_matrix,
    fingerprint,
    labels_array,
    parse_csv,
)
from app.services.common.slots import Slots
from app.services.datasets import DatasetReader, DatasetRef, OpenedDataset
from app.services.model_registry.registration import NewVersion, register_version
from app.services.model_registry.service import VersionView
from app.services.training.dataset import read_training_data, summary_info
from app.services.training.deadline import LIMIT_SETTING, training_deadline
from app.services.training.distributed import (
    check_distributed,
    cluster_rounds,
    fit_on_dask,
    routed,
)
from app.services.training.fit import fit_model
from app.services.training.spec import (
    TrainingData,
    TrainingSpec,
    checked_spec,
    planned_rounds,
    validate_training,
)
from app.settings import Settings
from models.inference.artifacts import dump_model

log = logging.getLogger(__name__)

__all__ = ["JOB_LIMIT_SETTING", "JobSubmitter", "Mode", "Trainer", "TrainingJobRequest"]

JOB_LIMIT_SETTING = "COSTWISE_MAX_JOB_SECONDS"
RETRY_AFTER_SECONDS = 1

Mode = Literal["auto", "job", "sync"]


@dataclass(frozen=True)
class TrainingJobRequest:
    """A training checked by the training door, to run as a job: ``total`` is the number
    of rounds it will report; with ``dataset`` the job reads its rows from this reference
    (``data`` then holds none, ``n_rows`` says how many the reference has)."""

    name: str
    data: TrainingData
    spec: TrainingSpec
    total: int
    description: str | None = None
    tags: dict[str, str] | None = None
    dataset: dict[str, Any] | None = None
    n_rows: int | None = None


class JobSubmitter(Protocol):
    """Where a training run as a job goes (:class:`app.services.jobs.service.JobService`)."""

    async def submit(self, request: TrainingJobRequest) -> Any: ...


def rows_data(
    s: Settings,
    features: Sequence[Sequence[float | None]],
    labels: Sequence[Any],
    feature_names: Sequence[str] | None = None,
) -> TrainingData:
    """Rows sent as JSON (``features``, ``labels``), checked against the limits of ``s``.

    A plain function of picklable arguments, so that a large body can be parsed and
    checked in a parse worker process (:mod:`app.api.bodies.parse_pool`).
    """
    check_limits(
        len(features),
        len(features[0]) if features else 0,
        max_rows=s.max_train_rows,
        max_features=s.max_features,
        max_cells=s.max_cells,
        field="features",
    )
    X = features_matrix(features, field="features")
    y = labels_array(labels, len(X))
    check_classes(y, s.max_classes)
    return TrainingData(X, y, feature_names_checked(feature_names, X.shape[1]))


def csv_data(s: Settings, content: bytes, label_column: str = "label") -> TrainingData:
    """A CSV file with a header row, checked against the limits of ``s`` while it is
    parsed (a file over them stops at the first row past them). A plain function of
    picklable arguments, like :func:`rows_data` (a parse worker process)."""
    X, y, names = parse_csv(
        content,
        label_column,
        max_rows=s.max_train_rows,
        max_features=s.max_features,
        max_cells=s.max_cells,
    )
    check_classes(y, s.max_classes, field=label_column)
    return TrainingData(X, y, names)


class Trainer:
    """Trains and registers versions: inputs, limits, job or now, one unit of work.

    ``jobs`` (the app's job service) is needed only by :meth:`train` for ``mode=job``;
    ``stopping`` (set on SIGTERM) stops a running synchronous training at its next
    round, registering nothing; ``registered(name)`` is told of every version
    registered by :meth:`train` (the app's list of known model names).
    """

    def __init__(
        self,
        sessions: sessionmaker[Session],
        settings: Settings | None = None,
        *,
        jobs: JobSubmitter | None = None,
        stopping: threading.Event | None = None,
        registered: Callable[[str], None] | None = None,
    ) -> None:
        self.sessions = sessions
        self.settings = settings or Settings()
        self.jobs = jobs
        self.stopping = stopping
        self.registered = registered
        self.slots = Slots(self.settings.max_sync_trainings)

    # ------------------------------------------------------------------ inputs
    def rows_data(
        self,
        features: Sequence[Sequence[float | None]],
        labels: Sequence[Any],
        feature_names: Sequence[str] | None = None,
    ) -> TrainingData:
        """Rows sent as JSON (``features``, ``labels``), checked against the limits."""
        return rows_data(self.settings, features, labels, feature_names)

    def csv_data(self, content: bytes, label_column: str = "label") -> TrainingData:
        """A CSV file with a header row (the ``file`` part), checked against the limits."""
        return csv_data(self.settings, content, label_column)

    def open_dataset(self, ref: DatasetRef) -> OpenedDataset:
        """Check and open a dataset reference under COSTWISE_DATA_ROOTS / _PROTOCOLS
        (403 outside them; 422 for a missing file, wrong format, absent column, ...)."""
        return DatasetReader.from_settings(self.settings).open(ref)

    def read_dataset(self, ref: DatasetRef, spec: TrainingSpec) -> TrainingData:
        """Open and read a reference into training data in bounded memory
        (:func:`app.services.training.dataset.read_training_data`)."""
        return read_training_data(self.open_dataset(ref), spec, self.settings)

    def check_rounds(self, spec: TrainingSpec) -> None:
        """Refuse more boosting rounds than COSTWISE_MAX_ROUNDS.

        An estimator that chooses its rounds itself (``auto``) is not refused: its
        search is capped at the limit instead (:func:`estimator_of`), so the default
        training works whatever the limit.
        """
        limit = self.settings.max_rounds
        if spec.n_estimators is not None and spec.n_estimators > limit:
            raise InvalidArgument(
                f"n_estimators: {spec.n_estimators} is over the limit of "
                f"{limit} (setting COSTWISE_MAX_ROUNDS)",
                field="n_estimators",
            )

    # ------------------------------------------------------------------ policy
    def runs_as_job(self, data: TrainingData | OpenedDataset, mode: Mode) -> bool:
        """``job``, or ``auto`` from COSTWISE_JOB_MIN_ROWS rows on (a dataset reference:
        also from COSTWISE_DATASET_JOB_BYTES bytes on, or when its row count is unknown
        and its size is not)."""
        if mode != "auto":
            return mode == "job"
        s = self.settings
        if isinstance(data, OpenedDataset):
            rows, size = data.num_rows, data.size_bytes
            return (
                (rows is not None and rows >= s.job_min_rows)
                or (size is not None and size >= s.dataset_job_bytes)
                or (rows is None and size is None)
            )
        return len(data.y) >= s.job_min_rows

    async def train(
        self,
        name: str,
        data: TrainingData | DatasetRef,
        spec: TrainingSpec,
        *,
        description: str | None = None,
        tags: dict[str, str] | None = None,
        mode: Mode = "auto",
    ) -> VersionView | Any:
        """Train now (returns the :class:`VersionView`) or as a job (returns the job's view).

        Input errors are raised at once in both cases. A ``distributed`` training (a
        Parquet reference trained on the Dask cluster) is always a job
        (:mod:`app.services.training.distributed`). A synchronous training over
        COSTWISE_MAX_SYNC_TRAININGS at once raises :class:`Unavailable` (``retry_after``
        seconds) without waiting; call from the event loop (training runs in a thread).
        """
        self.check_rounds(spec)
        check_distributed(spec, self.settings, data, mode)
        if isinstance(data, DatasetRef):
            return await self._train_dataset(name, data, spec, description, tags, mode)
        if self.runs_as_job(data, mode):
            if self.jobs is None:
                raise Unavailable("training jobs are not available here", field="mode")
            total = await to_thread.run_sync(
                self._job_total, data, spec, tags, self.settings.max_rounds
            )
            return await self.jobs.submit(
                TrainingJobRequest(name, data, spec, total, description, tags)
            )
        return await self._train_now(name, data, spec, description, tags)

    async def _train_dataset(
        self,
        name: str,
        ref: DatasetRef,
        spec: TrainingSpec,
        description: str | None,
        tags: dict[str, str] | None,
        mode: Mode,
    ) -> VersionView | Any:
        """A dataset reference: checked and opened now (4xx at once), read by the job or
        by the synchronous training. The synchronous training reads what was opened here:
        a URL is fetched once, before the training slot is taken, so a slow data server
        never holds a slot (a job fetches again in its worker, under the same deadline)."""
        if tags is not None:
            check_tags(tags)
        checked_spec(spec)
        opened = await to_thread.run_sync(self.open_dataset, ref)
        spec = routed(spec, self.settings, ref, opened.num_rows, mode)  # to the cluster?
        if not spec.distributed and not self.runs_as_job(opened, mode):
            return await self._train_now(name, opened, spec, description, tags)
        if self.jobs is None:
            raise Unavailable("training jobs are not available here", field="mode")
        # a distributed round grows every fold's booster at once: n_estimators rounds
        total = (
            cluster_rounds(spec, self.settings.max_rounds)
            if spec.distributed
            else planned_rounds(spec, 2, self.settings.max_rounds)
        )
        placeholder = TrainingData(
            np.empty((0, len(opened.feature_columns))), np.empty(0), opened.feature_columns
        )
        return await self.jobs.submit(
            TrainingJobRequest(
                name,
                placeholder,
                spec,
                total,
                description,
                tags,
                dataset=ref.to_mapping(),
                n_rows=opened.num_rows,
            )
        )

    async def _train_now(
        self,
        name: str,
        data: TrainingData | DatasetRef | OpenedDataset,
        spec: TrainingSpec,
        description: str | None,
        tags: dict[str, str] | None,
    ) -> VersionView:
        if not self.slots.try_acquire():
            raise Unavailable(
                f"{self.slots.limit} synchronous training(s) already running in this process "
                "(setting COSTWISE_MAX_SYNC_TRAININGS); retry shortly, or train as a job "
                "(mode=job)",
                field="mode",
                retry_after=RETRY_AFTER_SECONDS,
            )
        try:
            call = partial(self.register, name, data, spec, description=description, tags=tags)
            view = await to_thread.run_sync(call)
        finally:
            self.slots.release()
        if self.registered is not None:
            self.registered(name)
        return view

    @staticmethod
    def _job_total(
        data: TrainingData, spec: TrainingSpec, tags: dict[str, str] | None, max_rounds: int
    ) -> int:
        """Check what can be checked without training; the rounds the job will report."""
        if tags is not None:
            check_tags(tags)
        validate_training(data, spec, max_rounds)
        return planned_rounds(spec, len(np.unique(data.y)), max_rounds)

    # ------------------------------------------------------------ unit of work
    def register(
        self,
        name: str,
        data: TrainingData | DatasetRef | OpenedDataset,
        spec: TrainingSpec,
        *,
        description: str | None = None,
        tags: dict[str, str] | None = None,
        as_job: bool = False,
        within: Callable[[Session, int], None] | None = None,
    ) -> VersionView:
        """Train, then register version + artifact in one transaction (nothing on failure).

        A training that runs longer than COSTWISE_MAX_TRAINING_SECONDS (with ``as_job``:
        COSTWISE_MAX_JOB_SECONDS) is stopped and raises
        :class:`app.errors.TrainingTimeLimit` naming that setting (see
        :mod:`app.services.training.deadline`). ``within(session, version)`` runs inside the
        registering transaction (a training job records its outcome there, so that the
        version and the job's success are committed together or not at all). When
        ``stopping`` is set (server shutdown) the training stops at its next round and
        raises :class:`app.errors.Unavailable`; nothing is registered.
        """
        s = self.settings
        max_seconds, setting = (
            (s.max_job_seconds, JOB_LIMIT_SETTING)
            if as_job
            else (s.max_training_seconds, LIMIT_SETTING)
        )
        if tags is not None:
            check_tags(tags)  # before spending time on training
        started = time.perf_counter()
        with training_deadline(max_seconds, setting, stop=self.stopping) as checkpoint:
            if spec.distributed:  # the Dask workers read the files (a job's reference)
                opened = data if isinstance(data, OpenedDataset) else None
                if isinstance(data, DatasetRef):
                    opened = self.open_dataset(data)
                if opened is None:
                    raise InvalidArgument(
                        "distributed: a distributed training reads a dataset reference",
                        field="distributed",
                    )
                fit, info = fit_on_dask(opened, spec, s)
            else:
                if isinstance(data, DatasetRef):  # read under the same time limit
                    data = self.read_dataset(data, spec)
                elif isinstance(data, OpenedDataset):  # opened (a URL: fetched) by train()
                    data = read_training_data(data, spec, s)
                fit = fit_model(data, spec, s.max_rounds)
                info = data_info(data, list(fit.inference.classes))
            checkpoint("registering")
        model = fit.inference
        params = {**asdict(spec), "fitted": fit.fitted, "decision": fit.decision}
        blob, sha = dump_model(model, metadata={"algorithm": spec.algorithm_name, "params": params})
        seconds = time.perf_counter() - started
        new = NewVersion(
            algorithm=spec.algorithm_name,
            params=params,
            calibration=fit.calibration,
            data=info,
            metrics=fit.metrics,
            training_seconds=seconds,
            artifact=blob,
            artifact_sha256=sha,
            plots=fit.plots,
        )
        view = register_version(
            self.sessions,
            name,
            new,
            create=True,
            description=description,
            tags=tags,
            within=within,
        )
        log.info("registered %s v%d (%d rows, %.2fs)", name, view.version, info["n_rows"], seconds)
        return view


def data_info(data: TrainingData, classes: list[Any]) -> dict[str, Any]:
    """The ``data`` facts recorded on a version trained on ``data`` (rows in memory)."""
    info = {
        "n_rows": int(len(data.y)),
        "n_features": int(data.X.shape[1]),
        "feature_names": data.feature_names,
        "classes": classes,
        "class_counts": {str(c): int((data.y == c).sum()) for c in classes},
        "positive_class": classes[1] if len(classes) == 2 else None,
    }
    if data.source is None:
        info["fingerprint"] = fingerprint(data.X, data.y)
        info["missing_values"] = int(np.isnan(data.X).sum())
    else:  # read from a dataset reference (data.X may hold bin codes)
        info.update(summary_info(data.source))
    return info
