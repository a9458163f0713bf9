"""Traffic splits (canaries): a weighted share of an alias's requests served by another
version, so that two versions can be compared on split traffic (unpaired, Welch's t).

An admin sets ``weight`` in [0, 1] and the canary ``version`` on an alias
(``alias_splits``). A predict or evaluate that takes the alias (named, or as the default
``production``) and no ``version`` goes to the canary when its draw is below ``weight``:
the draw is a hash of (model, alias, ``routing_key``) mapped to [0, 1) when the request
carries a ``routing_key`` -- the same key (a customer id) always lands on the same arm
while the split stands -- else a fresh random number. The answer's provenance says
which arm served (``arm``: ``champion`` or ``canary``, with the weight); the logged rows
carry the version that decided them, so monitoring and the comparison see each arm.

The request thread's share is a dictionary look-up (is there a split of this alias?) and
a hash; which aliases are split is reread every ``refresh_seconds`` by a thread (a split
set on another replica takes effect within that time; in this process at once).
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument, NotFound
from app.registry.orm import AliasSplit, RegisteredModel, utcnow
from app.registry.repository import reading, writing
from app.services.common.periodic import Periodic
from app.services.prediction.predictor import Arm

log = logging.getLogger(__name__)

__all__ = ["ARMS", "Split", "TrafficSplits", "draw"]

ARMS = ("champion", "canary")


def draw(model: str, alias: str, key: str) -> float:
    """The sticky draw in [0, 1) of ``key`` for a split of ``model``'s ``alias``."""
    digest = hashlib.blake2b(f"{model}\x00{alias}\x00{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


@dataclass(frozen=True)
class Split:
    model_id: int
    model: str
    alias: str
    version: int
    weight: float


class TrafficSplits:
    """The splits of this process (reread by a thread) and the routing of one request."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        read_sessions: sessionmaker[Session],
        refresh_seconds: float = 2.0,
    ) -> None:
        self._sessions = sessions
        self._read = read_sessions
        self.refresh_seconds = refresh_seconds
        self._splits: dict[tuple[str, str], Split] = {}
        self._lock = threading.Lock()
        self._changes = 0
        self._thread = Periodic(
            "costwise-splits", "reading the traffic splits", refresh_seconds, self.refresh
        )

    # ------------------------------------------------------------ request path
    def route(
        self, name: str, alias: str, routing_key: str | None
    ) -> tuple[int | None, Arm | None]:
        """``(canary version or None, arm)`` for a request of model ``name`` by ``alias``
        (asked, or the default); the arm is None when the alias has no split. Asked before
        the version is resolved, so a canary request resolves one version, not two."""
        split = self._splits.get((name, alias))
        if split is None:
            return None, None
        u = draw(split.model, split.alias, routing_key) if routing_key else random.random()
        canary = u < split.weight
        arm = Arm(ARMS[canary], split.weight, routing_key is not None)
        return (split.version if canary else None), arm

    # --------------------------------------------------------- configuration
    def set_split(
        self, name: str, alias: str, version: int, weight: float, created_by: str
    ) -> dict[str, Any]:
        if not 0.0 <= weight <= 1.0 or weight != weight:
            raise InvalidArgument(
                f"weight: expected a share in [0, 1], got {weight}", field="weight"
            )
        with writing(self._sessions) as reg:
            model = reg.get_model(name)
            reg.get_alias(name, alias)
            reg.get_version(name, version)
            row = reg.session.scalar(
                select(AliasSplit).where(AliasSplit.model_id == model.id, AliasSplit.alias == alias)
            )
            if row is None:
                row = AliasSplit(model_id=model.id, alias=alias)
                reg.session.add(row)
            row.version, row.weight = version, float(weight)
            row.created_by, row.created_at = created_by[:128], utcnow()
            reg.session.flush()
            split = Split(model.id, name, alias, version, float(weight))
        with self._lock:
            self._splits = {**self._splits, (name, alias): split}
            self._changes += 1
        return self.status(name, alias)

    def clear_split(self, name: str, alias: str) -> None:
        with writing(self._sessions) as reg:
            model = reg.get_model(name)
            row = reg.session.scalar(
                select(AliasSplit).where(AliasSplit.model_id == model.id, AliasSplit.alias == alias)
            )
            if row is None:
                raise NotFound(f"alias {alias!r} of model {name!r} has no split", field="alias")
            reg.session.delete(row)
        with self._lock:
            self._splits = {k: v for k, v in self._splits.items() if k != (name, alias)}
            self._changes += 1

    def status(self, name: str, alias: str) -> dict[str, Any]:
        with reading(self._read) as reg:
            model = reg.get_model(name)
            found = reg.get_alias(name, alias)
            row = reg.session.scalar(
                select(AliasSplit).where(AliasSplit.model_id == model.id, AliasSplit.alias == alias)
            )
            if row is None:
                raise NotFound(f"alias {alias!r} of model {name!r} has no split", field="alias")
            return {
                "model": name,
                "alias": alias,
                "champion_version": found.model_version.version,
                "canary_version": row.version,
                "weight": row.weight,
                "created_by": row.created_by,
                "created_at": row.created_at,
            }

    def refresh(self) -> None:
        changes = self._changes
        with reading(self._read) as reg:
            rows = reg.session.execute(
                select(AliasSplit, RegisteredModel.name).join(
                    RegisteredModel, RegisteredModel.id == AliasSplit.model_id
                )
            ).all()
        splits = {
            (name, s.alias): Split(s.model_id, name, s.alias, s.version, s.weight)
            for s, name in rows
        }
        with self._lock:
            if changes == self._changes:  # else a local change is newer: next refresh
                self._splits = splits

    # ------------------------------------------------------------- the thread
    def start(self) -> None:
        self._thread.start(first=True)

    def close(self, timeout: float = 5.0) -> None:
        self._thread.close(timeout)
