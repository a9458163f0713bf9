"""Service-layer errors.

Each error carries a stable machine-readable ``code``; the HTTP layer maps codes to
status codes in exactly one table (:mod:`app.api.errors`). Nothing here knows HTTP.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """Base class: ``code`` is stable API surface, ``detail`` is for humans."""

    code: str = "INTERNAL"

    def __init__(self, detail: str, *, field: str | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.extra = extra


class NotFound(ServiceError):
    code = "NOT_FOUND"


class AlreadyExists(ServiceError):
    code = "ALREADY_EXISTS"


class InvalidArgument(ServiceError):
    code = "INVALID_ARGUMENT"


class Conflict(ServiceError):
    code = "CONFLICT"


class PayloadTooLarge(ServiceError):
    code = "PAYLOAD_TOO_LARGE"


class Unavailable(ServiceError):
    """The database (or another dependency) cannot be reached right now."""

    code = "UNAVAILABLE"


class PromotionRefused(ServiceError):
    """The promotion gate's rule does not hold; ``extra["evidence"]`` holds the figures."""

    code = "PROMOTION_REFUSED"


class ArtifactCorrupted(ServiceError):
    """A stored artifact failed its integrity check and was not used."""

    code = "ARTIFACT_CORRUPTED"


class SchemaOutOfDate(ServiceError):
    """The database schema is not at the migrations' head revision."""

    code = "SCHEMA_OUT_OF_DATE"


class Unauthorized(ServiceError):
    """No API key, or a key that is unknown or revoked (authentication is on)."""

    code = "UNAUTHORIZED"


class Forbidden(ServiceError):
    """A valid API key whose role does not allow the operation."""

    code = "FORBIDDEN"


class TrainingTimeLimit(ServiceError):
    """A training ran past ``COSTWISE_MAX_TRAINING_SECONDS`` and was stopped (nothing saved)."""

    code = "TRAINING_TIME_LIMIT"


class BatchTimeLimit(ServiceError):
    """A batch decision job ran past ``COSTWISE_MAX_JOB_SECONDS`` and was stopped (no output)."""

    code = "BATCH_TIME_LIMIT"


class Misconfigured(ServiceError):
    """The service's configuration is unsafe or incomplete; it refuses to start."""

    code = "MISCONFIGURED"


class JobAbandoned(ServiceError):
    """A training job's worker stopped heartbeating and the job ran out of attempts."""

    code = "JOB_ABANDONED"
