"""Registering webhooks, and delivering the events of the outbox to them.

:class:`Webhooks` registers, lists and removes webhooks (the URL checked against the
address fence at registration: http or https, a host whose every address is public or
allowed by COSTWISE_WEBHOOK_ALLOW_HOSTS) and lists a webhook's deliveries.

:class:`Deliverer` is a thread in each server process: every COSTWISE_WEBHOOK_POLL_SECONDS
it claims the due deliveries (:func:`app.registry.webhooks.claim_due`: one replica per
delivery at a time) and POSTs each one's JSON through the fence again (DNS may have
changed since registration; redirects are not followed), with the headers

* ``X-Costwise-Event``: the event type; ``X-Costwise-Event-Id``: the event's id (the same
  for every webhook and every attempt: receivers drop repeats by it);
* ``X-Costwise-Signature``: ``t=<unix seconds>,v1=<hex HMAC-SHA256>`` of
  ``"<t>." + body`` with the webhook's secret (a receiver recomputes it and rejects old
  ``t`` against replays).

A 2xx answer marks the delivery ``delivered``; anything else (another status, a refused
address, a timeout) is retried after COSTWISE_WEBHOOK_RETRY_SECONDS, doubled per attempt
up to an hour, until COSTWISE_WEBHOOK_MAX_ATTEMPTS, then ``failed``; every attempt's status
or error is kept on the delivery.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument, NotFound, ServiceError
from app.registry.orm import Webhook, utcnow
from app.registry.repository import reading, writing
from app.registry.webhooks import EVENTS, Due, claim_due, deliveries, record_attempt
from app.services.common.periodic import Periodic
from app.services.datasets.addresses import AddressPolicy
from app.services.datasets.connections import FencedBackend

log = logging.getLogger(__name__)

__all__ = ["ALLOW_SETTING", "EVENTS", "Deliverer", "DeliveryPolicy", "Webhooks", "signature"]

ALLOW_SETTING = "COSTWISE_WEBHOOK_ALLOW_HOSTS"
MAX_BACKOFF_SECONDS = 3600.0
BATCH = 20


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Costwise-Signature`` value of ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


@dataclass(frozen=True)
class DeliveryPolicy:
    """Where deliveries may go and how hard they are tried (from the settings)."""

    allow_hosts: tuple[str, ...] = ()
    own_hosts: tuple[str, ...] = ()
    timeout: float = 5.0
    max_attempts: int = 8
    retry_seconds: float = 5.0
    poll_seconds: float = 1.0

    @classmethod
    def from_settings(cls, s: Any) -> DeliveryPolicy:
        return cls(
            tuple(s.webhook_allow_hosts), (s.host,), float(s.webhook_timeout),
            int(s.webhook_max_attempts), float(s.webhook_retry_seconds),
            float(s.webhook_poll_seconds),
        )  # fmt: skip

    def addresses(self) -> AddressPolicy:
        return AddressPolicy.from_entries(self.allow_hosts, self.own_hosts, ALLOW_SETTING)

    def backoff(self, attempt: int) -> float:
        """Seconds before attempt ``attempt + 1`` (attempt 1 failed: ``retry_seconds``)."""
        return min(self.retry_seconds * 2 ** (attempt - 1), MAX_BACKOFF_SECONDS)


def _host_port(url: str, field: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidArgument(
            f"{field}: expected an http:// or https:// URL with a host, got {url[:200]!r}",
            field=field,
        )
    if parts.username or parts.password:
        raise InvalidArgument(f"{field}: credentials in the URL are not accepted", field=field)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise InvalidArgument(f"{field}: the port is not a number", field=field) from None
    return parts.hostname, port


def _as_dict(hook: Webhook, secret: bool = False) -> dict[str, Any]:
    out = {"id": hook.id, "url": hook.url, "events": list(hook.events),
           "created_by": hook.created_by, "created_at": hook.created_at}  # fmt: skip
    if secret:
        out["secret"] = hook.secret
    return out


class Webhooks:
    """Register, list and remove webhooks; list a webhook's deliveries."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        read_sessions: sessionmaker[Session],
        policy: DeliveryPolicy,
    ) -> None:
        self._sessions = sessions
        self._read = read_sessions
        self.policy = policy

    def register(self, url: str, events: list[str], created_by: str) -> dict[str, Any]:
        """A new webhook (its secret returned this once). The URL must pass the fence now:
        nothing is sent to it here."""
        unknown = [e for e in events if e not in EVENTS]
        if not events or unknown:
            raise InvalidArgument(
                f"events: expected a non-empty list of {list(EVENTS)}, got unknown {unknown}",
                field="events",
            )
        host, port = _host_port(url, "url")
        self.policy.addresses().checked_addresses(host, port, field="url", uri=url)
        with writing(self._sessions) as reg:
            hook = Webhook(
                url=url, events=sorted(set(events)), secret=secrets.token_hex(32),
                created_by=created_by[:128], created_at=utcnow(),
            )  # fmt: skip
            reg.session.add(hook)
            reg.session.flush()
            return _as_dict(hook, secret=True)

    def all(self) -> list[dict[str, Any]]:
        with reading(self._read) as reg:
            return [_as_dict(h) for h in reg.session.scalars(select(Webhook).order_by(Webhook.id))]

    def remove(self, webhook_id: int) -> None:
        with writing(self._sessions) as reg:
            hook = reg.session.get(Webhook, webhook_id)
            if hook is None:
                raise NotFound(f"webhook {webhook_id} not found", field="webhook_id")
            reg.session.delete(hook)

    def deliveries(self, webhook_id: int, limit: int) -> list[dict[str, Any]]:
        with reading(self._read) as reg:
            if reg.session.get(Webhook, webhook_id) is None:
                raise NotFound(f"webhook {webhook_id} not found", field="webhook_id")
            return [
                {
                    "id": d.id,
                    "event_id": d.event_id,
                    "event": d.event,
                    "status": d.status,
                    "attempts": d.attempts,
                    "last_status": d.last_status,
                    "last_error": d.last_error,
                    "created_at": d.created_at,
                    "next_attempt_at": d.next_attempt_at if d.status == "pending" else None,
                    "delivered_at": d.delivered_at,
                    "payload": d.payload,
                }  # fmt: skip
                for d in deliveries(reg.session, webhook_id, limit)
            ]


class Deliverer:
    """The thread that delivers due events (one per server process)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        policy: DeliveryPolicy,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._sessions = sessions
        self.policy = policy
        self._clock = clock
        self._thread = Periodic(
            "costwise-webhooks", "webhook deliveries", policy.poll_seconds, self.deliver_due
        )
        self.counts = {"delivered": 0, "retried": 0, "failed": 0}

    def start(self) -> None:
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        self._thread.close(timeout)

    def deliver_due(self) -> int:
        """Attempt every due delivery once (claimed in batches); returns how many."""
        done = 0
        lease = self.policy.timeout * 2 + 5
        while not self._thread.stopping:
            with writing(self._sessions) as reg:
                due = claim_due(reg.session, BATCH, lease)
            if not due:
                return done
            for item in due:
                self._attempt(item)
                done += 1
        return done

    def _attempt(self, item: Due) -> None:
        body = json.dumps(item.payload, separators=(",", ":"), default=str).encode()
        status: int | None = None
        error: str | None = None
        try:
            status = self._post(item, body)
        except ServiceError as exc:  # refused address, unresolvable host
            error = exc.detail
        except Exception as exc:  # connection, timeout, protocol
            error = f"{type(exc).__name__}: {exc}"[:500]
        delivered = status is not None and 200 <= status < 300
        if not delivered and error is None:
            error = f"HTTP {status}"
        retry_at = None
        if not delivered and item.attempt < self.policy.max_attempts:
            retry_at = utcnow() + timedelta(seconds=self.policy.backoff(item.attempt))
        with writing(self._sessions) as reg:
            record_attempt(
                reg.session, item.id, delivered=delivered, status=status, error=error,
                retry_at=retry_at,
            )  # fmt: skip
        outcome = "delivered" if delivered else ("retried" if retry_at else "failed")
        self.counts[outcome] += 1
        if not delivered:
            log.warning(
                "webhook %d: %s delivery %d attempt %d %s: %s",
                item.webhook_id, item.event, item.id, item.attempt, outcome, error,
            )  # fmt: skip

    def _post(self, item: Due, body: bytes) -> int:
        import httpcore

        host, port = _host_port(item.url, "url")
        deadline = time.monotonic() + self.policy.timeout
        fence = FencedBackend(self.policy.addresses(), "url", item.url, deadline)
        timer = threading.Timer(self.policy.timeout, fence.cut)
        timer.daemon = True
        t = self.policy.timeout
        headers = [
            (b"Host", (host if port in (80, 443) else f"{host}:{port}").encode()),
            (b"User-Agent", b"costwise-webhooks"),
            (b"Content-Type", b"application/json"),
            (b"X-Costwise-Event", item.event.encode()),
            (b"X-Costwise-Event-Id", str(item.payload.get("id", "")).encode()),
            (b"X-Costwise-Delivery", str(item.id).encode()),
            (b"X-Costwise-Signature", signature(item.secret, int(self._clock()), body).encode()),
        ]
        timer.start()
        try:
            with httpcore.ConnectionPool(network_backend=fence, retries=0) as pool:  # type: ignore[arg-type]
                response = pool.request(
                    "POST", item.url, headers=headers, content=body,
                    extensions={"timeout": {"connect": t, "read": t, "write": t, "pool": t}},
                )  # fmt: skip
                return int(response.status)
        finally:
            timer.cancel()
