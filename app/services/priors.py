"""Use case: estimate a version's deployment class priors from its prediction log.

``GET /v1/models/{name}/priors`` runs the EM of Saerens, Latinne & Decaestecker (2002)
(:func:`models.priors.estimate_priors`) over the probabilities logged for a version's
recent predictions -- no labels needed -- and records the estimate (table
``prior_estimates``). Logged probabilities are those the decisions used: where a request
applied its own deployment ``priors``, that shift is undone first, so that every row
enters EM as the calibrated posterior under the version's training priors.

``"priors": "estimated"`` in a predict or evaluate request applies the latest recorded
estimate of the version that serves it (:meth:`PriorEstimates.applied`); the response's
provenance names it (id, version, when, rows, window). Estimates are read through a cache
of :data:`CACHE_SECONDS`, so a new estimate reaches every replica within that time;
while the database is down, the estimate read last goes on being applied.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidArgument, NotFound, Unavailable
from app.registry.orm import PriorEstimate
from app.registry.prior_estimates import PriorEstimateStore, estimate_fields
from app.registry.repository import reading, writing
from app.services.core_errors import core_errors
from app.services.stored_models import read_stored
from models.priors import estimate_priors

__all__ = ["CACHE_SECONDS", "AppliedEstimate", "PriorEstimates"]

#: How long :meth:`PriorEstimates.applied` reuses a version's latest estimate.
CACHE_SECONDS = 5.0


@dataclass(frozen=True)
class AppliedEstimate:
    """The priors of a recorded estimate and how provenance names it."""

    priors: list[float]
    ref: dict[str, Any]


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _ref(e: PriorEstimate) -> dict[str, Any]:
    fields = estimate_fields(e)
    for key in ("estimated_at", "since", "until"):
        fields[key] = _iso(fields[key])
    return fields


def _undo_request_priors(
    proba: np.ndarray, applied: list[list[float] | None], train: np.ndarray
) -> np.ndarray:
    """Posteriors under the training priors: a row shifted to priors ``pi'`` is
    multiplied by ``pi_t / pi'`` and renormalised (the inverse of apply_prior_shift)."""
    out = proba.copy()
    for i, pi in enumerate(applied):
        if pi is not None:
            q = out[i] * (train / np.asarray(pi, dtype=np.float64))
            out[i] = q / q.sum()
    return out


class PriorEstimates:
    """Estimates deployment priors from the log, and serves the latest to predict."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        read_sessions: sessionmaker[Session],
        *,
        max_rows: int = 100_000,
    ) -> None:
        self._sessions = sessions
        self._read = read_sessions
        self.max_rows = max_rows
        self._cache: dict[int, tuple[float, AppliedEstimate | None]] = {}
        self._lock = threading.Lock()

    def estimate(
        self,
        name: str,
        version: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> dict[str, Any]:
        """Estimate and record the priors of ``version`` (default: the version served now:
        the production alias, else the latest) from its latest logged predictions in
        ``[since, until)`` (at most ``max_rows`` of them)."""
        if since is not None and until is not None and since >= until:
            raise InvalidArgument("since: must be before until", field="since")
        with reading(self._read) as reg:
            s = reg.session
            v = reg.get_version(name, version) if version is not None else reg.resolve(name)[0]
            number, version_id, model_id = v.version, v.id, v.model_id
            method = (v.calibration or {}).get("method")
            model = read_stored(reg, v).load()
            logged = PriorEstimateStore(s).posteriors(v.id, since, until, self.max_rows)
        if model.rule != "threshold" or method == "none":
            raise InvalidArgument(
                f"version: EM needs calibrated probabilities; version {number} of model "
                f"{name!r} has calibration {method!r} and decision rule {model.rule!r}",
                field="version",
            )
        if len(logged) == 0:
            span = f"between {_iso(since) or 'the start'} and {_iso(until) or 'now'}"
            raise NotFound(
                f"version {number} of model {name!r} has no logged predictions {span}",
                field="version",
            )
        train = np.asarray(model.train_priors, dtype=np.float64)
        proba = np.asarray(logged.probabilities, dtype=np.float64)
        with core_errors("version"):
            est = estimate_priors(_undo_request_priors(proba, logged.priors, train), train)
        row = PriorEstimate(
            model_id=model_id,
            version_id=version_id,
            version=number,
            since=since,
            until=until,
            n_rows=est.n_rows,
            priors=est.priors.tolist(),
            train_priors=train.tolist(),
            n_iter=est.n_iter,
            converged=est.converged,
            log_likelihood_ratio=est.log_likelihood_ratio,
            p_value=est.p_value,
        )
        with writing(self._sessions) as reg:
            PriorEstimateStore(reg.session).add(row)
            ref = _ref(row)
        with self._lock:
            self._cache[version_id] = (
                time.monotonic() + CACHE_SECONDS,
                AppliedEstimate(est.priors.tolist(), ref),
            )
        return {
            "model": name,
            **ref,
            "classes": list(model.classes),
            "priors": est.priors.tolist(),
            "train_priors": train.tolist(),
            "n_iter": est.n_iter,
            "converged": est.converged,
            "log_likelihood_ratio": est.log_likelihood_ratio,
            "p_value": est.p_value,
            "first_prediction_at": _iso(logged.first_at),
            "last_prediction_at": _iso(logged.last_at),
        }

    def applied(self, name: str, version: int, version_id: int, field: str) -> AppliedEstimate:
        """The latest recorded estimate of a version, for ``"priors": "estimated"``.

        Raises InvalidArgument naming ``field`` when the version has none yet.
        """
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(version_id)
        if hit is None or hit[0] < now:
            try:
                with reading(self._read) as reg:
                    e = PriorEstimateStore(reg.session).latest(version_id)
                    found = None if e is None else AppliedEstimate(list(e.priors), _ref(e))
            except Unavailable:
                if hit is None or hit[1] is None:
                    raise
                found = hit[1]  # database down: the estimate read last (predictions go on)
            hit = (now + CACHE_SECONDS, found)
            with self._lock:
                self._cache[version_id] = hit
        if hit[1] is None:
            raise InvalidArgument(
                f"{field}: version {version} of model {name!r} has no prior estimate yet; "
                f"estimate one with GET /v1/models/{name}/priors?version={version}",
                field=field,
            )
        return hit[1]
