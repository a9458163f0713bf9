"""Use case: compare two versions of a model by what their decisions cost, from the log.

``a`` is the champion, ``b`` the challenger; every difference is ``b - a`` (negative:
``b`` cheaper). Each names a version of the model by number (``3``), by alias
(``production``) or as ``model:version``; both must be versions of the model in the path
and differ.

Paired (``mode=paired``, or ``auto`` when shadow pairs exist): the labelled predictions
of the window that one version served and the other decided in shadow (same prediction
id, same costs and priors), in either direction. Each row's realised cost is
``C_r[y_r][d_r]`` under the cost matrix that row was decided with, for both decisions
(a cost reported with the outcome describes the served decision only and is not used
here); the mean difference gets a paired t interval
(:func:`models.feedback.comparison.paired_cost_difference`, whose docstring states the
assumptions and the bootstrap alternative). Unpaired (``mode=unpaired``, or ``auto``
without pairs: split traffic, each request decided by one version): each version's
labelled predictions of the window, compared with Welch's t interval; a decision among
named actions (``actions``, ``c_review``) is priced as monitoring prices it, by the
entry of the action taken (shadow pairs hold class decisions only: a request decided
among actions is not offered to the shadow).

Both versions also get Brier score, log loss and ECE on their rows
(:func:`models.feedback.monitoring.calibration_summary`), realised and expected cost and
their ratio, and ``series``: per hour or day (``bucket``, by the served prediction's
time) each side's labelled rows and realised cost; paired reports add the share of rows decided differently and what those
rows cost each side. Reports share the monitoring reports' bounds (rows read,
reports at once per process).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

import numpy as np

from app.errors import InvalidArgument, NotFound
from app.registry.log_window import EVERYTHING, LogWindow, utc_iso
from app.registry.prediction_log import PredictionLog
from app.registry.repository import Registry, reading
from app.registry.shadow_log import PairedLog, PairedRows
from app.services.common.core_errors import core_errors
from app.services.common.slots import LogReports
from app.services.feedback.monitoring import BUCKETS
from models.evaluation.metrics import row_costs
from models.feedback.actions import taken_costs
from models.feedback.comparison import (
    CostDifference,
    disagreement,
    paired_cost_difference,
    welch_cost_difference,
)
from models.feedback.monitoring import calibration_summary

__all__ = ["ASSUMPTIONS", "BUCKETS", "Comparison", "MODES", "cost_series"]

MODES = ("auto", "paired", "unpaired")

ASSUMPTIONS = {
    "paired": (
        "paired t interval on the per-row differences of realised cost (b - a): the rows "
        "are independent draws of the traffic and there are enough of them for the mean "
        "difference to be nearly normal (central limit theorem); heavy-tailed per-row "
        "costs or few differing decisions need more rows. A paired bootstrap (resampling "
        "rows) is the alternative that drops the normality assumption."
    ),
    "unpaired": (
        "Welch's t interval on the difference of mean realised costs (b - a): rows "
        "independent, enough of them for each mean to be nearly normal, and the two "
        "versions served comparable traffic (a random split); variances may differ."
    ),
}

_REF = re.compile(r"^(?:(?P<model>[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}):)?(?P<ref>[A-Za-z0-9_\-]+)$")


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


class Comparison(LogReports):
    """Compares two versions' realised cost and calibration (read-only sessions; the
    bounds of the monitoring reports: ``max_rows``, ``max_concurrent``)."""

    reports = "comparisons"

    # ----------------------------------------------------------------- inputs
    @staticmethod
    def version_of(reg: Registry, name: str, value: str, field: str) -> tuple[int, str | None]:
        """The version number ``value`` names (number, alias or ``model:version``) and
        the alias it was given by (None)."""
        match = _REF.match(value.strip()) if isinstance(value, str) else None
        if match is None:
            raise InvalidArgument(
                f"{field}: expected a version number, an alias or model:version, got {value!r:.60}",
                field=field,
            )
        model, ref = match.group("model"), match.group("ref")
        if model is not None and model != name:
            raise InvalidArgument(
                f"{field}: {value!r} is a version of model {model!r}; compare two versions of "
                f"model {name!r}",
                field=field,
            )
        if ref.isdigit():
            number = int(ref)
            if reg.find_version(name, number) is None:
                reg.get_model(name)
                raise NotFound(f"{field}: model {name!r} has no version {number}", field=field)
            return number, None
        return reg.get_alias(name, ref, field=field).model_version.version, ref

    # -------------------------------------------------------------- the report
    def compare(
        self,
        name: str,
        a: str,
        b: str,
        window: LogWindow = EVERYTHING,
        *,
        mode: str = "auto",
        confidence: float = 0.95,
        require_labels: bool = True,
        bucket: str = "day",
    ) -> dict[str, Any]:
        """The comparison report of ``b`` against ``a`` over the predictions of ``window``
        (see the module doc), with both sides' realised cost per ``bucket`` (hour, day).

        With ``require_labels`` (the HTTP route), a window without labelled rows of a
        version is a 422 naming the window; without it (the promotion gate) the report
        says ``n = 0`` and carries no interval."""
        if mode not in MODES:
            raise InvalidArgument(
                f"mode: expected one of {list(MODES)}, got {mode!r}", field="mode"
            )
        if not 0.5 <= confidence < 1:
            raise InvalidArgument(
                f"confidence: expected a value in [0.5, 1), got {confidence}", field="confidence"
            )
        if bucket not in BUCKETS:
            raise InvalidArgument(
                f"bucket: expected one of {list(BUCKETS)}, got {bucket!r}", field="bucket"
            )
        window.check_order()
        with self._slots.held():
            return self._compare(name, a, b, window, mode, confidence, require_labels, bucket)

    def _compare(
        self,
        name: str,
        a: str,
        b: str,
        window: LogWindow,
        mode: str,
        confidence: float,
        require_labels: bool,
        bucket: str,
    ) -> dict[str, Any]:
        width = BUCKETS[bucket]
        with reading(self._read) as reg:
            model = reg.get_model(name)
            va, alias_a = self.version_of(reg, name, a, "a")
            vb, alias_b = self.version_of(reg, name, b, "b")
            if va == vb:
                raise InvalidArgument(
                    f"b: names version {vb}, the same version as a ({a!r}); compare two "
                    "different versions",
                    field="b",
                )
            log = PredictionLog(reg.session)
            classes = log.version_classes(model.id, (va, vb))
            ca, cb = classes.get(va) or [], classes.get(vb) or []
            if ca and cb and ca != cb:
                raise InvalidArgument(
                    f"b: version {vb} decides classes {cb}, version {va} decides {ca}; "
                    "only versions with the same classes can be compared",
                    field="b",
                )
            k = len(ca or cb) or 2
            pairs = PairedLog(reg.session)
            n_ab = pairs.count(model.id, va, vb, window)
            n_ba = pairs.count(model.id, vb, va, window)
            paired = mode == "paired" or (mode == "auto" and n_ab + n_ba > 0)
            head: dict[str, Any] = {
                "model": name,
                "a": {"version": va, "alias": alias_a},
                "b": {"version": vb, "alias": alias_b},
                **window.iso(),
                "mode": "paired" if paired else "unpaired",
                "confidence": confidence,
                "assumptions": ASSUMPTIONS["paired" if paired else "unpaired"],
                "bucket": bucket,
            }
            if paired:
                self._bound(n_ab + n_ba, "labelled predictions")
                parts = [pairs.rows(model.id, va, vb, k, window)]
                parts.append(pairs.rows(model.id, vb, va, k, window).swapped())
                rows = PairedRows.concat(parts)
                self._labels_needed(len(rows), require_labels, window, "a", va, vb)
                return {**head, **paired_report(rows, confidence, n_ab, n_ba, width)}
            counts = log.counts(model.id, window)
            self._bound(sum(counts.get(v, (0, 0))[1] for v in (va, vb)), "labelled predictions")
            cols = {v: log.columns(model.id, v, k, window, labelled=True) for v in (va, vb)}
        for field, v in (("a", va), ("b", vb)):
            self._labels_needed(len(cols[v]), require_labels, window, field, v, None)
        return {**head, **unpaired_report(cols[va], cols[vb], confidence, width)}

    @staticmethod
    def _labels_needed(
        n: int,
        require: bool,
        window: LogWindow,
        field: str,
        version: int,
        other: int | None,
    ) -> None:
        if n >= 2 or not require:
            return
        iso = window.iso()
        span = f"[{iso['since'] or 'the first'}, {iso['until'] or 'now'})"
        what = (
            f"labelled shadow pairs of versions {version} and {other}"
            if other is not None
            else f"labelled predictions of version {version}"
        )
        where = field if window == EVERYTHING else "since"
        raise InvalidArgument(
            f"{where}: {n} {what} in the window {span}; a comparison needs at least 2 "
            "(report outcomes, widen the window, or check that the versions served or "
            "shadowed traffic in it)",
            field=where,
        )


# ------------------------------------------------------------------ figures
def _side(
    y: np.ndarray, proba: np.ndarray, cost: np.ndarray, expected: np.ndarray
) -> dict[str, Any]:
    """One version's figures on its labelled rows."""
    n = len(y)
    out: dict[str, Any] = {
        "labelled": n,
        "realised_cost": float(cost.sum()) if n else None,
        "mean_realised_cost": float(cost.mean()) if n else None,
        "expected_cost": None,
        "cost_ratio": None,
        "brier": None,
        "log_loss": None,
        "ece": None,
    }
    if not n:
        return out
    known = np.isfinite(expected)
    if known.all():
        total = float(expected.sum())
        out["expected_cost"] = total
        out["cost_ratio"] = float(cost.sum()) / total if total > 0 else None
    with core_errors():
        summary = calibration_summary(y, proba)
    out["brier"] = _finite(summary.get("brier"))
    out["log_loss"] = _finite(summary.get("log_loss"))
    out["ece"] = _finite(summary.get("ece"))
    return out


def _difference(d: CostDifference | None) -> dict[str, Any] | None:
    return None if d is None else d.as_dict()


def _verdict(d: CostDifference | None) -> str:
    if d is None:
        return "not enough labelled rows"
    if d.high < 0:
        return "b decides more cheaply"
    if d.low > 0:
        return "a decides more cheaply"
    return "no difference shown at this confidence"


def cost_series(
    at_a: np.ndarray, cost_a: np.ndarray, at_b: np.ndarray, cost_b: np.ndarray, width: int
) -> list[dict[str, Any]]:
    """Per bucket of ``width`` seconds (UTC, oldest first; only buckets with rows): each
    side's labelled rows, total and mean realised cost. ``at_*`` are POSIX seconds."""
    keys_a = (at_a // width).astype(np.int64)
    keys_b = (at_b // width).astype(np.int64)
    out = []
    for key in np.union1d(keys_a, keys_b):
        entry: dict[str, Any] = {"start": utc_iso(datetime.fromtimestamp(int(key) * width, UTC))}
        for side, keys, cost in (("a", keys_a, cost_a), ("b", keys_b, cost_b)):
            mine = cost[keys == key]
            entry[side] = {
                "labelled": len(mine),
                "realised_cost": float(mine.sum()),
                "mean_realised_cost": float(mine.mean()) if len(mine) else None,
            }
        out.append(entry)
    return out


def paired_report(
    rows: PairedRows, confidence: float, n_ab: int, n_ba: int, width: int = BUCKETS["day"]
) -> dict[str, Any]:
    """The paired figures of ``rows`` (see the module doc)."""
    y = rows.label
    with core_errors():
        cost_a = row_costs(y, rows.decision_a, rows.costs) if len(y) else np.empty(0)
        cost_b = row_costs(y, rows.decision_b, rows.costs) if len(y) else np.empty(0)
        diff = paired_cost_difference(cost_a, cost_b, confidence) if len(y) >= 2 else None
        dis = disagreement(rows.decision_a, rows.decision_b, cost_a, cost_b)
    return {
        "labelled_pairs": len(y),
        "pairs_by_direction": {"a_served_b_shadow": n_ab, "b_served_a_shadow": n_ba},
        "cost_difference": _difference(diff),
        "verdict": _verdict(diff),
        "disagreements": dis.as_dict(),
        "versions": {
            "a": _side(y, rows.proba_a, cost_a, rows.expected_a),
            "b": _side(y, rows.proba_b, cost_b, rows.expected_b),
        },
        "series": cost_series(rows.created_at, cost_a, rows.created_at, cost_b, width),
    }


def unpaired_report(
    log_a: Any, log_b: Any, confidence: float, width: int = BUCKETS["day"]
) -> dict[str, Any]:
    """The unpaired figures of two versions' labelled log rows (Welch's t)."""
    costs: list[np.ndarray] = []
    sides: list[dict[str, Any]] = []
    for log in (log_a, log_b):
        with core_errors():
            cost = taken_costs(log.label, log.column, log.costs) if len(log) else np.empty(0)
        costs.append(cost)
        sides.append(_side(log.label, log.probabilities, cost, log.expected_cost))
    diff = None
    if min(len(c) for c in costs) >= 2:
        with core_errors():
            diff = welch_cost_difference(costs[0], costs[1], confidence)
    return {
        "labelled_pairs": 0,
        "labelled": {"a": len(costs[0]), "b": len(costs[1])},
        "cost_difference": _difference(diff),
        "verdict": _verdict(diff),
        "disagreements": None,
        "versions": {"a": sides[0], "b": sides[1]},
        "series": cost_series(log_a.created_at, costs[0], log_b.created_at, costs[1], width),
    }
