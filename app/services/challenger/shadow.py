"""Shadow scoring: a model's shadow version decides every logged predict again, off the
request path, under the same costs and priors; its decisions are logged against the same
prediction ids (``shadow_predictions``), which is what makes a paired comparison
possible (:mod:`app.services.challenger.comparison`).

A model names its shadow by version (fixed) or by alias (followed: moving the alias moves
the shadow), stored on the model row. The request thread's share of the work is
:meth:`ShadowScorer.offer`: a set look-up (is a shadow set for this model?) and, if so,
an append of references to the request's arrays to a bounded queue. Everything else --
resolving the shadow version, loading it, scoring, deciding, writing -- runs in one
background thread, which lets requests gather for up to ``COALESCE_SECONDS`` (or
``BATCH_ROWS`` rows) and scores the requests of the same served version and priors in one
pass, each row under its own request's costs: a stream of one-row requests costs the
served process a pass per block, not per request. When the queue holds ``max_rows`` rows, an offered request is
**dropped and counted** (``dropped``): under overload the shadow gives way, never the
served path. A request served by the shadow version itself is ``skipped`` (nothing to
compare), a shadow that cannot decide the rows (other features, other classes, a model
without probabilities) ``failed``; ``written`` rows are stored, ``duplicate`` ones were
already there. Which models have a shadow is reread every ``refresh_seconds`` (a shadow
set on another replica takes effect within that time; in this process at once).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument, ServiceError
from app.registry.orm import RegisteredModel
from app.registry.repository import reading, writing
from app.registry.shadow_log import write_shadow_rows
from app.services.decisions.request_costs import CostSetting
from app.services.decisions.row_decisions import RowDecisions, decide_rows
from app.services.prediction.predictor import Predictor, Resolved

log = logging.getLogger(__name__)

__all__ = ["SHADOW_OUTCOMES", "ShadowDecisions", "ShadowScorer", "ShadowStats"]

SHADOW_OUTCOMES = ("written", "duplicate", "dropped", "skipped", "failed")
# the thread lets requests gather for this long (or up to this many rows) before a pass,
# so that a stream of one-row requests is scored in blocks, not one pass per request
COALESCE_SECONDS = 0.05
BATCH_ROWS = 2048


@dataclass
class ShadowStats:
    """Rows since start, by outcome, and rows waiting (read by /metrics and GET .../shadow)."""

    written: int = 0
    duplicate: int = 0
    dropped: int = 0
    skipped: int = 0
    failed: int = 0
    queued: int = 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class _Job:
    served: Resolved
    X: np.ndarray
    setting: CostSetting
    priors: Sequence[float] | None
    ids: Sequence[str]
    at: datetime


@dataclass(frozen=True)
class ShadowTarget:
    model_id: int
    model: str
    version: int | None
    alias: str | None


class ShadowScorer:
    """The bounded queue of predicts to decide again, and the thread that does it."""

    def __init__(
        self,
        predictor: Predictor,
        engine: Engine,
        sessions: sessionmaker[Session],
        read_sessions: sessionmaker[Session],
        *,
        max_rows: int = 50_000,
        refresh_seconds: float = 2.0,
    ) -> None:
        self.predictor = predictor
        self._engine = engine
        self._sessions = sessions
        self._read = read_sessions
        self.max_rows = max_rows
        self.refresh_seconds = refresh_seconds
        self.stats = ShadowStats()
        self._targets: dict[int, ShadowTarget] = {}
        self._queue: deque[_Job] = deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stop = False
        self._refreshed = 0.0
        self._changes = 0  # shadows set or cleared in this process (a refresh read before
        # one of them must not overwrite it with what it read)

    # ------------------------------------------------------------ request path
    def offer(
        self,
        served: Resolved,
        X: np.ndarray,
        setting: CostSetting,
        priors: Sequence[float] | None,
        ids: Sequence[str],
    ) -> None:
        """Queue a logged predict for the model's shadow, if it has one (O(1); never
        blocks, never raises: a full queue drops the rows and counts them)."""
        if served.model_id not in self._targets:
            return
        n = len(ids)
        with self._cond:
            if self.stats.queued + n > self.max_rows:
                self.stats.dropped += n
                return
            self._queue.append(_Job(served, X, setting, priors, ids, datetime.now(UTC)))
            self.stats.queued += n
            if len(self._queue) == 1 or self.stats.queued >= BATCH_ROWS:
                self._cond.notify()  # else the thread is gathering and wakes on its own

    # --------------------------------------------------------- configuration
    def set_shadow(self, name: str, version: int | None, alias: str | None) -> dict[str, Any]:
        """Name the shadow of model ``name``: a version, or an alias (followed)."""
        if (version is None) == (alias is None):
            raise InvalidArgument(
                "version: give a version or an alias (one of the two)", field="version"
            )
        with writing(self._sessions) as reg:
            model = reg.get_model(name)
            if version is not None:
                reg.get_version(name, version)
            else:
                reg.get_alias(name, alias)  # type: ignore[arg-type]
            model.shadow_version, model.shadow_alias = version, alias
            reg.session.flush()
            target = ShadowTarget(model.id, name, version, alias)
        with self._cond:
            self._targets = {**self._targets, target.model_id: target}
            self._changes += 1
        return self.status(name)

    def clear_shadow(self, name: str) -> None:
        """Stop shadow scoring for model ``name`` (decisions already logged stay)."""
        with writing(self._sessions) as reg:
            model = reg.get_model(name)
            model.shadow_version = model.shadow_alias = None
            reg.session.flush()
            model_id = model.id
        with self._cond:
            self._targets = {k: v for k, v in self._targets.items() if k != model_id}
            self._changes += 1

    def status(self, name: str) -> dict[str, Any]:
        """The model's shadow (version or alias, and the version it points at now) and
        this process's counters (all models)."""
        with reading(self._read) as reg:
            model = reg.get_model(name)
            version, alias = model.shadow_version, model.shadow_alias
            now = version
            if alias is not None:
                found = reg.find_alias(name, alias)
                now = None if found is None else found.model_version.version
        return {
            "model": name,
            "version": version,
            "alias": alias,
            "resolved_version": now,
            "enabled": self.max_rows > 0,
            "counts": self.stats.as_dict(),
        }

    def refresh(self) -> None:
        """Reread which models have a shadow (every ``refresh_seconds`` in the thread)."""
        query = select(
            RegisteredModel.id,
            RegisteredModel.name,
            RegisteredModel.shadow_version,
            RegisteredModel.shadow_alias,
        ).where(
            (RegisteredModel.shadow_version.is_not(None))
            | (RegisteredModel.shadow_alias.is_not(None))
        )
        changes = self._changes
        with reading(self._read) as reg:
            rows = list(reg.session.execute(query))
        targets = {r[0]: ShadowTarget(r[0], r[1], r[2], r[3]) for r in rows}
        with self._cond:
            if changes == self._changes:  # else a local change is newer: next refresh
                self._targets = targets
        self._refreshed = time.monotonic()

    # ------------------------------------------------------------- the thread
    def start(self) -> None:
        if self.max_rows <= 0 or self._thread is not None:
            return
        self._stop = False
        try:
            self.refresh()
        except ServiceError as error:  # the database is down: retried by the thread
            log.warning("shadow scoring: reading the shadows failed (retried): %s", error)
        self._thread = threading.Thread(target=self._run, name="costwise-shadow", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Decide what is queued (for at most ``timeout`` seconds), then stop."""
        thread = self._thread
        if thread is None:
            return
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        thread.join(timeout)
        self._thread = None
        with self._cond:  # not decided before the deadline: dropped, counted
            left = sum(len(j.ids) for j in self._queue)
            self._queue.clear()
            self.stats.dropped += left
            self.stats.queued = 0

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until the queue is empty (tests, shutdown); False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._cond:
                if not self._queue and self.stats.queued == 0:
                    return True
            time.sleep(0.01)
        return False

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stop:
                    wait = self.refresh_seconds - (time.monotonic() - self._refreshed)
                    if wait <= 0:
                        break
                    self._cond.wait(wait)
                if self._stop and not self._queue:
                    return
                if self._queue and not self._stop and self.stats.queued < BATCH_ROWS:
                    self._cond.wait_for(
                        lambda: self._stop or self.stats.queued >= BATCH_ROWS, COALESCE_SECONDS
                    )
                jobs = list(self._queue)
                self._queue.clear()
            if time.monotonic() - self._refreshed >= self.refresh_seconds:
                try:
                    self.refresh()
                except ServiceError as error:
                    log.warning("shadow scoring: reading the shadows failed (retried): %s", error)
                    self._refreshed = time.monotonic()
            if jobs:
                self._score(jobs)

    def _score(self, jobs: list[_Job]) -> None:
        rows: list[dict[str, Any]] = []
        counts = {"written": 0, "duplicate": 0, "skipped": 0, "failed": 0}
        resolved: dict[int, Resolved | None] = {}
        # requests of the same served version, shadow and priors are decided together:
        # one scoring pass over their rows (per-request work would cost the served path
        # the GIL once per request), each row under its own request's costs
        groups: dict[tuple[Any, ...], tuple[Resolved, list[_Job]]] = {}
        for job in jobs:
            n = len(job.ids)
            target = self._targets.get(job.served.model_id)
            if target is None:
                counts["skipped"] += n  # the shadow was removed meanwhile
                continue
            if target.model_id not in resolved:
                resolved[target.model_id] = self._resolve(target)
            shadow = resolved[target.model_id]
            if shadow is None:
                counts["failed"] += n
                continue
            if shadow.version_id == job.served.version_id:
                counts["skipped"] += n
                continue
            priors = None if job.priors is None else tuple(job.priors)
            same = (shadow.version_id, job.served.version_id, priors)
            groups.setdefault(same, (shadow, []))[1].append(job)
        for shadow, group in groups.values():
            made = self._decide(shadow, group)
            if made is None:
                counts["failed"] += sum(len(j.ids) for j in group)
                continue
            rows += made
        if rows:
            try:
                written = write_shadow_rows(self._engine, rows)
            except ServiceError as error:
                log.warning("shadow scoring: %d rows not written: %s", len(rows), error)
                counts["failed"] += len(rows)
            else:
                counts["written"] += written
                counts["duplicate"] += len(rows) - written
        with self._cond:
            for key, value in counts.items():
                setattr(self.stats, key, getattr(self.stats, key) + value)
            self.stats.queued -= sum(len(j.ids) for j in jobs)

    def _resolve(self, target: ShadowTarget) -> Resolved | None:
        try:
            return self.predictor.resolve(target.model, target.version, target.alias)
        except ServiceError as error:
            log.warning("shadow of model %r cannot be resolved: %s", target.model, error)
            return None

    def _decided(
        self,
        shadow: Resolved,
        served: Resolved,
        X: np.ndarray,
        setting: CostSetting,
        priors: Sequence[float] | None,
    ) -> RowDecisions:
        """The shadow version's decisions of rows the ``served`` version took (its
        columns), under the same costs and priors; a ServiceError when it cannot."""
        model = self.predictor.entry(shadow).model
        theirs = self.predictor.entry(served).model
        if list(model.classes) != list(theirs.classes) or model.rule == "fixed":
            raise InvalidArgument("the shadow version decides other classes, or no probabilities")
        return decide_rows(model, _columns_for(model, theirs, X), setting, priors)

    def _decide(self, shadow: Resolved, group: list[_Job]) -> list[dict[str, Any]] | None:
        """The shadow's rows for the requests of ``group`` (same served version and
        priors), decided in one pass (None when it cannot decide them)."""
        first = group[0]
        try:
            X = np.concatenate([j.X for j in group])
            out = self._decided(shadow, first.served, X, _merged_setting(group), first.priors)
        except ServiceError as error:
            log.warning(
                "shadow version %d of %r did not decide: %s", shadow.version, shadow.model, error
            )
            return None
        if out.proba is None:
            return None
        ids = [pid for j in group for pid in j.ids]
        ats = [j.at for j in group for _ in j.ids]
        return _rows(shadow, ids, ats, out)

    # ------------------------------------------------- "shadow": true, on request
    def decide_now(
        self,
        served: Resolved,
        X: np.ndarray,
        setting: CostSetting,
        priors: Sequence[float] | None,
    ) -> ShadowDecisions:
        """The shadow's decisions of a request's rows, now (a predict with ``"shadow":
        true``); InvalidArgument naming ``shadow`` when the model has no shadow or it
        cannot decide these rows (nothing was logged yet: the request fails whole)."""
        target = self._targets.get(served.model_id)
        if target is None:
            raise InvalidArgument(
                f"shadow: model {served.model!r} has no shadow version (an admin names one "
                "with PUT on the model's shadow)",
                field="shadow",
            )
        shadow = self.predictor.resolve(target.model, target.version, target.alias)
        if shadow.version_id == served.version_id:
            raise InvalidArgument(
                f"shadow: version {served.version} is the shadow itself; ask another version "
                "or alias",
                field="shadow",
            )
        try:
            out = self._decided(shadow, served, X, setting, priors)
        except InvalidArgument as error:
            raise InvalidArgument(
                f"shadow: version {shadow.version} cannot decide these rows: {error.detail}",
                field="shadow",
            ) from None
        return ShadowDecisions(shadow, target.alias, out)

    def record_now(self, decided: ShadowDecisions, ids: Sequence[str]) -> None:
        """Write the rows of :meth:`decide_now` for the logged ids (in the request's
        thread: the caller asked for the shadow now); a failed write is counted."""
        out = decided.decisions
        if out.proba is None or out.decisions.action_index is not None:
            return
        rows = _rows(decided.shadow, list(ids), [datetime.now(UTC)] * len(ids), out)
        try:
            written = write_shadow_rows(self._engine, rows)
        except ServiceError as error:
            log.warning("shadow scoring: %d rows not written: %s", len(rows), error)
            with self._cond:
                self.stats.failed += len(rows)
            return
        with self._cond:
            self.stats.written += written
            self.stats.duplicate += len(rows) - written


@dataclass(frozen=True)
class ShadowDecisions:
    """What the shadow version decided for a request's rows (``"shadow": true``)."""

    shadow: Resolved
    alias: str | None
    decisions: RowDecisions

    @property
    def version(self) -> int:
        return self.shadow.version


def _rows(
    shadow: Resolved, ids: list[str], ats: list[datetime], out: RowDecisions
) -> list[dict[str, Any]]:
    """``shadow_predictions`` rows of decided rows (``out.proba`` not None)."""
    assert out.proba is not None
    d = out.decisions
    return [
        {
            "model_id": shadow.model_id,
            "version_id": shadow.version_id,
            "version": shadow.version,
            "prediction_id": pid,
            "created_at": at,
            "probabilities": p,
            "decision": int(c),
            "expected_cost": e if e == e else None,
        }
        for pid, at, p, c, e in zip(
            ids,
            ats,
            out.proba.tolist(),
            d.labels_index.tolist(),
            d.expected_cost.tolist(),
            strict=True,
        )  # fmt: skip
    ]


def _merged_setting(group: list[_Job]) -> CostSetting:
    """One cost setting for the rows of ``group``: the requests' own matrix when they all
    carried the same one, else a per-row stack (each row under its request's costs)."""
    first = group[0].setting
    if len(group) == 1 or all(
        not j.setting.per_row and np.array_equal(j.setting.matrix, first.matrix) for j in group
    ):
        return first
    stacks = [
        j.setting.matrix
        if j.setting.per_row
        else np.broadcast_to(j.setting.matrix, (len(j.ids), *j.setting.matrix.shape))
        for j in group
    ]
    return CostSetting(np.concatenate(stacks), "row_costs")


def _columns_for(shadow: Any, served: Any, X: np.ndarray) -> np.ndarray:
    """``X`` (the served version's columns) in the shadow version's column order."""
    mine, theirs = shadow.feature_names, served.feature_names
    if mine is None or theirs is None:  # unnamed features: by position
        if shadow.n_features != X.shape[1]:
            raise InvalidArgument("the shadow version takes another number of features")
        return X
    if list(mine) == list(theirs):
        return X
    if sorted(mine) != sorted(theirs):
        raise InvalidArgument("the shadow version takes other features")
    where = {f: i for i, f in enumerate(theirs)}
    return X[:, [where[f] for f in mine]]
