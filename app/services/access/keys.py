"""Use cases on API keys (CLI and HTTP): create (plaintext shown once), list, revoke.

Also the start-up check that makes a production configuration refuse to run without
authentication (:func:`check_auth_configuration`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from app.errors import Misconfigured
from app.registry.keys import key_store
from app.registry.orm import ApiKey
from app.services.access.key_strength import MIN_BOOTSTRAP_KEY_LENGTH, check_bootstrap_randomness
from app.settings import Settings

log = logging.getLogger(__name__)

FIRST_KEY_HINT = (
    "create one with `costwise keys create --role admin --name ops` against this "
    "COSTWISE_DATABASE_URL, or set COSTWISE_BOOTSTRAP_ADMIN_KEY"
)


@dataclass(frozen=True)
class KeyView:
    """A stored key without its secret."""

    id: int
    name: str
    role: str
    prefix: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None

    @property
    def active(self) -> bool:
        """Not revoked."""
        return self.revoked_at is None


def key_view(row: ApiKey) -> KeyView:
    """The secret-free view of a stored key."""
    return KeyView(
        row.id,
        row.name,
        row.role,
        row.key_prefix,
        row.created_at,
        row.revoked_at,
        row.last_used_at,
    )


def create_key(sessions: sessionmaker[Session], name: str, role: str) -> tuple[KeyView, str]:
    """Store a new key; returns its view and the plaintext (the only time it exists)."""
    with key_store(sessions) as keys:
        new = keys.create(name, role)
        view = key_view(new.row)
    log.info("API key %d created (name %r, role %s)", view.id, view.name, view.role)
    return view, new.plaintext


def list_keys(sessions: sessionmaker[Session]) -> list[KeyView]:
    """Every key, oldest first, without secrets."""
    with key_store(sessions) as keys:
        return [key_view(row) for row in keys.list()]


def revoke_key(sessions: sessionmaker[Session], key_id: int, *, force: bool = False) -> KeyView:
    """Revoke key ``key_id`` (idempotent); ``force`` allows revoking the last admin key."""
    with key_store(sessions) as keys:
        view = key_view(keys.revoke(key_id, allow_last_admin=force))
    log.info("API key %d revoked (name %r, role %s)", view.id, view.name, view.role)
    return view


class Keys:
    """API keys, the one door of the keys routes (built once in ``create_app``): create
    (the plaintext returned once), list without secrets, revoke."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def create(self, name: str, role: str) -> tuple[KeyView, str]:
        """:func:`create_key`."""
        return create_key(self._sessions, name, role)

    def list(self) -> list[KeyView]:
        """:func:`list_keys`."""
        return list_keys(self._sessions)

    def revoke(self, key_id: int, *, force: bool = False) -> KeyView:
        """:func:`revoke_key`."""
        return revoke_key(self._sessions, key_id, force=force)


def check_auth_configuration(settings: Settings, sessions: sessionmaker[Session]) -> None:
    """Refuse unsafe configurations before serving (raises :class:`Misconfigured`).

    - ``COSTWISE_ENV=prod`` needs ``COSTWISE_AUTH=on`` and at least one active admin key
      in the registry or a ``COSTWISE_BOOTSTRAP_ADMIN_KEY``;
    - a bootstrap key must have at least 32 characters; with ``COSTWISE_ENV=prod``, at
      least 32 that do not repeat an earlier part of it and about 96 bits by
      :func:`app.services.access.key_strength.estimated_entropy_bits`.

    With auth on in ``dev`` and no admin key, a warning is logged instead.
    """
    bootstrap = settings.bootstrap_admin_key
    if bootstrap is not None and len(bootstrap.get_secret_value()) < MIN_BOOTSTRAP_KEY_LENGTH:
        raise Misconfigured(
            "COSTWISE_BOOTSTRAP_ADMIN_KEY is too short: use at least "
            f"{MIN_BOOTSTRAP_KEY_LENGTH} random characters "
            '(e.g. python -c "import secrets; print(secrets.token_urlsafe(32))")',
            field="COSTWISE_BOOTSTRAP_ADMIN_KEY",
        )
    prod = settings.env == "prod"
    if prod and bootstrap is not None:
        check_bootstrap_randomness(bootstrap.get_secret_value())
    if prod and settings.auth != "on":
        raise Misconfigured(
            f"COSTWISE_ENV=prod requires COSTWISE_AUTH=on (it is {settings.auth!r}): the API "
            "would be open to anyone who can reach it. Set COSTWISE_AUTH=on and create an "
            f"admin key ({FIRST_KEY_HINT}).",
            field="COSTWISE_AUTH",
        )
    if settings.auth != "on" or bootstrap is not None:
        return
    with key_store(sessions) as keys:
        admins = keys.count_active("admin")
    if admins:
        return
    if prod:
        raise Misconfigured(
            "COSTWISE_ENV=prod with COSTWISE_AUTH=on needs an active admin API key and the "
            f"registry has none: {FIRST_KEY_HINT}.",
            field="COSTWISE_AUTH",
        )
    log.warning("authentication is on but no admin API key exists: %s", FIRST_KEY_HINT)
