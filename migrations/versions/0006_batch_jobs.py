"""Batch decision jobs: a job's kind and its result.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25

Hand-written against ``app.registry.orm.TrainingJob``; tests/migrations checks that
autogenerate finds no difference. ``kind`` is ``training`` (every existing job) or
``batch`` (``POST /v1/models/{name}/batch``); ``result`` holds a finished batch's summary
(rows, decisions per class, total expected cost, output).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import json_type

revision: str = "0006"
down_revision: str | None = "0005"


def upgrade() -> None:
    with op.batch_alter_table("training_jobs") as batch:
        batch.add_column(
            sa.Column("kind", sa.String(16), nullable=False, server_default="training")
        )
        batch.add_column(sa.Column("result", json_type(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("training_jobs") as batch:
        batch.drop_column("result")
        batch.drop_column("kind")
