"""The prediction log writer: batched inserts off the request path, bounded memory.

A predict hands its rows over as one :class:`LogEntry` (arrays, not per-row objects:
building it costs microseconds) with :meth:`PredictionLogWriter.submit`, which never
touches the database and only blocks when the queue is full (below). One background thread takes everything
waiting (up to ``batch_rows`` at a time), turns it into columns (:func:`columns_of`, no
Python work per row) and inserts it in one statement (:func:`app.registry.prediction_log.write_rows`) every ``flush_seconds``
at most.

When the database is slower than the traffic (or down), rows wait in memory up to
``max_rows``. A request whose rows do not fit **waits for room** (in its worker
thread, first come first served) up to ``wait_seconds``; if there is still none it is
**refused** with 503 and Retry-After and its decisions are never returned, so that
every answered row is logged (``refused`` counts those rows). ``overflow="drop"``
(COSTWISE_PREDICTION_LOG_OVERFLOW=drop) restores the old behaviour: such a request is
answered and its rows are **dropped and counted** (``dropped``). A
batch that fails because the database is unavailable stays queued and is retried
(with backoff, while new rows keep queueing up to the bound); a batch refused for any
other reason (e.g. its version was deleted meanwhile) is counted as ``failed``. Ids
already logged for the model are skipped (``duplicate``): the first record of an id
stands. :meth:`close` writes what is queued before the process exits. With
``overflow="drop"`` on PostgreSQL the writer thread runs at the lowest CPU priority
(nice 19), so that under CPU contention the requests go first; with ``wait`` (requests
wait for the writer's room) and on SQLite (its insert holds the database's one write
lock) it keeps the process's priority (:func:`_lowest_priority`).
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import orjson
from sqlalchemy.engine import Engine

from app.errors import Conflict, InvalidArgument, ServiceError, Unavailable
from app.registry.orm import PREDICTION_ID_LENGTH
from app.registry.pending_outcomes import JOIN_ROWS, PendingCounters, join_pending
from app.registry.prediction_log import LOG_COLUMNS, log_time, write_rows

log = logging.getLogger(__name__)

__all__ = [
    "LogEntry",
    "LogStats",
    "PredictionLogWriter",
    "check_ids",
    "ids_list",
    "columns_of",
    "new_ids",
]

OUTCOMES = ("written", "duplicate", "dropped", "failed", "refused")
#: What a request does when its rows do not fit in the queue (COSTWISE_PREDICTION_LOG_OVERFLOW).
OVERFLOW_MODES = ("wait", "drop")


#: ``-0``, ``-1``, ...: the row-number suffixes of new ids, made once (grown on demand).
_SUFFIXES: list[str] = [f"-{i}" for i in range(10_000)]


def new_ids(n: int) -> list[str]:
    """``n`` fresh prediction ids: 32 hex digits, ``-`` and the row number, e.g.
    ``19acb1f2e4c3f9c...e1-0``. The first 11 digits are the time in milliseconds, the other
    21 random (84 bits, one draw per request): unique per model with overwhelming
    probability, and time-ordered, so that the log's unique index on (model, id) grows at
    its right end instead of at a random page of a large B-tree (on a SQLite log of
    1,000,000 rows the insert takes 9 us of CPU per row against 33 us with random ids:
    bench/serving/log_ids.py). Cheap: the suffixes are made once, so an id is one string
    concatenation (10,000 ids in ~0.3 ms; a uuid4 per row costs ~15 ms)."""
    global _SUFFIXES
    base = f"{time.time_ns() // 1_000_000:011x}{secrets.token_hex(11)[:21]}"
    suffixes = _SUFFIXES
    if n > len(suffixes):  # a list only ever replaced by a longer one: thread-safe
        suffixes = _SUFFIXES = suffixes + [f"-{i}" for i in range(len(suffixes), n)]
    return [base + s for s in suffixes[:n]]


def ids_list(ids: Sequence[str] | None) -> list[str] | None:
    return None if ids is None else list(ids)


def check_ids(ids: Sequence[Any], n_rows: int, field: str = "ids") -> None:
    """Client ids of the rows: one per row, strings of 1 to 128 characters, all distinct.

    Raises InvalidArgument (422) naming the first offending index."""
    if len(ids) != n_rows:
        raise InvalidArgument(
            f"{field}: expected one id per row ({n_rows}), got {len(ids)}", field=field
        )
    seen: dict[str, int] = {}
    for i, value in enumerate(ids):
        if (
            not isinstance(value, str)
            or not 1 <= len(value) <= PREDICTION_ID_LENGTH
            or "\x00" in value
        ):
            raise InvalidArgument(
                f"{field}[{i}]: expected a string of 1 to {PREDICTION_ID_LENGTH} characters "
                f"(no NUL), got {value!r:.60}",
                field=f"{field}[{i}]",
            )
        first = seen.setdefault(value, i)
        if first != i:
            raise InvalidArgument(
                f"{field}[{i}]: duplicate of {field}[{first}] ({value!r:.60}); the ids of a "
                "request must be distinct (they are unique per model)",
                field=f"{field}[{i}]",
            )


@dataclass(frozen=True)
class LogEntry:
    """The rows of one request to log, as arrays (see ``LoggedPrediction``)."""

    model_id: int
    version_id: int
    version: int
    alias: str | None
    created_at: datetime
    ids: Sequence[str]
    raw: np.ndarray | None  # (n,) or (n, K)
    proba: np.ndarray | None  # (n, K)
    decision: np.ndarray  # (n,) class indices (-1: an action that stands for no class)
    threshold: np.ndarray | None  # (n,)
    expected_cost: np.ndarray  # (n,)
    cost_setting: str
    costs: np.ndarray  # (K, K) for every row, or (n, K, K); among actions (K, A) / (n, K, A)
    priors: Sequence[float] | None
    features: np.ndarray | None  # (n, d) when COSTWISE_LOG_FEATURES=true
    # (n,) bool: the decision is the same at both ends of the row's probability interval
    # (a request with interval: true); None when not asked
    stable: np.ndarray | None = None
    action: np.ndarray | None = None  # (n,) index of the action taken among ``actions``
    actions: Sequence[str] | None = None  # names of the cost columns (None: K x K costs)

    def __len__(self) -> int:
        return len(self.ids)


def _json_rows(a: np.ndarray | None, n: int) -> list[Any]:
    """One JSON text per row of ``a`` (None for a missing array; NaN/inf as null).

    One orjson call for the whole array, split into rows by string methods: no Python
    work per row (10,000 rows of two probabilities: ~1 ms, against ~4 ms for one dump
    per row)."""
    if a is None:
        return [None] * n
    if n == 0:
        return []
    a = np.ascontiguousarray(a)  # orjson takes C-contiguous arrays only (no copy if so)
    text = orjson.dumps(a, option=orjson.OPT_SERIALIZE_NUMPY).decode()[1:-1]
    if a.ndim == 1:  # numbers: a JSON null (NaN) is stored as SQL NULL
        values: list[Any] = text.split(",")
        return values if np.isfinite(a).all() else [None if v == "null" else v for v in values]
    close, open_ = "]" * (a.ndim - 1), "[" * (a.ndim - 1)  # between rows: "],[" or "]],[["
    return text.replace(f"{close},{open_}", f"{close}\x1f{open_}").split("\x1f")


def _floats(a: np.ndarray | None, n: int) -> list[float | None]:
    if a is None:
        return [None] * n
    values = a.tolist()
    return values if np.isfinite(a).all() else [x if x == x else None for x in values]


def _json(value: Any) -> str | None:
    return None if value is None else orjson.dumps(value).decode()


def _tail(a: np.ndarray | None) -> tuple[int, ...] | None:
    return None if a is None else a.shape[1:]


def log_times(times: Sequence[datetime]) -> list[str]:
    """:func:`~app.registry.prediction_log.log_time` of each of ``times``, formatting
    each distinct second once (the entries of a batch span a few seconds): a
    ``strftime`` per entry was a third of :func:`columns_of`'s time on one-row requests."""
    heads: dict[datetime, str] = {}
    out: list[str] = []
    for t in times:
        whole = t.replace(microsecond=0)
        head = heads.get(whole)
        if head is None:
            head = heads[whole] = log_time(whole)[:19]  # "YYYY-MM-DD HH:MM:SS"
        out.append(f"{head}.{t.microsecond:06d}")
    return out


def _layout(e: LogEntry) -> tuple[Any, ...]:
    """What must agree for entries' arrays to be concatenated (all but the row count)."""
    costs = ("matrix",) if e.costs.ndim == 2 else ("rows", *e.costs.shape[1:])
    acting = e.action is not None
    return (
        _tail(e.raw), _tail(e.proba), e.threshold is None, costs, _tail(e.features),
        e.stable is None, acting,
    )  # fmt: skip


def _cat(arrays: list[np.ndarray]) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _repeat(values: list[Any], counts: list[int], total: int) -> list[Any]:
    """``values[i]`` repeated ``counts[i]`` times, concatenated."""
    if total == len(values):  # one row per entry (single-row requests)
        return values
    out: list[Any] = []
    for value, n in zip(values, counts, strict=True):
        out += [value] * n
    return out


def columns_of(entries: Sequence[LogEntry]) -> dict[str, list[Any]]:
    """Column-wise values of ``entries`` for :func:`write_rows` (JSON columns as text).

    No Python work per row, and little per request: consecutive entries of the same
    layout (shapes, which arrays are present) are concatenated, so that numpy makes the
    lists and :func:`_json_rows` the per-row JSON texts once per run of entries; the
    values a request shares (model, version, time, cost setting, its cost matrix and
    priors) are serialised once per distinct value and repeated. 10,000 rows of two
    classes in one entry: ~2 ms (~0.2 us per row); 2,000 single-row entries: about 3x
    less than one pass per entry (bench/serving/prediction_log.py measures the writer)."""
    cols: dict[str, list[Any]] = {c: [] for c in LOG_COLUMNS}
    start = 0
    while start < len(entries):
        layout, end = _layout(entries[start]), start + 1
        while end < len(entries) and _layout(entries[end]) == layout:
            end += 1
        _add_run(cols, entries[start:end])
        start = end
    return cols


def _add_run(cols: dict[str, list[Any]], run: Sequence[LogEntry]) -> None:
    """Append the rows of ``run`` (entries of one :func:`_layout`) to ``cols``."""
    counts = [len(e) for e in run]
    n = sum(counts)
    memo: dict[Any, str | None] = {}

    def shared(key: Any, make: Any) -> str | None:
        if key not in memo:
            memo[key] = _json(make())
        return memo[key]

    first = run[0]
    cols["model_id"] += _repeat([e.model_id for e in run], counts, n)
    cols["version_id"] += _repeat([e.version_id for e in run], counts, n)
    cols["version"] += _repeat([e.version for e in run], counts, n)
    for e in run:
        cols["prediction_id"] += e.ids
    cols["alias"] += _repeat([e.alias for e in run], counts, n)
    cols["created_at"] += _repeat(log_times([e.created_at for e in run]), counts, n)
    raw = None if first.raw is None else _cat([e.raw for e in run])  # type: ignore[misc]
    proba = None if first.proba is None else _cat([e.proba for e in run])  # type: ignore[misc]
    cols["raw_score"] += _json_rows(raw, n)
    cols["probabilities"] += _json_rows(proba, n)
    decision = _cat([e.decision for e in run]).tolist()
    if first.action is not None:  # among actions: -1 (no class) is NULL
        decision = [None if d < 0 else d for d in decision]
    cols["decision"] += decision
    threshold = None if first.threshold is None else _cat([e.threshold for e in run])  # type: ignore[misc]
    cols["threshold"] += _floats(threshold, n)
    cols["expected_cost"] += _floats(_cat([e.expected_cost for e in run]), n)
    cols["cost_setting"] += _repeat([e.cost_setting for e in run], counts, n)
    if first.costs.ndim == 2:  # one matrix per request
        matrices = [shared(("costs", e.costs.tobytes()), lambda e=e: e.costs.tolist()) for e in run]
        cols["costs"] += _repeat(matrices, counts, n)
    else:
        cols["costs"] += _json_rows(_cat([e.costs for e in run]), n)
    priors = [
        None
        if e.priors is None
        else shared(("priors", tuple(e.priors)), lambda e=e: list(e.priors))  # type: ignore[arg-type]
        for e in run
    ]
    cols["priors"] += _repeat(priors, counts, n)
    features = None if first.features is None else _cat([e.features for e in run])  # type: ignore[misc]
    cols["features"] += _json_rows(features, n)
    if first.stable is None:
        cols["stable"] += [None] * n
    else:
        cols["stable"] += _cat([e.stable for e in run]).tolist()  # type: ignore[misc]
    if first.action is None:
        cols["action"] += [None] * n
        cols["actions"] += [None] * n
    else:
        cols["action"] += _cat([e.action for e in run]).tolist()  # type: ignore[misc]
        names = [
            shared(("actions", tuple(e.actions or ())), lambda e=e: list(e.actions or ()))
            for e in run
        ]
        cols["actions"] += _repeat(names, counts, n)


@dataclass
class LogStats:
    """Row counts since start, by outcome, and rows waiting (read by /metrics)."""

    written: int = 0
    duplicate: int = 0
    dropped: int = 0
    failed: int = 0
    refused: int = 0  # rows of requests refused (503) after waiting for room in vain
    waited: int = 0  # rows of requests that had to wait for room (then queued or refused)
    queued: int = 0


#: How many times ``batch_rows`` one batch may hold while the writer is behind.
CATCH_UP = 4

SQLITE_WRITE_GAP_SECONDS = 0.15
"""Pause of the writer after each batch on SQLite (longer than the busy handler's
longest sleep, 100 ms): a 16-client load with a training every 5 s once had its
registration wait out the 5 s busy timeout (503) behind back-to-back log batches."""


class PredictionLogWriter:
    """A bounded queue of log entries and the thread that writes them (see module doc)."""

    def __init__(
        self,
        engine: Engine,
        *,
        max_rows: int = 200_000,
        batch_rows: int = 10_000,
        flush_seconds: float = 0.2,
        retry_seconds: float = 1.0,
        overflow: str = "wait",
        wait_seconds: float = 5.0,
        pending: PendingCounters | None = None,
    ) -> None:
        if overflow not in OVERFLOW_MODES:
            raise ValueError(f"overflow: expected one of {OVERFLOW_MODES}, got {overflow!r}")
        self._engine = engine
        self.max_rows = max_rows
        self.overflow = overflow
        self.wait_seconds = wait_seconds
        self.retry_after = max(1, math.ceil(wait_seconds))
        self.batch_rows = batch_rows
        self.flush_seconds = flush_seconds
        self.retry_seconds = retry_seconds
        self.stats = LogStats()
        self.pending = pending if pending is not None else PendingCounters()
        self._queue: deque[LogEntry] = deque()
        lock = threading.Lock()
        self._cond = threading.Condition(lock)  # the writer waits for work, flush for it
        self._room = threading.Condition(lock)  # requests wait for room in the queue
        self._waiting = 0  # requests waiting for room
        self._next_ticket = 0  # their turns: first come, first served
        self._serving = 0
        self._abandoned: set[int] = set()  # turns given up (timed out) before they came
        self._thread: threading.Thread | None = None
        self._closing = False
        self._busy = False
        self._limit = batch_rows  # halved after each failed batch (e.g. a statement timeout)
        # SQLite has one writer at a time and a waiting writer polls (busy_timeout) with
        # sleeps of up to 100 ms: a pause after each batch lets a training registration
        # or an outcome batch in instead of losing the race to the next log batch
        self._sqlite = engine.dialect.name == "sqlite"
        self._gap = SQLITE_WRITE_GAP_SECONDS if self._sqlite else 0.0

    # ------------------------------------------------------------ request path
    def submit(self, entry: LogEntry) -> bool:
        """Queue ``entry``; True once queued.

        With room in the queue (and nobody waiting before it) it never blocks. Without:
        ``overflow="wait"`` (the default) waits for room in the calling thread, first
        come first served, up to ``wait_seconds``, then raises :class:`Unavailable`
        (503 with Retry-After: the request is refused and its decisions are never
        returned, so nothing answered goes unlogged; counted as ``refused``);
        ``overflow="drop"`` returns False at once (the request is answered, its rows
        are counted as ``dropped``). Never call it on an event loop with waiting on: a
        predict runs in a worker thread (:func:`app.api.deps.in_prediction_thread`).
        An entry larger than the whole queue waits until the queue is empty.
        """
        n = len(entry)
        with self._cond:
            if not self._closing and not self._waiting and self._fits(n):
                self._append(entry)
                return True
            if self.overflow == "drop":
                self.stats.dropped += n
                return False
            if self._closing or not self._wait_for_room(n):
                self.stats.refused += n
                raise Unavailable(
                    f"the prediction log cannot keep up: {self.stats.queued} rows wait to be "
                    f"written (COSTWISE_PREDICTION_LOG_QUEUE_ROWS={self.max_rows}); the "
                    f"request was not answered, retry in {self.retry_after} s",
                    retry_after=self.retry_after,
                )
            self._append(entry)
        return True

    def _fits(self, n: int) -> bool:
        return self.stats.queued + n <= self.max_rows or self.stats.queued == 0

    def _append(self, entry: LogEntry) -> None:
        self._queue.append(entry)
        self.stats.queued += len(entry)
        if self.stats.queued >= self.batch_rows:
            self._cond.notify()

    def _wait_for_room(self, n: int) -> bool:
        """Wait (lock held, released while waiting) for room for ``n`` rows, in turn
        (tickets: a large request is not overtaken forever by small ones); False after
        ``wait_seconds`` or when the writer closes."""
        ticket = self._next_ticket
        self._next_ticket += 1
        self._waiting += 1
        self.stats.waited += n
        deadline = time.monotonic() + self.wait_seconds
        try:
            while not (ticket == self._serving and self._fits(n)):
                left = deadline - time.monotonic()
                if left <= 0 or self._closing:
                    return False
                self._room.wait(left)
            return True
        finally:
            self._waiting -= 1
            if ticket == self._serving:
                self._serving += 1
            else:  # gave up out of turn: the tickets after it must not wait for it
                self._abandoned.add(ticket)
            while self._serving in self._abandoned:
                self._abandoned.discard(self._serving)
                self._serving += 1
            self._room.notify_all()

    # ------------------------------------------------------------ writer thread
    def start(self) -> None:
        with self._cond:
            self._closing = False
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(
                target=self._run, name="costwise-prediction-log", daemon=True
            )
            self._thread.start()

    def _take(self) -> list[LogEntry]:
        """Entries of at most ``batch_rows`` rows (at least one entry), left queued;
        up to CATCH_UP x ``batch_rows`` while the writer is behind (requests wait for
        room, or the queue is over half full) and no batch failed lately: the fixed
        costs of a batch (its commit, SQLite's pause for other writers) then weigh less
        per row, so that backpressure lasts less."""
        limit = self._limit
        behind = self._waiting > 0 or 2 * self.stats.queued > self.max_rows
        if behind and limit == self.batch_rows:
            limit = CATCH_UP * self.batch_rows
        taken: list[LogEntry] = []
        rows = 0
        for e in self._queue:
            if taken and rows + len(e) > limit:
                break
            taken.append(e)
            rows += len(e)
        return taken

    def _run(self) -> None:
        # lowest priority only where nothing waits for the writer: with backpressure
        # (overflow="wait") requests wait for its room, and a nice-19 writer on a busy
        # CPU made them wait until refused (a priority inversion, seen on PostgreSQL
        # under the mixed load of tests/reliability/test_log_lossless.py); on SQLite see
        # _lowest_priority
        if not self._sqlite and self.overflow == "drop":
            _lowest_priority()
        while True:
            with self._cond:
                if not self._queue and not self._closing:
                    self._cond.wait(self.flush_seconds)
                if not self._queue:
                    if self._closing:
                        return
                    continue
                batch = self._take()
                self._busy = True
            ok = self._write(batch)
            with self._cond:
                self._busy = False
                if ok:
                    for _ in batch:
                        self._queue.popleft()
                    self.stats.queued -= sum(len(e) for e in batch)
                    self._cond.notify_all()
                    self._room.notify_all()
                    self._limit = min(self.batch_rows, 2 * self._limit)
                elif self._closing:
                    return
                else:
                    self._limit = max(1, self._limit // 2)
            if not ok:
                time.sleep(self.retry_seconds)
            elif self._gap:
                time.sleep(self._gap)

    def _write(self, batch: list[LogEntry]) -> bool:
        """Insert ``batch``; False to retry later (database unavailable).

        A batch the database refuses for another reason is written again one request
        at a time, so that one bad request cannot lose the rows of the others."""
        n = sum(len(e) for e in batch)
        try:
            new = write_rows(self._engine, columns_of(batch))
        except Unavailable as error:
            log.warning("prediction log: %d rows wait, database unavailable: %s", n, error)
            return False
        except Conflict as error:
            if len(batch) > 1:
                return all([self._write([e]) for e in batch])
            log.error("prediction log: %d rows refused by the database: %s", n, error)
            self.stats.failed += n
            return True
        except ServiceError as error:
            log.error("prediction log: %d rows not written: %s", n, error)
            self.stats.failed += n
            return True
        self.stats.written += new
        self.stats.duplicate += n - new
        if new:
            self._join_pending({e.model_id for e in batch})
        return True

    def _join_pending(self, model_ids: set[int]) -> None:
        """Record the pending outcomes of ``model_ids`` whose rows have now landed, in a
        transaction right after the insert's commit (why this order cannot miss one:
        :mod:`app.registry.pending_outcomes`). A failure loses nothing: the next batch
        and the upkeep join them."""
        try:
            while True:
                counts = join_pending(self._engine, model_ids)
                self.pending.add_join(counts)
                if counts.invalid or counts.conflict:
                    log.warning(
                        "pending outcomes discarded at the join: %d invalid labels, %d "
                        "conflicting with a recorded outcome",
                        counts.invalid,
                        counts.conflict,
                    )
                if counts.joined + counts.invalid + counts.conflict + counts.same < JOIN_ROWS:
                    return
        except ServiceError as error:
            log.warning("pending outcomes: join after a log batch failed (retried): %s", error)

    def write_pending(self) -> None:
        """Write everything queued, in the calling thread (for tools and benchmarks; the
        writer thread must not be running). Stops early while the database is down."""
        while True:
            with self._cond:
                if not self._queue:
                    return
                batch = self._take()
            if not self._write(batch):
                return
            with self._cond:
                for _ in batch:
                    self._queue.popleft()
                self.stats.queued -= sum(len(e) for e in batch)
                self._room.notify_all()

    # ------------------------------------------------------------ lifecycle
    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far is written; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._cond.notify()
            while self._queue or self._busy:
                left = deadline - time.monotonic()
                if left <= 0 or self._thread is None or not self._thread.is_alive():
                    return not self._queue
                self._cond.wait(min(left, 0.05))
                self._cond.notify()
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued (at most ``timeout`` seconds), then stop the thread.

        Rows still queued after that (database down) are logged as an error (how many,
        of which models and when) and counted as ``dropped``."""
        self.flush(timeout)
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            self._room.notify_all()  # waiting requests are refused (503), not answered
            thread = self._thread
        if thread is not None:
            thread.join(timeout=max(1.0, self.retry_seconds + 1))
        with self._cond:
            left = sum(len(e) for e in self._queue)
            if left:  # answered but never logged: say which, loudly
                first, last = self._queue[0], self._queue[-1]
                log.error(
                    "prediction log: %d rows of %d answered requests NOT WRITTEN at shutdown "
                    "(the database did not take them within %.0f s); models %s, made %s to "
                    "%s, first id %s: their outcomes will be kept as pending and expire",
                    left,
                    len(self._queue),
                    timeout,
                    sorted({e.model_id for e in self._queue}),
                    first.created_at.isoformat(),
                    last.created_at.isoformat(),
                    first.ids[0] if len(first) else None,
                )
                self.stats.dropped += left
                self.stats.queued = 0
                self._queue.clear()


def _lowest_priority() -> None:
    """Run the calling thread at nice 19 (Linux: a thread is a task of its own).

    Under CPU contention the request threads then go first: the writer works in the
    time they leave idle, and its rows wait in the bounded queue meanwhile. Without the
    GIL (SQLite and PostgreSQL calls release it) the writer uses another core if there
    is one. No-op where per-thread priorities are not available.

    Not on SQLite: there the writer's insert holds the database's one write lock, and a
    nice-19 thread on a busy CPU gets about 1.5% of it (CFS weight 15 against 1,024), so
    a 10,000-row insert that takes 65 ms of CPU could hold the lock for seconds while
    every other writer (an alias move, a registration, an outcome batch) waits out its
    5 s busy timeout and answers 503: a priority inversion, seen under load in
    tests/reliability/test_concurrency.py (alias moves racing predictions)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError) as error:  # pragma: no cover - not Linux
        log.debug("prediction log writer keeps its priority: %s", error)
