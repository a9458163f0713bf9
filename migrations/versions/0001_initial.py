"""Initial registry schema: registered_models, model_versions, artifacts, aliases.

Revision ID: 0001
Revises:
Create Date: 2026-11-22

Hand-reviewed against app/registry/orm.py (tests/migrations checks that autogenerate
finds no difference). Constraint names follow the ORM's naming convention; types are
written out (UTCDateTime is DateTime(timezone=True) on the database side; JSON is JSONB
on PostgreSQL). Timestamps and JSON defaults are set by the application, not the server.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def _timestamp() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "registered_models",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("tags", _json(), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("updated_at", _timestamp(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_registered_models")),
        sa.UniqueConstraint("name", name=op.f("uq_registered_models_name")),
    )
    op.create_table(
        "model_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("algorithm", sa.String(length=64), nullable=False),
        sa.Column("params", _json(), nullable=False),
        sa.Column("calibration", _json(), nullable=False),
        sa.Column("data", _json(), nullable=False),
        sa.Column("metrics", _json(), nullable=False),
        sa.Column("training_seconds", sa.Float(), nullable=False),
        sa.Column("artifact_sha256", sa.String(length=64), nullable=False),
        sa.Column("artifact_size", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.CheckConstraint("version >= 1", name=op.f("ck_model_versions_version_positive")),
        sa.CheckConstraint(
            "artifact_size >= 0", name=op.f("ck_model_versions_artifact_size_non_negative")
        ),
        sa.CheckConstraint(
            "training_seconds >= 0", name=op.f("ck_model_versions_training_seconds_non_negative")
        ),
        sa.CheckConstraint(
            "length(artifact_sha256) = 64", name=op.f("ck_model_versions_artifact_sha256_length")
        ),
        sa.CheckConstraint(
            "status IN ('ready', 'archived')", name=op.f("ck_model_versions_status_allowed")
        ),
        sa.ForeignKeyConstraint(
            ["model_id"],
            ["registered_models.id"],
            name=op.f("fk_model_versions_model_id_registered_models"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_model_versions")),
        sa.UniqueConstraint(
            "model_id", "version", name=op.f("uq_model_versions_model_id_version")
        ),
    )
    op.create_table(
        "artifacts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.CheckConstraint("length(sha256) = 64", name=op.f("ck_artifacts_sha256_length")),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["model_versions.id"],
            name=op.f("fk_artifacts_version_id_model_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_artifacts")),
        sa.UniqueConstraint("version_id", name=op.f("uq_artifacts_version_id")),
    )
    op.create_table(
        "aliases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("updated_at", _timestamp(), nullable=False),
        sa.ForeignKeyConstraint(
            ["model_id"],
            ["registered_models.id"],
            name=op.f("fk_aliases_model_id_registered_models"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["model_versions.id"],
            name=op.f("fk_aliases_version_id_model_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_aliases")),
        sa.UniqueConstraint("model_id", "name", name=op.f("uq_aliases_model_id_name")),
    )
    op.create_index(op.f("ix_aliases_version_id"), "aliases", ["version_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_aliases_version_id"), table_name="aliases")
    op.drop_table("aliases")
    op.drop_table("artifacts")
    op.drop_table("model_versions")
    op.drop_table("registered_models")
