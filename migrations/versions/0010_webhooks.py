"""Webhooks and their deliveries (an outbox written with what each event reports).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28

Hand-written against ``app.registry.orm.Webhook`` and ``WebhookDelivery``;
tests/migrations checks that autogenerate finds no difference.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import (
    big_id, cascade_key, create_index, created_at, drop_index, integer_id, json_type, primary_key,
    timestamp,
)

revision: str = "0010"
down_revision: str | None = "0009"


def upgrade() -> None:
    op.create_table(
        "webhooks",
        integer_id(),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("events", json_type(), nullable=False),
        sa.Column("secret", sa.String(length=128), nullable=False),
        sa.Column("created_by", sa.String(length=128), nullable=False),
        created_at(),
        primary_key("webhooks"),
    )
    op.create_table(
        "webhook_deliveries",
        big_id(),
        sa.Column("webhook_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.String(length=64), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("payload", json_type(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", timestamp(), nullable=False),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        created_at(),
        sa.Column("delivered_at", timestamp(), nullable=True),
        cascade_key("webhook_deliveries", "webhook_id", "webhooks"),
        primary_key("webhook_deliveries"),
    )
    create_index("webhook_deliveries", "status", "next_attempt_at")
    create_index("webhook_deliveries", "webhook_id", "created_at")


def downgrade() -> None:
    drop_index("webhook_deliveries", "webhook_id", "created_at")
    drop_index("webhook_deliveries", "status", "next_attempt_at")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhooks")
