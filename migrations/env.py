"""Alembic environment: runs migrations for the URL set by :func:`app.db.alembic_config`.

``target_metadata`` is the registry ORM's metadata, so ``alembic revision --autogenerate``
and the drift test compare against :mod:`app.registry.orm`. SQLite runs in batch mode
(table rebuilds for ALTERs) with foreign keys switched off while migrating, so that a
rebuilt parent table does not cascade-delete its children.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from app.db import make_engine
from app.registry.orm import Base

config = context.config
target_metadata = Base.metadata


def _configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        compare_type=True,
        render_as_batch=True,  # needed for SQLite ALTERs, harmless elsewhere
        **kwargs,  # type: ignore[arg-type]
    )


def run_migrations_offline() -> None:
    """Emit SQL to stdout (``alembic upgrade --sql``) without a database connection."""
    _configure(url=config.get_main_option("sqlalchemy.url"), literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: Connection) -> None:
    _configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Run migrations on a live connection (an existing one if the caller passed it)."""
    existing = config.attributes.get("connection")
    if existing is not None:
        _run(existing)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database URL: build the config with app.db.alembic_config(url)")
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            sqlite = connection.dialect.name == "sqlite"
            if sqlite:  # PRAGMA foreign_keys is a no-op inside a transaction: use the driver
                connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
            try:
                _run(connection)
            finally:
                if sqlite:
                    driver = connection.connection.driver_connection
                    driver.execute("PRAGMA foreign_keys=ON")  # type: ignore[union-attr]
            if sqlite:
                problems = driver.execute("PRAGMA foreign_key_check").fetchall()  # type: ignore[union-attr]
                if problems:
                    raise RuntimeError(f"foreign key violations after migrating: {problems[:5]}")
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
