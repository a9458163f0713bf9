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

from migrations.columns import cascade_key, integer_id, json_type, primary_key, timestamp

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
        sa.Column("created_at", timestamp(), nullable=False),
        primary_key("webhooks"),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("webhook_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.String(length=64), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("payload", json_type(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", timestamp(), nullable=False),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", timestamp(), nullable=False),
        sa.Column("delivered_at", timestamp(), nullable=True),
        cascade_key("webhook_deliveries", "webhook_id", "webhooks"),
        primary_key("webhook_deliveries"),
    )
    op.create_index(
        "ix_webhook_deliveries_status_next_attempt_at",
        "webhook_deliveries",
        ["status", "next_attempt_at"],
        unique=False,
    )
    op.create_index(
        "ix_webhook_deliveries_webhook_id_created_at",
        "webhook_deliveries",
        ["webhook_id", "created_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_webhook_id_created_at", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_status_next_attempt_at", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhooks")
