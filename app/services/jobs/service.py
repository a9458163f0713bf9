"""Use cases of training jobs: submit, look up, list, cancel.

Jobs are submitted by the training door (:class:`app.services.training.Trainer`), which
first checks what can be checked without training (algorithm, parameters, classes, the
evaluation split, tags), so that bad input is still refused synchronously (4xx) and no
job is created for it; submitting stores the job and its data (one transaction) and
hands the job to the queue. States: ``queued -> running ->
succeeded | failed | cancelled``; see :mod:`app.services.jobs.runner` for running.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from anyio import to_thread
from sqlalchemy.orm import Session, sessionmaker

from app.errors import Conflict
from app.registry.jobs import FINISHED, JobRepository, job_reading, job_transaction
from app.registry.orm import TrainingJob
from app.registry.validation import check_tags
from app.services.jobs.payload import pack_training_data
from app.services.jobs.queues import InProcessQueue, JobQueue
from app.services.training import TrainingJobRequest
from app.settings import Settings

__all__ = ["JobService", "JobView", "make_queue"]

_AFTER_BOOSTING = ("calibrating", "evaluating", "registering", "done")


@dataclass(frozen=True)
class JobView:
    """What the API shows of a job (see :class:`app.api.schemas.JobOut`)."""

    id: str
    model: str
    kind: str
    status: str
    phase: str
    done: int
    total: int
    progress: float
    attempts: int
    max_attempts: int
    cancel_requested: bool
    worker: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    timings: dict[str, float]
    version: int | None
    error: dict[str, Any] | None
    result: dict[str, Any] | None


def _progress(job: TrainingJob) -> float:
    if job.status == "succeeded" or job.phase in _AFTER_BOOSTING:
        return 1.0
    if job.total > 0:
        return round(min(1.0, job.done / job.total), 4)
    return 0.0


def job_view(job: TrainingJob) -> JobView:
    return JobView(
        id=job.id,
        model=job.model_name,
        kind=job.kind,
        status=job.status,
        phase=job.phase,
        done=job.done,
        total=job.total,
        progress=_progress(job),
        attempts=job.attempts,
        max_attempts=job.max_attempts,
        cancel_requested=job.cancel_requested,
        worker=job.worker,
        created_at=job.created_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        heartbeat_at=job.heartbeat_at,
        timings=dict(job.timings or {}),
        version=job.version,
        error=job.error,
        result=job.result,
    )


def make_queue(settings: Settings, sessions: sessionmaker[Session]) -> JobQueue:
    """The queue named by ``COSTWISE_QUEUE``."""
    if settings.queue == "redis":
        from app.services.jobs.redis_queue import RedisQueue  # arq is only needed with Redis

        return RedisQueue(settings)
    return InProcessQueue(sessions, settings)


class JobService:
    """Training jobs on the registry database, run by ``queue``."""

    def __init__(self, sessions: sessionmaker[Session], settings: Settings, queue: JobQueue):
        self.sessions = sessions
        self.settings = settings
        self.queue = queue

    def _create(self, r: TrainingJobRequest) -> JobView:
        if r.tags is not None:
            check_tags(r.tags)
        blob, sha = pack_training_data(r.data)  # a dataset job stores no rows: it reads them
        request: dict[str, Any] = {
            "spec": asdict(r.spec),
            "description": r.description,
            "tags": r.tags,
            "n_rows": int(len(r.data.y)) if r.dataset is None else r.n_rows,
            "n_features": int(r.data.X.shape[1]),
        }
        if r.dataset is not None:
            request["dataset"] = r.dataset
        job = TrainingJob(
            id=uuid.uuid4().hex,
            model_name=r.name,
            request=request,
            max_attempts=self.settings.job_max_attempts,
            total=r.total,
        )
        with job_transaction(self.sessions) as session:
            return job_view(JobRepository(session).add(job, blob, sha))

    async def _enqueue(self, view: JobView) -> JobView:
        """Enqueue the stored job ``view``; a job the queue refused is removed."""
        try:
            await self.queue.enqueue(view.id)
        except BaseException:
            await to_thread.run_sync(self._discard, view.id)
            raise
        return view

    def _discard(self, job_id: str) -> None:
        with job_transaction(self.sessions) as session:
            repo = JobRepository(session)
            if (job := repo.find(job_id)) is not None:
                session.delete(job)

    async def submit(self, request: TrainingJobRequest) -> JobView:
        """Store and enqueue a training job checked by the training door; a job the
        queue refused is removed."""
        return await self._enqueue(await to_thread.run_sync(self._create, request))

    def _create_batch(self, name: str, request: dict[str, Any], total: int) -> JobView:
        job = TrainingJob(
            id=uuid.uuid4().hex,
            model_name=name,
            kind="batch",
            request=request,
            max_attempts=self.settings.job_max_attempts,
            total=total,
        )
        with job_transaction(self.sessions) as session:
            return job_view(JobRepository(session).add(job, None, None))

    async def submit_batch(self, name: str, request: dict[str, Any], *, total: int) -> JobView:
        """Store and enqueue a batch job checked by the batch door
        (:class:`app.services.batch.service.BatchService`); ``total``: its input rows
        when known. A job the queue refused is removed."""
        view = await to_thread.run_sync(self._create_batch, name, request, total)
        return await self._enqueue(view)

    def get(self, job_id: str) -> JobView:
        with job_reading(self.sessions) as session:
            return job_view(JobRepository(session).get(job_id))

    def page(
        self, model: str | None, status: str | None, limit: int, offset: int
    ) -> tuple[list[JobView], int]:
        with job_reading(self.sessions) as session:
            jobs, total = JobRepository(session).page(model, status, limit, offset)
            return [job_view(j) for j in jobs], total

    def counts(self) -> dict[str, int]:
        """Jobs per status, from the database (what every replica and worker shares)."""
        with job_transaction(self.sessions) as session:
            return JobRepository(session).count_by_status()

    def cancel(self, job_id: str) -> JobView:
        """Queued: cancelled at once. Running: asked to stop. Finished: Conflict."""
        with job_transaction(self.sessions) as session:
            repo = JobRepository(session)
            job = repo.get(job_id)
            if job.status in FINISHED:
                raise Conflict(
                    f"job {job_id!r} is already {job.status}; only queued or running jobs "
                    "can be cancelled",
                    field="id",
                )
            queued = [TrainingJob.status == "queued"]
            if not repo.finish(job_id, "cancelled", queued, cancel_requested=True):
                repo.request_cancel(job_id)
            return job_view(repo.get(job_id))
