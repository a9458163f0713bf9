"""A registry for benchmarks of the prediction log: migrated, with one placeholder version.

The log's benchmarks write rows for a version without training one: ``one_version(url)``
migrates the database at ``url`` to head and registers model ``m`` with a version 1 whose
artifact is a placeholder (no model is ever loaded from it); ``zero_one_entry`` makes
the rows they log for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from app.db import make_engine, upgrade_to_head
from app.registry.orm import ModelVersion, RegisteredModel
from app.services.feedback.prediction_log import LogEntry


def one_version(url: str) -> tuple[Engine, int, int]:
    """``(engine, model_id, version_id)`` of a fresh registry at ``url`` holding ``m`` v1."""
    upgrade_to_head(url)
    engine = make_engine(url)
    with Session(engine) as s, s.begin():
        m = RegisteredModel(name="m")
        s.add(m)
        s.flush()
        v = ModelVersion(model_id=m.id, version=1, algorithm="adaboost", training_seconds=0.0,
                         artifact_sha256="0" * 64, artifact_size=0, data={"classes": [0, 1]})  # fmt: skip
        s.add(v)
        s.flush()
        return engine, m.id, v.id


def zero_one_entry(model_id: int, version_id: int, ids: Sequence[str], p1: np.ndarray) -> LogEntry:
    """The log entry of a two-class request of version 1 (no alias, now) with ``p1`` the
    probability of class 1 of each row: decided at 1/2 under zero-one costs."""
    return LogEntry(
        model_id=model_id,
        version_id=version_id,
        version=1,
        alias=None,
        created_at=datetime.now(UTC),
        ids=ids,
        raw=p1,
        proba=np.column_stack([1 - p1, p1]),
        decision=(p1 >= 0.5).astype(np.intp),
        threshold=np.full(len(ids), 0.5),
        expected_cost=np.minimum(p1, 1 - p1),
        cost_setting="zero_one",
        costs=np.array([[0.0, 1.0], [1.0, 0.0]]),
        priors=None,
        features=None,
    )
