"""Registry tables: SQLAlchemy 2.0 typed ORM.

Tables: ``registered_models`` (unique name), ``model_versions`` (integer version per
model, immutable once ``ready``), ``artifacts`` (the blob, one per version, in its own
table so that listing versions never reads it), ``aliases`` (model, alias) -> version,
``api_keys`` (hashed API keys with a role), ``version_plots`` (plot data computed at
registration, one row per version and kind), ``training_jobs`` (trainings run as jobs:
status, progress, timings, result) and ``training_job_inputs`` (a job's training data,
in its own table so that listing jobs never reads it) and ``logged_predictions`` (one
row per served prediction, with its outcome once reported: see
:mod:`app.registry.prediction_log`).
Constraint names follow :data:`NAMING_CONVENTION` so that migrations can refer to them.
Any change here needs a hand-reviewed Alembic revision in ``migrations/versions``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    true,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column, relationship

__all__ = [
    "API_KEY_ROLES",
    "NAMING_CONVENTION",
    "VERSION_STATUSES",
    "Alias",
    "AliasMove",
    "AliasSplit",
    "ApiKey",
    "Artifact",
    "JOB_STATUSES",
    "LoggedPrediction",
    "PriorEstimate",
    "ShadowPrediction",
    "TrainingJob",
    "TrainingJobInput",
    "VersionPlot",
    "Webhook",
    "WebhookDelivery",
    "Base",
    "ModelVersion",
    "RegisteredModel",
    "utcnow",
]

NAMING_CONVENTION: dict[str, str] = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

#: Allowed values of ``model_versions.status`` (a CHECK constraint enforces them).
VERSION_STATUSES: tuple[str, ...] = ("ready", "archived")

#: Allowed values of ``training_jobs.status`` (a CHECK constraint enforces them).
JOB_STATUSES: tuple[str, ...] = ("queued", "running", "succeeded", "failed", "cancelled")

#: Roles of API keys, most powerful first (a CHECK constraint enforces them).
API_KEY_ROLES: tuple[str, ...] = ("admin", "predictor", "reader")

NAME_LENGTH = 128

JSONType = JSON().with_variant(JSONB(), "postgresql")


def utcnow() -> datetime:
    """Current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """``DateTime(timezone=True)`` that always returns aware datetimes.

    PostgreSQL stores ``timestamptz``; SQLite has no time zones, so values are stored
    in UTC and marked as UTC when read back.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("naive datetime given; use timezone-aware datetimes (UTC)")
        if value is not None and dialect.name == "sqlite":
            return value.astimezone(UTC)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class Base(DeclarativeBase):
    """Declarative base carrying the naming convention."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {dict[str, Any]: JSONType, datetime: UTCDateTime()}


class RegisteredModel(Base):
    """A named model; its versions are numbered 1, 2, 3, ... without gaps."""

    __tablename__ = "registered_models"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    tags: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # whether predictions of this model are written to logged_predictions (when the
    # service-wide COSTWISE_PREDICTION_LOG is on)
    prediction_log: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # the shadow: every logged predict is also decided by this version, or by the version
    # this alias points at when it is decided (at most one of the two is set)
    shadow_version: Mapped[int | None] = mapped_column(default=None)
    shadow_alias: Mapped[str | None] = mapped_column(String(NAME_LENGTH), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"RegisteredModel(name={self.name!r})"


class ModelVersion(Base):
    """One trained, immutable version of a registered model (metadata only, no blob)."""

    __tablename__ = "model_versions"
    __table_args__ = (
        UniqueConstraint("model_id", "version"),
        CheckConstraint("version >= 1", name="version_positive"),
        CheckConstraint("artifact_size >= 0", name="artifact_size_non_negative"),
        CheckConstraint("training_seconds >= 0", name="training_seconds_non_negative"),
        CheckConstraint("length(artifact_sha256) = 64", name="artifact_sha256_length"),
        CheckConstraint(
            "status IN (" + ", ".join(f"'{s}'" for s in VERSION_STATUSES) + ")",
            name="status_allowed",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("registered_models.id", ondelete="CASCADE"))
    version: Mapped[int]
    algorithm: Mapped[str] = mapped_column(String(64))
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    calibration: Mapped[dict[str, Any]] = mapped_column(default=dict)
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    metrics: Mapped[dict[str, Any]] = mapped_column(default=dict)
    training_seconds: Mapped[float] = mapped_column(Float)
    artifact_sha256: Mapped[str] = mapped_column(String(64))
    artifact_size: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default="ready")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    model: Mapped[RegisteredModel] = relationship(lazy="joined", innerjoin=True)

    def __repr__(self) -> str:
        return f"ModelVersion(model_id={self.model_id}, version={self.version})"


class _HashedBytes:
    """Bytes stored with their SHA-256 (64 hex characters, checked by the database): the
    last two columns of an artifact and of a job's training data."""

    @declared_attr.directive
    def __table_args__(cls) -> tuple[CheckConstraint, ...]:
        return (CheckConstraint("length(sha256) = 64", name="sha256_length"),)

    sha256: Mapped[str] = mapped_column(String(64), sort_order=1)
    data: Mapped[bytes] = mapped_column(LargeBinary, sort_order=1)


class Artifact(_HashedBytes, Base):
    """The serialized model of one version. Read only through ``Registry.get_artifact``."""

    __tablename__ = "artifacts"

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(
        ForeignKey("model_versions.id", ondelete="CASCADE"), unique=True
    )


class Alias(Base):
    """A movable name (e.g. ``production``) pointing at one version of a model."""

    __tablename__ = "aliases"
    __table_args__ = (UniqueConstraint("model_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("registered_models.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    version_id: Mapped[int] = mapped_column(
        ForeignKey("model_versions.id", ondelete="CASCADE"), index=True
    )
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    model_version: Mapped[ModelVersion] = relationship(lazy="joined", innerjoin=True)

    def __repr__(self) -> str:
        return f"Alias(model_id={self.model_id}, name={self.name!r})"


class AliasMove(Base):
    """One move of an alias, kept for good: who, when, from which version to which, why.

    Written in the transaction that moves the alias (``PUT`` and ``DELETE`` of
    ``/v1/models/{name}/aliases/{alias}`` and ``.../promote``). ``from_version`` is null
    when the alias was created, ``to_version`` when it was removed. ``actor`` and
    ``actor_role`` are the API key's name and role (``anonymous (authentication off)``
    without authentication); ``reason`` is ``manual``, ``removed`` or ``promoted``;
    ``evidence`` holds a promotion's rule and the comparison that satisfied it. Versions
    are numbers, not keys, so the trail outlives the versions it names.
    """

    __tablename__ = "alias_moves"
    __table_args__ = (
        Index("ix_alias_moves_model_id_alias_created_at", "model_id", "alias", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("registered_models.id", ondelete="CASCADE"))
    alias: Mapped[str] = mapped_column(String(NAME_LENGTH))
    from_version: Mapped[int | None] = mapped_column(default=None)
    to_version: Mapped[int | None] = mapped_column(default=None)
    actor: Mapped[str] = mapped_column(String(NAME_LENGTH))
    actor_role: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(String(16))
    note: Mapped[str] = mapped_column(Text, default="")
    evidence: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"AliasMove(model_id={self.model_id}, alias={self.alias!r}, id={self.id})"


class ApiKey(Base):
    """An API key: only the sha256 of the key is stored, plus its first characters for display.

    The plaintext is shown once, when the key is created. ``revoked_at`` set = revoked.
    """

    __tablename__ = "api_keys"
    __table_args__ = (
        CheckConstraint("length(key_hash) = 64", name="key_hash_length"),
        CheckConstraint(
            "role IN (" + ", ".join(f"'{r}'" for r in API_KEY_ROLES) + ")", name="role_allowed"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    role: Mapped[str] = mapped_column(String(16))
    key_prefix: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)
    last_used_at: Mapped[datetime | None] = mapped_column(default=None)

    def __repr__(self) -> str:  # never the hash
        return f"ApiKey(id={self.id}, name={self.name!r}, role={self.role!r})"


class VersionPlot(Base):
    """Plot data of one version (``kind``: brier_curve, reliability, roc, cost_curve, ...).

    Computed on the version's held-out rows at registration, in the same transaction as
    the version, so that serving a plot reads one row. ``svg`` holds the rendered picture.
    """

    __tablename__ = "version_plots"
    __table_args__ = (UniqueConstraint("version_id", "kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("model_versions.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    svg: Mapped[str | None] = mapped_column(Text, default=None)


class TrainingJob(Base):
    """A job: queued -> running -> succeeded | failed | cancelled.

    ``kind`` is ``training`` (a training run) or ``batch`` (batch decisions of a data set;
    ``result`` holds their summary once ``succeeded``; such jobs store no input blob).

    ``request`` holds the training parameters (not the data: see
    :class:`TrainingJobInput`); ``phase``/``done``/``total`` the progress; ``timings``
    seconds per phase; ``version`` the registered version once ``succeeded``; ``error``
    ``{"code", "detail", "field"}`` once ``failed``.
    """

    __tablename__ = "training_jobs"
    __table_args__ = (
        CheckConstraint(
            "status IN (" + ", ".join(f"'{s}'" for s in JOB_STATUSES) + ")",
            name="status_allowed",
        ),
        CheckConstraint("attempts >= 0", name="attempts_non_negative"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    model_name: Mapped[str] = mapped_column(String(NAME_LENGTH), index=True)
    kind: Mapped[str] = mapped_column(String(16), default="training", server_default="training")
    status: Mapped[str] = mapped_column(String(16), default="queued", index=True)
    phase: Mapped[str] = mapped_column(String(32), default="queued")
    done: Mapped[int] = mapped_column(default=0)
    total: Mapped[int] = mapped_column(default=0)
    request: Mapped[dict[str, Any]] = mapped_column(default=dict)
    attempts: Mapped[int] = mapped_column(default=0)
    max_attempts: Mapped[int] = mapped_column(default=2)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    worker: Mapped[str | None] = mapped_column(String(NAME_LENGTH), default=None)
    version: Mapped[int | None] = mapped_column(default=None)
    error: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    result: Mapped[dict[str, Any] | None] = mapped_column(default=None)  # a batch's summary
    timings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    heartbeat_at: Mapped[datetime | None] = mapped_column(default=None)

    def __repr__(self) -> str:
        return f"TrainingJob(id={self.id!r}, status={self.status!r})"


class TrainingJobInput(_HashedBytes, Base):
    """The training data of a job (a zip of ``.npy`` arrays, no pickle), deleted when it ends."""

    __tablename__ = "training_job_inputs"

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[str] = mapped_column(
        ForeignKey("training_jobs.id", ondelete="CASCADE"), unique=True
    )


#: Longest id of a logged prediction (a client's own id, e.g. a transaction id).
PREDICTION_ID_LENGTH = 128
#: Integer primary key that is 64-bit on PostgreSQL (SQLite's rowid is 64-bit already,
#: and only ``INTEGER PRIMARY KEY`` is its rowid alias).
BigId = BigInteger().with_variant(Integer(), "sqlite")
#: JSON of the log: plain ``json`` on PostgreSQL (stored as written; ``jsonb`` parsing
#: cost ~10 us per value on the write path, which only ever writes whole rows).
LogJSON = JSON()


class _DecidedRow:
    """The first columns of a row the log keeps per decided prediction (served, or decided
    again in shadow): its own id, the model and the version that decided, the prediction
    id."""

    id: Mapped[int] = mapped_column(BigId, primary_key=True, sort_order=-1)
    model_id: Mapped[int] = mapped_column(
        ForeignKey("registered_models.id", ondelete="CASCADE"), sort_order=-1
    )
    version_id: Mapped[int] = mapped_column(
        ForeignKey("model_versions.id", ondelete="CASCADE"), sort_order=-1
    )
    version: Mapped[int] = mapped_column(sort_order=-1)
    prediction_id: Mapped[str] = mapped_column(String(PREDICTION_ID_LENGTH), sort_order=-1)


class LoggedPrediction(_DecidedRow, Base):
    """One served prediction row (``/v1`` predict or ``/v2`` infer) and its late outcome.

    Written in batches by :class:`app.services.feedback.prediction_log.PredictionLogWriter`, off the
    request path. ``prediction_id`` is unique per model: the service's id (32 hex digits)
    or the client's (``ids``). ``raw_score`` is what the calibrator took (a number for
    binary scorers, one per class for per-class calibration, null for models without a
    calibration map); ``probabilities`` are those the decision used (after deployment
    ``priors``); ``decision`` is a class index; ``costs`` the ``(K, K)`` cost matrix applied
    to this row (rows = truth); ``cost_setting`` where it came from; ``stable`` whether the
    decision held at both ends of the row's probability interval (null: none asked). A
    decision among named
    actions has ``actions`` (the names, one per column of its ``(K, A)`` ``costs``),
    ``action`` (the index of the action taken) and ``decision`` the class that action
    stands for, null for an action that stands for no class (e.g. ``review``). ``label``
    (a class index), ``outcome_cost`` and ``labelled_at`` are set once by an outcome report.
    """

    __tablename__ = "logged_predictions"
    __table_args__ = (
        UniqueConstraint("model_id", "prediction_id"),
        Index("ix_logged_predictions_version_id_created_at", "version_id", "created_at"),
        Index("ix_logged_predictions_created_at", "created_at"),
        CheckConstraint("decision >= 0", name="decision_non_negative"),
        CheckConstraint("label IS NULL OR label >= 0", name="label_non_negative"),
    )

    alias: Mapped[str | None] = mapped_column(String(NAME_LENGTH), default=None)
    created_at: Mapped[datetime]
    raw_score: Mapped[Any | None] = mapped_column(LogJSON, default=None)
    probabilities: Mapped[Any | None] = mapped_column(LogJSON, default=None)
    decision: Mapped[int | None] = mapped_column(default=None)
    threshold: Mapped[float | None] = mapped_column(Float, default=None)
    expected_cost: Mapped[float | None] = mapped_column(Float, default=None)
    cost_setting: Mapped[str] = mapped_column(String(16))
    costs: Mapped[Any] = mapped_column(LogJSON)
    priors: Mapped[Any | None] = mapped_column(LogJSON, default=None)
    features: Mapped[Any | None] = mapped_column(LogJSON, default=None)
    # the decision was the same at both ends of the row's probability interval (asked
    # with interval: true); null when no interval was asked
    stable: Mapped[bool | None] = mapped_column(default=None)
    action: Mapped[int | None] = mapped_column(default=None)
    actions: Mapped[Any | None] = mapped_column(LogJSON, default=None)
    label: Mapped[int | None] = mapped_column(default=None)
    outcome_cost: Mapped[float | None] = mapped_column(Float, default=None)
    labelled_at: Mapped[datetime | None] = mapped_column(default=None)

    def __repr__(self) -> str:
        return f"LoggedPrediction(model_id={self.model_id}, prediction_id={self.prediction_id!r})"


class PendingOutcome(Base):
    """An outcome reported for a prediction id that is not (yet) in the log.

    Kept by :class:`app.services.feedback.outcomes.Outcomes` when the id's log row has not landed
    (the writer is behind, or the client sent its own ``ids`` and reported before
    predicting); joined into ``logged_predictions`` once the row lands, by the log
    writer right after each batch and by the outcome report itself (see
    :mod:`app.registry.pending_outcomes`), then deleted. ``label`` is the reported
    class as JSON (validated against the version's classes at the join); ``cost`` the
    reported realised cost. One per ``(model_id, prediction_id)``; expired after
    COSTWISE_PENDING_OUTCOME_SECONDS.
    """

    __tablename__ = "pending_outcomes"
    __table_args__ = (
        UniqueConstraint("model_id", "prediction_id"),
        Index("ix_pending_outcomes_received_at", "received_at"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("registered_models.id", ondelete="CASCADE"))
    prediction_id: Mapped[str] = mapped_column(String(PREDICTION_ID_LENGTH))
    label: Mapped[Any] = mapped_column(JSON)
    cost: Mapped[float | None] = mapped_column(Float, default=None)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"PendingOutcome(model_id={self.model_id}, prediction_id={self.prediction_id!r})"


class PriorEstimate(Base):
    """Deployment class priors of one version estimated from its logged probabilities.

    Written by :class:`app.services.feedback.priors.PriorEstimates` (EM of Saerens et al. 2002, see
    :mod:`models.feedback.priors`) over the version's logged predictions in ``[since, until)``:
    ``priors`` and ``train_priors`` (model class order), the rows used, the iterations,
    whether EM converged, and the likelihood-ratio test of "the priors did not change".
    The latest row of a version is what ``"priors": "estimated"`` applies.
    """

    __tablename__ = "prior_estimates"
    __table_args__ = (
        Index("ix_prior_estimates_version_id_created_at", "version_id", "created_at"),
        CheckConstraint("n_rows >= 1", name="n_rows_positive"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("registered_models.id", ondelete="CASCADE"))
    version_id: Mapped[int] = mapped_column(ForeignKey("model_versions.id", ondelete="CASCADE"))
    version: Mapped[int]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    since: Mapped[datetime | None] = mapped_column(default=None)
    until: Mapped[datetime | None] = mapped_column(default=None)
    n_rows: Mapped[int]
    priors: Mapped[Any] = mapped_column(JSON)
    train_priors: Mapped[Any] = mapped_column(JSON)
    n_iter: Mapped[int]
    converged: Mapped[bool] = mapped_column(Boolean)
    log_likelihood_ratio: Mapped[float] = mapped_column(Float)
    p_value: Mapped[float] = mapped_column(Float)

    def __repr__(self) -> str:
        return f"PriorEstimate(version_id={self.version_id}, id={self.id})"


class ShadowPrediction(_DecidedRow, Base):
    """The decision a shadow version made for a logged prediction (same id, same costs).

    Written by :class:`app.services.challenger.shadow.ShadowScorer` off the request path.
    ``prediction_id`` is the id of the served row in ``logged_predictions`` (joined on
    ``(model_id, prediction_id)``: its label, costs and served version are read from
    there); ``version_id``/``version`` the shadow version that decided it;
    ``probabilities`` and ``decision`` (a class index) its answer under the row's costs
    and priors, ``expected_cost`` that decision's expected cost.
    """

    __tablename__ = "shadow_predictions"
    __table_args__ = (
        UniqueConstraint("model_id", "version_id", "prediction_id"),
        Index(
            "ix_shadow_predictions_model_id_version_created_at", "model_id", "version", "created_at"
        ),
        CheckConstraint("decision >= 0", name="decision_non_negative"),
    )

    created_at: Mapped[datetime]
    probabilities: Mapped[Any] = mapped_column(LogJSON)
    decision: Mapped[int]
    expected_cost: Mapped[float | None] = mapped_column(Float, default=None)

    def __repr__(self) -> str:
        return (
            f"ShadowPrediction(version_id={self.version_id}, prediction_id={self.prediction_id!r})"
        )


class Webhook(Base):
    """An operator's webhook: events are POSTed to ``url``, signed with ``secret``.

    ``events`` lists the event types it receives (see :data:`app.registry.webhooks.EVENTS`);
    ``secret`` is the HMAC-SHA256 key of the signature header, shown once when the webhook
    is registered. Removing a webhook removes its deliveries.
    """

    __tablename__ = "webhooks"

    id: Mapped[int] = mapped_column(primary_key=True)
    url: Mapped[str] = mapped_column(String(2048))
    events: Mapped[Any] = mapped_column(JSONType)
    secret: Mapped[str] = mapped_column(String(128))
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"Webhook(id={self.id}, url={self.url!r})"


class WebhookDelivery(Base):
    """One event to deliver to one webhook, written in the transaction of what it reports.

    ``status`` is ``pending`` (``next_attempt_at`` says when), ``delivered`` (a 2xx
    answer) or ``failed`` (COSTWISE_WEBHOOK_MAX_ATTEMPTS attempts without one);
    ``attempts``, ``last_status`` and ``last_error`` say what the receiver answered.
    ``event_id`` is the same for every webhook that receives the event (receivers use it
    to drop a repeated delivery).
    """

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index("ix_webhook_deliveries_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_webhook_id_created_at", "webhook_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    webhook_id: Mapped[int] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    event_id: Mapped[str] = mapped_column(String(64))
    event: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_status: Mapped[int | None] = mapped_column(default=None)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(default=None)

    def __repr__(self) -> str:
        return f"WebhookDelivery(id={self.id}, event={self.event!r}, status={self.status!r})"


class EventState(Base):
    """Whether a watched condition of a model holds, as the event watch last saw it.

    ``event`` is the event type raised when the condition starts to hold
    (``calibration.alarm``, ``cost.out_of_band``, ``challenger.better``) and ``subject``
    what it is about (``version 3``; ``1 vs 2`` for a comparison): the event is raised on
    the change to ``active``, once, not at every evaluation
    (:mod:`app.services.events.watch`).
    """

    __tablename__ = "event_states"
    __table_args__ = (UniqueConstraint("model_id", "event", "subject"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("registered_models.id", ondelete="CASCADE"))
    event: Mapped[str] = mapped_column(String(64))
    subject: Mapped[str] = mapped_column(String(NAME_LENGTH))
    active: Mapped[bool] = mapped_column(Boolean)
    changed_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"EventState({self.event!r}, {self.subject!r}, active={self.active})"


class AliasSplit(Base):
    """A weighted traffic split of an alias (a canary): ``weight`` of the requests that
    name ``alias`` (or take it as the default) are served by ``version`` instead of the
    alias's own version; sticky by the request's ``routing_key`` when it has one."""

    __tablename__ = "alias_splits"
    __table_args__ = (UniqueConstraint("model_id", "alias"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("registered_models.id", ondelete="CASCADE"))
    alias: Mapped[str] = mapped_column(String(NAME_LENGTH))
    version: Mapped[int]
    weight: Mapped[float] = mapped_column(Float)
    created_by: Mapped[str] = mapped_column(String(NAME_LENGTH))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"AliasSplit(model_id={self.model_id}, alias={self.alias!r}, weight={self.weight})"
