"""Prometheus series of the prediction log, read at scrape time (no work per request).

``costwise_prediction_log_rows_total{outcome}``: rows ``written``, skipped as
``duplicate`` (id already logged for the model), ``refused`` (the writer's queue stayed
full for COSTWISE_PREDICTION_LOG_WAIT_SECONDS: the request got 503 and no decisions),
``dropped`` (queue full with COSTWISE_PREDICTION_LOG_OVERFLOW=drop, or not written at
shutdown) and ``failed`` (refused by the database);
``costwise_prediction_log_waited_rows_total``: rows of requests that had to wait for
room; ``costwise_prediction_log_queued_rows``: rows waiting to be written.
Per model and logged version, over the last COSTWISE_MONITORING_WINDOW_HOURS (as of
the last refresh): ``costwise_monitoring_coverage``, ``costwise_monitoring_cost_ratio``
(realised / expected cost of the labelled predictions) and ``costwise_monitoring_ece``;
the last two from the latest COSTWISE_MONITORING_GAUGE_ROWS labelled predictions.
Model names come from the registry (only existing models get series).
``costwise_pending_outcomes_total{result}``: outcomes kept as pending (their prediction
was not logged yet) that were later ``joined`` into their log row, discarded as
``invalid`` (label not a class of the version that predicted) or ``conflict`` (another
outcome was recorded first), ``expired`` (COSTWISE_PENDING_OUTCOME_SECONDS) or
``refused`` (COSTWISE_PENDING_OUTCOMES_MAX reached); ``costwise_pending_outcomes_waiting{model}``:
outcomes pending per model (as of the last upkeep round).
``costwise_shadow_rows_total{outcome}``: rows of logged predicts decided again by their
model's shadow version, by outcome (``written``, ``duplicate``, ``dropped``: the shadow
queue was full, ``skipped``: served by the shadow itself, ``failed``);
``costwise_shadow_queued_rows``: rows waiting for the shadow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from app.services.challenger.shadow import SHADOW_OUTCOMES, ShadowStats
from app.services.feedback.outcomes import PendingCounters
from app.services.feedback.prediction_log import OUTCOMES, LogStats

#: Series that only make sense per model (hidden, not summed, without model names).
PER_MODEL_PREFIX = "costwise_monitoring_"

_GAUGES = (
    ("coverage", "Share of logged predictions with a reported outcome.", "coverage"),
    ("cost_ratio", "Realised / expected cost of the labelled predictions.", "cost_ratio"),
    ("ece", "Expected calibration error of the labelled predictions.", "ece"),
)


def _by_outcome(name: str, doc: str, label: str, keys: Iterable[str], source: object) -> Metric:
    """A counter family with one series per ``label`` value, read off ``source``."""
    family = CounterMetricFamily(name, doc, labels=[label])
    for key in keys:
        family.add_metric([key], getattr(source, key))
    return family


def _gauge(name: str, doc: str, value: float) -> Metric:
    """A gauge family with a single unlabelled series."""
    family = GaugeMetricFamily(name, doc)
    family.add_metric([], value)
    return family


class PredictionLogCollector:
    def __init__(
        self,
        stats: Callable[[], LogStats],
        snapshot: Callable[[], dict[tuple[str, int], dict[str, Any]]],
        *,
        pending: PendingCounters | None = None,
        pending_by_model: Callable[[], dict[str, int]] = dict,
    ) -> None:
        self._stats = stats
        self._snapshot = snapshot
        self._pending = pending if pending is not None else PendingCounters()
        self._pending_by_model = pending_by_model

    def collect(self) -> Iterator[Metric]:
        stats = self._stats()
        yield _by_outcome(
            "costwise_prediction_log_rows",
            "Prediction log rows by outcome (written, duplicate, dropped, failed, refused).",
            "outcome",
            OUTCOMES,
            stats,
        )
        waited = CounterMetricFamily(
            "costwise_prediction_log_waited_rows",
            "Rows of predicts that waited for room in the full prediction log queue.",
        )
        waited.add_metric([], stats.waited)
        yield waited
        yield _gauge(
            "costwise_prediction_log_queued_rows",
            "Prediction log rows waiting to be written.",
            stats.queued,
        )
        yield _by_outcome(
            "costwise_pending_outcomes",
            "Pending outcomes by what became of them (joined, invalid, conflict, expired, "
            "refused).",
            "result",
            ("joined", "invalid", "conflict", "expired", "refused"),
            self._pending,
        )
        pending = GaugeMetricFamily(
            "costwise_pending_outcomes_waiting",
            "Outcomes waiting for their prediction to be logged, per model.",
            labels=["model"],
        )
        for model, n in sorted(self._pending_by_model().items()):
            pending.add_metric([model], n)
        yield pending
        snapshot = self._snapshot()
        for name, doc, key in _GAUGES:
            gauge = GaugeMetricFamily(PER_MODEL_PREFIX + name, doc, labels=["model", "version"])
            for (model, version), figures in sorted(snapshot.items()):
                value = figures.get(key)
                if value is not None:
                    gauge.add_metric([model, str(version)], float(value))
            yield gauge


class ShadowCollector:
    """The shadow scorer's counters (read at scrape time)."""

    def __init__(self, stats: Callable[[], ShadowStats]) -> None:
        self._stats = stats

    def collect(self) -> Iterator[Metric]:
        stats = self._stats()
        yield _by_outcome(
            "costwise_shadow_rows",
            "Rows decided again by the model's shadow version, by outcome.",
            "outcome",
            SHADOW_OUTCOMES,
            stats,
        )
        yield _gauge(
            "costwise_shadow_queued_rows",
            "Rows waiting for the shadow version to decide them.",
            stats.queued,
        )
