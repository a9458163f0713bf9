"""Prior estimates: deployment class priors of a version estimated from its prediction log.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25

Hand-written against ``app.registry.orm.PriorEstimate``; tests/migrations checks that
autogenerate finds no difference. ``(version_id, created_at)`` finds a version's latest
estimate (what predict's ``"priors": "estimated"`` applies).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _timestamp() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "prior_estimates",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("since", _timestamp(), nullable=True),
        sa.Column("until", _timestamp(), nullable=True),
        sa.Column("n_rows", sa.Integer(), nullable=False),
        sa.Column("priors", sa.JSON(), nullable=False),
        sa.Column("train_priors", sa.JSON(), nullable=False),
        sa.Column("n_iter", sa.Integer(), nullable=False),
        sa.Column("converged", sa.Boolean(), nullable=False),
        sa.Column("log_likelihood_ratio", sa.Float(), nullable=False),
        sa.Column("p_value", sa.Float(), nullable=False),
        sa.CheckConstraint("n_rows >= 1", name=op.f("ck_prior_estimates_n_rows_positive")),
        sa.ForeignKeyConstraint(
            ["model_id"],
            ["registered_models.id"],
            name=op.f("fk_prior_estimates_model_id_registered_models"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["model_versions.id"],
            name=op.f("fk_prior_estimates_version_id_model_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_prior_estimates")),
    )
    op.create_index(
        "ix_prior_estimates_version_id_created_at",
        "prior_estimates",
        ["version_id", "created_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_prior_estimates_version_id_created_at", table_name="prior_estimates")
    op.drop_table("prior_estimates")
