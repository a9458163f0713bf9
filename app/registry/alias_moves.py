"""The audit trail of alias moves (``alias_moves``): written with each move, read newest first.

:func:`record_move` adds one row in the caller's transaction (the one that moves the
alias, so a move is never without its record nor a record without its move), and with it
the ``alias.moved`` event for every webhook that receives it (the outbox of
:mod:`app.registry.webhooks`);
:func:`alias_history` reads an alias's rows, newest first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.registry.orm import AliasMove, RegisteredModel
from app.registry.webhooks import enqueue_event

__all__ = ["Actor", "MOVE_REASONS", "alias_history", "record_move"]

#: Why an alias moved: set by hand (PUT), removed (DELETE), or moved by the promotion gate.
MOVE_REASONS = ("manual", "removed", "promoted")


@dataclass(frozen=True)
class Actor:
    """Who moved an alias: the API key's name and role."""

    name: str
    role: str


def record_move(
    session: Session,
    model_id: int,
    alias: str,
    from_version: int | None,
    to_version: int | None,
    actor: Actor,
    reason: str,
    note: str = "",
    evidence: dict[str, Any] | None = None,
) -> AliasMove:
    """Add the record of one move (flushed, not committed)."""
    if reason not in MOVE_REASONS:
        raise ValueError(f"reason: expected one of {MOVE_REASONS}, got {reason!r}")
    move = AliasMove(
        model_id=model_id,
        alias=alias,
        from_version=from_version,
        to_version=to_version,
        actor=actor.name[:128],
        actor_role=actor.role,
        reason=reason,
        note=note,
        evidence=evidence,
    )
    session.add(move)
    session.flush()
    model = session.get(RegisteredModel, model_id)
    enqueue_event(
        session,
        "alias.moved",
        {
            "model": None if model is None else model.name,
            "alias": alias,
            "from_version": from_version,
            "to_version": to_version,
            "reason": reason,
            "note": note,
            "actor": move.actor,
            "actor_role": actor.role,
            "evidence": evidence,
        },
    )
    return move


def alias_history(session: Session, model_id: int, alias: str, limit: int) -> list[AliasMove]:
    """The moves of ``alias`` of the model, newest first (at most ``limit``)."""
    query = (
        select(AliasMove)
        .where(AliasMove.model_id == model_id, AliasMove.alias == alias)
        .order_by(AliasMove.created_at.desc(), AliasMove.id.desc())
        .limit(limit)
    )
    return list(session.scalars(query))
