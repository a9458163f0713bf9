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

import sqlalchemy as sa
from alembic import op

from migrations.columns import check, created_at, integer_id, primary_key, timestamp, unique

revision: str = "0002"
down_revision: str | None = "0001"


def upgrade() -> None:
    op.create_table(
        "api_keys",
        integer_id(),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("key_prefix", sa.String(length=16), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        created_at(),
        sa.Column("revoked_at", timestamp(), nullable=True),
        sa.Column("last_used_at", timestamp(), nullable=True),
        check("api_keys", "key_hash_length", "length(key_hash) = 64"),
        check("api_keys", "role_allowed", "role IN ('admin', 'predictor', 'reader')"),
        primary_key("api_keys"),
        unique("api_keys", "key_hash"),
    )


def downgrade() -> None:
    op.drop_table("api_keys")
