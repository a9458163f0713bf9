"""Use case: estimate a version's deployment class priors from its prediction log.

:meth:`PriorEstimates.estimate` (``GET /v1/models/{name}/priors``, role reader) runs the
EM of Saerens, Latinne & Decaestecker (2002) (:func:`models.feedback.priors.estimate_priors`) over
the probabilities logged for a version's recent predictions -- no labels needed -- and
records nothing. With ``record=True`` (``POST``, role admin) it computes the same
estimate and records it (table ``prior_estimates``): recording is a write that changes
decisions, so reading never does it. Logged probabilities are those the decisions used:
where a request applied its own deployment ``priors``, that shift is undone first (in
log space, so that a tiny applied prior cannot overflow), so that every row enters EM as
the calibrated posterior under the version's training priors.

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
from app.registry.log_window import EVERYTHING, LogWindow, utc_iso
from app.registry.orm import PriorEstimate
from app.registry.prior_estimates import PriorEstimateStore, estimate_fields
from app.registry.repository import reading, writing
from app.services.common.core_errors import core_errors
from app.services.model_registry.stored_models import read_stored
from models.feedback.priors import estimate_priors

__all__ = ["CACHE_SECONDS", "AppliedEstimate", "PriorEstimates"]

#: How long :meth:`PriorEstimates.applied` reuses a version's latest estimate.
CACHE_SECONDS = 5.0


@dataclass(frozen=True)
class AppliedEstimate:
    """The priors of a recorded estimate and how provenance names it."""

    priors: list[float]
    ref: dict[str, Any]


def _iso(t: datetime | None) -> str | None:
    return utc_iso(t, "microseconds")


def _ref(e: PriorEstimate) -> dict[str, Any]:
    fields = estimate_fields(e)
    for key in ("estimated_at", "since", "until"):
        fields[key] = _iso(fields[key])
    return fields


def _ref_fields(e: PriorEstimate) -> dict[str, Any]:
    """Version, window and rows of an estimate not (yet) recorded."""
    return {
        "version": e.version,
        "since": _iso(e.since),
        "until": _iso(e.until),
        "n_rows": e.n_rows,
    }


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class _Computed:
    """An estimate as a row ready to record, and the figures of the response."""

    row: PriorEstimate
    figures: dict[str, Any]


def _undo_request_priors(
    proba: np.ndarray, applied: list[list[float] | None], train: np.ndarray
) -> np.ndarray:
    """Posteriors under the training priors: a row shifted to priors ``pi'`` is
    multiplied by ``pi_t / pi'`` and renormalised (the inverse of apply_prior_shift).

    Computed in log space: with an applied prior as small as 5e-324, ``pi_t / pi'``
    overflows to infinity and the row would become NaN (which made every later estimate
    over a window holding that row fail). A probability that is exactly 0 stays 0.
    """
    out = proba.copy()
    log_train = np.log(train)
    with np.errstate(divide="ignore"):
        for i, pi in enumerate(applied):
            if pi is not None:
                z = np.log(out[i]) + log_train - np.log(np.asarray(pi, dtype=np.float64))
                q = np.exp(z - np.max(z))
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
        window: LogWindow = EVERYTHING,
        *,
        record: bool = False,
    ) -> dict[str, Any]:
        """Estimate the priors of ``version`` (default: the version served now: the
        production alias, else the latest) from its latest logged predictions in
        ``window`` (at most ``max_rows`` of them).

        Without ``record`` nothing is recorded: ``id`` is None and ``recorded`` False;
        no decision changes. With ``record`` the estimate is recorded: from now on it is
        what ``"priors": "estimated"`` applies to ``version``'s predictions (on every
        replica within :data:`CACHE_SECONDS`)."""
        est = self._compute(name, version, window)
        if not record:
            out = {"model": name, **_ref_fields(est.row), "id": None, "estimated_at": _iso(_now())}
            return {**out, **est.figures, "recorded": False}
        with writing(self._sessions) as reg:
            PriorEstimateStore(reg.session).add(est.row)
            ref = _ref(est.row)
        with self._lock:
            self._cache[est.row.version_id] = (
                time.monotonic() + CACHE_SECONDS,
                AppliedEstimate(list(est.row.priors), ref),
            )
        return {"model": name, **ref, **est.figures, "recorded": True}

    def _compute(self, name: str, version: int | None, window: LogWindow) -> _Computed:
        since, until = window.since, window.until
        if since is not None and until is not None and since >= until:
            raise InvalidArgument("since: must be before until", field="since")
        with reading(self._read) as reg:
            s = reg.session
            v = reg.get_version(name, version) if version is not None else reg.resolve(name)[0]
            number, version_id, model_id = v.version, v.id, v.model_id
            method = (v.calibration or {}).get("method")
            model = read_stored(reg, v).load()
            logged = PriorEstimateStore(s).posteriors(v.id, window, self.max_rows)
        if model.rule != "threshold" or method == "none":
            raise InvalidArgument(
                f"version: EM needs calibrated probabilities; version {number} of model "
                f"{name!r} has calibration {method!r} and decision rule {model.rule!r}",
                field="version",
            )
        if len(logged) == 0:
            span = window.between()
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
        figures = {
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
        return _Computed(row, figures)

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
                f"an admin records one with POST /v1/models/{name}/priors "
                f'(body {{"version": {version}}})',
                field=field,
            )
        return hit[1]
