"""The event watch: every COSTWISE_EVENTS_WATCH_SECONDS, each model's figures over the
monitoring window (COSTWISE_MONITORING_WINDOW_HOURS, the same figures as the /metrics
gauges) are judged, and an event is raised when a condition **starts** to hold:

* ``calibration.alarm``: monitoring's calibration alarm of a version fired
  (:func:`models.feedback.monitoring.calibration_alarm` on its latest
  COSTWISE_MONITORING_GAUGE_ROWS labelled predictions);
* ``cost.out_of_band``: a version's realised over expected cost left the band
  COSTWISE_COST_RATIO_BAND (low, high; inside means ``low <= ratio <= high``);
* ``challenger.better``: the model's shadow decided more cheaply than its ``production``
  version on the labelled shadow pairs, with confidence (the upper end of the 95%
  interval of ``mean(cost_shadow - cost_production)`` below zero:
  :mod:`app.services.challenger.comparison`).

A version (or a pair of versions) is judged only with COSTWISE_EVENTS_MIN_LABELLED
labelled rows (pairs) in the window; with fewer its last state stands. What each
evaluation saw is stored (``event_states``, :mod:`app.registry.event_states`) and the
event is enqueued in the same transaction as the change, in the webhooks' outbox, so
it is delivered, signed, retried and logged like ``alias.moved``: once per change, not
at every evaluation, and once over all replicas. A condition that stops holding is
recorded without an event; if it holds again later it is raised again. Nothing is read
when no webhook receives any of these events.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument, NotFound
from app.registry.event_states import change_state
from app.registry.log_window import LogWindow, utc_iso
from app.registry.orm import RegisteredModel
from app.registry.repository import DEFAULT_ALIAS, reading, writing
from app.registry.webhooks import WATCHED_EVENTS, enqueue_event, subscribed_events
from app.services.challenger.comparison import Comparison
from app.services.common.periodic import Periodic
from app.services.feedback.monitoring import Monitoring

log = logging.getLogger(__name__)

__all__ = ["EventWatch", "WatchPolicy"]


@dataclass(frozen=True)
class WatchPolicy:
    """How often and on what the watch judges (from the settings)."""

    seconds: float = 300.0
    window_hours: float = 24.0
    min_labelled: int = 200
    band: tuple[float, float] = (0.8, 1.25)
    confidence: float = 0.95

    @classmethod
    def from_settings(cls, s: Any) -> WatchPolicy:
        low, high = s.cost_ratio_band
        return cls(
            float(s.events_watch_seconds), float(s.monitoring_window_hours),
            int(s.events_min_labelled), (float(low), float(high)),
        )  # fmt: skip


class Observation(NamedTuple):
    """Whether ``event``'s condition on ``subject`` holds now, and the event's data."""

    event: str
    subject: str
    holds: bool
    data: dict[str, Any]


class _Model(NamedTuple):
    id: int
    name: str
    shadow_version: int | None
    shadow_alias: str | None


class EventWatch:
    """Judges every model's watched conditions and raises their events (a thread per
    process; :meth:`evaluate` is one round)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        read_sessions: sessionmaker[Session],
        monitoring: Monitoring,
        comparison: Comparison,
        policy: WatchPolicy,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._sessions = sessions
        self._read = read_sessions
        self._monitoring = monitoring
        self._comparison = comparison
        self.policy = policy
        self._clock = clock
        self._thread = Periodic(
            "costwise-event-watch", "event watch", policy.seconds or 1.0, self.evaluate
        )

    def start(self) -> None:
        if self.policy.seconds > 0:
            self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        self._thread.close(timeout)

    def evaluate(self) -> list[dict[str, Any]]:
        """One round over every model; the events it raised (``type``, ``data``)."""
        with reading(self._read) as reg:
            wanted = subscribed_events(reg.session) & set(WATCHED_EVENTS)
            if not wanted:
                return []
            models = [
                _Model(*row)
                for row in reg.session.execute(
                    select(
                        RegisteredModel.id,
                        RegisteredModel.name,
                        RegisteredModel.shadow_version,
                        RegisteredModel.shadow_alias,
                    ).order_by(RegisteredModel.id)
                )
            ]
        since = self._clock() - timedelta(hours=self.policy.window_hours)
        raised: list[dict[str, Any]] = []
        for model in models:
            seen = self.observe(model, wanted, since)
            if seen:
                raised.extend(self._record(model.id, seen))
        return raised

    # ------------------------------------------------------------ observations
    def observe(self, model: _Model, wanted: set[str], since: datetime) -> list[Observation]:
        """What holds now for ``model`` (only the conditions with enough labelled rows)."""
        seen: list[Observation] = []
        if wanted & {"calibration.alarm", "cost.out_of_band"}:
            seen.extend(self._versions(model, wanted, since))
        if "challenger.better" in wanted and (
            model.shadow_version is not None or model.shadow_alias is not None
        ):
            seen.extend(self._challenger(model, since))
        return seen

    def _versions(self, model: _Model, wanted: set[str], since: datetime) -> list[Observation]:
        seen = []
        low, high = self.policy.band
        for version, f in self._monitoring.totals(model.id, since).items():
            if f["labelled_used"] < self.policy.min_labelled:
                continue
            subject = f"version {version}"
            base = {
                "model": model.name,
                "version": version,
                "labelled": f["labelled_used"],
                "since": utc_iso(since),
                "window_hours": self.policy.window_hours,
            }
            alarm = f["calibration_alarm"]
            if "calibration.alarm" in wanted and alarm is not None:
                data = {**base, "ece": f["ece"]}
                seen.append(Observation("calibration.alarm", subject, bool(alarm), data))
            ratio = f["cost_ratio"]
            if "cost.out_of_band" in wanted and ratio is not None:
                data = {**base, "cost_ratio": ratio, "band": [low, high]}
                outside = not low <= ratio <= high
                seen.append(Observation("cost.out_of_band", subject, outside, data))
        return seen

    def _challenger(self, model: _Model, since: datetime) -> list[Observation]:
        shadow = (
            str(model.shadow_version) if model.shadow_version is not None else model.shadow_alias
        )
        assert shadow is not None
        try:
            report = self._comparison.compare(
                model.name, DEFAULT_ALIAS, shadow, LogWindow(since), mode="paired",
                confidence=self.policy.confidence, require_labels=False,
            )  # fmt: skip
        except (InvalidArgument, NotFound) as error:
            # no production alias, the shadow is the production version, other classes
            log.debug("event watch: %s not compared: %s", model.name, error)
            return []
        diff = report["cost_difference"]
        n = report["labelled_pairs"]
        if diff is None or n < self.policy.min_labelled:
            return []
        a, b = report["a"], report["b"]
        data = {
            "model": model.name,
            "champion": a,
            "challenger": b,
            "labelled_pairs": n,
            "confidence": report["confidence"],
            "cost_difference": diff,
            "verdict": report["verdict"],
            "since": utc_iso(since),
            "window_hours": self.policy.window_hours,
        }
        subject = f"{a['version']} vs {b['version']}"
        return [Observation("challenger.better", subject, diff["high"] < 0, data)]

    # ------------------------------------------------------------------ record
    def _record(self, model_id: int, seen: list[Observation]) -> list[dict[str, Any]]:
        raised = []
        with writing(self._sessions) as reg:
            for o in seen:
                if change_state(reg.session, model_id, o.event, o.subject, o.holds):
                    enqueue_event(reg.session, o.event, o.data)
                    raised.append({"type": o.event, "data": o.data})
        for event in raised:
            log.info("event %s raised: %s", event["type"], event["data"])
        return raised
