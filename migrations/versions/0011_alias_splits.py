"""Traffic splits of aliases (canaries): a share of an alias's requests to another version.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28

Hand-written against ``app.registry.orm.AliasSplit``; tests/migrations checks that
autogenerate finds no difference. One split per (model, alias).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import created_at, integer_id, model_id, of_a_model, primary_key, unique

revision: str = "0011"
down_revision: str | None = "0010"


def upgrade() -> None:
    op.create_table(
        "alias_splits",
        integer_id(),
        model_id(),
        sa.Column("alias", sa.String(length=128), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("created_by", sa.String(length=128), nullable=False),
        created_at(),
        of_a_model("alias_splits"),
        primary_key("alias_splits"),
        unique("alias_splits", "model_id", "alias"),
    )


def downgrade() -> None:
    op.drop_table("alias_splits")
