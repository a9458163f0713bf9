"""Running a job (training or batch), and recovering jobs whose worker died.

A ``batch`` job runs through the batch door (:meth:`app.services.batch.BatchService.run`):
its success and the move of its output into place happen in one transaction.

:meth:`JobRunner.run` is what a queue executes (a thread of the API process, or an arq
worker). It claims the job (one conditional UPDATE: at most one runner wins), trains
through the training door (:meth:`app.services.training.Trainer.register`, with the job
time limit), and
records the outcome: ``succeeded`` is written in the very transaction that registers
the version and its artifact, so a job is never half-registered; ``failed`` (with the
service error's code) and ``cancelled`` register nothing. A worker killed mid-job
simply stops heartbeating: :func:`recover_abandoned` then puts the job back in the
queue while it has attempts left, or fails it with ``JOB_ABANDONED``.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.errors import JobAbandoned, ServiceError
from app.registry.jobs import JobRepository, job_transaction
from app.registry.orm import TrainingJob, utcnow
from app.services.batch.service import BatchRequest, BatchService
from app.services.datasets import DatasetRef
from app.services.jobs.payload import unpack_training_data
from app.services.jobs.progress import JobProgress
from app.services.prediction.predictor import Predictor
from app.services.training import Trainer, TrainingData, TrainingSpec
from app.settings import Settings
from models.boosting.progress import progress_callback
from models.exceptions import TrainingCancelled

log = logging.getLogger(__name__)


def worker_name() -> str:
    """``host:pid``: who runs a job (shown in ``JobOut.worker``)."""
    return f"{socket.gethostname()}:{os.getpid()}"[:128]


class _LostJob(Exception):
    """The job stopped being this runner's before it could record success (rolls back)."""


class JobRunner:
    """Runs jobs for one process; ``shutdown`` set = stop running jobs and re-queue them."""

    def __init__(self, sessions: sessionmaker[Session], settings: Settings) -> None:
        self.sessions = sessions
        self.settings = settings
        self.trainer = Trainer(sessions, settings)  # the same door as the API's
        self.batches = BatchService(Predictor(sessions, cache_size=4), settings)
        self.worker = worker_name()
        self.shutdown = threading.Event()
        self.interrupted: list[str] = []  # jobs re-queued because of a shutdown

    def run(self, job_id: str) -> str:
        """Run the job if it can be claimed; returns its final status (or ``skipped``)."""
        stale_before = utcnow() - timedelta(seconds=self.settings.job_heartbeat_timeout)
        with job_transaction(self.sessions) as session:
            repo = JobRepository(session)
            attempt = repo.claim(job_id, self.worker, stale_before)
            if attempt is None:
                return "skipped"  # finished, cancelled, or run by another worker
            job = repo.get(job_id)
            name, request, kind = job.model_name, dict(job.request), job.kind
            blob, sha = b"", ""
            if kind != "batch":
                stored = repo.input(job_id)
                blob, sha = stored.data, stored.sha256
        log.info("job %s: attempt %d on %s", job_id, attempt, self.worker)
        progress = JobProgress(
            self.sessions,
            job_id,
            self.worker,
            attempt,
            interval=self.settings.job_progress_interval,
            shutdown=self.shutdown,
        )
        owned = JobRepository.owned_by(self.worker, attempt)

        def succeed(session: Session, version: int, result: dict[str, Any] | None = None) -> None:
            values = progress.snapshot(final=True)
            values.pop("phase")
            if not JobRepository(session).finish(
                job_id, "succeeded", owned, version=version, result=result, **values
            ):
                raise _LostJob(job_id)

        def succeed_batch(version: int, result: dict[str, Any], move: Callable[[], None]) -> None:
            with job_transaction(self.sessions) as session:
                succeed(session, version, result)
                move()  # the output into place: its failure rolls the success back

        try:
            if kind == "batch":
                with progress:
                    self.batches.run(
                        job_id,
                        name,
                        BatchRequest.from_json(request["batch"]),
                        progress.callback,
                        succeed_batch,
                        max_seconds=self.settings.max_job_seconds,
                    )
                return "succeeded"
            data: TrainingData | DatasetRef = (
                unpack_training_data(blob, sha)
                if request.get("dataset") is None
                else DatasetRef.from_mapping(request["dataset"])  # read by the job
            )
            with progress, progress_callback(progress.callback):
                self.trainer.register(
                    name,
                    data,
                    TrainingSpec(**request["spec"]),
                    description=request.get("description"),
                    tags=request.get("tags"),
                    as_job=True,  # COSTWISE_MAX_JOB_SECONDS
                    within=succeed,
                )
            return "succeeded"
        except TrainingCancelled:
            return self._stopped(job_id, progress, owned, attempt)
        except _LostJob:
            return "lost"
        except ServiceError as exc:
            error = {"code": exc.code, "detail": exc.detail, "field": exc.field}
        except Exception as exc:
            log.exception("job %s failed unexpectedly", job_id)
            what = "the batch" if kind == "batch" else "training"
            outcome = "no output was left" if kind == "batch" else "nothing was registered"
            detail = f"{what} failed unexpectedly ({type(exc).__name__}); {outcome}"
            error = {"code": "INTERNAL", "detail": detail, "field": None}
        with job_transaction(self.sessions) as session:
            JobRepository(session).finish(
                job_id, "failed", owned, error=error, **_timings(progress)
            )
        return "failed"

    def _stopped(self, job_id: str, progress: JobProgress, owned: list[Any], attempt: int) -> str:
        with job_transaction(self.sessions) as session:
            repo = JobRepository(session)
            if progress.stop_reason == "shutdown":
                if repo.requeue(job_id, owned, attempts=attempt - 1):
                    self.interrupted.append(job_id)
                return "queued"
            if progress.stop_reason == "cancel":
                repo.finish(job_id, "cancelled", owned, **_timings(progress))
                return "cancelled"
        return "lost"


def _timings(progress: JobProgress) -> dict[str, Any]:
    return {"timings": progress.snapshot(final=True)["timings"]}


def recover_abandoned(sessions: sessionmaker[Session], timeout: float) -> list[str]:
    """Re-queue (or fail) running jobs without a heartbeat for ``timeout`` s; re-queued ids."""
    stale_before = utcnow() - timedelta(seconds=timeout)
    requeued: list[str] = []
    with sessions.begin() as session:
        repo = JobRepository(session)
        for job in repo.stale(stale_before):
            same = [
                TrainingJob.status == "running",
                TrainingJob.attempts == job.attempts,
                TrainingJob.heartbeat_at < stale_before,
            ]
            if job.cancel_requested:
                repo.finish(job.id, "cancelled", same)
            elif job.attempts < job.max_attempts:
                if repo.requeue(job.id, same):
                    log.warning("job %s: worker %s lost; re-queued", job.id, job.worker)
                    requeued.append(job.id)
            else:
                error = JobAbandoned(
                    f"the worker {job.worker} stopped responding (no heartbeat for "
                    f"{timeout:g} s, setting COSTWISE_JOB_HEARTBEAT_TIMEOUT) during "
                    f"{job.phase}, attempt {job.attempts} of {job.max_attempts}; nothing "
                    "was registered"
                )
                detail = {"code": error.code, "detail": error.detail, "field": None}
                repo.finish(job.id, "failed", same, error=detail)
    return requeued
