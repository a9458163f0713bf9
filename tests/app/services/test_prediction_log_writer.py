"""The prediction log writer (bounded queue, retries, drops) and the log's upkeep."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db import make_engine, upgrade_to_head
from app.registry.orm import LoggedPrediction, ModelVersion, RegisteredModel
from app.services.log_maintenance import LogMaintenance
from app.services.monitoring import Monitoring
from app.services.prediction_log import LogEntry, PredictionLogWriter, new_ids


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
    writer = PredictionLogWriter(engine, max_rows=5)  # not started: nothing drains it
    started = time.perf_counter()
    assert writer.submit(_entry(3))
    assert not writer.submit(_entry(3))  # 3 + 3 > 5: dropped at once
    assert writer.submit(_entry(2))
    assert time.perf_counter() - started < 0.5
    assert (writer.stats.queued, writer.stats.dropped) == (5, 3)


def test_rows_wait_while_the_database_is_down_then_are_written(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'late.db'}"
    engine = make_engine(url)  # no schema yet: every insert fails like a missing database
    writer = PredictionLogWriter(engine, flush_seconds=0.01, retry_seconds=0.05)
    writer.start()
    try:
        assert writer.submit(_entry(4))
        time.sleep(0.3)
        assert writer.stats.queued == 4 and writer.stats.written == 0  # kept, retried
        upgrade_to_head(url)
        model_id, version_id = _registry_with_a_version(engine)
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
