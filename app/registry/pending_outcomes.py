"""Pending outcomes: every query on ``pending_outcomes`` goes through here.

An outcome whose prediction id is not (yet) in ``logged_predictions`` is kept here
(:meth:`PendingOutcomes.keep`) instead of being answered ``unknown``: the log writer
may be behind the answer by a few batches, and a client that sends its own ``ids``
may report before it predicts. :meth:`PendingOutcomes.join` moves every pending
outcome whose log row has landed into that row (label index, cost, ``labelled_at``)
and deletes it, validating the label against the classes of the version that made
the prediction.

No outcome can be missed by a race between the log insert and the report: each side
commits its own write first and only then looks for the other (the writer joins after
its insert committed, :mod:`app.services.feedback.outcomes` after the pending rows committed).
Whichever commits second finds the other's row, because its look-up starts after both
commits under PostgreSQL's READ COMMITTED (each statement sees what was committed
before it began) and SQLite's single writer. When both find it, the update is guarded
by ``label IS NULL`` and the delete by the pending row's id, so it is applied once.
Like every repository it flushes, never commits, and turns database errors into
domain errors.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from app.db import database_errors
from app.errors import Unavailable
from app.registry.orm import LoggedPrediction, ModelVersion, PendingOutcome, utcnow
from app.registry.prediction_log import label_once

__all__ = ["JoinCounts", "PendingCounters", "PendingOutcomes", "join_pending", "label_index"]

_P = cast(Table, PendingOutcome.__table__)
_L = cast(Table, LoggedPrediction.__table__)
_CHUNK = 500  # ids per IN (...) list
JOIN_ROWS = 5_000  # pending outcomes joined per transaction


def label_index(label: Any, classes: Sequence[Any]) -> int | None:
    """Index of ``label`` among ``classes`` (same JSON type and value), else None."""
    for i, c in enumerate(classes):
        if type(label) is type(c) and label == c:
            return i
    return None


@dataclass
class JoinCounts:
    """What one :meth:`PendingOutcomes.join` did."""

    joined: int = 0  # recorded into their log rows
    invalid: int = 0  # label not a class of the version that predicted: discarded
    conflict: int = 0  # the log row already had a different outcome: discarded
    same: int = 0  # the log row already had this outcome (joined by someone else)
    status: dict[str, str] = field(default_factory=dict)  # prediction id -> what happened


@dataclass
class PendingCounters:
    """Process-wide counts of pending outcomes since start, by what became of them
    (read by ``/metrics``; shared by the log writer, the outcomes service and upkeep)."""

    joined: int = 0
    invalid: int = 0
    conflict: int = 0
    expired: int = 0
    refused: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for key, n in counts.items():
                setattr(self, key, getattr(self, key) + n)

    def add_join(self, counts: JoinCounts) -> None:
        self.add(joined=counts.joined, invalid=counts.invalid, conflict=counts.conflict)


class PendingOutcomes:
    """Pending outcomes of registered models, within one session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def find(self, model_id: int, prediction_ids: Sequence[str]) -> dict[str, tuple[Any, Any]]:
        """``{prediction_id: (label, cost)}`` of the pending outcomes among the ids."""
        found: dict[str, tuple[Any, Any]] = {}
        with database_errors():
            for start in range(0, len(prediction_ids), _CHUNK):
                chunk = list(prediction_ids[start : start + _CHUNK])
                query = select(_P.c.prediction_id, _P.c.label, _P.c.cost).where(
                    _P.c.model_id == model_id, _P.c.prediction_id.in_(chunk)
                )
                found.update(
                    {pid: (label, cost) for pid, label, cost in self.session.execute(query)}
                )
        return found

    def model_classes(self, model_id: int) -> list[Any]:
        """The classes of every version of ``model_id`` (each (type, value) once): what
        a pending outcome's label must be one of."""
        query = select(ModelVersion.data).where(ModelVersion.model_id == model_id)
        seen: dict[tuple[type, Any], Any] = {}
        with database_errors():
            for data in self.session.scalars(query):
                for c in (data or {}).get("classes") or []:
                    if isinstance(c, (str, int, float, bool)):
                        seen.setdefault((type(c), c), c)
        return list(seen.values())

    def count(self, model_id: int) -> int:
        with database_errors():
            query = select(func.count()).select_from(_P).where(_P.c.model_id == model_id)
            return int(self.session.scalar(query) or 0)

    def counts(self) -> dict[int, int]:
        """Pending outcomes per model id (models with none are absent)."""
        with database_errors():
            query = select(_P.c.model_id, func.count()).group_by(_P.c.model_id)
            return {int(m): int(n) for m, n in self.session.execute(query)}

    def keep(self, model_id: int, items: Sequence[tuple[str, Any, float | None]]) -> set[str]:
        """Insert ``(prediction_id, label, cost)`` unless the id is already pending;
        the ids inserted (flushed). A concurrent report of the same id loses quietly
        (``ON CONFLICT DO NOTHING``): the caller compares with what is stored."""
        if not items:
            return set()
        dialect = self.session.get_bind().dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        now = utcnow()
        inserted: set[str] = set()
        with database_errors():
            for start in range(0, len(items), _CHUNK):
                chunk = items[start : start + _CHUNK]
                stmt = (
                    insert(PendingOutcome)
                    .values(
                        [
                            {
                                "model_id": model_id,
                                "prediction_id": pid,
                                "label": label,
                                "cost": cost,
                                "received_at": now,
                            }
                            for pid, label, cost in chunk
                        ]
                    )
                    .on_conflict_do_nothing(index_elements=["model_id", "prediction_id"])
                    .returning(_P.c.prediction_id)
                )
                inserted.update(self.session.scalars(stmt))
            self.session.flush()
        return inserted

    def join(
        self,
        model_ids: Iterable[int] | None = None,
        prediction_ids: Sequence[str] | None = None,
        limit: int = JOIN_ROWS,
    ) -> JoinCounts:
        """Record the pending outcomes whose log row exists into it, then delete them.

        Restricted to ``model_ids`` and/or ``prediction_ids`` when given; at most
        ``limit`` per call (the caller loops while the count is full). The label is
        checked against the classes of the version that made the prediction: not one
        of them is ``invalid``; a log row that already has a different outcome is a
        ``conflict`` (a recorded outcome is final); both are discarded (and counted by
        the caller). Flushed, not committed."""
        query = select(
            _P.c.id,
            _P.c.model_id,
            _P.c.prediction_id,
            _P.c.label,
            _P.c.cost,
            _L.c.label,
            _L.c.outcome_cost,
            _L.c.version_id,
        ).join(_L, (_L.c.model_id == _P.c.model_id) & (_L.c.prediction_id == _P.c.prediction_id))
        if model_ids is not None:
            query = query.where(_P.c.model_id.in_(sorted(set(model_ids))))
        counts = JoinCounts()
        with database_errors():
            if prediction_ids is not None:
                rows = []
                for start in range(0, len(prediction_ids), _CHUNK):
                    chunk = list(prediction_ids[start : start + _CHUNK])
                    rows += list(self.session.execute(query.where(_P.c.prediction_id.in_(chunk))))
            else:
                rows = list(self.session.execute(query.order_by(_P.c.id).limit(limit)))
            if not rows:
                return counts
            classes = self._classes({row[-1] for row in rows})
            now = utcnow()
            done: list[int] = []
            for pending_id, model_id, pid, label, cost, current, current_cost, vid in rows:
                done.append(pending_id)
                index = label_index(label, classes.get(vid, []))
                if index is None:
                    counts.invalid += 1
                    counts.status[pid] = "invalid"
                    continue
                status, _, _ = label_once(
                    self.session, model_id, pid, index, cost, now, current, current_cost
                )
                counts.status[pid] = status
                if status == "recorded":
                    counts.joined += 1
                elif status == "unchanged":
                    counts.same += 1
                else:
                    counts.conflict += 1
            for start in range(0, len(done), _CHUNK):
                self.session.execute(delete(_P).where(_P.c.id.in_(done[start : start + _CHUNK])))
            self.session.flush()
        return counts

    def _classes(self, version_ids: set[int]) -> dict[int, list[Any]]:
        """Classes of each version id, read once per join (a version's data, parsed per
        pending row, cost the writer memory and time when thousands were pending)."""
        query = select(ModelVersion.id, ModelVersion.data).where(
            ModelVersion.id.in_(sorted(version_ids))
        )
        return {
            vid: list((data or {}).get("classes") or [])
            for vid, data in self.session.execute(query)
        }

    def expire(self, cutoff: datetime, limit: int = 10_000) -> int:
        """Delete at most ``limit`` pending outcomes received before ``cutoff``; how many."""
        oldest = select(_P.c.id).where(_P.c.received_at < cutoff).limit(limit)
        with database_errors():
            ids = list(self.session.scalars(oldest))
            if ids:
                self.session.execute(delete(_P).where(_P.c.id.in_(ids)))
                self.session.flush()
        return len(ids)


def join_pending(engine: Engine, model_ids: Iterable[int]) -> JoinCounts:
    """:meth:`PendingOutcomes.join` for ``model_ids`` in a transaction of its own on
    ``engine`` (what the log writer runs right after each batch's commit); database
    errors become :class:`~app.errors.Unavailable`, as :func:`write_rows` does."""
    try:
        with Session(engine) as session, session.begin():
            return PendingOutcomes(session).join(model_ids)
    except SQLAlchemyError as error:
        raise Unavailable(f"pending outcomes not joined ({type(error).__name__})") from error
