"""Shadow scoring: a model's shadow (version or alias) and the shadow's decisions.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28

Hand-written against ``app.registry.orm.RegisteredModel`` (``shadow_version``,
``shadow_alias``) and ``ShadowPrediction``; tests/migrations checks that autogenerate
finds no difference. ``(model_id, version_id, prediction_id)`` is unique (one shadow
decision per version and logged prediction); ``(model_id, version, created_at)`` serves
the comparison's read of one shadow version.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import (
    big_id, check, create_index, created_at, drop_index, model_id, of_a_model, of_a_version,
    primary_key, unique, version_id,
)

revision: str = "0009"
down_revision: str | None = "0008"


def upgrade() -> None:
    with op.batch_alter_table("registered_models") as batch:
        batch.add_column(sa.Column("shadow_version", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("shadow_alias", sa.String(length=128), nullable=True))
    op.create_table(
        "shadow_predictions",
        big_id(),
        model_id(),
        version_id(),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("prediction_id", sa.String(length=128), nullable=False),
        created_at(),
        sa.Column("probabilities", sa.JSON(), nullable=False),
        sa.Column("decision", sa.Integer(), nullable=False),
        sa.Column("expected_cost", sa.Float(), nullable=True),
        check("shadow_predictions", "decision_non_negative", "decision >= 0"),
        of_a_model("shadow_predictions"),
        of_a_version("shadow_predictions"),
        primary_key("shadow_predictions"),
        unique("shadow_predictions", "model_id", "version_id", "prediction_id"),
    )
    create_index("shadow_predictions", "model_id", "version", "created_at")


def downgrade() -> None:
    drop_index("shadow_predictions", "model_id", "version", "created_at")
    op.drop_table("shadow_predictions")
    with op.batch_alter_table("registered_models") as batch:
        batch.drop_column("shadow_alias")
        batch.drop_column("shadow_version")
