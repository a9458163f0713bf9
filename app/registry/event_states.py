"""The event watch's states (``event_states``): whether each watched condition of a model
held at the last evaluation, so that its event is raised once when it starts to hold.

:func:`change_state` records what an evaluation saw and says whether this caller is the
one that saw the condition start: a row not seen before is inserted under a savepoint (a
replica that inserted it first wins; the other gets the unique violation and raises
nothing), a known row is updated only from the state it was read in (of two replicas
evaluating at once, one update finds the row already changed). The caller enqueues the
event in the same transaction (:func:`app.registry.webhooks.enqueue_event`).
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.registry.orm import EventState, utcnow

__all__ = ["active_states", "change_state"]


def change_state(session: Session, model_id: int, event: str, subject: str, active: bool) -> bool:
    """Record that ``event``'s condition on ``subject`` holds (``active``) or not; True
    when it now holds and did not before (or was never seen) and this call recorded it."""
    row = session.scalars(
        select(EventState).where(
            EventState.model_id == model_id,
            EventState.event == event,
            EventState.subject == subject,
        )
    ).first()
    if row is None:
        try:
            with session.begin_nested():
                session.add(
                    EventState(
                        model_id=model_id,
                        event=event,
                        subject=subject,
                        active=active,
                        changed_at=utcnow(),
                    )  # fmt: skip
                )
        except IntegrityError:  # another replica saw it first
            return False
        return active
    if row.active == active:
        return False
    done = session.execute(
        update(EventState)
        .where(EventState.id == row.id, EventState.active == row.active)
        .values(active=active, changed_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return active and done.rowcount == 1  # type: ignore[attr-defined]


def active_states(session: Session, model_id: int) -> list[tuple[str, str]]:
    """(event, subject) of the model's conditions that held at the last evaluation."""
    rows = session.execute(
        select(EventState.event, EventState.subject)
        .where(EventState.model_id == model_id, EventState.active.is_(True))
        .order_by(EventState.event, EventState.subject)
    )
    return [(e, s) for e, s in rows]
