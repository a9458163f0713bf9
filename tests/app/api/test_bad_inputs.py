"""Bad input gets a clear 4xx in one error shape, and loses nothing."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.app.api.conftest import dataset, train_body
from tests.app.conftest import refused

ROW = [0.1, 0.2, 0.3, 0.4]

# (name, method, path, json body, status, code, words the detail must contain)
PREDICT_CASES: list[tuple[str, dict[str, Any], int, str, str]] = [
    (
        "wrong feature count",
        {"instances": [[1, 2, 3]]},
        422,
        "INVALID_ARGUMENT",
        "instances[0]: expected 4 features, got 3",
    ),
    (
        "ragged rows",
        {"instances": [ROW, [1, 2]]},
        422,
        "INVALID_ARGUMENT",
        "instances[1]: expected 4 features, got 2",
    ),
    ("empty rows", {"instances": []}, 422, "INVALID_ARGUMENT", "at least one row"),
    ("string feature", {"instances": [[1, "x", 3, 4]]}, 422, "INVALID_ARGUMENT", "instances[0][1]"),
    (
        "missing feature in records",
        {"records": [{"a": 1, "b": 2, "c": 3}]},
        422,
        "INVALID_ARGUMENT",
        "records[0]: missing feature(s) ['d']",
    ),
    (
        "unknown feature in records",
        {"records": [{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}]},
        422,
        "INVALID_ARGUMENT",
        "records[0]: unknown feature(s) ['e']",
    ),
    (
        "both instances and records",
        {"instances": [ROW], "records": [{"a": 1}]},
        422,
        "INVALID_ARGUMENT",
        "exactly one of instances or records",
    ),
    (
        "negative cost",
        {"instances": [ROW], "costs": {"c_fp": -1, "c_fn": 2}},
        422,
        "INVALID_ARGUMENT",
        "c_fp",
    ),
    (
        "degenerate costs",
        {"instances": [ROW], "costs": {"c_fp": 0, "c_fn": 0}},
        422,
        "INVALID_ARGUMENT",
        "costs",
    ),
    (
        "missing c_fn",
        {"instances": [ROW], "costs": {"c_fp": 1}},
        422,
        "INVALID_ARGUMENT",
        "costs.c_fn",
    ),
    (
        "unknown cost key",
        {"instances": [ROW], "costs": {"c_fp": 1, "c_fn": 1, "x": 1}},
        422,
        "INVALID_ARGUMENT",
        "costs.x",
    ),
    (
        "cost matrix shape",
        {"instances": [ROW], "cost_matrix": [[0, 1, 2], [1, 0, 2]]},
        422,
        "INVALID_ARGUMENT",
        "cost_matrix",
    ),
    (
        "two cost settings",
        {"instances": [ROW], "costs": {"c_fp": 1, "c_fn": 1}, "cost_matrix": [[0, 1], [1, 0]]},
        422,
        "INVALID_ARGUMENT",
        "only one of costs, cost_matrix, row_costs",
    ),
    (
        "row costs count",
        {"instances": [ROW, ROW], "row_costs": [{"c_fp": 1, "c_fn": 2}]},
        422,
        "INVALID_ARGUMENT",
        "row_costs: expected one cost setting per row (2), got 1",
    ),
    (
        "bad row cost",
        {"instances": [ROW, ROW], "row_costs": [{"c_fp": 1, "c_fn": 2}, {"c_fp": -3, "c_fn": 2}]},
        422,
        "INVALID_ARGUMENT",
        "row 1",
    ),
    (
        "priors not summing to one",
        {"instances": [ROW], "priors": [0.5, 0.6]},
        422,
        "INVALID_ARGUMENT",
        "priors",
    ),
    (
        "priors wrong length",
        {"instances": [ROW], "priors": [1.0]},
        422,
        "INVALID_ARGUMENT",
        "priors",
    ),
    ("unknown version", {"instances": [ROW], "version": 7}, 404, "NOT_FOUND", "version 7"),
    ("unknown alias", {"instances": [ROW], "alias": "staging"}, 404, "NOT_FOUND", "staging"),
    ("too many rows", {"instances": [ROW] * 1001}, 413, "PAYLOAD_TOO_LARGE", "1000"),
]


@pytest.mark.parametrize(
    ("case", "body", "status", "code", "words"), PREDICT_CASES, ids=[c[0] for c in PREDICT_CASES]
)
def test_bad_predict_requests(
    client: TestClient,
    trained: dict[str, Any],
    case: str,
    body: dict[str, Any],
    status: int,
    code: str,
    words: str,
) -> None:
    r = client.post("/v1/models/fraud/predict", json=body)
    refused(r, status, code=code, detail=words)


def _train(client: TestClient, **overrides: Any) -> Any:
    return client.post("/v1/models/m1/versions", json=train_body(**overrides))


TRAIN_CASES: list[tuple[str, dict[str, Any], int, str, str]] = [
    ("single class", {"labels": [0] * 300}, 422, "INVALID_ARGUMENT", "two classes"),
    ("label count", {"labels": [0, 1]}, 422, "INVALID_ARGUMENT", "one label per row"),
    (
        "unknown algorithm",
        {"algorithm": "xgboost"},
        422,
        "INVALID_ARGUMENT",
        "algorithm: unknown 'xgboost'; expected one of [",
    ),
    ("unknown parameter", {"learning_rate": 0.1}, 422, "INVALID_ARGUMENT", "learning_rate"),
    (
        "unknown algorithm parameter",
        {"params": {"c_fp": 2}},
        422,
        "INVALID_ARGUMENT",
        "unknown parameter(s) ['c_fp'] for algorithm 'adaboost'",
    ),
    ("bad calibration", {"calibration": "sigmoidal"}, 422, "INVALID_ARGUMENT", "calibration"),
    ("zero rounds", {"n_estimators": 0}, 422, "INVALID_ARGUMENT", "n_estimators"),
    ("rounds over limit", {"n_estimators": 501}, 422, "INVALID_ARGUMENT", "500"),
    (
        "duplicate feature names",
        {"feature_names": ["a", "a", "c", "d"]},
        422,
        "INVALID_ARGUMENT",
        "feature_names[1]: duplicate name 'a'",
    ),
    ("feature name count", {"feature_names": ["a"]}, 422, "INVALID_ARGUMENT", "expected 4 names"),
    (  # 4 rows per class: too few for the default 5-fold cross-fitting
        "too few rows for the splits",
        {"features": dataset(8)[0].tolist(), "labels": dataset(8)[1].tolist()},
        422,
        "INVALID_ARGUMENT",
        "rows of each class",
    ),
    (  # 6 rows per class: enough to cross-fit, too few to also hold out 20%
        "too few rows for an explicit evaluation split",
        {
            "features": dataset(12)[0].tolist(),
            "labels": dataset(12)[1].tolist(),
            "evaluation_fraction": 0.2,
        },
        422,
        "INVALID_ARGUMENT",
        "evaluation split of 0.2",
    ),
    ("mixed label types", {"labels": [0, "1"] * 150}, 422, "INVALID_ARGUMENT", "one type"),
    (
        "too many rows",
        {"features": [ROW] * 5001, "labels": [0, 1] * 2500 + [0]},
        413,
        "PAYLOAD_TOO_LARGE",
        "5000",
    ),
]


@pytest.mark.parametrize(
    ("case", "overrides", "status", "code", "words"), TRAIN_CASES, ids=[c[0] for c in TRAIN_CASES]
)
def test_bad_training_requests_register_nothing(
    client: TestClient,
    case: str,
    overrides: dict[str, Any],
    status: int,
    code: str,
    words: str,
) -> None:
    r = _train(client, **overrides)
    assert r.status_code == status, r.text
    assert r.json()["code"] == code
    assert words in r.json()["detail"], r.json()["detail"]
    assert client.get("/v1/models/m1").status_code == 404  # nothing half-written
    assert client.get("/v1/models").json()["total"] == 0


def test_malformed_json_and_media_types(client: TestClient, trained: dict[str, Any]) -> None:
    r = client.post(
        "/v1/models/fraud/predict",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert r.status_code in (400, 422) and r.json()["code"] in (
        "MALFORMED_REQUEST",
        "INVALID_ARGUMENT",
    )
    r = client.post(
        "/v1/models/m1/versions", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert r.status_code == 400 and r.json()["code"] == "MALFORMED_REQUEST"
    r = client.post(
        "/v1/models/m1/versions", content=b"a,b\n1,2", headers={"content-type": "text/csv"}
    )
    assert r.status_code == 415 and r.json()["code"] == "UNSUPPORTED_MEDIA_TYPE"


@pytest.mark.parametrize(
    ("csv", "words"),
    [
        ("a,b,label\n1,2,0\n1,x,1\n", "CSV line 3, column 'b'"),
        ("a,b,label\n1,2,0\n1,2\n", "CSV line 3: expected 3 fields, got 2"),
        ("a,b,target\n1,2,0\n", "no label column 'label'"),
        ("a,a,label\n1,2,0\n", "duplicate name 'a'"),
        ("", "header row is required"),
    ],
)
def test_bad_csv_uploads(client: TestClient, csv: str, words: str) -> None:
    r = client.post("/v1/models/m1/versions", files={"file": ("t.csv", csv.encode(), "text/csv")})
    assert r.status_code == 422, r.text
    assert words in r.json()["detail"]
    assert client.get("/v1/models/m1").status_code == 404


def test_unknown_things_are_404(client: TestClient, trained: dict[str, Any]) -> None:
    for path in ("/v1/models/nope", "/v1/models/nope/versions", "/v1/models/fraud/versions/9"):
        r = client.get(path)
        assert r.status_code == 404 and r.json()["code"] == "NOT_FOUND", path
    r = client.put("/v1/models/fraud/aliases/production", json={"version": 9})
    assert r.status_code == 404
    assert client.delete("/v1/models/fraud/aliases/none").status_code == 404
    r = client.get("/v1/models/bad name!")
    assert r.status_code == 422 and r.json()["field"] == "name"


def test_body_over_limit_is_413(client: TestClient) -> None:
    r = client.post(
        "/v1/models/m1/versions",
        content=b"x" * 2_000_001,
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 413 and r.json()["code"] == "PAYLOAD_TOO_LARGE"
    assert "2000000" in r.json()["detail"]
