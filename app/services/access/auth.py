"""Who is calling: API keys checked against the registry, with a short in-memory cache.

:class:`Authenticator` turns a presented key into a :class:`Principal` (key id, name,
role) or raises :class:`app.errors.Unauthorized`; :meth:`Principal.require` raises
:class:`app.errors.Forbidden` when the role is not enough. Roles are ordered:
``admin`` > ``predictor`` > ``reader``; a route needs a minimum role.

Cost on the request path: the presented key is hashed (sha256, ~1 us) and the digest
looked up in a dict. A verified key is trusted for ``key_cache_seconds`` (default 5 s);
after that the next request looks it up again in a worker thread. A digest that is not
among the active keys' digests (re-read with one query at most once a second, see
:meth:`Authenticator._active_digests`) is refused without a query, so a flood of random
keys costs one query a second, not one per key; a key created on another process or
replica is accepted here within that second. Hence a key revoked on another
process or replica stops working within that time; a revocation made through this
process's API is applied at once (:meth:`Authenticator.forget`). The cache holds
digests and principals only, never a plaintext key.

While the database is down or stalled (the look-up fails with 503, at once while
:class:`app.db.DatabaseHealth` says it is down), a key verified at most
``stale_seconds`` ago is still accepted (the registry's outage setting
COSTWISE_REGISTRY_STALE_SECONDS), so that predictions served from memory are not
refused for want of a key check; unknown keys are refused as before.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

import anyio.to_thread
from sqlalchemy.orm import Session, sessionmaker

from app.db import DatabaseHealth
from app.errors import Forbidden, ServiceError, Unauthorized, Unavailable
from app.registry.keys import ApiKeys, hash_key, looks_like_key

log = logging.getLogger(__name__)

ROLE_RANK: dict[str, int] = {"reader": 0, "predictor": 1, "admin": 2}
MAX_CACHED = 10_000
DIGESTS_MAX_AGE = 1.0  # seconds: a key created on another replica works within this time
MISSING_KEY = "an API key is required: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'"
BAD_KEY = "the API key is not valid (unknown or revoked)"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller."""

    key_id: int | None  # None: the bootstrap key, or authentication off
    name: str
    role: str

    def require(self, role: str) -> None:
        """Raise Forbidden unless this caller's role is at least ``role``."""
        if ROLE_RANK[self.role] < ROLE_RANK[role]:
            allowed = " or ".join(r for r, rank in ROLE_RANK.items() if rank >= ROLE_RANK[role])
            raise Forbidden(
                f"API key {self.name!r} has role {self.role!r}; this operation needs role "
                f"{allowed}",
                field="authorization",
            )


ANONYMOUS_ADMIN = Principal(None, "anonymous (authentication off)", "admin")


class Authenticator:
    """Verifies API keys (stored hashed) with a TTL cache keyed by the key's sha256."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        enabled: bool,
        ttl_seconds: float = 5.0,
        bootstrap_key: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        stale_seconds: float = 0.0,
        health: DatabaseHealth | None = None,
    ) -> None:
        self.sessions = sessions
        self.enabled = enabled
        self.ttl = ttl_seconds
        self.clock = clock
        self._bootstrap = None if bootstrap_key is None else hash_key(bootstrap_key)
        self._cache: dict[str, tuple[Principal | None, float]] = {}
        self.stale_seconds = stale_seconds
        self.health = health
        self._digests: frozenset[str] = frozenset()
        self._digests_at = -math.inf
        self._reloading: asyncio.Lock | None = None

    async def authenticate(self, key: str | None) -> Principal:
        """The caller presenting ``key``; raises Unauthorized (missing, unknown, revoked)."""
        if not self.enabled:
            return ANONYMOUS_ADMIN
        if not key:
            raise Unauthorized(MISSING_KEY, field="authorization")
        if not looks_like_key(key):
            raise Unauthorized(BAD_KEY, field="authorization")
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        if self._bootstrap is not None and secrets.compare_digest(digest, self._bootstrap):
            return Principal(None, "bootstrap", "admin")
        hit = self._cache.get(digest)
        if hit is not None and hit[1] > self.clock():
            principal = hit[0]
        else:
            try:
                if self.health is not None:
                    self.health.check()
                if digest not in await self._active_digests():
                    principal = None  # unknown or revoked: no query for this key
                else:
                    principal = await anyio.to_thread.run_sync(self.lookup, digest)  # off the loop
            except Unavailable:
                # through an outage: a key verified recently (expired entry) still counts
                if (
                    hit is None
                    or hit[0] is None
                    or self.clock() - (hit[1] - self.ttl) > self.stale_seconds
                ):
                    raise
                principal = hit[0]
        if principal is None:
            raise Unauthorized(BAD_KEY, field="authorization")
        return principal

    async def _active_digests(self) -> frozenset[str]:
        """Digests of every active key, re-read (one query, one caller at a time) when
        older than :data:`DIGESTS_MAX_AGE`; a flood of random keys costs one query per
        that period instead of one per key."""
        if self.clock() - self._digests_at < DIGESTS_MAX_AGE:
            return self._digests
        if self._reloading is None:
            self._reloading = asyncio.Lock()
        async with self._reloading:
            if self.clock() - self._digests_at >= DIGESTS_MAX_AGE:
                self._digests = await anyio.to_thread.run_sync(self._read_digests)
                self._digests_at = self.clock()
        return self._digests

    def _read_digests(self) -> frozenset[str]:
        with self.sessions() as session:
            return ApiKeys(session).active_hashes()

    def stale(self) -> None:
        """Forget the active digests (a key was created or revoked here): re-read next time."""
        self._digests_at = -math.inf

    def lookup(self, digest: str) -> Principal | None:
        """Look ``digest`` up in the registry and cache the answer (None: unknown/revoked)."""
        with self.sessions.begin() as session:
            row = ApiKeys(session).find_by_hash(digest)
            principal = (
                None
                if row is None or row.revoked_at is not None
                else Principal(row.id, row.name, row.role)
            )
        if len(self._cache) >= MAX_CACHED:
            self._cache.clear()
        self._cache[digest] = (principal, self.clock() + self.ttl)
        if principal is not None and principal.key_id is not None:
            self._touch(principal.key_id)
        return principal

    def _touch(self, key_id: int) -> None:
        """Best effort: record ``last_used_at`` (at most once per TTL per key and process)."""
        try:
            with self.sessions.begin() as session:
                ApiKeys(session).touch(key_id)
        except ServiceError as error:  # a busy database must not fail the request
            log.debug("last_used_at of API key %d not updated: %s", key_id, error.code)

    def forget(self, key_id: int) -> None:
        """Drop cached entries of key ``key_id`` (called after revoking it here)."""
        self.stale()
        for digest, (principal, _) in list(self._cache.items()):
            if principal is not None and principal.key_id == key_id:
                self._cache.pop(digest, None)
