"""A registry for benchmarks of the prediction log: migrated, with one placeholder version.

The log's benchmarks write rows for a version without training one: ``one_version(url)``
migrates the database at ``url`` to head and registers model ``m`` with a version 1 whose
artifact is a placeholder (no model is ever loaded from it).
"""

from __future__ import annotations

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from app.db import make_engine, upgrade_to_head
from app.registry.orm import ModelVersion, RegisteredModel


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
