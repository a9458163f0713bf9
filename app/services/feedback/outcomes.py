"""Use case: late outcomes (true labels, realised costs) of logged predictions.

``POST /v1/models/{name}/outcomes`` reports, per prediction id, the true label and
optionally the realised cost. Each item is answered on its own and never fails the
batch: ``recorded`` (first report), ``unchanged`` (the same report again: idempotent),
``conflict`` (a different label or cost for a recorded or pending outcome: the first
report stands, nothing changes), ``pending`` (no prediction with this id is logged
yet: the outcome is kept, see :mod:`app.registry.pending_outcomes`, and recorded when
its log row lands, typically within COSTWISE_PREDICTION_LOG_FLUSH_SECONDS; it expires
after COSTWISE_PENDING_OUTCOME_SECONDS), ``invalid`` (a label that is not a class of
the version that made the prediction, or of any version of the model while it is
pending; a cost that is not a finite number >= 0) or ``refused`` (the model already has
COSTWISE_PENDING_OUTCOMES_MAX pending outcomes: report it again later). An id the
service answered is therefore never ``unknown``. A pending outcome whose label turns
out not to be a class of the version that predicted is discarded at the join and
counted (``costwise_pending_outcomes_total{result="invalid"}``). A batch naming the
same id twice is refused whole (422 naming the index): which of the two is meant
cannot be told.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument, ServiceError
from app.registry.orm import PREDICTION_ID_LENGTH
from app.registry.pending_outcomes import PendingCounters, PendingOutcomes, label_index
from app.registry.prediction_log import OutcomeResult, PredictionLog
from app.registry.repository import writing
from app.services.common.inputs import is_text

log = logging.getLogger(__name__)

__all__ = ["Outcome", "OutcomeReport", "Outcomes", "PendingCounters", "STATUSES"]

MAX_OUTCOMES = 10_000
#: Every status an outcome item can get (``unknown`` is no longer one: see above).
STATUSES = ("recorded", "unchanged", "conflict", "pending", "invalid", "refused")


@dataclass(frozen=True)
class Outcome:
    """One reported outcome (as parsed: the label of any JSON scalar type)."""

    id: str
    label: Any
    cost: float | None = None


@dataclass(frozen=True)
class OutcomeReport:
    model: str
    results: list[OutcomeResult]

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATUSES, 0)
        for r in self.results:
            out[r.status] += 1
        return out


def _check_batch(outcomes: Sequence[Outcome]) -> None:
    if not outcomes:
        raise InvalidArgument("outcomes: expected at least one outcome", field="outcomes")
    if len(outcomes) > MAX_OUTCOMES:
        raise InvalidArgument(
            f"outcomes: {len(outcomes)} is over the limit of {MAX_OUTCOMES} per request",
            field="outcomes",
        )
    seen: dict[str, int] = {}
    for i, o in enumerate(outcomes):
        if not 1 <= len(o.id) <= PREDICTION_ID_LENGTH or not is_text(o.id):
            raise InvalidArgument(
                f"outcomes[{i}].id: expected 1 to {PREDICTION_ID_LENGTH} characters (no NUL, "
                f"no lone surrogate such as \\ud800), got {o.id!r:.60}",
                field=f"outcomes[{i}].id",
            )
        first = seen.setdefault(o.id, i)
        if first != i:
            raise InvalidArgument(
                f"outcomes[{i}].id: duplicate of outcomes[{first}].id ({o.id!r:.60}); report "
                "each prediction once per batch (nothing was recorded)",
                field=f"outcomes[{i}].id",
            )


class Outcomes:
    """Records outcomes of logged predictions, keeps those not yet logged (one
    transaction per batch, then one to join what landed meanwhile)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        max_pending: int = 100_000,
        counters: PendingCounters | None = None,
    ) -> None:
        self._sessions = sessions
        self.max_pending = max_pending
        self.counters = counters if counters is not None else PendingCounters()

    def record(self, name: str, outcomes: Sequence[Outcome]) -> OutcomeReport:
        _check_batch(outcomes)
        results: dict[int, OutcomeResult] = {}
        kept: dict[str, int] = {}  # id -> request index, pending outcomes stored now
        with writing(self._sessions) as reg:
            s = reg.session
            model = reg.get_model(name)
            log = PredictionLog(s)
            versions = log.versions_of(model.id, [o.id for o in outcomes])
            classes = log.version_classes(model.id, versions.values())
            valid: list[tuple[int, tuple[str, int, float | None]]] = []
            waiting: list[int] = []  # indices of outcomes without a logged prediction
            for i, o in enumerate(outcomes):
                if o.cost is not None and not (math.isfinite(o.cost) and o.cost >= 0):
                    results[i] = OutcomeResult(
                        o.id,
                        "invalid",
                        versions.get(o.id),
                        f"cost: expected a finite number >= 0, got {o.cost}",
                    )
                    continue
                version = versions.get(o.id)
                if version is None:
                    waiting.append(i)
                    continue
                known = classes.get(version, [])
                index = label_index(o.label, known)
                if index is None:
                    results[i] = OutcomeResult(
                        o.id,
                        "invalid",
                        version,
                        f"label: {o.label!r} is not a class of version {version} {known}",
                    )
                else:
                    valid.append((i, (o.id, index, o.cost)))
            done = log.record_outcomes(model.id, [item for _, item in valid])
            for (i, _), result in zip(valid, done, strict=True):
                results[i] = result
            if waiting:
                kept = self._keep(s, model.id, [(i, outcomes[i]) for i in waiting], results)
        if kept:
            self._join_now(model.id, kept, outcomes, results)
        return OutcomeReport(name, [results[i] for i in range(len(outcomes))])

    def _keep(
        self,
        s: Session,
        model_id: int,
        items: list[tuple[int, Outcome]],
        results: dict[int, OutcomeResult],
    ) -> dict[str, int]:
        """Keep the outcomes whose prediction is not logged yet (see the module doc)."""
        pending = PendingOutcomes(s)
        every = pending.model_classes(model_id)
        stored = pending.find(model_id, [o.id for _, o in items])
        room = self.max_pending - pending.count(model_id)
        new: list[tuple[int, Outcome]] = []
        for i, o in items:
            if not any(type(o.label) is type(c) and o.label == c for c in every):
                results[i] = OutcomeResult(
                    o.id,
                    "invalid",
                    None,
                    f"label: {o.label!r} is not a class of any version of the model {every}",
                )
            elif o.id in stored:
                results[i] = _compare_pending(o, *stored[o.id])
            elif room <= 0:
                self.counters.add(refused=1)
                results[i] = OutcomeResult(
                    o.id,
                    "refused",
                    None,
                    f"{self.max_pending} outcomes of this model already wait for their "
                    "predictions to be logged (COSTWISE_PENDING_OUTCOMES_MAX); report it "
                    "again later",
                )
            else:
                room -= 1
                new.append((i, o))
        inserted = pending.keep(model_id, [(o.id, o.label, o.cost) for _, o in new])
        lost = [o.id for _, o in new if o.id not in inserted]  # a concurrent report won
        again = pending.find(model_id, lost) if lost else {}
        for i, o in new:
            if o.id in inserted:
                results[i] = OutcomeResult(o.id, "pending", None, _PENDING)
            elif o.id in again:
                results[i] = _compare_pending(o, *again[o.id])
            else:  # kept and joined by the writer in between: as good as recorded
                results[i] = OutcomeResult(o.id, "pending", None, _PENDING)
        return {o.id: i for i, o in new if o.id in inserted}

    def _join_now(
        self,
        model_id: int,
        kept: dict[str, int],
        outcomes: Sequence[Outcome],
        results: dict[int, OutcomeResult],
    ) -> None:
        """After the pending outcomes committed: join those whose log row landed in the
        meantime (the writer, joining after its own commit, may have looked before they
        were visible). A failure here loses nothing: the writer and the upkeep join them."""
        try:
            with writing(self._sessions) as reg:
                counts = PendingOutcomes(reg.session).join([model_id], list(kept))
        except ServiceError as error:
            log.warning("pending outcomes: join after the report failed (retried later): %s", error)
            return
        self.counters.add_join(counts)
        for pid, status in counts.status.items():
            i = kept[pid]
            if status == "unchanged":
                # ``kept`` holds only outcomes stored by this report, for ids with no log
                # row when it looked: an equal label already on the row can only be this
                # report's, joined by the writer between its commit and this join
                # (PostgreSQL, both joins waiting on the row lock). It was recorded now.
                status = "recorded"
            detail = None if status in ("recorded", "unchanged") else "discarded at the join"
            if status == "invalid":
                detail = (
                    f"label: {outcomes[i].label!r} is not a class of the version that predicted"
                )
            results[i] = OutcomeResult(pid, status, None, detail)


_PENDING = (
    "no prediction with this id is logged yet: kept, and recorded when it is (or expired "
    "after COSTWISE_PENDING_OUTCOME_SECONDS)"
)


def _compare_pending(o: Outcome, label: Any, cost: float | None) -> OutcomeResult:
    if type(label) is type(o.label) and label == o.label and cost == o.cost:
        return OutcomeResult(o.id, "pending", None, _PENDING)
    return OutcomeResult(
        o.id,
        "conflict",
        None,
        f"an outcome is already pending for this id (label {label!r}, cost {cost}); the "
        "first report stands",
    )
