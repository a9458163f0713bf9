"""Webhooks and the outbox of their deliveries (``webhooks``, ``webhook_deliveries``).

:func:`enqueue_event` adds one delivery per webhook subscribed to the event, in the
caller's transaction -- the one that writes what the event reports (an alias move), so an
event is never lost between the change and its delivery, nor sent for a change that was
rolled back. :func:`claim_due` hands the deliverer a batch of due deliveries and pushes
their ``next_attempt_at`` forward by a lease (another replica's deliverer skips them
meanwhile); :func:`record_attempt` writes what the receiver answered.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.registry.orm import Webhook, WebhookDelivery, utcnow

__all__ = [
    "DELIVERY_STATUSES",
    "EVENTS",
    "WATCHED_EVENTS",
    "Due",
    "claim_due",
    "enqueue_event",
    "record_attempt",
    "subscribed_events",
]

#: The event types a webhook may subscribe to: an alias moved (written with the move), and
#: the conditions the event watch raises once when they start to hold
#: (:mod:`app.services.events.watch`).
EVENTS: tuple[str, ...] = (
    "alias.moved",
    "calibration.alarm",
    "cost.out_of_band",
    "challenger.better",
)
#: The event types raised by the event watch.
WATCHED_EVENTS: tuple[str, ...] = EVENTS[1:]
DELIVERY_STATUSES: tuple[str, ...] = ("pending", "delivered", "failed")


def enqueue_event(session: Session, event: str, payload: dict[str, Any]) -> int:
    """One pending delivery of ``event`` per webhook that receives it (flushed, not
    committed); returns how many."""
    if event not in EVENTS:
        raise ValueError(f"event: expected one of {EVENTS}, got {event!r}")
    hooks = [h for h in session.scalars(select(Webhook)) if event in (h.events or [])]
    if not hooks:
        return 0
    event_id = uuid.uuid4().hex
    now = utcnow()
    body = {"id": event_id, "type": event, "created_at": now.isoformat(), "data": payload}
    for hook in hooks:
        session.add(
            WebhookDelivery(
                webhook_id=hook.id,
                event_id=event_id,
                event=event,
                payload=body,
                next_attempt_at=now,
                created_at=now,
            )  # fmt: skip
        )
    session.flush()
    return len(hooks)


@dataclass(frozen=True)
class Due:
    """A delivery to attempt now: where, with which key, what, and its attempt number."""

    id: int
    webhook_id: int
    url: str
    secret: str
    event: str
    payload: dict[str, Any]
    attempt: int


def claim_due(session: Session, limit: int, lease_seconds: float) -> list[Due]:
    """Up to ``limit`` pending deliveries due now, oldest first, each leased for
    ``lease_seconds`` (its ``next_attempt_at`` moved forward only if no other deliverer
    moved it first: a delivery is attempted by one replica at a time)."""
    now = utcnow()
    rows = session.execute(
        select(WebhookDelivery, Webhook)
        .join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
        .where(WebhookDelivery.status == "pending", WebhookDelivery.next_attempt_at <= now)
        .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.id)
        .limit(limit)
    ).all()
    lease = now + timedelta(seconds=lease_seconds)
    claimed: list[Due] = []
    for delivery, hook in rows:
        taken = session.execute(
            update(WebhookDelivery)
            .where(
                WebhookDelivery.id == delivery.id,
                WebhookDelivery.next_attempt_at == delivery.next_attempt_at,
                WebhookDelivery.status == "pending",
            )
            .values(next_attempt_at=lease)
            .execution_options(synchronize_session=False)
        )
        if taken.rowcount == 1:  # type: ignore[attr-defined]
            claimed.append(
                Due(
                    delivery.id,
                    hook.id,
                    hook.url,
                    hook.secret,
                    delivery.event,
                    delivery.payload,
                    delivery.attempts + 1,
                )  # fmt: skip
            )
    return claimed


def record_attempt(
    session: Session,
    delivery_id: int,
    *,
    delivered: bool,
    status: int | None,
    error: str | None,
    retry_at: datetime | None,
) -> None:
    """What one attempt gave: delivered, or pending again until ``retry_at``, or failed
    for good (``retry_at`` None)."""
    values: dict[str, Any] = {
        "attempts": WebhookDelivery.attempts + 1,
        "last_status": status,
        "last_error": None if error is None else error[:1000],
    }
    if delivered:
        values.update(status="delivered", delivered_at=utcnow())
    elif retry_at is None:
        values.update(status="failed")
    else:
        values.update(next_attempt_at=retry_at)
    session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.id == delivery_id)
        .values(**values)
        .execution_options(synchronize_session=False)
    )


def subscribed_events(session: Session) -> set[str]:
    """The event types at least one webhook receives."""
    return {e for events in session.scalars(select(Webhook.events)) for e in (events or [])}


def deliveries(session: Session, webhook_id: int, limit: int) -> Sequence[WebhookDelivery]:
    """The webhook's deliveries, newest first."""
    query = (
        select(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == webhook_id)
        .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
        .limit(limit)
    )
    return list(session.scalars(query))
