"""Where jobs run: the queue interface and the embedded (in-process) queue.

``COSTWISE_QUEUE=inprocess`` (the default) runs jobs in a bounded thread pool inside
the API process (``COSTWISE_JOB_CONCURRENCY`` threads), so that one command still runs
everything. A sweeper thread re-queues jobs whose worker died (see
:func:`app.services.jobs.runner.recover_abandoned`) and, at start-up, picks up the jobs
that a previous process left queued or running. ``COSTWISE_QUEUE=redis`` sends jobs to
arq workers instead (:mod:`app.services.jobs.redis_queue`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Protocol

from sqlalchemy.orm import Session, sessionmaker

from app.registry.jobs import JobRepository
from app.registry.orm import utcnow
from app.services.jobs.runner import JobRunner, recover_abandoned
from app.settings import Settings

log = logging.getLogger(__name__)


class JobQueue(Protocol):
    """What the job service needs from a queue."""

    async def enqueue(self, job_id: str) -> None:
        """Hand the (already stored, queued) job to a worker; raise when unreachable."""

    def start(self) -> None:
        """Start background work (called once by the app's start-up)."""

    async def close(self) -> None:
        """Stop: running in-process jobs are interrupted and left queued."""

    async def ready(self) -> bool:
        """Whether the queue can take a job now (bounded in time)."""


def sweep_period(settings: Settings) -> float:
    """How often to look for abandoned jobs: half the heartbeat timeout, 0.2..10 s."""
    return max(0.2, min(settings.job_heartbeat_timeout / 2, 10.0))


class InProcessQueue:
    """Jobs run by a thread pool of this process."""

    def __init__(self, sessions: sessionmaker[Session], settings: Settings) -> None:
        self.sessions = sessions
        self.settings = settings
        self.runner = JobRunner(sessions, settings)
        self._known: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._stop.set()  # until start()
        self._pool: ThreadPoolExecutor | None = None

    def submit(self, job_id: str) -> None:
        with self._lock:
            if job_id in self._known or self._stop.is_set() or self._pool is None:
                return
            self._known.add(job_id)
            self._pool.submit(self._run, job_id)

    def _run(self, job_id: str) -> None:
        try:
            status = self.runner.run(job_id)
            log.info("job %s: %s", job_id, status)
        except Exception:  # the database went away mid-job: the sweeper will retry it
            log.exception("job %s: runner error", job_id)
        finally:
            with self._lock:
                self._known.discard(job_id)

    async def enqueue(self, job_id: str) -> None:
        self.submit(job_id)

    async def ready(self) -> bool:
        return True  # threads of this process

    def start(self) -> None:
        """Start the pool and the sweeper (again after :meth:`close`: an app's lifespan
        may run more than once)."""
        with self._lock:
            if self._pool is not None:
                return
            self._stop.clear()
            self.runner.shutdown.clear()
            self._pool = ThreadPoolExecutor(
                self.settings.job_concurrency, thread_name_prefix="costwise-job"
            )
        threading.Thread(target=self._sweep, name="costwise-sweeper", daemon=True).start()

    def sweep_once(self, *, startup: bool = False) -> None:
        """Re-queue abandoned jobs and run queued jobs that no live process has taken.

        At start-up every queued job is taken (claiming is atomic, so a job that another
        live process runs too is run once); later only those queued for longer than the
        heartbeat timeout, i.e. left by a process that has gone.
        """
        timeout = self.settings.job_heartbeat_timeout
        for job_id in recover_abandoned(self.sessions, timeout):
            self.submit(job_id)
        with self.sessions.begin() as session:
            older = None if startup else utcnow() - timedelta(seconds=timeout)
            orphans = JobRepository(session).ids("queued", older_than=older)
        for job_id in orphans:
            self.submit(job_id)

    def _sweep(self) -> None:
        first = True
        while first or not self._stop.wait(sweep_period(self.settings)):
            try:
                self.sweep_once(startup=first)
            except Exception:
                log.warning("job sweeper failed; retrying", exc_info=True)
            first = False

    async def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            self._stop.set()
            self.runner.shutdown.set()
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)
