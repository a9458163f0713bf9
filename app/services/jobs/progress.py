"""A running job's progress: the training thread reports, a heartbeat thread writes.

The :mod:`models.boosting.progress` callback only updates memory (phase, round t of M, time per
phase) and raises :class:`models.exceptions.TrainingCancelled` once a stop was asked
for; it never touches the database, so a boosting round costs no I/O. A heartbeat
thread writes the progress and ``heartbeat_at`` every ``interval`` seconds in a short
transaction of its own (also while one long step reports nothing), reads
``cancel_requested``, and notices when the job is no longer this worker's (declared
abandoned and re-queued). A killed worker stops heartbeating, which is how others
tell that it died.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.registry.jobs import JobRepository, job_transaction
from models.exceptions import TrainingCancelled

log = logging.getLogger(__name__)

STOP_REASONS = ("cancel", "lost", "shutdown")


class JobProgress:
    """Progress of one attempt of one job; use as a context manager around the training."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        job_id: str,
        worker: str,
        attempt: int,
        *,
        interval: float,
        shutdown: threading.Event,
    ) -> None:
        self.sessions, self.job_id, self.worker, self.attempt = sessions, job_id, worker, attempt
        self.interval = interval
        self.shutdown = shutdown
        self.phase, self.done, self.total = "binning", 0, 0
        self.timings: dict[str, float] = {}
        self._phase_started = time.perf_counter()
        self.stop_reason: str | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._beat, name=f"costwise-heartbeat-{job_id[:8]}", daemon=True
        )

    # ---------------------------------------------------------------- training thread
    def callback(self, phase: str, done: int, total: int) -> None:
        """The :mod:`models.boosting.progress` callback (may raise TrainingCancelled)."""
        if self.shutdown.is_set() and self.stop_reason is None:
            self.stop_reason = "shutdown"
        if self.stop_reason is not None:
            raise TrainingCancelled(f"job stopped ({self.stop_reason})")
        with self._lock:
            if phase != self.phase:
                self._close_phase()
                if self.phase == "boosting" and self.done < self.total:
                    self.done += 1  # reports come before each round: the last one ran too
                self.phase = phase
            if total or done or phase == "boosting":  # rows with no total known: CSV
                self.done, self.total = done, total

    def _close_phase(self) -> None:
        now = time.perf_counter()
        self.timings[self.phase] = round(
            self.timings.get(self.phase, 0.0) + now - self._phase_started, 4
        )
        self._phase_started = now

    def snapshot(self, *, final: bool = False) -> dict[str, Any]:
        """What the job row shows now (``final``: close the current phase's timing)."""
        with self._lock:
            if final:
                self._close_phase()
            timings = dict(self.timings)
            if not final:
                timings[self.phase] = round(
                    timings.get(self.phase, 0.0) + time.perf_counter() - self._phase_started, 4
                )
            return {"phase": self.phase, "done": self.done, "total": self.total, "timings": timings}

    # ---------------------------------------------------------------- heartbeat thread
    def beat(self) -> None:
        """Write progress + heartbeat once; notice cancellation and lost ownership."""
        with job_transaction(self.sessions) as session:
            repo = JobRepository(session)
            owned = repo.progress(self.job_id, self.worker, self.attempt, **self.snapshot())
            cancel = repo.cancel_requested(self.job_id) if owned else False
        if not owned and self.stop_reason is None:
            log.warning("job %s: no longer owned by %s; stopping", self.job_id, self.worker)
            self.stop_reason = "lost"
        elif cancel and self.stop_reason is None:
            self.stop_reason = "cancel"

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.beat()
            except Exception:  # a database hiccup: try again at the next beat
                log.warning("job %s: heartbeat failed", self.job_id, exc_info=True)

    def __enter__(self) -> JobProgress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
