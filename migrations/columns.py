"""Column types, keys and constraints that several revisions write the same way.

A revision is history: what it creates must never change. So a helper here is never
edited once a revision uses it (a different shape is a new helper), and each returns a
new object per call, as the revisions wrote inline before. Names follow the ORM's
naming convention (``pk_<table>``, ``fk_<table>_<column>_<parent>``, ...), wrapped in
``op.f`` so that they are used as given.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql


def json_type() -> sa.types.TypeEngine[object]:
    """JSON, stored as JSONB on PostgreSQL."""
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def timestamp() -> sa.DateTime:
    """The database side of the ORM's UTCDateTime."""
    return sa.DateTime(timezone=True)


def integer_id() -> sa.Column[int]:
    """The integer ``id`` column of a table (its primary key: see :func:`primary_key`)."""
    return sa.Column("id", sa.Integer(), nullable=False)


def primary_key(table: str) -> sa.PrimaryKeyConstraint:
    """``id`` is the primary key of ``table``."""
    return sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}"))


def cascade_key(table: str, column: str, parent: str) -> sa.ForeignKeyConstraint:
    """``table.column`` points at ``parent.id``; the row is deleted with its parent."""
    return sa.ForeignKeyConstraint(
        [column], [f"{parent}.id"], name=op.f(f"fk_{table}_{column}_{parent}"), ondelete="CASCADE"
    )


def of_a_model(table: str) -> sa.ForeignKeyConstraint:
    """``table.model_id`` -> ``registered_models.id`` (deleted with the model)."""
    return cascade_key(table, "model_id", "registered_models")


def of_a_version(table: str) -> sa.ForeignKeyConstraint:
    """``table.version_id`` -> ``model_versions.id`` (deleted with the version)."""
    return cascade_key(table, "version_id", "model_versions")


def unique(table: str, *columns: str) -> sa.UniqueConstraint:
    """``columns`` together are unique in ``table``."""
    return sa.UniqueConstraint(*columns, name=op.f(f"uq_{table}_{'_'.join(columns)}"))


def check(table: str, name: str, condition: str) -> sa.CheckConstraint:
    """The check constraint ``ck_<table>_<name>``: ``condition`` holds for every row."""
    return sa.CheckConstraint(condition, name=op.f(f"ck_{table}_{name}"))


def big_id() -> sa.Column[int]:
    """The ``id`` column of a table that grows with traffic: BIGINT, INTEGER on SQLite (so
    that it is SQLite's rowid and numbers itself)."""
    return sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False)


def model_id() -> sa.Column[int]:
    """The ``model_id`` column of a model's row (its key: see :func:`of_a_model`)."""
    return sa.Column("model_id", sa.Integer(), nullable=False)


def version_id() -> sa.Column[int]:
    """The ``version_id`` column of a version's row (its key: see :func:`of_a_version`)."""
    return sa.Column("version_id", sa.Integer(), nullable=False)


def created_at() -> sa.Column[object]:
    """When the row was written (set by the application, not the server)."""
    return sa.Column("created_at", timestamp(), nullable=False)


def index_name(table: str, *columns: str) -> str:
    """``ix_<table>_<column>_...``: the name of the index on ``columns`` of ``table``."""
    return f"ix_{table}_{'_'.join(columns)}"


def create_index(table: str, *columns: str) -> None:
    """Create the (non-unique) index on ``columns`` of ``table``, named by
    :func:`index_name`."""
    op.create_index(index_name(table, *columns), table, list(columns), unique=False)


def drop_index(table: str, *columns: str) -> None:
    """Drop the index :func:`create_index` created."""
    op.drop_index(index_name(table, *columns), table_name=table)
