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

import sqlalchemy as sa
from alembic import op

from migrations.columns import (
    check, create_index, created_at, drop_index, integer_id, json_type, model_id, of_a_model,
    of_a_version, primary_key, timestamp, unique, version_id,
)

revision: str = "0001"
down_revision: str | None = None


def upgrade() -> None:
    op.create_table(
        "registered_models",
        integer_id(),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("tags", json_type(), nullable=False),
        created_at(),
        sa.Column("updated_at", timestamp(), nullable=False),
        primary_key("registered_models"),
        unique("registered_models", "name"),
    )
    op.create_table(
        "model_versions",
        integer_id(),
        model_id(),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("algorithm", sa.String(length=64), nullable=False),
        sa.Column("params", json_type(), nullable=False),
        sa.Column("calibration", json_type(), nullable=False),
        sa.Column("data", json_type(), nullable=False),
        sa.Column("metrics", json_type(), nullable=False),
        sa.Column("training_seconds", sa.Float(), nullable=False),
        sa.Column("artifact_sha256", sa.String(length=64), nullable=False),
        sa.Column("artifact_size", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        created_at(),
        check("model_versions", "version_positive", "version >= 1"),
        check("model_versions", "artifact_size_non_negative", "artifact_size >= 0"),
        check("model_versions", "training_seconds_non_negative", "training_seconds >= 0"),
        check("model_versions", "artifact_sha256_length", "length(artifact_sha256) = 64"),
        check("model_versions", "status_allowed", "status IN ('ready', 'archived')"),
        of_a_model("model_versions"),
        primary_key("model_versions"),
        unique("model_versions", "model_id", "version"),
    )
    op.create_table(
        "artifacts",
        integer_id(),
        version_id(),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        check("artifacts", "sha256_length", "length(sha256) = 64"),
        of_a_version("artifacts"),
        primary_key("artifacts"),
        unique("artifacts", "version_id"),
    )
    op.create_table(
        "aliases",
        integer_id(),
        model_id(),
        sa.Column("name", sa.String(length=128), nullable=False),
        version_id(),
        sa.Column("updated_at", timestamp(), nullable=False),
        of_a_model("aliases"),
        of_a_version("aliases"),
        primary_key("aliases"),
        unique("aliases", "model_id", "name"),
    )
    create_index("aliases", "version_id")


def downgrade() -> None:
    drop_index("aliases", "version_id")
    op.drop_table("aliases")
    op.drop_table("artifacts")
    op.drop_table("model_versions")
    op.drop_table("registered_models")
