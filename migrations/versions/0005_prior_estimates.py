"""Prior estimates: deployment class priors of a version estimated from its prediction log.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25

Hand-written against ``app.registry.orm.PriorEstimate``; tests/migrations checks that
autogenerate finds no difference. ``(version_id, created_at)`` finds a version's latest
estimate (what predict's ``"priors": "estimated"`` applies).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import (
    check, create_index, created_at, drop_index, integer_id, model_id, of_a_model, of_a_version,
    primary_key, timestamp, version_id,
)

revision: str = "0005"
down_revision: str | None = "0004"


def upgrade() -> None:
    op.create_table(
        "prior_estimates",
        integer_id(),
        model_id(),
        version_id(),
        sa.Column("version", sa.Integer(), nullable=False),
        created_at(),
        sa.Column("since", timestamp(), nullable=True),
        sa.Column("until", timestamp(), nullable=True),
        sa.Column("n_rows", sa.Integer(), nullable=False),
        sa.Column("priors", sa.JSON(), nullable=False),
        sa.Column("train_priors", sa.JSON(), nullable=False),
        sa.Column("n_iter", sa.Integer(), nullable=False),
        sa.Column("converged", sa.Boolean(), nullable=False),
        sa.Column("log_likelihood_ratio", sa.Float(), nullable=False),
        sa.Column("p_value", sa.Float(), nullable=False),
        check("prior_estimates", "n_rows_positive", "n_rows >= 1"),
        of_a_model("prior_estimates"),
        of_a_version("prior_estimates"),
        primary_key("prior_estimates"),
    )
    create_index("prior_estimates", "version_id", "created_at")


def downgrade() -> None:
    drop_index("prior_estimates", "version_id", "created_at")
    op.drop_table("prior_estimates")
