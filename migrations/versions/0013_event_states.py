"""The event watch's last view of each watched condition (raise an event once per change).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28

Hand-written against ``app.registry.orm.EventState``; tests/migrations checks that
autogenerate finds no difference. One row per (model, event, subject).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import integer_id, model_id, of_a_model, primary_key, timestamp, unique

revision: str = "0013"
down_revision: str | None = "0012"


def upgrade() -> None:
    op.create_table(
        "event_states",
        integer_id(),
        model_id(),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("subject", sa.String(length=128), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("changed_at", timestamp(), nullable=False),
        of_a_model("event_states"),
        primary_key("event_states"),
        unique("event_states", "model_id", "event", "subject"),
    )


def downgrade() -> None:
    op.drop_table("event_states")
