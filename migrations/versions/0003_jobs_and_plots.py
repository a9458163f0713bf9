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

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def _timestamp() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "version_plots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("data", _json(), nullable=False),
        sa.Column("svg", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["model_versions.id"],
            name=op.f("fk_version_plots_version_id_model_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_version_plots")),
        sa.UniqueConstraint("version_id", "kind", name=op.f("uq_version_plots_version_id_kind")),
    )
    op.create_table(
        "training_jobs",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("model_name", sa.String(length=128), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("phase", sa.String(length=32), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("request", _json(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("worker", sa.String(length=128), nullable=True),
        sa.Column("version", sa.Integer(), nullable=True),
        sa.Column("error", _json(), nullable=True),
        sa.Column("timings", _json(), nullable=False),
        sa.Column("created_at", _timestamp(), nullable=False),
        sa.Column("started_at", _timestamp(), nullable=True),
        sa.Column("finished_at", _timestamp(), nullable=True),
        sa.Column("heartbeat_at", _timestamp(), nullable=True),
        sa.CheckConstraint("attempts >= 0", name=op.f("ck_training_jobs_attempts_non_negative")),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')",
            name=op.f("ck_training_jobs_status_allowed"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_training_jobs")),
    )
    op.create_index(
        op.f("ix_training_jobs_model_name"), "training_jobs", ["model_name"], unique=False
    )
    op.create_index(op.f("ix_training_jobs_status"), "training_jobs", ["status"], unique=False)
    op.create_table(
        "training_job_inputs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.String(length=32), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.CheckConstraint(
            "length(sha256) = 64", name=op.f("ck_training_job_inputs_sha256_length")
        ),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["training_jobs.id"],
            name=op.f("fk_training_job_inputs_job_id_training_jobs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_training_job_inputs")),
        sa.UniqueConstraint("job_id", name=op.f("uq_training_job_inputs_job_id")),
    )


def downgrade() -> None:
    op.drop_table("training_job_inputs")
    op.drop_index(op.f("ix_training_jobs_status"), table_name="training_jobs")
    op.drop_index(op.f("ix_training_jobs_model_name"), table_name="training_jobs")
    op.drop_table("training_jobs")
    op.drop_table("version_plots")
