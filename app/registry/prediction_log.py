"""The prediction log repository: every query on ``logged_predictions`` goes through here.

Three kinds of callers: the background writer (:func:`insert_rows`, one multi-row
``INSERT ... ON CONFLICT DO NOTHING`` per batch, on a bare connection), the outcomes and
monitoring services (:class:`PredictionLog` within a session), and recalibration / prior
estimation, which read the logged raw scores of labelled predictions
(:meth:`PredictionLog.labelled_rows`). Like :class:`app.registry.repository.Registry` it
flushes, never commits, and turns database errors into domain errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

import orjson
from sqlalchemy import Table, delete, func, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError, TimeoutError
from sqlalchemy.orm import Session

from app.db import database_errors
from app.errors import Conflict, Unavailable
from app.registry.orm import LoggedPrediction, ModelVersion, RegisteredModel, utcnow

__all__ = [
    "LOG_COLUMNS",
    "LabelledRows",
    "LoggedRow",
    "OutcomeResult",
    "PredictionLog",
    "insert_rows",
]

_T = cast(Table, LoggedPrediction.__table__)
#: Columns the writer fills, in this order (the rest are the outcome's).
LOG_COLUMNS = (
    "model_id",
    "version_id",
    "version",
    "prediction_id",
    "alias",
    "created_at",
    "raw_score",
    "probabilities",
    "decision",
    "threshold",
    "expected_cost",
    "cost_setting",
    "costs",
    "priors",
    "features",
)


_JSON_COLUMNS = frozenset({"raw_score", "probabilities", "costs", "priors", "features"})
_PG_TYPES = {
    "model_id": "integer",
    "version_id": "integer",
    "version": "integer",
    "prediction_id": "text",
    "alias": "text",
    "created_at": "timestamptz",
    "decision": "integer",
    "threshold": "double precision",
    "expected_cost": "double precision",
    "cost_setting": "text",
}
_COLUMN_LIST = ", ".join(LOG_COLUMNS)


def _pg_value(column: str) -> str:
    if column in _JSON_COLUMNS:  # a JSON null is SQL NULL; the element's text is kept
        return f"nullif(r.{column}::text, 'null')::json"
    if column == "created_at":  # log_time text is UTC, whatever the session's TimeZone
        return f"r.{column}::timestamp AT TIME ZONE 'UTC'"
    return f"r.{column}::{_PG_TYPES[column]}"


def _pg_unpack(column: str) -> str:
    function = "json_array_elements" if column in _JSON_COLUMNS else "json_array_elements_text"
    return f"{function}(%({column})s::json)"


#: PostgreSQL: one parameter per column, a JSON array the server unpacks and zips
#: (``ROWS FROM``); the client binds 15 texts whatever the number of rows.
_PG_INSERT = (
    f"INSERT INTO logged_predictions ({_COLUMN_LIST}) SELECT "
    + ", ".join(_pg_value(c) for c in LOG_COLUMNS)
    + " FROM ROWS FROM ("
    + ", ".join(_pg_unpack(c) for c in LOG_COLUMNS)
    + f") AS r({_COLUMN_LIST}) ON CONFLICT (model_id, prediction_id) DO NOTHING"
)
_SQLITE_INSERT = (
    f"INSERT INTO logged_predictions ({_COLUMN_LIST}) VALUES ("
    + ", ".join("?" for _ in LOG_COLUMNS)
    + ") ON CONFLICT (model_id, prediction_id) DO NOTHING"
)


def sqlite_time(t: datetime) -> str:
    """``t`` as SQLAlchemy's SQLite ``DateTime`` stores it (UTC, no zone): what the ORM reads."""
    return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def log_time(t: datetime) -> str:
    """``t`` (aware) as :func:`insert_rows` takes it: UTC, ``YYYY-MM-DD HH:MM:SS.ffffff``,
    what SQLite's ``DateTime`` stores and PostgreSQL reads as UTC."""
    return sqlite_time(t)


def _json_array(column: str, values: Sequence[Any]) -> str:
    """``values`` as the text of one JSON array (JSON columns hold JSON texts already)."""
    if column not in _JSON_COLUMNS:
        return orjson.dumps(list(values)).decode()
    texts = list(values)
    nones = texts.count(None)
    if nones == len(texts):
        return "[" + ",".join(["null"] * len(texts)) + "]"
    if nones:
        texts = ["null" if t is None else t for t in texts]
    return "[" + ",".join(texts) + "]"


def insert_rows(conn: Connection, columns: Mapping[str, Sequence[Any]]) -> int:
    """Insert log rows given column-wise; returns how many were new.

    ``columns`` maps every name of :data:`LOG_COLUMNS` to one value per row; JSON
    columns hold JSON text (or None), ``created_at`` :func:`log_time` text. One
    statement per batch. PostgreSQL: each column goes as one JSON array that the server
    unpacks (``ROWS FROM (json_array_elements(...), ...)``), so the client never adapts
    a value per row (psycopg's array adaptation cost ~12 us per row of client CPU, in
    the serving process); SQLite: one ``executemany`` (the per-row binding is in C, the
    database's work releases the GIL). A row whose ``(model_id, prediction_id)`` is
    already logged is skipped (``ON CONFLICT DO NOTHING``): the first record of an id
    stands. The caller commits.
    """
    n = len(columns["prediction_id"])
    if n == 0:
        return 0
    with database_errors():
        if conn.dialect.name == "postgresql":
            params = {c: _json_array(c, columns[c]) for c in LOG_COLUMNS}
            result = conn.exec_driver_sql(_PG_INSERT, params)
        else:
            rows = zip(*(columns[c] for c in LOG_COLUMNS), strict=True)
            result = conn.exec_driver_sql(_SQLITE_INSERT, list(rows))
        return int(result.rowcount)


@dataclass(frozen=True)
class LoggedRow:
    """One logged prediction as plain values (what monitoring reads)."""

    prediction_id: str
    version: int
    created_at: datetime
    raw_score: Any  # float (binary), list of floats (per class) or None
    probabilities: list[float] | None
    decision: int
    expected_cost: float | None
    costs: list[list[float]]  # (K, K) applied to this row; rows = truth
    label: int | None
    outcome_cost: float | None


@dataclass(frozen=True)
class LabelledRows:
    """Labelled predictions of one version, oldest first: what recalibration needs.

    ``raw_scores[i]`` is what the calibrator took for row ``i`` (float, list, or None
    for models without a calibration map), ``probabilities[i]`` what the decision used,
    ``labels[i]`` the reported class index (model class order).
    """

    prediction_ids: list[str]
    created_at: list[datetime]
    raw_scores: list[Any]
    probabilities: list[list[float] | None]
    labels: list[int]

    def __len__(self) -> int:
        return len(self.labels)


@dataclass(frozen=True)
class OutcomeResult:
    """What happened to one reported outcome."""

    prediction_id: str
    status: str  # "recorded" | "unchanged" | "conflict" | "unknown"
    version: int | None = None
    detail: str | None = None


def _window(query: Any, since: datetime | None, until: datetime | None) -> Any:
    if since is not None:
        query = query.where(_T.c.created_at >= since)
    if until is not None:
        query = query.where(_T.c.created_at < until)
    return query


class PredictionLog:
    """Logged predictions of registered models, within one session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def _model_id(self, model: str) -> int | None:
        return self.session.scalar(select(RegisteredModel.id).where(RegisteredModel.name == model))

    def logged_versions(self, model_id: int) -> list[int]:
        """Version numbers of ``model_id`` that have at least one logged prediction."""
        with database_errors():
            query = (
                select(ModelVersion.version)
                .where(ModelVersion.model_id == model_id)
                .where(select(_T.c.id).where(_T.c.version_id == ModelVersion.id).limit(1).exists())
                .order_by(ModelVersion.version)
            )
            return list(self.session.scalars(query))

    def rows(
        self,
        model_id: int,
        version: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        *,
        limit: int | None = None,
        latest: bool = False,
        labelled: bool = False,
    ) -> list[LoggedRow]:
        """Logged predictions of ``model_id`` (one version, or all), oldest first.

        At most ``limit`` rows: the oldest, or with ``latest`` the most recent ones;
        with ``labelled`` only the rows that have an outcome."""
        query = select(
            _T.c.prediction_id,
            _T.c.version,
            _T.c.created_at,
            _T.c.raw_score,
            _T.c.probabilities,
            _T.c.decision,
            _T.c.expected_cost,
            _T.c.costs,
            _T.c.label,
            _T.c.outcome_cost,
        ).where(_T.c.model_id == model_id)
        if version is not None:
            query = query.where(_T.c.version == version)
        if labelled:
            query = query.where(_T.c.label.is_not(None))
        query = _window(query, since, until)
        if latest:
            query = query.order_by(_T.c.created_at.desc(), _T.c.id.desc())
        else:
            query = query.order_by(_T.c.created_at, _T.c.id)
        if limit is not None:
            query = query.limit(limit)
        with database_errors():
            found = [LoggedRow(*r) for r in self.session.execute(query)]
        return found[::-1] if latest else found

    def counts(
        self, model_id: int, since: datetime | None = None, until: datetime | None = None
    ) -> dict[int, tuple[int, int]]:
        """Per version of ``model_id``: (logged predictions, of which labelled) in the
        window, counted by the database (no row leaves it)."""
        query = select(_T.c.version, func.count(), func.count(_T.c.label)).where(
            _T.c.model_id == model_id
        )
        query = _window(query, since, until).group_by(_T.c.version)
        with database_errors():
            return {int(v): (int(n), int(m)) for v, n, m in self.session.execute(query)}

    def version_classes(self, model_id: int, versions: Iterable[int]) -> dict[int, list[Any]]:
        """Class labels (model order) of the given version numbers of ``model_id``."""
        wanted = sorted(set(versions))
        if not wanted:
            return {}
        query = select(ModelVersion.version, ModelVersion.data).where(
            ModelVersion.model_id == model_id, ModelVersion.version.in_(wanted)
        )
        with database_errors():
            rows = self.session.execute(query)
            return {v: list((data or {}).get("classes") or []) for v, data in rows}

    def labelled_rows(
        self,
        model: str,
        version: int,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> LabelledRows:
        """Labelled predictions of version ``version`` of ``model`` in ``[since, until)``.

        Empty when the model, the version or its labelled predictions do not exist; the
        caller says which is wrong (e.g. with :class:`app.registry.repository.Registry`).
        """
        query = (
            select(
                _T.c.prediction_id, _T.c.created_at, _T.c.raw_score, _T.c.probabilities, _T.c.label
            )
            .join(RegisteredModel.__table__, RegisteredModel.id == _T.c.model_id)
            .where(RegisteredModel.name == model, _T.c.version == version)
            .where(_T.c.label.is_not(None))
        )
        query = _window(query, since, until).order_by(_T.c.created_at, _T.c.id)
        with database_errors():
            found = list(self.session.execute(query))
        return LabelledRows(
            [r[0] for r in found],
            [r[1] for r in found],
            [r[2] for r in found],
            [r[3] for r in found],
            [int(r[4]) for r in found],
        )

    def count(self, model_id: int) -> int:
        """Number of logged predictions of ``model_id``."""
        with database_errors():
            query = select(func.count()).select_from(_T).where(_T.c.model_id == model_id)
            return int(self.session.scalar(query) or 0)

    def versions_of(self, model_id: int, prediction_ids: Sequence[str]) -> dict[str, int]:
        """Version number of each logged id of ``model_id`` among ``prediction_ids``."""
        found: dict[str, int] = {}
        with database_errors():
            for start in range(0, len(prediction_ids), 500):
                chunk = list(prediction_ids[start : start + 500])
                query = select(_T.c.prediction_id, _T.c.version).where(
                    _T.c.model_id == model_id, _T.c.prediction_id.in_(chunk)
                )
                found.update({pid: int(v) for pid, v in self.session.execute(query)})
        return found

    def record_outcomes(
        self, model_id: int, outcomes: Iterable[tuple[str, int, float | None]]
    ) -> list[OutcomeResult]:
        """Record ``(prediction_id, label index, cost or None)`` once per id (flushed).

        A first report sets the label (guarded by ``label IS NULL``, so two concurrent
        reports cannot both win); the same report again is ``unchanged``; a different
        label or cost for a recorded outcome is a ``conflict`` and changes nothing; an id
        never logged for this model is ``unknown``. Ids must be distinct (the caller checks).
        """
        items = list(outcomes)
        ids = [i for i, _, _ in items]
        found: dict[str, tuple[int, int | None, float | None]] = {}
        with database_errors():
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                query = select(
                    _T.c.prediction_id, _T.c.version, _T.c.label, _T.c.outcome_cost
                ).where(_T.c.model_id == model_id, _T.c.prediction_id.in_(chunk))
                for pid, version, label, cost in self.session.execute(query):
                    found[pid] = (version, label, cost)
            now = utcnow()
            results = []
            for pid, label, cost in items:
                if pid not in found:
                    results.append(OutcomeResult(pid, "unknown", None, "no logged prediction"))
                    continue
                version, current, current_cost = found[pid]
                if current is None:
                    stmt = (
                        update(_T)
                        .where(
                            _T.c.model_id == model_id,
                            _T.c.prediction_id == pid,
                            _T.c.label.is_(None),
                        )
                        .values(label=label, outcome_cost=cost, labelled_at=now)
                    )
                    if self.session.execute(stmt).rowcount == 1:  # type: ignore[attr-defined]
                        results.append(OutcomeResult(pid, "recorded", version))
                        continue
                    current, current_cost = self.session.execute(
                        select(_T.c.label, _T.c.outcome_cost).where(
                            _T.c.model_id == model_id, _T.c.prediction_id == pid
                        )
                    ).one()
                if current == label and current_cost == cost:
                    results.append(OutcomeResult(pid, "unchanged", version))
                else:
                    results.append(
                        OutcomeResult(
                            pid,
                            "conflict",
                            version,
                            f"an outcome is already recorded (label index {current}, cost "
                            f"{current_cost}); a recorded outcome is final",
                        )
                    )
            self.session.flush()
        return results

    def delete_before(self, cutoff: datetime, limit: int = 10_000) -> int:
        """Delete at most ``limit`` logged predictions made before ``cutoff``; how many."""
        oldest = select(_T.c.id).where(_T.c.created_at < cutoff).limit(limit)
        with database_errors():
            ids = list(self.session.scalars(oldest))
            if not ids:
                return 0
            self.session.execute(delete(_T).where(_T.c.id.in_(ids)))
            self.session.flush()
        return len(ids)


def write_rows(engine: Engine, columns: Mapping[str, Sequence[Any]]) -> int:
    """:func:`insert_rows` in a transaction of its own on ``engine``; database errors
    translated here, as every repository does: the database unreachable, slow or busy
    (worth a retry) is :class:`~app.errors.Unavailable`; rows the database refuses for
    another reason are :class:`~app.errors.Conflict`."""
    try:
        with engine.begin() as conn:
            return insert_rows(conn, columns)
    except SQLAlchemyError as error:
        if _transient(error):
            raise Unavailable(f"the database is unavailable ({type(error).__name__})") from error
        raise Conflict(f"rows refused by the database ({type(error).__name__})") from error


def _transient(error: SQLAlchemyError) -> bool:
    """Whether ``error`` is the database being unreachable, slow or busy (worth a retry)."""
    if isinstance(error, (OperationalError, TimeoutError)):
        return True
    return isinstance(error, DBAPIError) and error.connection_invalidated
