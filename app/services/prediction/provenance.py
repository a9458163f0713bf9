"""Where a prediction came from: model, version, alias, calibration, rule and costs.

Built from what the predict hot path already holds (the resolved version, the cached
model and its version's calibration record, the validated cost setting), so it costs no
query and a few microseconds.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.services.decisions.request_costs import CostSetting


def calibration_summary(record: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{"method", "split", "score"}`` from a version's calibration record (None where
    unknown). ``score`` is the binary booster's raw score that the calibration map takes,
    or that ``method: "none"`` thresholds as the probability: ``vote`` = s(x) (Eq. 24,
    AdaMEC of Eq. 9/19 of Nikolaou et al.), ``logistic`` = s'(x) = 1/(1+exp(-2F)) (Eq. 25);
    None for models without one (multiclass, JOUS, versions trained before it was kept)."""
    record = record or {}
    method, split = record.get("method"), record.get("split")
    if split is None and method == "none":
        split = "none"
    return {"method": method, "split": split, "score": record.get("score")}


@dataclass(frozen=True)
class Provenance:
    """Everything a caller needs to reproduce or audit a decision."""

    model: str
    version: int
    alias: str | None
    calibration: dict[str, Any]  # {"method", "split", "score"}
    decision_rule: str  # threshold | skew_change | fixed
    cost_setting: str  # costs | cost_matrix | row_costs | zero_one | training
    cost_matrix: list[list[float]] | None  # the one matrix applied to every row
    row_costs: dict[str, Any] | None  # per-row costs: {"n_rows", "min", "max"} entry-wise
    priors: list[float] | None  # deployment priors applied, if any
    training_costs: list[list[float]] | None
    # epoch seconds of the last resolution from the database, when the version was
    # resolved from memory because the database is down (None: resolved just now)
    stale_since: float | None = None
    # the recorded prior estimate applied by "priors": "estimated" (id, version, when, rows)
    priors_estimate: dict[str, Any] | None = None
    # the names of the cost matrix's columns when the request decided among actions
    actions: list[str] | None = None
    # the arm of the alias's traffic split that served ({"name", "weight", "sticky"})
    arm: dict[str, Any] | None = None
    # how each row's probability interval was made, when the request asked (interval: true)
    interval_method: str | None = None

    @classmethod
    def of(
        cls,
        model: str,
        version: int,
        alias: str | None,
        calibration: dict[str, Any],
        rule: str,
        setting: CostSetting,
        priors: Sequence[float] | None,
        training_costs: list[list[float]] | None,
        *,
        stale_since: float | None = None,
        priors_estimate: dict[str, Any] | None = None,
        arm: dict[str, Any] | None = None,
    ) -> Provenance:
        applied = setting.describe()
        return cls(
            model,
            version,
            alias,
            calibration,
            rule,
            setting.source,
            applied["cost_matrix"],
            applied["row_costs"],
            None if priors is None else [float(p) for p in priors],
            training_costs,
            stale_since,
            priors_estimate,
            applied["actions"],
            arm,
        )

    def applied_costs(self) -> dict[str, Any]:
        return {
            "cost_matrix": self.cost_matrix,
            "row_costs": self.row_costs,
            "actions": self.actions,
            "priors": self.priors,
            "priors_estimate": self.priors_estimate,
        }

    def resolution(self) -> dict[str, Any] | None:
        """``{"stale": true, "resolved_at": ISO time}`` when served from memory, else None."""
        if self.stale_since is None:
            return None
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.stale_since))
        return {"stale": True, "resolved_at": at}

    def fields(self) -> dict[str, Any]:
        """The provenance fields of a /v1 predict or evaluate response (``resolution`` is
        null unless the version was resolved from memory during a database outage)."""
        out = {
            "model": self.model,
            "version": self.version,
            "alias": self.alias,
            "calibration": self.calibration,
            "cost_setting": self.cost_setting,
            "decision_rule": self.decision_rule,
            "applied_costs": self.applied_costs(),
            "training_costs": self.training_costs,
            "resolution": self.resolution(),
        }
        if self.arm is not None:  # only where the alias is split
            out["arm"] = self.arm
        if self.interval_method is not None:  # only when asked: other answers unchanged
            out["interval_method"] = self.interval_method
        return out

    def parameters(self) -> dict[str, Any]:
        """The same as Open Inference Protocol response ``parameters`` (flat; no nulls)."""
        out: dict[str, Any] = {
            "alias": self.alias,
            "calibration_method": self.calibration.get("method"),
            "calibration_split": self.calibration.get("split"),
            "calibration_score": self.calibration.get("score"),
            "decision_rule": self.decision_rule,
            "cost_setting": self.cost_setting,
            "cost_matrix": self.cost_matrix,
            "row_costs": self.row_costs,
            "actions": self.actions,
            "priors": self.priors,
            "priors_estimate": self.priors_estimate,
            "training_costs": self.training_costs,
            "resolution_stale_since": (self.resolution() or {}).get("resolved_at"),
            "arm": None if self.arm is None else self.arm["name"],
            "arm_weight": None if self.arm is None else self.arm["weight"],
            "interval_method": self.interval_method,
        }
        return {k: v for k, v in out.items() if v is not None}
