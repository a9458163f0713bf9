"""The /v1 operations of champion and challenger: the promotion gate, the alias audit
trail and shadow scoring (the comparison itself is :func:`costwise._monitoring.compare`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from costwise._core import Call, Operation, decode, one
from costwise._monitoring import _time
from costwise._operations import _model, _nothing, _page


def _document(response: Any) -> dict[str, Any]:
    return dict(decode(response))


def promote(
    name: str,
    alias: str,
    candidate: str | int,
    *,
    min_labelled_pairs: int | None = None,
    max_cost_difference: float | None = None,
    max_ece_increase: float | None = None,
    confidence: float | None = None,
    mode: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    note: str = "",
) -> Operation[dict[str, Any]]:
    """``POST /v1/models/{name}/aliases/{alias}/promote`` (admin): move ``alias`` to
    ``candidate`` only if the comparison of the alias's version (a) with the candidate (b)
    over the window holds the rule (a rule value left ``None`` takes the server's default:
    200 pairs, the interval's upper end below 0, ECE not worse by more than 0.02). Returns
    ``{model, alias, from_version, to_version, evidence}``; a refusal raises
    :class:`costwise.errors.Conflict` with ``code == "PROMOTION_REFUSED"`` and the figures
    in its ``evidence``."""
    rule = _page(
        min_labelled_pairs=min_labelled_pairs, max_cost_difference=max_cost_difference,
        max_ece_increase=max_ece_increase, confidence=confidence, mode=mode,
    )  # fmt: skip
    body: dict[str, Any] = {"candidate": candidate, "rule": rule, "note": note}
    body.update(_page(since=_time(since), until=_time(until)))
    # a retry after an unseen success would compare the candidate with itself: connect only
    call = Call("POST", _model(name, "aliases", alias, "promote"), json=body, retry="connect")
    return one(call, _document)


def alias_history(name: str, alias: str, limit: int = 100) -> Operation[list[dict[str, Any]]]:
    """``GET /v1/models/{name}/aliases/{alias}/history``: every move of the alias, newest
    first (who, when, from, to, why, and a promotion's evidence)."""
    call = Call("GET", _model(name, "aliases", alias, "history"), params={"limit": limit})
    return one(call, lambda response: list(decode(response)["moves"]))


def set_shadow(
    name: str, *, version: int | None = None, alias: str | None = None
) -> Operation[dict[str, Any]]:
    """``PUT /v1/models/{name}/shadow`` (admin): decide every logged prediction of the model
    also with this version, or with the version an alias names (followed when it moves)."""
    call = Call("PUT", _model(name, "shadow"), json=_page(version=version, alias=alias))
    return one(call, _document)


def get_shadow(name: str) -> Operation[dict[str, Any]]:
    """``GET /v1/models/{name}/shadow``: the shadow named, the version it resolves to now,
    and this server process's counts of shadow rows."""
    return one(Call("GET", _model(name, "shadow")), _document)


def clear_shadow(name: str) -> Operation[None]:
    """``DELETE /v1/models/{name}/shadow`` (admin): stop shadow scoring (logged shadow
    decisions stay)."""
    return one(Call("DELETE", _model(name, "shadow")), _nothing)


def set_split(name: str, alias: str, version: int, weight: float) -> Operation[dict[str, Any]]:
    """``PUT /v1/models/{name}/aliases/{alias}/split`` (admin): ``weight`` of the alias's
    requests to ``version`` (a canary); ``routing_key=`` on a predict makes its arm sticky."""
    call = Call(
        "PUT", _model(name, "aliases", alias, "split"), json={"version": version, "weight": weight}
    )
    return one(call, _document)


def get_split(name: str, alias: str) -> Operation[dict[str, Any]]:
    """``GET /v1/models/{name}/aliases/{alias}/split``."""
    return one(Call("GET", _model(name, "aliases", alias, "split")), _document)


def clear_split(name: str, alias: str) -> Operation[None]:
    """``DELETE /v1/models/{name}/aliases/{alias}/split`` (admin)."""
    return one(Call("DELETE", _model(name, "aliases", alias, "split")), _nothing)
