"""Repository of training jobs: every query on ``training_jobs``/``training_job_inputs``.

Like :class:`app.registry.repository.Registry` it adds and flushes, never commits: the
service owns the transaction. State changes that race with other processes (claiming
a job, writing progress, finishing, cancelling) are single conditional ``UPDATE``
statements, so that on SQLite and PostgreSQL alike exactly one writer wins: a job is
run by one worker at a time, and a worker that lost its job (it was declared
abandoned and re-queued) cannot record an outcome for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from app.db import database_errors
from app.errors import NotFound
from app.registry.orm import JOB_STATUSES, TrainingJob, TrainingJobInput, utcnow

__all__ = ["FINISHED", "JobRepository"]

FINISHED = ("succeeded", "failed", "cancelled")


class JobRepository:
    """Training jobs and their inputs, within one session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, job: TrainingJob, data: bytes | None, sha256: str | None) -> TrainingJob:
        """Insert a queued job and its input blob (None: a job without one, e.g. a batch)."""
        with database_errors():
            self.session.add(job)
            self.session.flush()
            if data is not None and sha256 is not None:
                self.session.add(TrainingJobInput(job_id=job.id, sha256=sha256, data=data))
                self.session.flush()
        return job

    def find(self, job_id: str) -> TrainingJob | None:
        with database_errors():
            return self.session.get(TrainingJob, job_id, populate_existing=True)

    def get(self, job_id: str) -> TrainingJob:
        """The job ``job_id``; raises NotFound."""
        job = self.find(job_id)
        if job is None:
            raise NotFound(f"job {job_id!r} not found", field="id")
        return job

    def page(
        self, model: str | None, status: str | None, limit: int, offset: int
    ) -> tuple[list[TrainingJob], int]:
        """Jobs, newest first, with the total matching the filters."""
        query = select(TrainingJob)
        if model is not None:
            query = query.where(TrainingJob.model_name == model)
        if status is not None:
            query = query.where(TrainingJob.status == status)
        with database_errors():
            total = self.session.scalar(select(func.count()).select_from(query.subquery()))
            page = query.order_by(TrainingJob.created_at.desc(), TrainingJob.id.desc())
            jobs = list(self.session.scalars(page.limit(limit).offset(offset)))
        return jobs, int(total or 0)

    def ids(self, status: str, *, older_than: datetime | None = None) -> list[str]:
        """Ids of jobs in ``status`` (created before ``older_than``), oldest first."""
        query = select(TrainingJob.id).where(TrainingJob.status == status)
        if older_than is not None:
            query = query.where(TrainingJob.created_at < older_than)
        with database_errors():
            return list(self.session.scalars(query.order_by(TrainingJob.created_at)))

    def input(self, job_id: str) -> TrainingJobInput:
        with database_errors():
            row = self.session.scalars(
                select(TrainingJobInput).where(TrainingJobInput.job_id == job_id)
            ).one_or_none()
        if row is None:
            raise NotFound(f"job {job_id!r} has no stored training data", field="id")
        return row

    def delete_input(self, job_id: str) -> None:
        with database_errors():
            self.session.execute(delete(TrainingJobInput).where(TrainingJobInput.job_id == job_id))

    def _update(self, job_id: str, where: list[Any], **values: Any) -> bool:
        statement = (
            update(TrainingJob)
            .where(TrainingJob.id == job_id, *where)
            .values(**values)
            .execution_options(synchronize_session=False)
        )
        with database_errors():
            return bool(self.session.execute(statement).rowcount)  # type: ignore[attr-defined]

    def claim(self, job_id: str, worker: str, stale_before: datetime) -> int | None:
        """Mark the job running for ``worker`` and return its attempt number, or None.

        A job can be claimed when it is queued, or running with a heartbeat older than
        ``stale_before`` (its worker died) and attempts left.
        """
        now = utcnow()
        claimable = (TrainingJob.status == "queued") | (
            (TrainingJob.status == "running")
            & (TrainingJob.heartbeat_at < stale_before)
            & (TrainingJob.attempts < TrainingJob.max_attempts)
        )
        won = self._update(
            job_id,
            [claimable, TrainingJob.cancel_requested.is_(False)],
            status="running",
            attempts=TrainingJob.attempts + 1,
            worker=worker,
            phase="binning",
            done=0,
            total=0,
            timings={},
            started_at=now,
            heartbeat_at=now,
            error=None,
        )
        return self.get(job_id).attempts if won else None

    @staticmethod
    def owned_by(worker: str, attempt: int) -> list[Any]:
        """Conditions under which ``worker``'s ``attempt`` still owns the running job."""
        return [
            TrainingJob.status == "running",
            TrainingJob.worker == worker,
            TrainingJob.attempts == attempt,
        ]

    def progress(self, job_id: str, worker: str, attempt: int, **values: Any) -> bool:
        """Write progress + heartbeat; False when the worker no longer owns the job."""
        return self._update(job_id, self.owned_by(worker, attempt), heartbeat_at=utcnow(), **values)

    def cancel_requested(self, job_id: str) -> bool:
        with database_errors():
            flag = self.session.scalar(
                select(TrainingJob.cancel_requested).where(TrainingJob.id == job_id)
            )
        return bool(flag)

    def finish(
        self, job_id: str, status: str, where: list[Any] | None = None, **values: Any
    ) -> bool:
        """Set a final ``status`` (when ``where`` holds) and delete the job's input."""
        won = self._update(
            job_id,
            where if where is not None else [TrainingJob.status.not_in(FINISHED)],
            status=status,
            phase="done",
            finished_at=utcnow(),
            **values,
        )
        if won:
            self.delete_input(job_id)
        return won

    def requeue(self, job_id: str, where: list[Any], **values: Any) -> bool:
        """Put a running job back in the queue (its worker died or is shutting down)."""
        return self._update(
            job_id, where, status="queued", phase="queued", worker=None, done=0, total=0, **values
        )

    def request_cancel(self, job_id: str) -> bool:
        """Ask the worker of a running job to stop; False unless it is running."""
        return self._update(job_id, [TrainingJob.status == "running"], cancel_requested=True)

    def stale(self, stale_before: datetime) -> list[TrainingJob]:
        """Running jobs whose last heartbeat is older than ``stale_before``."""
        query = select(TrainingJob).where(
            TrainingJob.status == "running", TrainingJob.heartbeat_at < stale_before
        )
        with database_errors():
            return list(self.session.scalars(query))

    def count_by_status(self) -> dict[str, int]:
        """Number of jobs in each status (every status listed, 0 when it has none)."""
        query = select(TrainingJob.status, func.count()).group_by(TrainingJob.status)
        with database_errors():
            counts = {status: int(n) for status, n in self.session.execute(query)}
        return {status: counts.get(status, 0) for status in JOB_STATUSES}


@contextmanager
def job_transaction(sessions: sessionmaker[Session]) -> Iterator[Session]:
    """A session in one transaction, committed at the end of the block; database errors
    anywhere in it (the commit's included) become :class:`~app.errors.Unavailable`."""
    with database_errors(), sessions.begin() as session:
        yield session


@contextmanager
def job_reading(sessions: sessionmaker[Session]) -> Iterator[Session]:
    """A session for reading (closed at the end); database errors become Unavailable."""
    with database_errors(), sessions() as session:
        yield session
