"""Alias moves: the audit trail of every alias change (manual, removed, promoted).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28

Hand-written against ``app.registry.orm.AliasMove``; tests/migrations checks that
autogenerate finds no difference. ``(model_id, alias, created_at)`` serves an alias's
history, newest first.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import (
    create_index, created_at, drop_index, integer_id, json_type, model_id, of_a_model, primary_key,
)

revision: str = "0008"
down_revision: str | None = "0007"


def upgrade() -> None:
    op.create_table(
        "alias_moves",
        integer_id(),
        model_id(),
        sa.Column("alias", sa.String(length=128), nullable=False),
        sa.Column("from_version", sa.Integer(), nullable=True),
        sa.Column("to_version", sa.Integer(), nullable=True),
        sa.Column("actor", sa.String(length=128), nullable=False),
        sa.Column("actor_role", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=16), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("evidence", json_type(), nullable=True),
        created_at(),
        of_a_model("alias_moves"),
        primary_key("alias_moves"),
    )
    create_index("alias_moves", "model_id", "alias", "created_at")


def downgrade() -> None:
    drop_index("alias_moves", "model_id", "alias", "created_at")
    op.drop_table("alias_moves")
