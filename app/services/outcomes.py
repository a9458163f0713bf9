"""Use case: late outcomes (true labels, realised costs) of logged predictions.

``POST /v1/models/{name}/outcomes`` reports, per logged prediction id, the true label and
optionally the realised cost. Each item is answered on its own and never fails the
batch: ``recorded`` (first report), ``unchanged`` (the same report again: idempotent),
``conflict`` (a different label or cost for a recorded outcome: a recorded outcome is
final, nothing changes), ``unknown`` (no prediction with this id is logged for this
model, or not yet written: the log writes within COSTWISE_PREDICTION_LOG_FLUSH_SECONDS)
or ``invalid`` (a label that is not a class of the version that made the prediction, a
cost that is not a finite number >= 0). A batch naming the same id twice is refused
whole (422 naming the index): which of the two is meant cannot be told.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument
from app.registry.orm import PREDICTION_ID_LENGTH
from app.registry.prediction_log import OutcomeResult, PredictionLog
from app.registry.repository import writing
from app.services.inputs import is_text

__all__ = ["Outcome", "OutcomeReport", "Outcomes"]

MAX_OUTCOMES = 10_000


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
        out = {"recorded": 0, "unchanged": 0, "conflict": 0, "unknown": 0, "invalid": 0}
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


def _label_index(label: Any, classes: Sequence[Any]) -> int | None:
    for i, c in enumerate(classes):
        if type(label) is type(c) and label == c:
            return i
    return None


class Outcomes:
    """Records outcomes of logged predictions (one transaction per batch)."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def record(self, name: str, outcomes: Sequence[Outcome]) -> OutcomeReport:
        _check_batch(outcomes)
        with writing(self._sessions) as reg:
            s = reg.session
            model = reg.get_model(name)
            log = PredictionLog(s)
            versions = log.versions_of(model.id, [o.id for o in outcomes])
            classes = log.version_classes(model.id, versions.values())
            results: dict[int, OutcomeResult] = {}
            valid: list[tuple[int, tuple[str, int, float | None]]] = []
            for i, o in enumerate(outcomes):
                version = versions.get(o.id)
                if version is None:
                    results[i] = OutcomeResult(o.id, "unknown", None, "no logged prediction")
                    continue
                known = classes.get(version, [])
                index = _label_index(o.label, known)
                if index is None:
                    results[i] = OutcomeResult(
                        o.id,
                        "invalid",
                        version,
                        f"label: {o.label!r} is not a class of version {version} {known}",
                    )
                elif o.cost is not None and not (math.isfinite(o.cost) and o.cost >= 0):
                    results[i] = OutcomeResult(
                        o.id,
                        "invalid",
                        version,
                        f"cost: expected a finite number >= 0, got {o.cost}",
                    )
                else:
                    valid.append((i, (o.id, index, o.cost)))
            done = log.record_outcomes(model.id, [item for _, item in valid])
            for (i, _), result in zip(valid, done, strict=True):
                results[i] = result
        return OutcomeReport(name, [results[i] for i in range(len(outcomes))])
