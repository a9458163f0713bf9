"""Pending outcomes: outcomes reported for prediction ids not (yet) in the log.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27

Hand-written against ``app.registry.orm.PendingOutcome``; tests/migrations checks that
autogenerate finds no difference. ``(model_id, prediction_id)`` is unique (one pending
outcome per id: the first report stands) and serves the join with
``logged_predictions``; ``received_at`` serves the expiry delete.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import (
    big_id, create_index, drop_index, model_id, of_a_model, primary_key, timestamp, unique,
)

revision: str = "0007"
down_revision: str | None = "0006"


def upgrade() -> None:
    op.create_table(
        "pending_outcomes",
        big_id(),
        model_id(),
        sa.Column("prediction_id", sa.String(length=128), nullable=False),
        sa.Column("label", sa.JSON(), nullable=False),
        sa.Column("cost", sa.Float(), nullable=True),
        sa.Column("received_at", timestamp(), nullable=False),
        of_a_model("pending_outcomes"),
        primary_key("pending_outcomes"),
        unique("pending_outcomes", "model_id", "prediction_id"),
    )
    create_index("pending_outcomes", "received_at")


def downgrade() -> None:
    drop_index("pending_outcomes", "received_at")
    op.drop_table("pending_outcomes")
