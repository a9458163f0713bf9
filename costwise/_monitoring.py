"""The /v1 operations that close the loop: outcomes, monitoring, the log switch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from costwise._core import Call, Operation, decode, one
from costwise._operations import _as, _model, _page
from costwise.types import Label, Model, OutcomesReport

MAX_OUTCOMES = 10_000  # per request, as the server accepts


def _outcome(item: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": str(item["id"]), "label": item["label"]}
    if item.get("cost") is not None:
        out["cost"] = float(item["cost"])
    return out


def send_outcomes(
    name: str, outcomes: Sequence[Mapping[str, Any] | tuple[str, Label]]
) -> Operation[OutcomesReport]:
    """``POST /v1/models/{name}/outcomes``: the true labels (and optionally realised
    ``cost``) of logged predictions, by prediction id: ``[{"id", "label", "cost"}]`` or
    ``(id, label)`` pairs; at most 10,000 per call. Each item is answered on its own
    (recorded, unchanged, conflict, pending, invalid, refused); idempotent, so retried
    on 503. ``pending``: no prediction with this id is logged yet; the outcome is kept and
    recorded when it is."""
    items = [
        _outcome(o) if isinstance(o, Mapping) else {"id": str(o[0]), "label": o[1]}
        for o in outcomes
    ]
    call = Call("POST", _model(name, "outcomes"), json={"outcomes": items})
    return one(call, _as(OutcomesReport))


def _time(t: datetime | str | None) -> str | None:
    return t.isoformat() if isinstance(t, datetime) else t


def monitoring(
    name: str,
    *,
    version: int | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    bucket: str = "day",
) -> Operation[dict[str, Any]]:
    """``GET /v1/models/{name}/monitoring``: per version and hour or day, predictions,
    coverage, realised against expected cost, Brier, log loss, ECE and calibration
    tests, as the JSON document the server returns (see docs/monitoring.md)."""
    query = _page(version=version, since=_time(since), until=_time(until), bucket=bucket)
    call = Call("GET", _model(name, "monitoring"), params=query)
    return one(call, lambda response: dict(decode(response)))


def compare(
    name: str,
    a: str | int,
    b: str | int,
    *,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    mode: str = "auto",
    confidence: float = 0.95,
    bucket: str = "day",
) -> Operation[dict[str, Any]]:
    """``GET /v1/models/{name}/compare``: would version ``b`` (the challenger) have decided
    more cheaply than ``a`` (the champion) on the labelled predictions of the window? ``a``
    and ``b`` are version numbers, aliases or ``model:version``; the JSON document the
    server returns (realised cost difference with its interval, disagreements, Brier, log
    loss, ECE, pairs needed, and ``series``: both sides' realised cost per ``bucket``,
    ``"day"`` or ``"hour"``; see docs/challenger.md)."""
    query = _page(
        a=str(a), b=str(b), since=_time(since), until=_time(until), mode=mode,
        confidence=confidence, bucket=bucket,
    )  # fmt: skip
    call = Call("GET", _model(name, "compare"), params=query)
    return one(call, lambda response: dict(decode(response)))


def set_prediction_log(name: str, enabled: bool) -> Operation[Model]:
    """``PATCH /v1/models/{name}``: log this model's predictions or not (admin)."""
    call = Call("PATCH", _model(name), json={"prediction_log": enabled})
    return one(call, _as(Model))
