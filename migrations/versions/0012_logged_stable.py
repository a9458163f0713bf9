"""The prediction log keeps whether each decision was stable over its probability interval.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28

Hand-written against ``app.registry.orm.LoggedPrediction``; tests/migrations checks that
autogenerate finds no difference. ``stable`` is null for every existing row and for any
request that asked for no interval; monitoring counts the rows where it is false.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"


def upgrade() -> None:
    with op.batch_alter_table("logged_predictions") as batch:
        batch.add_column(sa.Column("stable", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("logged_predictions") as batch:
        batch.drop_column("stable")
