"""Use case: how a deployed model is doing, per version and time bucket, from its log.

For the logged predictions of a model in ``[since, until)`` (UTC), per version and per
hour or day bucket (and over the whole window): predictions, labelled predictions and
coverage; predicted and observed class shares (positive rate for two classes); mean
probabilities; the realised cost of the labelled decisions (each under the cost matrix
applied when it was made, or the cost the caller reported with the outcome) against
their expected cost at decision time and the ratio; for decisions among named actions,
per action how often it was taken and its realised cost (``actions``,
:func:`models.feedback.actions.action_figures`; null when no row took an action); Brier score, log loss, expected
calibration error with reliability bins and calibration tests (Spiegelhalter's z,
Hosmer-Lemeshow) on the labelled rows (:func:`models.feedback.monitoring.calibration_summary`);
the predictions asked with a probability interval (``with_interval``) and, of them, those
whose decision was not stable over it (``unstable``).
``calibration_alarm`` is the core's alarm (:func:`models.feedback.monitoring.calibration_alarm`):
true when Cox's, Spiegelhalter's or the Hosmer-Lemeshow test is below 0.01 / 3
(Bonferroni; a false alarm on calibrated traffic at most 1% of the time).

A report reads up to ``max_rows`` logged predictions: at most ``max_concurrent`` are
computed at once per process, and a request beyond them is refused at once (503
``UNAVAILABLE`` with Retry-After) rather than queued, so that a burst of reports cannot
hold the database's time, the pool's connections and the process's threads that
predictions need.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument, NotFound
from app.registry.log_window import EVERYTHING, LogWindow, utc_iso
from app.registry.pending_outcomes import PendingOutcomes
from app.registry.prediction_log import LogColumns, PredictionLog
from app.registry.repository import reading
from app.services.common.core_errors import core_errors
from app.services.common.slots import LogReports
from models.feedback.actions import action_figures, taken_costs
from models.feedback.monitoring import calibration_summary, realised_from_rows

__all__ = ["BUCKETS", "Monitoring", "summarise"]

BUCKETS = {"hour": 3600, "day": 86400}


def _mean(a: np.ndarray) -> list[float] | None:
    return None if len(a) == 0 else a.mean(axis=0).tolist()


def summarise(log: LogColumns, n_classes: int) -> dict[str, Any]:
    """The monitoring figures of ``log`` (one version; see the module docstring)."""
    n = len(log)
    decision = log.decision
    proba = log.probabilities.reshape(n, n_classes)
    labelled = log.label >= 0
    y = log.label[labelled]
    m = len(y)
    classed = decision[decision >= 0]  # an action that stands for no class: in no share
    shares = np.bincount(classed, minlength=n_classes) / n if n else np.zeros(n_classes)
    asked = log.stable >= 0
    observed = np.bincount(y, minlength=n_classes) / m if m else None
    out: dict[str, Any] = {
        "predictions": n,
        "labelled": m,
        "coverage": m / n if n else None,
        "predicted_shares": shares.tolist(),
        "observed_shares": None if observed is None else observed.tolist(),
        "predicted_positive_rate": float(shares[1]) if n_classes == 2 else None,
        "observed_positive_rate": (
            float(observed[1]) if n_classes == 2 and observed is not None else None
        ),
        "mean_probability": _mean(proba),
        "mean_probability_labelled": _mean(proba[labelled]),
        "with_interval": int(asked.sum()),
        "unstable": int((log.stable == 0).sum()),
        "realised_cost": None,
        "expected_cost": None,
        "cost_ratio": None,
        "mean_realised_cost": None,
        "calibration": None,
        "calibration_alarm": None,
        "actions": None,
    }
    if not m:
        out["actions"] = action_figures(log.action, labelled, np.empty(0), log.expected_cost)
        return out
    with core_errors():
        cost = realised_from_rows(
            taken_costs(y, log.column[labelled], log.costs),
            log.expected_cost[labelled],
            log.outcome_cost[labelled],
        )
        summary = calibration_summary(y, proba[labelled])
        out["actions"] = action_figures(log.action, labelled, cost.per_row, log.expected_cost)
    alarm = summary.get("alarm")
    out.update(
        realised_cost=cost.total,
        expected_cost=cost.expected_total,
        cost_ratio=cost.ratio,
        mean_realised_cost=cost.total / m,
        calibration=summary,
        calibration_alarm=None if alarm is None else alarm["fired"],
    )
    return out


class Monitoring(LogReports):
    """Reads the prediction log and summarises it (read-only sessions); the gauges read
    the latest ``gauge_rows`` labelled predictions of a version."""

    reports = "monitoring reports"

    def __init__(
        self,
        read_sessions: sessionmaker[Session],
        max_rows: int = 1_000_000,
        gauge_rows: int = 100_000,
        max_concurrent: int = 2,
    ) -> None:
        super().__init__(read_sessions, max_rows, max_concurrent)
        self.gauge_rows = gauge_rows

    def report(
        self,
        name: str,
        *,
        version: int | None = None,
        window: LogWindow = EVERYTHING,
        bucket: str = "day",
    ) -> dict[str, Any]:
        if bucket not in BUCKETS:
            raise InvalidArgument(
                f"bucket: expected one of {list(BUCKETS)}, got {bucket!r}", field="bucket"
            )
        window.check_order()
        with self._slots.held():  # reports run in threads
            return self._report(name, version, window, bucket)

    def _report(
        self,
        name: str,
        version: int | None,
        window: LogWindow,
        bucket: str,
    ) -> dict[str, Any]:
        with reading(self._read) as reg:
            s = reg.session
            model = reg.get_model(name)
            log = PredictionLog(s)
            if version is not None:
                reg.get_version(name, version)  # NotFound says which versions exist
                logged = log.logged_versions(model.id)
                if version not in logged:
                    raise NotFound(
                        f"version {version} of model {name!r} has no logged predictions "
                        f"(versions with logged predictions: {logged or 'none'})",
                        field="version",
                    )
            counts = log.counts(model.id, window)
            if version is not None:
                counts = {v: c for v, c in counts.items() if v == version}
            counted = sum(n for n, _ in counts.values())  # counted, not read
            self._bound(counted, "logged predictions", "narrow it or give a version")
            classes = log.version_classes(model.id, set(counts))
            versions = []
            for v in sorted(counts):
                k = _n_classes(classes.get(v))
                columns = log.columns(model.id, v, k, window)
                versions.append(_version_report(v, classes.get(v), columns, BUCKETS[bucket]))
            pending = PendingOutcomes(s).count(model.id)
        return {
            "model": name,
            **window.iso(),
            "bucket": bucket,
            "versions": versions,
            "pending_outcomes": pending,
        }

    def totals(self, model_id: int, since: datetime) -> dict[int, dict[str, Any]]:
        """Per version, the figures of the gauges since ``since``: ``predictions``,
        ``labelled``, ``coverage`` (counted by the database over the whole window), and
        ``cost_ratio``, ``ece`` and ``calibration_alarm`` from the latest ``gauge_rows`` labelled predictions
        (``labelled_used`` of them). Unlabelled rows never leave the database: a refresh
        costs the labelled rows, not the traffic (docs/monitoring.md: 700,000 logged rows,
        5% labelled, 13.3 s of CPU and 895 MiB when every row was read, 1.2 s now)."""
        with reading(self._read) as reg:
            log = PredictionLog(reg.session)
            counts = log.counts(model_id, LogWindow(since))
            classes = log.version_classes(model_id, set(counts))
            out: dict[int, dict[str, Any]] = {}
            for v, (n, m) in sorted(counts.items()):
                figures: dict[str, Any] = {
                    "predictions": n,
                    "labelled": m,
                    "coverage": m / n if n else None,
                    "labelled_used": 0,
                    "cost_ratio": None,
                    "ece": None,
                    "calibration_alarm": None,
                }
                if m:
                    k = _n_classes(classes.get(v))
                    mine = log.columns(
                        model_id, v, k, LogWindow(since), latest=self.gauge_rows, labelled=True
                    )
                    labelled = summarise(mine, mine.n_classes)
                    figures["labelled_used"] = len(mine)
                    figures["cost_ratio"] = labelled["cost_ratio"]
                    figures["ece"] = (labelled["calibration"] or {}).get("ece")
                    figures["calibration_alarm"] = labelled["calibration_alarm"]
                out[v] = figures
        return out


def _n_classes(classes: list[Any] | None) -> int | None:
    """Classes of a version as the registry records them (None: read from the log)."""
    return len(classes) if classes else None


def _version_report(
    version: int, classes: list[Any] | None, log: LogColumns, width: int
) -> dict[str, Any]:
    k = log.n_classes
    keys = (log.created_at // width).astype(np.int64)
    return {
        "version": version,
        "classes": classes,
        "total": summarise(log, k),
        "buckets": [
            {
                "start": utc_iso(datetime.fromtimestamp(int(key) * width, UTC)),
                **summarise(log.take(keys == key), k),
            }
            for key in np.unique(keys)
        ],
    }
