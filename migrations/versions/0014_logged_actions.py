"""Decisions among named actions in the prediction log: the action taken and the names.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28

Hand-written against ``app.registry.orm.LoggedPrediction``; tests/migrations checks that
autogenerate finds no difference. ``action`` is the index of the action taken among
``actions`` (the names of the columns of the row's ``(K, A)`` ``costs``); ``decision``
becomes nullable: null for an action that stands for no class (e.g. ``review``). Rows
logged before keep ``action`` and ``actions`` null (class decisions).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"


def upgrade() -> None:
    with op.batch_alter_table("logged_predictions") as batch:
        batch.alter_column("decision", existing_type=sa.Integer(), nullable=True)
        batch.add_column(sa.Column("action", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("actions", sa.JSON(), nullable=True))


def downgrade() -> None:
    # rows whose action stands for no class have no class decision to keep
    op.execute("DELETE FROM logged_predictions WHERE decision IS NULL")
    with op.batch_alter_table("logged_predictions") as batch:
        batch.drop_column("actions")
        batch.drop_column("action")
        batch.alter_column("decision", existing_type=sa.Integer(), nullable=False)
