"""Prediction log: one row per served prediction, with its late outcome; per-model switch.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25

Hand-written against ``app.registry.orm`` (``LoggedPrediction`` and
``RegisteredModel.prediction_log``); tests/migrations checks that autogenerate finds no
difference. ``(model_id, prediction_id)`` is unique (ids are unique per model);
``(version_id, created_at)`` serves monitoring and ``created_at`` the retention delete.
Existing models keep logging on (server default true).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import (
    big_id, check, create_index, created_at, drop_index, model_id, of_a_model, of_a_version,
    primary_key, timestamp, unique, version_id,
)

revision: str = "0004"
down_revision: str | None = "0003"


def upgrade() -> None:
    with op.batch_alter_table("registered_models") as batch:
        batch.add_column(
            sa.Column("prediction_log", sa.Boolean(), server_default=sa.true(), nullable=False)
        )
    op.create_table(
        "logged_predictions",
        big_id(),
        model_id(),
        version_id(),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("prediction_id", sa.String(length=128), nullable=False),
        sa.Column("alias", sa.String(length=128), nullable=True),
        created_at(),
        sa.Column("raw_score", sa.JSON(), nullable=True),
        sa.Column("probabilities", sa.JSON(), nullable=True),
        sa.Column("decision", sa.Integer(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=True),
        sa.Column("expected_cost", sa.Float(), nullable=True),
        sa.Column("cost_setting", sa.String(length=16), nullable=False),
        sa.Column("costs", sa.JSON(), nullable=False),
        sa.Column("priors", sa.JSON(), nullable=True),
        sa.Column("features", sa.JSON(), nullable=True),
        sa.Column("label", sa.Integer(), nullable=True),
        sa.Column("outcome_cost", sa.Float(), nullable=True),
        sa.Column("labelled_at", timestamp(), nullable=True),
        check("logged_predictions", "decision_non_negative", "decision >= 0"),
        check("logged_predictions", "label_non_negative", "label IS NULL OR label >= 0"),
        of_a_model("logged_predictions"),
        of_a_version("logged_predictions"),
        primary_key("logged_predictions"),
        unique("logged_predictions", "model_id", "prediction_id"),
    )
    create_index("logged_predictions", "version_id", "created_at")
    create_index("logged_predictions", "created_at")


def downgrade() -> None:
    drop_index("logged_predictions", "created_at")
    drop_index("logged_predictions", "version_id", "created_at")
    op.drop_table("logged_predictions")
    with op.batch_alter_table("registered_models") as batch:
        batch.drop_column("prediction_log")
