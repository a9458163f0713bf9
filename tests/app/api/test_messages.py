"""Messages that say what went wrong in the user's terms: the field, the row, the job."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.registry.orm import TrainingJob
from tests.app.api.conftest import dataset

ROW = [0.1, 0.2, 0.3, 0.4]


def test_three_classes_with_only_n_estimators_says_which_parameter_chose_adaboost(
    client: TestClient,
) -> None:
    X, _ = dataset(90)
    body = {"features": X.tolist(), "labels": [0, 1, 2] * 30, "n_estimators": 10}
    r = client.post("/v1/models/three/versions", json=body)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert "algorithm 'adaboost' needs exactly two classes, got 3 ([0, 1, 2])" in detail
    assert "chosen because n_estimators was given without an algorithm" in detail
    assert "'samme'" in detail and r.json()["field"] == "labels"
    named = client.post("/v1/models/three/versions", json={**body, "algorithm": "adaboost"})
    assert named.status_code == 422
    assert "chosen because" not in named.json()["detail"]  # the user named it


def test_a_class_too_small_for_the_folds_is_named_as_a_plain_value(client: TestClient) -> None:
    X, _ = dataset(12)
    r = client.post(
        "/v1/models/few/versions", json={"features": X.tolist(), "labels": [0] * 8 + [1] * 4}
    )
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert "class 1 has 4 rows" in detail and "np." not in detail, detail


def test_bad_json_in_the_params_form_field_names_the_field(client: TestClient) -> None:
    csv = "a,b,label\n" + "\n".join(f"{i % 7},{i % 5},{i % 2}" for i in range(40)) + "\n"
    r = client.post(
        "/v1/models/m1/versions",
        files={"file": ("t.csv", csv.encode(), "text/csv")},
        data={"params": '{"n_estimators": 10,'},
    )
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["field"] == "params" and body["detail"].startswith("params: not valid JSON")
    assert "request body" not in body["detail"]
    whole = client.post(
        "/v1/models/m1/versions", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert whole.json()["detail"].startswith("request body is not valid JSON")


def test_a_ragged_cost_matrix_names_the_row_and_the_expected_length(
    client: TestClient, trained: dict[str, Any]
) -> None:
    r = client.post(
        "/v1/models/fraud/predict", json={"instances": [ROW], "cost_matrix": [[0, 1], [5]]}
    )
    assert r.status_code == 422, r.text
    assert "row 1 has 1 entries, expected 2" in r.json()["detail"], r.json()


def test_predicting_while_the_first_training_job_is_queued_says_so(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    with session_factory.begin() as s:
        s.add(TrainingJob(id="job0123", model_name="late", status="queued", request={}))
    r = client.post("/v1/models/late/predict", json={"instances": [ROW]})
    assert r.status_code == 404, r.text
    detail = r.json()["detail"]
    assert "its first version is being trained (job job0123 is queued" in detail, detail
    other = client.post("/v1/models/never/predict", json={"instances": [ROW]}).json()
    assert other["detail"] == "model 'never' not found", json.dumps(other)
