"""The prediction log repository: every query on ``logged_predictions`` goes through here.

Three kinds of callers: the background writer (:func:`insert_rows`, one multi-row
``INSERT ... ON CONFLICT DO NOTHING`` per batch, on a bare connection), the outcomes and
monitoring services (:class:`PredictionLog` within a session), and recalibration / prior
estimation, which read the logged raw scores of labelled predictions
(:meth:`PredictionLog.labelled_rows`). Like :class:`app.registry.repository.Registry` it
flushes, never commits, and turns database errors into domain errors.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from typing import Any, cast

import numpy as np
import orjson
from sqlalchemy import ColumnElement, Float, Table, Text, case, delete, func, select, update
from sqlalchemy import cast as cast_
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError, TimeoutError
from sqlalchemy.orm import Session

from app.db import database_errors
from app.errors import Conflict, Unavailable
from app.registry.log_window import EVERYTHING, LogWindow
from app.registry.orm import LoggedPrediction, ModelVersion, RegisteredModel, utcnow

__all__ = [
    "LOG_COLUMNS",
    "LabelledRows",
    "LogColumns",
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
    "stable",
    "action",
    "actions",
)


_JSON_COLUMNS = frozenset({"raw_score", "probabilities", "costs", "priors", "features", "actions"})
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
    "stable": "boolean",
    "action": "integer",
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
#: (``ROWS FROM``); the client binds 16 texts whatever the number of rows.
_PG_INSERT = (
    f"INSERT INTO logged_predictions ({_COLUMN_LIST}) SELECT "
    + ", ".join(_pg_value(c) for c in LOG_COLUMNS)
    + " FROM ROWS FROM ("
    + ", ".join(_pg_unpack(c) for c in LOG_COLUMNS)
    + f") AS r({_COLUMN_LIST}) ON CONFLICT (model_id, prediction_id) DO NOTHING"
)
_SQLITE_ROW = "(" + ", ".join("?" for _ in LOG_COLUMNS) + ")"
#: Rows per SQLite statement: 256 x 17 = 4,352 parameters, under SQLite's limit (32,766
#: since 3.32; 999 before, hence 62 rows there).
SQLITE_ROWS_PER_INSERT = 256 if sqlite3.sqlite_version_info >= (3, 32) else 999 // len(LOG_COLUMNS)


@functools.lru_cache(maxsize=8)
def _sqlite_insert(rows: int) -> str:
    """One INSERT of ``rows`` rows (the statements are few: full chunks and remainders)."""
    return (
        f"INSERT INTO logged_predictions ({_COLUMN_LIST}) VALUES "
        + ", ".join([_SQLITE_ROW] * rows)
        + " ON CONFLICT (model_id, prediction_id) DO NOTHING"
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
    the serving process); SQLite: statements of :data:`SQLITE_ROWS_PER_INSERT` rows
    (:func:`_sqlite_rows`). A row whose ``(model_id, prediction_id)`` is
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
            return _sqlite_rows(conn, [columns[c] for c in LOG_COLUMNS], n)
        return int(result.rowcount)


def _sqlite_rows(conn: Connection, cols: list[Sequence[Any]], n: int) -> int:
    """SQLite: :data:`SQLITE_ROWS_PER_INSERT` rows per statement, their values laid out
    row by row with one slice assignment per column (no Python work per value).

    One statement per chunk, not ``executemany`` (one step per row): the sqlite3 module
    releases the GIL around each step, and with one step per row a batch handed the GIL
    back and forth with the request threads once a row (under 16 concurrent single-row
    requests, the server spent about 16% more CPU per request with the log on).
    """
    width = len(cols)
    new = 0
    for start in range(0, n, SQLITE_ROWS_PER_INSERT):
        stop = min(start + SQLITE_ROWS_PER_INSERT, n)
        values: list[Any] = [None] * ((stop - start) * width)
        for j, col in enumerate(cols):
            values[j::width] = col[start:stop]
        result = conn.exec_driver_sql(_sqlite_insert(stop - start), tuple(values))
        new += int(result.rowcount)
    return new


@dataclass(frozen=True)
class LogColumns:
    """Logged predictions of one version as arrays, oldest first (what monitoring reads).

    ``costs`` holds the cost matrices of the labelled rows only (the others' are never
    parsed), in row order: row ``i``'s is ``costs[np.cumsum(label >= 0)[i] - 1]``.
    A decision among named actions has a ``(K, A)`` matrix; the stack is ``(m, K, W)``,
    ``W`` the widest, narrower matrices padded with NaN. ``column`` is the column of its
    matrix a row's decision took (the action's, else the decided class): its realised
    cost is ``costs[j, label, column]``.
    """

    created_at: np.ndarray  # (n,) float64: POSIX seconds, UTC
    probabilities: np.ndarray  # (n, K) float64, NaN where none was logged
    decision: np.ndarray  # (n,) int64 class indices, -1 for an action that is no class
    label: np.ndarray  # (n,) int64 class indices, -1 without an outcome
    expected_cost: np.ndarray  # (n,) float64, NaN where unknown
    outcome_cost: np.ndarray  # (n,) float64, NaN where not reported
    costs: np.ndarray  # (m, K, W) of the m labelled rows; rows = truth
    stable: np.ndarray  # (n,) int8: 1 stable, 0 not, -1 no interval asked
    action: np.ndarray  # (n,) object: the name of the action taken, None for a class decision
    column: np.ndarray  # (n,) int64: the column of the row's cost matrix its decision took

    def __len__(self) -> int:
        return len(self.decision)

    @property
    def n_classes(self) -> int:
        return int(self.probabilities.shape[1])

    @classmethod
    def empty(cls, n_classes: int) -> LogColumns:
        k = n_classes
        return cls(
            created_at=np.empty(0),
            probabilities=np.empty((0, k)),
            decision=np.empty(0, dtype=np.int64),
            label=np.empty(0, dtype=np.int64),
            expected_cost=np.empty(0),
            outcome_cost=np.empty(0),
            costs=np.empty((0, k, k)),
            stable=np.empty(0, dtype=np.int8),
            action=np.empty(0, dtype=object),
            column=np.empty(0, dtype=np.int64),
        )

    def reversed(self) -> LogColumns:
        """The same rows in the opposite order."""
        return LogColumns(**{f.name: getattr(self, f.name)[::-1] for f in fields(self)})

    def take(self, mask: np.ndarray) -> LogColumns:
        """The rows where ``mask`` (boolean, (n,)) is true."""
        return LogColumns(
            created_at=self.created_at[mask],
            probabilities=self.probabilities[mask],
            decision=self.decision[mask],
            label=self.label[mask],
            expected_cost=self.expected_cost[mask],
            outcome_cost=self.outcome_cost[mask],
            costs=self.costs[mask[self.label >= 0]],
            stable=self.stable[mask],
            action=self.action[mask],
            column=self.column[mask],
        )


def _parse_json_rows(texts: list[str | None], width: Sequence[int]) -> np.ndarray:
    """JSON texts of equal-shape number arrays as one float64 array, parsed in one call
    (None, or a null inside, is NaN); ``width`` is the shape of one row's array."""
    n = len(texts)
    if n == 0:
        return np.empty((0, *width))
    if None in texts or "null" in texts:
        blank = orjson.dumps(np.full(width, np.nan).tolist()).decode()  # NaN -> null
        texts = [blank if t is None or t == "null" else t for t in texts]
    parsed = orjson.loads("[" + ",".join(cast(list[str], texts)) + "]")
    return np.array(parsed, dtype=np.float64).reshape(n, *width)  # null -> NaN


def _parse_cost_rows(texts: list[str], k: int) -> np.ndarray:
    """Cost matrices as JSON texts, ``(K, K)`` or ``(K, A)``, as one ``(m, K, W)`` float64
    stack (``W`` the widest; narrower ones padded with NaN). One parse for all of them;
    a loop over the matrices only when their widths differ."""
    if not texts:
        return np.empty((0, k, k))
    parsed = orjson.loads("[" + ",".join(texts) + "]")
    try:
        stack = np.array(parsed, dtype=np.float64)
    except ValueError:  # matrices of different widths
        stack = None
    if stack is not None and stack.ndim == 3:
        return stack
    width = max(len(c[0]) for c in parsed)
    out = np.full((len(parsed), k, width), np.nan)
    for j, c in enumerate(parsed):
        a = np.array(c, dtype=np.float64)
        out[j, :, : a.shape[1]] = a
    return out


def _actions_taken(
    action: Sequence[int | None], names: Sequence[str | None], memo: dict[str, list[str]]
) -> np.ndarray:
    """The name of the action each row took (None for a class decision): ``names`` are
    the rows' ``actions`` as JSON text, parsed once per distinct text (``memo``)."""
    out = np.full(len(action), None, dtype=object)
    for i, (a, text) in enumerate(zip(action, names, strict=True)):
        if a is not None and text is not None:
            listed = memo.get(text)
            if listed is None:
                listed = memo[text] = orjson.loads(text)
            out[i] = listed[a]
    return out


def _created(postgres: bool) -> ColumnElement[Any]:
    """``created_at`` selected as numbers (PostgreSQL's epoch) or as its stored text
    (SQLite), not one aware datetime object per row: :func:`_seconds` reads it."""
    if postgres:
        return cast_(func.extract("epoch", _T.c.created_at), Float)
    return cast_(_T.c.created_at, Text)


def _seconds(values: Sequence[Any], postgres: bool) -> np.ndarray:
    """POSIX seconds of ``created_at`` as :meth:`PredictionLog.columns` selects it:
    PostgreSQL's epoch (float), or SQLite's stored UTC text (``log_time``)."""
    if postgres:
        return np.array(values, dtype=np.float64)
    micros = np.array(values, dtype="datetime64[us]").astype(np.int64)
    return micros / 1e6


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

    def columns(
        self,
        model_id: int,
        version: int,
        n_classes: int | None,
        window: LogWindow = EVERYTHING,
        *,
        latest: int | None = None,
        labelled: bool = False,
        chunk_rows: int = 50_000,
    ) -> LogColumns:
        """Logged predictions of one version of ``model_id`` in the window, as arrays.

        ``n_classes`` is the version's number of classes (None: the width of the first
        logged probabilities). With ``latest`` only the most recent that many; with
        ``labelled`` only the rows that have an outcome. JSON columns are read as text
        and parsed once per chunk of ``chunk_rows`` (never one parse per row), cost
        matrices only for labelled rows; the result holds ``8 (K + 7)`` bytes per row
        (plus ``8 K W`` per labelled row, ``W`` the widest cost matrix)."""
        costs_text = case((_T.c.label.is_not(None), cast_(_T.c.costs, Text)), else_=None)
        postgres = self.session.get_bind().dialect.name == "postgresql"
        created = _created(postgres)
        query = select(
            created,
            cast_(_T.c.probabilities, Text),
            _T.c.decision,
            _T.c.label,
            _T.c.expected_cost,
            _T.c.outcome_cost,
            costs_text,
            _T.c.stable,
            _T.c.action,
            cast_(_T.c.actions, Text),
        ).where(_T.c.model_id == model_id, _T.c.version == version)
        if labelled:
            query = query.where(_T.c.label.is_not(None))
        query = window.where(query, _T.c.created_at)
        if latest is not None:
            query = query.order_by(_T.c.created_at.desc(), _T.c.id.desc()).limit(latest)
        else:
            query = query.order_by(_T.c.created_at, _T.c.id)
        parts: list[LogColumns] = []
        memo: dict[str, list[str]] = {}
        with database_errors():
            result = self.session.execute(query.execution_options(yield_per=chunk_rows))
            for rows in result.partitions():
                t, proba, decision, label, expected, reported, costs, stable, action, names = zip(
                    *rows, strict=True
                )
                if n_classes is None:  # the registry does not say: the logged width
                    first = next((p for p in proba if p not in (None, "null")), None)
                    n_classes = 2 if first is None else len(orjson.loads(first))
                k = (n_classes,)
                labels = np.array([-1 if y is None else y for y in label], dtype=np.int64)
                decided = np.array([-1 if d is None else d for d in decision], dtype=np.int64)
                taken = np.array([-1 if a is None else a for a in action], dtype=np.int64)
                parts.append(
                    LogColumns(
                        created_at=_seconds(t, postgres),
                        probabilities=_parse_json_rows(list(proba), k),
                        decision=decided,
                        label=labels,
                        expected_cost=np.array(expected, dtype=np.float64),
                        outcome_cost=np.array(reported, dtype=np.float64),
                        costs=_parse_cost_rows([c for c in costs if c is not None], k[0]),
                        stable=np.array([-1 if s is None else int(s) for s in stable], np.int8),
                        action=_actions_taken(action, names, memo),
                        column=np.where(taken >= 0, taken, decided),
                    )
                )
        if not parts:
            return LogColumns.empty(n_classes or 2)
        width = max(p.costs.shape[2] for p in parts)
        for i, p in enumerate(parts):  # chunks of narrower matrices: padded to the widest
            if p.costs.shape[2] < width:
                wide = np.full((len(p.costs), p.costs.shape[1], width), np.nan)
                wide[:, :, : p.costs.shape[2]] = p.costs
                parts[i] = replace(p, costs=wide)
        out = LogColumns(
            **{
                f.name: np.concatenate([getattr(p, f.name) for p in parts])
                for f in fields(LogColumns)
            }
        )
        return out.reversed() if latest is not None else out  # newest first: oldest first

    def counts(self, model_id: int, window: LogWindow = EVERYTHING) -> dict[int, tuple[int, int]]:
        """Per version of ``model_id``: (logged predictions, of which labelled) in the
        window, counted by the database (no row leaves it)."""
        query = select(_T.c.version, func.count(), func.count(_T.c.label)).where(
            _T.c.model_id == model_id
        )
        query = window.where(query, _T.c.created_at).group_by(_T.c.version)
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
        window: LogWindow = EVERYTHING,
    ) -> LabelledRows:
        """Labelled predictions of version ``version`` of ``model`` in ``window``.

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
        query = window.where(query, _T.c.created_at).order_by(_T.c.created_at, _T.c.id)
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
                status, current, current_cost = label_once(
                    self.session, model_id, pid, label, cost, now, current, current_cost
                )
                if status == "conflict":
                    results.append(
                        OutcomeResult(
                            pid,
                            "conflict",
                            version,
                            f"an outcome is already recorded (label index {current}, cost "
                            f"{current_cost}); a recorded outcome is final",
                        )
                    )
                else:
                    results.append(OutcomeResult(pid, status, version))
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


def label_once(
    session: Session,
    model_id: int,
    pid: str,
    label: int,
    cost: float | None,
    now: datetime,
    current: int | None,
    current_cost: float | None,
) -> tuple[str, int | None, float | None]:
    """Record ``label`` (a class index) and ``cost`` on logged prediction ``pid`` unless it
    already has an outcome (``current``: its label as last read, None: none): a recorded
    outcome is final. Returns ``recorded``, ``unchanged`` (the same outcome is there) or
    ``conflict`` (another one is), with the row's outcome. The update is guarded by
    ``label IS NULL``, so of two concurrent writers exactly one records; the other reads
    the row again and compares."""
    if current is None:
        stmt = (
            update(_T)
            .where(_T.c.model_id == model_id, _T.c.prediction_id == pid, _T.c.label.is_(None))
            .values(label=label, outcome_cost=cost, labelled_at=now)
        )
        if session.execute(stmt).rowcount == 1:  # type: ignore[attr-defined]
            return "recorded", label, cost
        current, current_cost = session.execute(
            select(_T.c.label, _T.c.outcome_cost).where(
                _T.c.model_id == model_id, _T.c.prediction_id == pid
            )
        ).one()
    same = current == label and current_cost == cost
    return ("unchanged" if same else "conflict"), current, current_cost


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
