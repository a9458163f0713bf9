"""The prediction log writer (bounded queue, retries, drops) and the log's upkeep."""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db import make_engine, upgrade_to_head
from app.errors import Unavailable
from app.registry.log_window import LogWindow
from app.registry.orm import LoggedPrediction, ModelVersion, RegisteredModel
from app.registry.prediction_log import PredictionLog
from app.services.feedback.log_maintenance import LogMaintenance
from app.services.feedback.monitoring import Monitoring
from app.services.feedback.prediction_log import LogEntry, PredictionLogWriter, columns_of, new_ids


def _entry(n: int, model_id: int = 1, version_id: int = 1, at: datetime | None = None) -> LogEntry:
    p1 = np.linspace(0.1, 0.9, n)
    return LogEntry(
        model_id=model_id,
        version_id=version_id,
        version=1,
        alias=None,
        created_at=at or datetime.now(UTC),
        ids=new_ids(n),
        raw=p1,
        proba=np.column_stack([1 - p1, p1]),
        decision=(p1 >= 0.5).astype(np.intp),
        threshold=np.full(n, 0.5),
        expected_cost=np.minimum(p1, 1 - p1),
        cost_setting="zero_one",
        costs=np.array([[0.0, 1.0], [1.0, 0.0]]),
        priors=None,
        features=None,
    )


def _registry_with_a_version(engine: Engine) -> tuple[int, int]:
    with Session(engine) as s, s.begin():
        m = RegisteredModel(name="m")
        s.add(m)
        s.flush()
        v = ModelVersion(
            model_id=m.id,
            version=1,
            algorithm="adaboost",
            training_seconds=0.0,
            artifact_sha256="0" * 64,
            artifact_size=0,
            data={"classes": [0, 1]},
        )
        s.add(v)
        s.flush()
        return m.id, v.id


def _count(engine: Engine) -> int:
    with Session(engine) as s:
        return int(s.scalar(select(func.count()).select_from(LoggedPrediction)) or 0)


def test_a_full_queue_drops_and_counts_never_blocks(engine: Engine) -> None:
    writer = PredictionLogWriter(engine, max_rows=5, overflow="drop")  # nothing drains it
    started = time.perf_counter()
    assert writer.submit(_entry(3))
    assert not writer.submit(_entry(3))  # 3 + 3 > 5: dropped at once
    assert writer.submit(_entry(2))
    assert time.perf_counter() - started < 0.5
    assert (writer.stats.queued, writer.stats.dropped) == (5, 3)


def test_a_full_queue_refuses_after_the_bounded_wait(engine: Engine) -> None:
    """overflow="wait": no room within wait_seconds -> Unavailable with retry_after,
    counted as refused; nothing is dropped, the queue keeps its bound."""
    writer = PredictionLogWriter(engine, max_rows=5, wait_seconds=0.2)  # nothing drains it
    assert writer.submit(_entry(3))
    started = time.perf_counter()
    with pytest.raises(Unavailable) as caught:
        writer.submit(_entry(3))
    waited = time.perf_counter() - started
    assert 0.15 <= waited < 2.0
    assert caught.value.extra["retry_after"] == 1
    assert "COSTWISE_PREDICTION_LOG_QUEUE_ROWS" in caught.value.detail
    assert writer.submit(_entry(2))  # fits: no wait
    stats = writer.stats
    assert (stats.queued, stats.dropped, stats.refused, stats.waited) == (5, 0, 3, 3)


def test_a_waiting_request_is_queued_once_the_writer_makes_room(
    engine: Engine,
) -> None:
    """Requests wait in turn for room and are all queued and written, none refused,
    when the writer drains faster than the wait bound; one larger than the queue
    waits for an empty queue."""
    model_id, version_id = _registry_with_a_version(engine)
    writer = PredictionLogWriter(
        engine, max_rows=10, batch_rows=4, flush_seconds=0.01, wait_seconds=10.0
    )
    writer.start()
    errors: list[BaseException] = []

    def client(n: int) -> None:
        try:
            for _ in range(5):
                writer.submit(_entry(n, model_id, version_id))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    try:
        threads = [threading.Thread(target=client, args=(n,)) for n in (1, 3, 7, 12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        assert writer.flush(30.0)
        stats = writer.stats
        assert (stats.written, stats.dropped, stats.refused, stats.queued) == (115, 0, 0, 0)
        assert stats.waited > 0
        assert _count(engine) == 115
    finally:
        writer.close()


def test_a_closing_writer_refuses_instead_of_dropping(engine: Engine) -> None:
    writer = PredictionLogWriter(engine, max_rows=5, wait_seconds=30.0)
    writer.close()
    with pytest.raises(Unavailable):
        writer.submit(_entry(1))
    assert (writer.stats.refused, writer.stats.dropped) == (1, 0)


def test_rows_wait_while_the_database_is_down_then_are_written(tmp_path: Path) -> None:
    late = tmp_path / "later" / "late.db"
    engine = make_engine(f"sqlite:///{late}")  # its directory is missing: every write fails
    writer = PredictionLogWriter(engine, flush_seconds=0.01, retry_seconds=0.05)
    writer.start()
    try:
        assert writer.submit(_entry(4))
        time.sleep(0.3)
        assert writer.stats.queued == 4 and writer.stats.written == 0  # kept, retried
        # the database appears at once, schema and registry rows included (made
        # elsewhere: a retry must not see the tables without the model they refer to)
        ready = tmp_path / "ready.db"
        upgrade_to_head(f"sqlite:///{ready}")
        other = make_engine(f"sqlite:///{ready}")
        model_id, version_id = _registry_with_a_version(other)
        other.dispose()
        late.parent.mkdir()
        ready.replace(late)
        assert writer.submit(_entry(2, model_id, version_id))
        # the first entry names model 1 / version 1, which now exist too
        assert writer.flush(10.0)
        assert (writer.stats.written, writer.stats.dropped, writer.stats.queued) == (6, 0, 0)
        assert _count(engine) == 6
    finally:
        writer.close()
        engine.dispose()


def test_close_counts_what_it_could_not_write() -> None:
    engine = make_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")  # nothing listens
    writer = PredictionLogWriter(engine, flush_seconds=0.01, retry_seconds=0.05)
    writer.start()
    assert writer.submit(_entry(3))
    writer.close(timeout=0.5)
    assert (writer.stats.dropped, writer.stats.written, writer.stats.queued) == (3, 0, 0)
    engine.dispose()


def test_retention_deletes_old_rows_only(
    engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    model_id, version_id = _registry_with_a_version(engine)
    now = datetime.now(UTC)
    writer = PredictionLogWriter(engine, batch_rows=7)  # several statements
    writer.submit(_entry(25, model_id, version_id, at=now - timedelta(days=40)))
    writer.submit(_entry(5, model_id, version_id, at=now - timedelta(hours=2)))
    writer.start()
    assert writer.flush(10.0)
    writer.close()
    upkeep = LogMaintenance(session_factory, Monitoring(session_factory), retention_days=30)
    assert upkeep.purge(now) == 25
    assert _count(engine) == 5
    assert (
        LogMaintenance(session_factory, Monitoring(session_factory), retention_days=0).purge() == 0
    )
    snapshot = upkeep.refresh(now)
    assert snapshot[("m", 1)]["predictions"] == 5 and snapshot[("m", 1)]["labelled"] == 0


def test_gauges_count_every_row_and_read_only_labelled_ones(
    engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    """The gauge figures equal what the monitoring report computes from every row of
    the window, while only labelled rows are read (at most ``gauge_rows`` of them)."""
    model_id, version_id = _registry_with_a_version(engine)
    now = datetime.now(UTC)
    writer = PredictionLogWriter(engine)
    writer.submit(_entry(40, model_id, version_id, at=now - timedelta(hours=1)))
    writer.submit(_entry(30, model_id, version_id, at=now - timedelta(minutes=5)))
    writer.submit(_entry(9, model_id, version_id, at=now - timedelta(days=3)))  # outside
    writer.start()
    assert writer.flush(10.0)
    writer.close()
    table = LoggedPrediction.__table__
    with engine.begin() as c:  # 1 in 3 rows labelled, some of them against the decision
        c.execute(table.update().where(table.c.id % 3 == 0).values(label=table.c.decision))
        c.execute(table.update().where(table.c.id % 12 == 0).values(label=1 - table.c.decision))
    since = now - timedelta(hours=24)
    monitoring = Monitoring(session_factory)
    report = monitoring.report("m", window=LogWindow(since))["versions"][0]["total"]
    gauges = monitoring.totals(model_id, since)[1]
    assert gauges["predictions"] == report["predictions"] == 70
    assert gauges["labelled"] == report["labelled"] == gauges["labelled_used"] > 10
    assert gauges["coverage"] == pytest.approx(report["coverage"])
    assert gauges["cost_ratio"] == pytest.approx(report["cost_ratio"])
    assert gauges["ece"] == pytest.approx(report["calibration"]["ece"])
    assert gauges["ece"] > 0
    few = Monitoring(session_factory, gauge_rows=5).totals(model_id, since)[1]
    assert (few["predictions"], few["labelled"], few["labelled_used"]) == (
        70,
        report["labelled"],
        5,
    )


def test_log_columns_keep_each_labelled_rows_cost_matrix_with_it(
    engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    """The columnar read: per-row cost matrices are parsed for labelled rows only and
    stay aligned with their rows through ``take``; ``latest`` keeps the newest rows,
    oldest first; the number of classes can come from the log itself."""
    model_id, version_id = _registry_with_a_version(engine)
    now = datetime.now(UTC)
    n = 12
    entry = _entry(n, model_id, version_id, at=now - timedelta(minutes=30))
    per_row = np.stack([np.array([[0.0, 1.0 + i], [10.0 * i, 0.0]]) for i in range(n)])
    entry = LogEntry(**{**entry.__dict__, "costs": per_row, "cost_setting": "row_costs"})
    later = _entry(3, model_id, version_id, at=now - timedelta(minutes=1))
    writer = PredictionLogWriter(engine)
    writer.submit(entry)
    writer.submit(later)
    writer.write_pending()
    table = LoggedPrediction.__table__
    labelled_ids = [entry.ids[i] for i in (1, 4, 5, 9)]
    with engine.begin() as c:
        c.execute(
            table.update()
            .where(table.c.prediction_id.in_(labelled_ids))
            .values(label=1, outcome_cost=7.0)
        )
    with session_factory() as s:
        log = PredictionLog(s).columns(model_id, 1, None)  # classes read from the log
        newest = PredictionLog(s).columns(model_id, 1, 2, latest=4)
        only = PredictionLog(s).columns(model_id, 1, 2, labelled=True)
    assert len(log) == 15 and log.n_classes == 2
    at = [(now - timedelta(minutes=m)).timestamp() for m in (30, 1)]
    assert log.created_at.tolist() == pytest.approx([at[0]] * n + [at[1]] * 3, abs=1e-5)
    assert log.label.tolist() == [1 if i in (1, 4, 5, 9) else -1 for i in range(n)] + [-1] * 3
    assert np.array_equal(log.costs, per_row[[1, 4, 5, 9]])
    np.testing.assert_array_equal(log.probabilities[:n], entry.proba)
    assert np.isnan(log.outcome_cost[0]) and log.outcome_cost[1] == 7.0
    part = log.take(np.arange(15) >= 5)  # rows 5.. : labelled 5 and 9
    assert np.array_equal(part.costs, per_row[[5, 9]]) and part.label[:5].tolist() == [
        1,
        -1,
        -1,
        -1,
        1,
    ]
    assert np.array_equal(newest.decision, log.decision[-4:])
    assert np.all(np.diff(newest.created_at) >= 0)
    assert len(only) == 4 and np.array_equal(only.costs, per_row[[1, 4, 5, 9]])


def test_a_batch_of_many_requests_gives_the_columns_of_each_request_in_turn() -> None:
    """columns_of concatenates runs of requests of one layout: the result is exactly
    what one call per request gives, across runs of different layouts (per-row and
    per-request costs, priors or none, NaN, features, thresholds or none)."""
    rng = np.random.default_rng(3)
    at = datetime(2026, 11, 25, 7, 30, 1, 123456, tzinfo=UTC)

    def request(n: int, k: int, row_costs: bool, features: bool, priors: bool) -> LogEntry:
        proba = rng.dirichlet(np.ones(k), size=n)
        return LogEntry(
            model_id=1 + n % 2,
            version_id=3,
            version=2,
            alias="a" if n % 3 else None,
            created_at=at + timedelta(microseconds=int(rng.integers(10**6))),
            ids=new_ids(n),
            raw=proba[:, 1] if k == 2 else proba * 2,
            proba=proba,
            decision=proba.argmax(axis=1),
            threshold=np.full(n, 0.25) if k == 2 else None,
            expected_cost=np.where(rng.uniform(size=n) < 0.2, np.nan, proba.min(axis=1)),
            cost_setting="row_costs" if row_costs else "costs",
            costs=rng.uniform(size=(n, k, k)) if row_costs else np.full((k, k), float(n)),
            priors=[0.5, 0.5] if priors and k == 2 else None,
            features=rng.normal(size=(n, 2)) if features else None,
        )

    entries = [
        request(int(n), k, rc, f, p)
        for n, k, rc, f, p in [
            (1, 2, False, False, False),
            (1, 2, False, False, False),
            (3, 2, False, False, True),
            (1, 2, False, False, True),
            (2, 2, True, False, False),
            (1, 3, False, True, False),
            (4, 3, False, True, False),
            (1, 2, False, False, False),
        ]
    ]
    one_by_one: dict[str, list[object]] = {}
    for e in entries:
        for column, values in columns_of([e]).items():
            one_by_one.setdefault(column, []).extend(values)
    assert columns_of(entries) == one_by_one
    assert len(one_by_one["prediction_id"]) == 14


def test_rows_round_trip_exactly(engine: Engine) -> None:
    """What the batched insert stores is what was served: per-class raw scores and
    probabilities, per-row cost matrices, features, NaN as null, one time per request,
    a client id needing JSON escapes."""
    model_id, version_id = _registry_with_a_version(engine)
    at = datetime(2026, 11, 25, 7, 30, 1, 123456, tzinfo=UTC)
    n = 3
    proba = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]])
    costs = np.stack([np.ones((3, 3)) - np.eye(3) * (i + 1) for i in range(n)])
    weird = 'a"b\\c\u00e9\n'
    rows = LogEntry(
        model_id=model_id,
        version_id=version_id,
        version=1,
        alias="production",
        created_at=at,
        ids=[weird, "x-1", "x-2"],
        raw=proba * 2,
        proba=proba,
        decision=np.array([2, 2, 0]),
        threshold=None,
        expected_cost=np.array([0.5, np.nan, 0.25]),
        cost_setting="row_costs",
        costs=costs,
        priors=[0.2, 0.3, 0.5],
        features=np.array([[1.0, np.nan], [2.5, 3.0], [-1.0, 0.0]]),
    )
    other = _entry(2, model_id, version_id, at=at)  # a second request in the same batch
    writer = PredictionLogWriter(engine)
    writer.submit(rows)
    writer.submit(other)
    writer.write_pending()
    assert (writer.stats.written, writer.stats.failed) == (5, 0)
    with Session(engine) as s:
        got = {
            r.prediction_id: r
            for r in s.scalars(select(LoggedPrediction).order_by(LoggedPrediction.id))
        }
    assert list(got)[:3] == [weird, "x-1", "x-2"]
    for i, pid in enumerate([weird, "x-1", "x-2"]):
        r = got[pid]
        stored = r.created_at if r.created_at.tzinfo else r.created_at.replace(tzinfo=UTC)
        assert stored.timestamp() == pytest.approx(at.timestamp(), abs=1e-6)  # UTC kept
        assert (r.alias, r.version, r.cost_setting) == ("production", 1, "row_costs")
        assert r.raw_score == (proba[i] * 2).tolist()
        assert r.probabilities == proba[i].tolist()
        assert r.decision == [2, 2, 0][i] and r.threshold is None
        assert r.costs == costs[i].tolist() and r.priors == [0.2, 0.3, 0.5]
    assert [got[p].expected_cost for p in ["x-1", weird, "x-2"]] == [None, 0.5, 0.25]
    assert got[weird].features == [1.0, None] and got["x-2"].features == [-1.0, 0.0]
    second = [got[p] for p in other.ids]
    assert [r.raw_score for r in second] == other.raw.tolist()  # type: ignore[union-attr]
    assert all(r.costs == [[0.0, 1.0], [1.0, 0.0]] and r.priors is None for r in second)
    assert all(r.features is None and r.alias is None for r in second)


def test_a_batch_over_several_statements_keeps_every_row_and_skips_logged_ids(
    engine: Engine,
) -> None:
    """More rows than one SQLite statement holds (SQLITE_ROWS_PER_INSERT): every row is
    stored with its own values, in order; ids already logged, and an id repeated within
    the batch across a statement boundary, are skipped and not counted as written."""
    from app.registry.prediction_log import SQLITE_ROWS_PER_INSERT

    model_id, version_id = _registry_with_a_version(engine)
    first = _entry(5, model_id, version_id)
    writer = PredictionLogWriter(engine)
    writer.submit(first)
    writer.write_pending()
    n = 2 * SQLITE_ROWS_PER_INSERT + 37
    big = _entry(n, model_id, version_id)
    ids = list(big.ids)
    ids[3] = first.ids[0]  # logged before
    ids[SQLITE_ROWS_PER_INSERT + 1] = ids[2]  # a repeat in the next statement
    big = LogEntry(**{**big.__dict__, "ids": ids})
    writer.submit(big)
    writer.write_pending()
    assert (writer.stats.written, writer.stats.duplicate) == (5 + n - 2, 2)
    with Session(engine) as s:
        got = {
            r.prediction_id: r
            for r in s.scalars(select(LoggedPrediction).order_by(LoggedPrediction.id))
        }
    assert len(got) == 5 + n - 2
    p1 = big.proba[:, 1]  # type: ignore[index]
    for i in (0, 2, SQLITE_ROWS_PER_INSERT - 1, SQLITE_ROWS_PER_INSERT, n - 1):
        r = got[ids[i]]
        assert r.probabilities == [1 - p1[i], p1[i]] and r.raw_score == p1[i]
        assert r.decision == int(p1[i] >= 0.5) and r.expected_cost == min(p1[i], 1 - p1[i])
    assert got[first.ids[0]].raw_score == first.raw[0]  # type: ignore[index]  # first stands


def test_log_times_format_every_time_as_log_time_does() -> None:
    """The per-second memo of log_times gives exactly log_time's text (UTC), across
    second, day and zone boundaries."""
    from datetime import timezone

    from app.registry.prediction_log import log_time
    from app.services.feedback.prediction_log import log_times

    start = datetime(2026, 12, 31, 23, 59, 58, 999_999, tzinfo=UTC)
    times = [start + timedelta(microseconds=37 * i) for i in range(80_000)]
    times.append(datetime(2026, 1, 1, 0, 0, 0, 5, tzinfo=timezone(timedelta(hours=5))))
    assert log_times(times) == [log_time(t) for t in times]


def test_new_ids_start_with_the_time_so_later_requests_sort_after_earlier_ones() -> None:
    first = new_ids(3)
    time.sleep(0.003)
    later = [new_ids(1)[0] for _ in range(2000)]
    assert [i[-2:] for i in first] == ["-0", "-1", "-2"]
    assert len({i[:32] for i in first}) == 1  # one draw per request
    assert all(re.fullmatch(r"[0-9a-f]{32}-\d+", i) for i in first + later)
    # the time prefix: later requests sort after earlier ones and carry today's time
    assert all(first[0] < i for i in later)
    assert abs(int(first[0][:11], 16) / 1000 - time.time()) < 60
    assert len(set(later)) == len(later)  # distinct within the same milliseconds
