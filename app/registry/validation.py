"""Input checks done by the registry before anything reaches the database.

They turn what would otherwise be backend-specific database errors (a JSONB column
rejecting NaN on PostgreSQL while SQLite stores it, a VARCHAR overflow that SQLite
ignores, ...) into the same :class:`app.errors.InvalidArgument` on every backend.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from app.errors import InvalidArgument
from app.registry.orm import NAME_LENGTH

__all__ = [
    "ALGORITHM_LENGTH",
    "NAME_PATTERN",
    "check_name",
    "check_page",
    "check_tags",
    "check_version_metadata",
]

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
ALGORITHM_LENGTH = 64
TAG_KEY_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
TAG_VALUE_LENGTH = 256
MAX_TAGS = 50


def check_name(value: str, what: str) -> str:
    """Return ``value`` if it is a valid model or alias name, else raise InvalidArgument."""
    if not isinstance(value, str) or not NAME_PATTERN.fullmatch(value) or len(value) > NAME_LENGTH:
        raise InvalidArgument(
            f"{what} {value!r} is invalid: expected 1-{NAME_LENGTH} characters from "
            "letters, digits, '.', '_' and '-', starting with a letter or digit",
            field=what.replace(" ", "_"),
        )
    return value


def check_page(limit: int, offset: int) -> None:
    """Raise InvalidArgument unless ``limit >= 1`` and ``offset >= 0``."""
    if limit < 1 or offset < 0:
        raise InvalidArgument(f"expected limit >= 1 and offset >= 0, got {limit} and {offset}")


def check_version_metadata(
    *,
    algorithm: str,
    documents: dict[str, dict[str, Any]],
    training_seconds: float,
    artifact: bytes,
    artifact_sha256: str,
) -> None:
    """Validate the fields of a new model version; errors name the offending field.

    ``documents`` maps field names (params, calibration, data, metrics) to the dicts
    stored as JSON: they must be strict JSON (no NaN/Infinity, only JSON types).
    """
    if not algorithm or len(algorithm) > ALGORITHM_LENGTH:
        raise InvalidArgument(
            f"algorithm must have 1-{ALGORITHM_LENGTH} characters, got {algorithm!r}",
            field="algorithm",
        )
    for field, document in documents.items():
        if not isinstance(document, dict):
            raise InvalidArgument(f"{field} must be a JSON object", field=field)
        try:
            json.dumps(document, allow_nan=False)
        except (TypeError, ValueError) as error:
            raise InvalidArgument(
                f"{field} must be strict JSON (str, int, float, bool, None, lists, objects; "
                f"no NaN or Infinity, use None): {error}",
                field=field,
            ) from error
    if not math.isfinite(training_seconds) or training_seconds < 0:
        raise InvalidArgument(
            f"training_seconds must be finite and >= 0, got {training_seconds!r}",
            field="training_seconds",
        )
    if hashlib.sha256(artifact).hexdigest() != artifact_sha256:
        raise InvalidArgument(
            "artifact_sha256 does not match the sha256 of the artifact bytes",
            field="artifact_sha256",
        )


def check_tags(tags: Any) -> dict[str, str]:
    """Return ``tags`` if valid, else raise InvalidArgument naming the tag.

    At most 50 tags; keys of 1-64 characters from letters, digits, '_', '.' and '-';
    values are strings of at most 256 printable characters.
    """
    if not isinstance(tags, dict):
        raise InvalidArgument("tags must be an object of string keys and values", field="tags")
    if len(tags) > MAX_TAGS:
        raise InvalidArgument(
            f"tags: at most {MAX_TAGS} tags are allowed, got {len(tags)}", field="tags"
        )
    for key, value in tags.items():
        if not isinstance(key, str) or not TAG_KEY_PATTERN.fullmatch(key):
            raise InvalidArgument(
                f"tags: key {str(key)[:80]!r} is invalid: expected 1-64 characters from "
                "letters, digits, '_', '.' and '-'",
                field="tags",
            )
        if not isinstance(value, str) or len(value) > TAG_VALUE_LENGTH or not value.isprintable():
            raise InvalidArgument(
                f"tags.{key}: expected a string of at most {TAG_VALUE_LENGTH} printable characters",
                field=f"tags.{key}",
            )
    return tags
