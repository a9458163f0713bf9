"""Prior estimates and the logged probabilities they are computed from (queries only).

Like :class:`app.registry.repository.Registry` it adds and flushes, never commits: the
service owns the transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db import database_errors
from app.registry.log_window import LogWindow
from app.registry.orm import LoggedPrediction, PriorEstimate

__all__ = ["LoggedPosteriors", "PriorEstimateStore"]

_T = LoggedPrediction.__table__


@dataclass(frozen=True)
class LoggedPosteriors:
    """Logged probabilities of one version (what the decisions used) and the deployment
    priors each row was shifted to (None where none were applied), oldest first."""

    probabilities: list[list[float]]
    priors: list[list[float] | None]
    first_at: datetime | None
    last_at: datetime | None

    def __len__(self) -> int:
        return len(self.probabilities)


class PriorEstimateStore:
    """Prior estimates of versions, and the logged posteriors they need, in one session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def posteriors(
        self,
        version_id: int,
        window: LogWindow,
        limit: int,
    ) -> LoggedPosteriors:
        """The latest ``limit`` logged predictions of ``version_id`` in ``window``."""
        query = select(_T.c.probabilities, _T.c.priors, _T.c.created_at).where(
            _T.c.version_id == version_id, _T.c.probabilities.is_not(None)
        )
        query = (
            window.where(query, _T.c.created_at)
            .order_by(_T.c.created_at.desc(), _T.c.id.desc())
            .limit(limit)
        )
        with database_errors():
            rows = list(self.session.execute(query))[::-1]
        return LoggedPosteriors(
            [list(r[0]) for r in rows],
            [None if r[1] is None else list(r[1]) for r in rows],
            rows[0][2] if rows else None,
            rows[-1][2] if rows else None,
        )

    def add(self, estimate: PriorEstimate) -> PriorEstimate:
        """Add an estimate (flushed: its id and time are set)."""
        with database_errors():
            self.session.add(estimate)
            self.session.flush()
        return estimate

    def latest(self, version_id: int) -> PriorEstimate | None:
        """The most recent estimate of ``version_id``, or None."""
        query = (
            select(PriorEstimate)
            .where(PriorEstimate.version_id == version_id)
            .order_by(PriorEstimate.created_at.desc(), PriorEstimate.id.desc())
            .limit(1)
        )
        with database_errors():
            return self.session.scalars(query).first()


def estimate_fields(e: PriorEstimate) -> dict[str, Any]:
    """The JSON-able description of an estimate (API responses and provenance)."""
    return {
        "id": e.id,
        "version": e.version,
        "estimated_at": e.created_at,
        "since": e.since,
        "until": e.until,
        "n_rows": e.n_rows,
    }
