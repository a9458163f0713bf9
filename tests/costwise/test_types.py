"""The client's answer types mirror the service's response schemas field for field.

The client may not import the service (it is installed and used on its own), so its
dataclasses restate the schemas; this test keeps the two from drifting apart.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel

from app.api import schemas
from app.api.routes import keys
from costwise import types
from costwise.types import Job, from_json

PAIRS: list[tuple[type, type[BaseModel]]] = [
    (types.Health, schemas.HealthResponse),
    (types.Model, schemas.ModelOut),
    (types.ModelPage, schemas.ModelListResponse),
    (types.Version, schemas.VersionOut),
    (types.Alias, schemas.AliasOut),
    (types.Prediction, schemas.PredictionOut),
    (types.Explanation, schemas.ExplanationOut),
    (types.Interval, schemas.IntervalOut),
    (types.PredictResponse, schemas.PredictResponse),
    (types.Evaluation, schemas.EvaluateResponse),
    (types.Provenance, schemas.Provenance),
    (types.Calibration, schemas.CalibrationOut),
    (types.AppliedCosts, schemas.AppliedCostsOut),
    (types.RowCostsSummary, schemas.RowCostsSummary),
    (types.Algorithm, schemas.AlgorithmOut),
    (types.AlgorithmParam, schemas.ParamOut),
    (types.ApiKey, keys.KeyOut),
    (types.CreatedKey, keys.KeyCreated),
    (types.Job, schemas.JobOut),
    (types.JobError, schemas.JobErrorOut),
    (types.JobPage, schemas.JobListResponse),
    (types.Plot, schemas.PlotInfoOut),
    (types.WhatIf, schemas.WhatIfResponse),
    (types.PriorEstimate, schemas.PriorEstimateResponse),
]


@pytest.mark.parametrize(("client_type", "schema"), PAIRS, ids=lambda t: t.__name__)
def test_client_type_has_the_fields_of_the_response_schema(
    client_type: type, schema: type[BaseModel]
) -> None:
    mine = {f.name for f in fields(client_type)} - {"extra"}
    assert mine == set(schema.model_fields)


def test_unknown_fields_are_kept_in_extra_and_nested_types_are_built() -> None:
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    body = {
        "id": "j1", "model": "m", "status": "failed", "phase": "boosting", "done": 3,
        "total": 10, "progress": 0.3, "attempts": 1, "max_attempts": 2,
        "cancel_requested": False, "worker": None, "created_at": now.isoformat(),
        "started_at": "2026-01-02T03:04:05Z", "finished_at": None, "heartbeat_at": None,
        "timings": {"boosting": 1.5}, "version": None, "version_url": None,
        "error": {"code": "TRAINING_FAILED", "detail": "boom", "field": None},
        "new_in_a_later_server": 42,
    }  # fmt: skip
    job = from_json(Job, body)
    assert job.created_at == now and job.started_at == now
    assert job.error is not None and job.error.code == "TRAINING_FAILED"
    assert job.extra == {"new_in_a_later_server": 42} and job.finished
    with pytest.raises(TypeError):
        from_json(Job, {"id": "j1"})  # required fields missing


def test_a_prediction_with_its_explanation_is_built() -> None:
    row = {
        "id": "r1", "decision": 1, "probabilities": [0.4, 0.6], "threshold": 0.5,
        "expected_cost": 0.4,
        "explanation": {
            "bias": 0.5, "contributions": {"a": 0.2, "b": -0.05}, "score": 0.65,
            "probability": 0.6, "expected_cost_margin": 0.2,
        },
    }  # fmt: skip
    p = from_json(types.Prediction, row)
    assert isinstance(p.explanation, types.Explanation)
    assert p.explanation.contributions == {"a": 0.2, "b": -0.05}
    assert from_json(types.Prediction, {**row, "explanation": None}).explanation is None
