"""Background upkeep of the prediction log: retention delete and the monitoring snapshot.

Every ``refresh_seconds`` (COSTWISE_MONITORING_REFRESH_SECONDS), in a worker thread,
never on the event loop: (1) logged predictions older than ``retention_days``
(COSTWISE_PREDICTION_LOG_DAYS, 0 = keep) are deleted in chunks of 10,000 rows, each its
own short transaction; (2) per registered model and logged version, the figures of
the last ``window_hours`` (coverage, realised / expected cost, ECE, ...) are
recomputed into :attr:`LogMaintenance.snapshot`, which ``/metrics`` publishes as
gauges. Only models that exist get series (their names come from the registry), so
the number of series is bounded by the registry. A failed round (database down) keeps
the last snapshot and is retried at the next. (3) Pending outcomes
(:mod:`app.registry.pending_outcomes`) whose log row has landed are joined (a safety
net: the log writer joins them after each batch), those received more than
``pending_seconds`` ago (COSTWISE_PENDING_OUTCOME_SECONDS) are deleted and counted as
``expired``, and the number still pending per model is kept in
:attr:`LogMaintenance.pending` for ``/metrics``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.errors import ServiceError
from app.registry.orm import RegisteredModel
from app.registry.pending_outcomes import JOIN_ROWS, PendingCounters, PendingOutcomes
from app.registry.prediction_log import PredictionLog
from app.services.common.periodic import every
from app.services.feedback.monitoring import Monitoring

log = logging.getLogger(__name__)

__all__ = ["LogMaintenance"]


class LogMaintenance:
    """Retention and the monitoring snapshot (see the module docstring)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        monitoring: Monitoring,
        *,
        retention_days: float = 30.0,
        refresh_seconds: float = 60.0,
        window_hours: float = 24.0,
        pending_seconds: float = 86_400.0,
        counters: PendingCounters | None = None,
    ) -> None:
        self._sessions = sessions
        self._monitoring = monitoring
        self.retention_days = retention_days
        self.refresh_seconds = refresh_seconds
        self.window_hours = window_hours
        # (model name, version) -> figures of monitoring.summarise (swapped whole)
        self.snapshot: dict[tuple[str, int], dict[str, Any]] = {}
        self.deleted = 0
        self.pending_seconds = pending_seconds
        self.counters = counters if counters is not None else PendingCounters()
        self.pending: dict[str, int] = {}  # model name -> outcomes pending (last round)

    def _delete_until_none_left(self, delete: Callable[[Session], int]) -> int:
        """Run ``delete`` (one bounded batch) a transaction at a time until it deletes
        nothing; how many rows it deleted in all."""
        total = 0
        while True:
            with self._sessions.begin() as s:
                n = delete(s)
            total += n
            if n == 0:
                return total

    def purge(self, now: datetime | None = None) -> int:
        """Delete logged predictions older than the retention; how many (0: keep all)."""
        if self.retention_days <= 0:
            return 0
        cutoff = (now or datetime.now(UTC)) - timedelta(days=self.retention_days)
        total = self._delete_until_none_left(lambda s: PredictionLog(s).delete_before(cutoff))
        self.deleted += total
        return total

    def upkeep_pending(self, now: datetime | None = None) -> int:
        """Join the pending outcomes whose rows landed, expire the old ones (how many
        expired) and count what is left per model."""
        while True:
            with self._sessions.begin() as s:
                counts = PendingOutcomes(s).join()
            self.counters.add_join(counts)
            if counts.joined + counts.invalid + counts.conflict + counts.same < JOIN_ROWS:
                break
        cutoff = (now or datetime.now(UTC)) - timedelta(seconds=self.pending_seconds)
        expired = self._delete_until_none_left(lambda s: PendingOutcomes(s).expire(cutoff))
        if expired:
            log.warning("pending outcomes: %d expired without their prediction logged", expired)
            self.counters.add(expired=expired)
        with self._sessions() as s:
            by_id = PendingOutcomes(s).counts()
            names = {m: n for m, n in s.execute(select(RegisteredModel.id, RegisteredModel.name))}
        self.pending = {names[m]: n for m, n in by_id.items() if m in names}
        return expired

    def refresh(self, now: datetime | None = None) -> dict[tuple[str, int], dict[str, Any]]:
        """Recompute the snapshot of every model's logged versions over the window."""
        since = (now or datetime.now(UTC)) - timedelta(hours=self.window_hours)
        with self._sessions() as s:
            models = list(s.execute(select(RegisteredModel.id, RegisteredModel.name)))
        snapshot: dict[tuple[str, int], dict[str, Any]] = {}
        for model_id, name in models:
            for version, figures in self._monitoring.totals(model_id, since).items():
                snapshot[(name, version)] = figures
        self.snapshot = snapshot
        return snapshot

    def run_once(self) -> bool:
        """One round (blocking: call it in a worker thread); False if it failed."""
        try:
            removed = self.purge()
            if removed:
                log.info("prediction log: %d rows past retention deleted", removed)
            self.refresh()
            self.upkeep_pending()
        except ServiceError as error:  # the database unavailable: translated below us
            log.warning("prediction log upkeep failed (retried later): %s", error)
            return False
        except Exception:  # a background round must not end the loop; logged with its trace
            log.exception("prediction log upkeep failed (retried later)")
            return False
        return True

    def running(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Run a round now (in a thread) and every ``refresh_seconds`` until the block ends."""
        return every(self.refresh_seconds, self.run_once)
