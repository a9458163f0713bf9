"""API keys: generation, hashing and the :class:`ApiKeys` repository.

A key is ``cw_`` followed by 43 URL-safe characters from :func:`secrets.token_urlsafe`
(32 random bytes = 256 bits). Only ``sha256(key)`` is stored (hex, unique column), with
the first 8 characters of the key for display; the plaintext is returned once, by
:meth:`ApiKeys.create`.

Why a plain sha256 and no slow KDF (bcrypt, scrypt, argon2): slow, salted KDFs exist to
make guessing *low-entropy human passwords* from a leaked hash expensive. A key drawn
uniformly from 2^256 values cannot be guessed whatever the hash speed (at 10^12 hashes
a second, finding one key takes ~10^57 years), and sha256 is preimage resistant, so a
leaked table reveals nothing usable. A fast unsalted digest also makes authentication a
single indexed look-up (a salted KDF would have to be run against every stored key) and
costs microseconds on the request path.

Like :class:`app.registry.repository.Registry`, the repository adds and flushes and
never commits: the caller owns the transaction.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db import database_errors
from app.errors import Conflict, InvalidArgument, NotFound
from app.registry.orm import API_KEY_ROLES, NAME_LENGTH, ApiKey, utcnow

__all__ = ["KEY_PREFIX", "ApiKeys", "NewKey", "generate_key", "hash_key", "looks_like_key"]

KEY_PREFIX = "cw_"
DISPLAY_CHARS = 8
MAX_KEY_LENGTH = 256
_KEY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._@-]*")


def generate_key() -> str:
    """A new random key: ``cw_`` + 43 URL-safe characters (256 random bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    """The stored form of ``key``: its sha256, 64 lowercase hex characters."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def looks_like_key(key: str) -> bool:
    """Cheap sanity check before hashing: non-empty and not absurdly long."""
    return 0 < len(key) <= MAX_KEY_LENGTH


class NewKey(NamedTuple):
    """A just-created key: the row (no secret) and the plaintext, shown once."""

    row: ApiKey
    plaintext: str


def check_key_name(name: str) -> str:
    """Return ``name`` if it is a valid key label, else raise InvalidArgument(field='name')."""
    if not isinstance(name, str) or len(name) > NAME_LENGTH or not _KEY_NAME.fullmatch(name):
        raise InvalidArgument(
            f"name {name!r} is invalid: expected 1-{NAME_LENGTH} characters from letters, "
            "digits, space, '.', '_', '@' and '-', starting with a letter or digit",
            field="name",
        )
    return name


def check_role(role: str) -> str:
    """Return ``role`` if it is one of :data:`API_KEY_ROLES`, else raise InvalidArgument."""
    if role not in API_KEY_ROLES:
        raise InvalidArgument(
            f"role {role!r} is invalid: expected one of {', '.join(API_KEY_ROLES)}", field="role"
        )
    return role


class ApiKeys:
    """Stored API keys, within one session (adds and flushes, never commits)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def create(self, name: str, role: str) -> NewKey:
        """Add a key with ``role``; the plaintext is in the result and nowhere else."""
        check_key_name(name)
        check_role(role)
        plaintext = generate_key()
        row = ApiKey(
            name=name,
            role=role,
            key_prefix=plaintext[:DISPLAY_CHARS],
            key_hash=hash_key(plaintext),
        )
        with database_errors():
            self.session.add(row)
            self.session.flush()
        return NewKey(row, plaintext)

    def list(self) -> list[ApiKey]:
        """Every key (active and revoked), oldest first."""
        with database_errors():
            return list(self.session.scalars(select(ApiKey).order_by(ApiKey.id)))

    def get(self, key_id: int) -> ApiKey:
        """The key with ``key_id``; raises NotFound."""
        with database_errors():
            row = self.session.get(ApiKey, key_id)
        if row is None:
            raise NotFound(f"API key {key_id} not found", field="id")
        return row

    def find_by_hash(self, key_hash: str) -> ApiKey | None:
        """The key whose stored hash is ``key_hash`` (active or revoked), or None."""
        with database_errors():
            row = self.session.scalars(
                select(ApiKey).where(ApiKey.key_hash == key_hash)
            ).one_or_none()
        # the index look-up found it; compare once more in constant time for good measure
        if row is None or not secrets.compare_digest(row.key_hash, key_hash):
            return None
        return row

    def active_hashes(self) -> frozenset[str]:
        """The stored hashes of every active (not revoked) key."""
        with database_errors():
            query = select(ApiKey.key_hash).where(ApiKey.revoked_at.is_(None))
            return frozenset(self.session.scalars(query))

    def count_active(self, role: str | None = None) -> int:
        """Keys not revoked (of ``role`` if given)."""
        query = select(func.count()).select_from(ApiKey).where(ApiKey.revoked_at.is_(None))
        if role is not None:
            query = query.where(ApiKey.role == role)
        with database_errors():
            return int(self.session.scalar(query) or 0)

    def revoke(self, key_id: int, *, allow_last_admin: bool = False) -> ApiKey:
        """Revoke a key (idempotent). Refuses to revoke the last active admin key.

        Raises
        ------
        NotFound
            No key has this id.
        Conflict
            It is the last active admin key and ``allow_last_admin`` is false (nobody
            could manage keys any more; a production service would not restart).
        """
        row = self.get(key_id)
        if row.revoked_at is not None:
            return row
        if row.role == "admin" and not allow_last_admin and self.count_active("admin") <= 1:
            raise Conflict(
                f"API key {key_id} is the last active admin key; create another admin key "
                "before revoking it (the CLI can force it: costwise keys revoke --force)",
                field="id",
            )
        row.revoked_at = utcnow()
        with database_errors():
            self.session.flush()
        return row

    def touch(self, key_id: int) -> None:
        """Record that the key was used now."""
        with database_errors():
            row = self.session.get(ApiKey, key_id)
            if row is not None:
                row.last_used_at = utcnow()
                self.session.flush()


@contextmanager
def key_store(sessions: sessionmaker[Session]) -> Iterator[ApiKeys]:
    """:class:`ApiKeys` in one transaction, committed at the end of the block; database
    errors anywhere in it (the commit's included) become :class:`~app.errors.Unavailable`."""
    with database_errors(), sessions.begin() as session:
        yield ApiKeys(session)
