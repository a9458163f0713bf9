"""Pending outcomes meet their log rows: validated at the join, and never missed when the
report and the log insert race (both orders, concurrent transactions on PostgreSQL)."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from app.registry.orm import LoggedPrediction, PendingOutcome
from app.registry.pending_outcomes import PendingOutcomes
from app.registry.prediction_log import insert_rows
from app.services.feedback.outcomes import Outcome, Outcomes
from app.services.feedback.prediction_log import PredictionLogWriter, columns_of
from tests.app.services.test_prediction_log_writer import _entry, _registry_with_a_version


def _label(engine: Engine, pid: str) -> int | None:
    with Session(engine) as s:
        return s.scalar(select(LoggedPrediction.label).where(LoggedPrediction.prediction_id == pid))


def _pending(engine: Engine) -> list[str]:
    with Session(engine) as s:
        return list(s.scalars(select(PendingOutcome.prediction_id)))


def _named_entry(model_id: int, version_id: int, ids: list[str]):  # type: ignore[no-untyped-def]
    entry = _entry(len(ids), model_id, version_id)
    return type(entry)(**{**entry.__dict__, "ids": ids})


def test_a_label_not_of_the_predicting_version_is_discarded_and_counted(
    engine: Engine,
) -> None:
    model_id, version_id = _registry_with_a_version(engine)  # classes [0, 1]
    with Session(engine) as s, s.begin():
        PendingOutcomes(s).keep(model_id, [("z", 2, None), ("ok", 1, 4.0)])
    writer = PredictionLogWriter(engine)
    writer.submit(_named_entry(model_id, version_id, ["z", "ok"]))
    writer.write_pending()  # insert, then join (in this thread)
    assert (writer.pending.joined, writer.pending.invalid) == (1, 1)
    assert _label(engine, "z") is None and _label(engine, "ok") == 1
    assert _pending(engine) == []


def _postgres_only(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer at a time: these transactions cannot overlap")


def test_report_first_committed_after_the_writer_looked(engine: Engine) -> None:
    """The outcome's transaction is still open while the writer inserts and joins (the
    writer sees no pending row); it commits after: its own join, right after its commit,
    finds the row."""
    _postgres_only(engine)
    model_id, version_id = _registry_with_a_version(engine)
    report = Session(engine)
    report.begin()
    assert PendingOutcomes(report).keep(model_id, [("r1", 1, None)]) == {"r1"}
    writer = PredictionLogWriter(engine)
    writer.submit(_named_entry(model_id, version_id, ["r1"]))
    writer.write_pending()
    assert writer.stats.written == 1 and writer.pending.joined == 0
    assert _label(engine, "r1") is None  # the writer could not see it
    report.commit()
    report.close()
    with Session(engine) as s, s.begin():  # what Outcomes does after its commit
        counts = PendingOutcomes(s).join([model_id], ["r1"])
    assert counts.joined == 1 and _label(engine, "r1") == 1 and _pending(engine) == []


def test_insert_first_committed_after_the_report_looked(
    engine: Engine, session_factory: sessionmaker[Session]
) -> None:
    """The log insert's transaction is open while the outcome is reported (pending: the
    row is not visible, and the report's join finds nothing); it commits after: the
    writer's join, right after its commit, finds the pending outcome."""
    _postgres_only(engine)
    model_id, version_id = _registry_with_a_version(engine)
    insert = engine.connect()
    transaction = insert.begin()
    insert_rows(insert, columns_of([_named_entry(model_id, version_id, ["w1"])]))
    outcomes = Outcomes(session_factory)
    (result,) = outcomes.record("m", [Outcome("w1", 0, 1.5)]).results
    assert result.status == "pending"
    transaction.commit()
    insert.close()
    assert _label(engine, "w1") is None
    writer = PredictionLogWriter(engine)
    writer._join_pending({model_id})  # what the writer does after each batch's commit
    assert writer.pending.joined == 1 and _label(engine, "w1") == 0 and _pending(engine) == []
