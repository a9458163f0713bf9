"""API keys: hashed keys with a role (admin, predictor, reader).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

Hand-written against ``app.registry.orm.ApiKey`` (tests/migrations checks that
autogenerate finds no difference). Only the sha256 of a key is stored (64 hex
characters, unique so that authentication is one indexed look-up) plus its first
characters for display; ``revoked_at`` set means revoked.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("key_prefix", sa.String(length=16), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("length(key_hash) = 64", name=op.f("ck_api_keys_key_hash_length")),
        sa.CheckConstraint(
            "role IN ('admin', 'predictor', 'reader')", name=op.f("ck_api_keys_role_allowed")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )


def downgrade() -> None:
    op.drop_table("api_keys")
