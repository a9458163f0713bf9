"""Migrations: upgrade/downgrade both run, and they agree with the ORM (no autogenerate diff)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from app.db import (
    alembic_config,
    downgrade,
    ensure_schema_at_head,
    make_engine,
    normalize_url,
    schema_revision,
    upgrade_to_head,
)
from app.errors import SchemaOutOfDate
from app.registry.orm import Base

REGISTRY_TABLES = {
    "registered_models",
    "model_versions",
    "artifacts",
    "aliases",
    "api_keys",
    "version_plots",
    "training_jobs",
    "training_job_inputs",
    "logged_predictions",
    "prior_estimates",
    "pending_outcomes",
    "alias_moves",
    "shadow_predictions",
    "webhooks",
    "webhook_deliveries",
    "alias_splits",
    "event_states",
}


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def _differences(url: str) -> list[object]:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            return list(compare_metadata(context, Base.metadata))
    finally:
        engine.dispose()


def test_upgrade_downgrade_upgrade(empty_database_url: str) -> None:
    upgrade_to_head(empty_database_url)
    assert _tables(empty_database_url) == REGISTRY_TABLES
    downgrade(empty_database_url, "base")
    assert _tables(empty_database_url) == set()
    upgrade_to_head(empty_database_url)
    assert _tables(empty_database_url) == REGISTRY_TABLES


def test_orm_and_migrations_agree(database_url: str) -> None:
    assert _differences(database_url) == []


def test_ensure_schema_at_head(empty_database_url: str) -> None:
    engine = make_engine(empty_database_url)
    try:
        head = ScriptDirectory.from_config(alembic_config(empty_database_url)).get_current_head()
        assert schema_revision(engine) == (None, head)
        with pytest.raises(SchemaOutOfDate) as caught:
            ensure_schema_at_head(engine)
        message = caught.value.detail
        assert "none (empty database)" in message and str(head) in message
        assert "costwise db upgrade" in message
        upgrade_to_head(empty_database_url)
        assert schema_revision(engine) == (head, head)
        ensure_schema_at_head(engine)
    finally:
        engine.dispose()


def test_unknown_revision_is_reported(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = 'ffff9999'"))
        with pytest.raises(
            SchemaOutOfDate, match="ffff9999, which this version of costwise does not know"
        ):
            ensure_schema_at_head(engine)
    finally:
        engine.dispose()


def test_every_revision_has_a_downgrade() -> None:
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    revisions = list(script.walk_revisions())
    assert revisions and all(r.module.downgrade.__code__.co_code for r in revisions)
    assert len(script.get_heads()) == 1


def test_script_location_does_not_depend_on_the_working_directory(tmp_path: Path) -> None:
    """alembic_config finds migrations/ from the package, so it works from any CWD."""
    code = (
        "from app.db import alembic_config; "
        "print(alembic_config('sqlite://').get_main_option('script_location'))"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(result.stdout.strip()) == root / "migrations"


def test_postgres_urls_are_rewritten_to_psycopg() -> None:
    assert normalize_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("sqlite:///x.db") == "sqlite:///x.db"
    assert make_engine("postgres://u@h/db").dialect.driver == "psycopg"
