"""Training jobs (with their input data) and per-version plot data.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22

Hand-written against ``app.registry.orm`` (``TrainingJob``, ``TrainingJobInput``,
``VersionPlot``); tests/migrations checks that autogenerate finds no difference.
``training_job_inputs`` keeps a job's data apart so that listing jobs never reads it;
``version_plots`` holds what the plot endpoints serve, written with the version.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import (
    cascade_key, check, create_index, created_at, drop_index, integer_id, json_type, of_a_version,
    primary_key, timestamp, unique, version_id,
)

revision: str = "0003"
down_revision: str | None = "0002"


def upgrade() -> None:
    op.create_table(
        "version_plots",
        integer_id(),
        version_id(),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("data", json_type(), nullable=False),
        sa.Column("svg", sa.Text(), nullable=True),
        of_a_version("version_plots"),
        primary_key("version_plots"),
        unique("version_plots", "version_id", "kind"),
    )
    op.create_table(
        "training_jobs",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("model_name", sa.String(length=128), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("phase", sa.String(length=32), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("request", json_type(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("worker", sa.String(length=128), nullable=True),
        sa.Column("version", sa.Integer(), nullable=True),
        sa.Column("error", json_type(), nullable=True),
        sa.Column("timings", json_type(), nullable=False),
        created_at(),
        sa.Column("started_at", timestamp(), nullable=True),
        sa.Column("finished_at", timestamp(), nullable=True),
        sa.Column("heartbeat_at", timestamp(), nullable=True),
        check("training_jobs", "attempts_non_negative", "attempts >= 0"),
        check(
            "training_jobs",
            "status_allowed",
            "status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')",
        ),
        primary_key("training_jobs"),
    )
    create_index("training_jobs", "model_name")
    create_index("training_jobs", "status")
    op.create_table(
        "training_job_inputs",
        integer_id(),
        sa.Column("job_id", sa.String(length=32), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        check("training_job_inputs", "sha256_length", "length(sha256) = 64"),
        cascade_key("training_job_inputs", "job_id", "training_jobs"),
        primary_key("training_job_inputs"),
        unique("training_job_inputs", "job_id"),
    )


def downgrade() -> None:
    op.drop_table("training_job_inputs")
    drop_index("training_jobs", "status")
    drop_index("training_jobs", "model_name")
    op.drop_table("training_jobs")
    op.drop_table("version_plots")
