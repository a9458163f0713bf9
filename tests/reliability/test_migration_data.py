"""Proof 6 (with data): upgrading a registry that already holds models changes nothing.

Models are trained and registered with today's service layer, then the registry is
downgraded to revision 0001 (the schema before API keys, 0002): what a registry of the
first release holds (today's ORM maps columns of later revisions, e.g. the prediction
log's switch of 0004, so it cannot write into a 0001 schema itself). Every row of
0001's tables (the columns 0001 has), the artifacts (digest of the stored bytes) and predictions under several
cost settings are recorded. Then the database is upgraded to head: every row and
artifact is identical, and the real app serves every prediction (probabilities,
decisions, thresholds, expected costs) identically. Finally a downgrade back to 0001 and a second upgrade keep the
data identical again. Runs on SQLite and PostgreSQL.

What this does not cover (said in docs/reliability.md): the models were registered by
today's service code on the old schema, not by an old release of the code.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from alembic import command
from fastapi.testclient import TestClient
from sqlalchemy import inspect, text

from app.api.bodies.parsing import Limits, predict_input
from app.api.main import create_app
from app.api.responses import FastJSONResponse
from app.api.routes.predict import _render
from app.api.schemas import PredictRequest
from app.db import alembic_config, downgrade, make_engine, make_session_factory, upgrade_to_head
from app.registry.repository import Registry
from app.services.prediction.predictor import Predictor
from app.services.prediction.request import DecisionRequest
from app.services.training import Trainer, TrainingData, TrainingSpec
from app.settings import Settings
from tests.app.api.conftest import FEATURES, dataset

OLD = "0001"
PROBE = dataset(n=300, seed=5)[0][:25]
COSTS: list[dict[str, Any]] = [
    {},
    {"costs": {"c_fp": 1.0, "c_fn": 20.0}},
    {"cost_matrix": [[0.0, 5.0], [1.0, 0.0]]},
    {"priors": [0.9, 0.1], "costs": {"c_fp": 1.0, "c_fn": 3.0}},
]
# Trained without an evaluation split (no plot rows), as versions from before plots were.
MODELS: list[tuple[str, TrainingSpec, int]] = [
    ("fraud", TrainingSpec(n_estimators=30, calibration="platt", evaluation_fraction=0.0), 0),
    ("fraud", TrainingSpec(n_estimators=20, calibration="isotonic", evaluation_fraction=0.0), 1),
    (
        "churn",
        TrainingSpec(n_estimators=25, weak_learner="tree", max_depth=2, evaluation_fraction=0.0),
        2,
    ),
]


def _request(setting: dict[str, Any], **choice: Any) -> DecisionRequest:
    """The request the API builds from a body of the probe rows with these cost members."""
    body = json.dumps({"instances": PROBE.tolist(), **setting, **choice}).encode()
    return predict_input(body, PredictRequest, Limits(100_000, 10_000, 20_000_000, 256))


OLD_TABLES = ("registered_models", "model_versions", "aliases")


def _old_columns(url: str) -> dict[str, list[str]]:
    """The columns of 0001's tables (call it while the registry is at 0001)."""
    engine = make_engine(url)
    try:
        found = inspect(engine)
        return {table: [c["name"] for c in found.get_columns(table)] for table in OLD_TABLES}
    finally:
        engine.dispose()


def _rows(url: str, columns: dict[str, list[str]]) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of 0001's tables (their 0001 columns), ordered by id."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return {
                table: [
                    tuple(str(v) for v in row)
                    for row in conn.execute(
                        text(f"SELECT {', '.join(columns[table])} FROM {table} ORDER BY 1, 2")
                    )
                ]
                for table in OLD_TABLES
            }
    finally:
        engine.dispose()


def _without_ids(answer: dict[str, Any]) -> dict[str, Any]:
    """A predict answer but the rows' ids (each served request's rows get ids of their own)."""
    return {**answer, "predictions": [{**p, "id": None} for p in answer["predictions"]]}


def _artifacts(url: str) -> dict[int, str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT version_id, data FROM artifacts")).all()
    finally:
        engine.dispose()
    return {r.version_id: hashlib.sha256(bytes(r.data)).hexdigest() for r in rows}


@pytest.fixture
def old_registry(empty_database_url: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """A registry at revision 0001 holding three versions and an alias, with the
    predictions it gave before any upgrade."""
    url = empty_database_url
    command.upgrade(alembic_config(url), "head")
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    for i, (name, spec, seed) in enumerate(MODELS):
        X, y = dataset(n=300, seed=seed)
        Trainer(sessions).register(name, TrainingData(X, y, FEATURES), spec)
        if i == 0:
            with sessions.begin() as s:
                Registry(s).set_alias("fraud", "production", 1)
    predictor = Predictor(make_session_factory(engine, readonly=True))
    before: dict[str, Any] = {}
    for name, version, alias in [("fraud", 1, None), ("fraud", 2, None), ("churn", 1, None),
                                 ("fraud", None, "production")]:  # fmt: skip
        for k, setting in enumerate(COSTS):
            choice = {"version": version} if version else {"alias": alias}
            p = predictor.predict(name, _request(setting, **choice))
            before[f"{name} {version} {alias} {k}"] = json.loads(
                bytes(FastJSONResponse(_render(p)).body)
            )
    engine.dispose()
    downgrade(url, OLD)
    yield url, before


def _serve_and_compare(url: str, before: dict[str, Any], listing: Any = None) -> Any:
    with TestClient(create_app(Settings(database_url=url))) as client:
        for key, expected in before.items():
            name, version, alias, k = key.split(" ")
            body: dict[str, Any] = {"instances": PROBE.tolist(), **COSTS[int(k)]}
            if version != "None":
                body["version"] = int(version)
            if alias != "None":
                body["alias"] = alias
            r = client.post(f"/v1/models/{name}/predict", json=body)
            assert r.status_code == 200, r.text
            assert _without_ids(r.json()) == _without_ids(expected), key
        models = client.get("/v1/models").json()
        versions = {m: client.get(f"/v1/models/{m}/versions").json() for m in ("fraud", "churn")}
        for m in models["models"]:  # the latest version etc. are identical, not the clock
            m.pop("updated_at", None)
        snapshot = {"models": models, "versions": versions}
    if listing is not None:
        assert snapshot == listing
    return snapshot


def test_upgrade_keeps_models_and_predictions_identical(
    old_registry: tuple[str, dict[str, Any]],
) -> None:
    url, before = old_registry
    columns = _old_columns(url)
    artifacts, rows = _artifacts(url), _rows(url, columns)
    assert len(artifacts) == 3 and len(rows["model_versions"]) == 3
    upgrade_to_head(url)
    assert _rows(url, columns) == rows  # every old column of every row of the old tables
    listing = _serve_and_compare(url, before)
    assert listing["models"]["total"] == 2
    assert [v["version"] for v in listing["versions"]["fraud"]["versions"]] == [2, 1]
    assert _artifacts(url) == artifacts
    downgrade(url, OLD)  # and back: the data survive a round trip too
    assert _artifacts(url) == artifacts
    upgrade_to_head(url)
    _serve_and_compare(url, before, listing)
    assert _artifacts(url) == artifacts
    assert _rows(url, columns) == rows
    assert np.isfinite(PROBE).all()
