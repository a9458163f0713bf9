"""Proof 2: a table of hostile inputs, each with its exact outcome, through the real app.

Every row is sent as a raw JSON body (so that the non-standard literals ``NaN``,
``Infinity`` and ``1e400`` reach the server exactly as a client could send them) to the
app built by the real factory on a fresh registry (SQLite, and PostgreSQL when
``COSTWISE_TEST_DATABASE_URL`` is set). The outcome is either a 4xx with the given error
code, or a 200 whose answer is checked: no NaN or infinity anywhere in the response, each
decision is ``classes[1]`` iff ``p1 >= threshold``, and the expected cost is
``sum_i p_i C[i][decision]``. Never a 500.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.settings import Settings
from models.decisions.rule import CostMatrix, decide
from tests.app.api.conftest import dataset, train_body

MAX_ROWS = 100_000


def one_row(extra: str = "") -> str:
    """A raw predict body with one valid row and ``extra`` members (raw JSON text)."""
    return '{"instances": [[0.1, 0.2, 0.3, 0.4]]' + (", " + extra if extra else "") + "}"


BIG = str(2**70)  # over every 32-bit registry integer
TRAIN = json.dumps(train_body())  # a valid training body, for extra members
PREDICT = "/v1/models/fraud/predict"
EVALUATE = "/v1/models/fraud/evaluate"

# (case, method, path, raw JSON body or None, status, code or None for a checked answer,
#  cost matrix the answer must agree with or None for 0-1 costs)
CASES: list[tuple[str, str, str, str | None, int, str | None, list[list[float]] | None]] = [
    ("NaN feature = missing", "POST", PREDICT, '{"instances": [[NaN, 0.2, 0.3, 0.4]]}', 200, None, None),
    ("+Infinity feature", "POST", PREDICT, '{"instances": [[Infinity, 0.2, 0.3, 0.4]]}', 422, "INVALID_ARGUMENT", None),
    ("-Infinity feature", "POST", PREDICT, '{"instances": [[0.1, -Infinity, 0.3, 0.4]]}', 422, "INVALID_ARGUMENT", None),
    ("1e400 literal (parses to inf)", "POST", PREDICT, '{"instances": [[1e400, 0.2, 0.3, 0.4]]}', 422, "INVALID_ARGUMENT", None),
    ("+-1e308 and +-1e-308 features", "POST", PREDICT, '{"instances": [[1e308, -1e308, 1e-308, -1e-308]]}', 200, None, None),
    ("empty rows", "POST", PREDICT, '{"instances": []}', 422, "INVALID_ARGUMENT", None),
    ("an empty row", "POST", PREDICT, '{"instances": [[]]}', 422, "INVALID_ARGUMENT", None),
    ("ragged rows", "POST", PREDICT, '{"instances": [[0.1, 0.2, 0.3, 0.4], [1, 2]]}', 422, "INVALID_ARGUMENT", None),
    ("string feature", "POST", PREDICT, '{"instances": [[0.1, "x", 0.3, 0.4]]}', 422, "INVALID_ARGUMENT", None),
    ("object feature", "POST", PREDICT, '{"instances": [[0.1, {}, 0.3, 0.4]]}', 422, "INVALID_ARGUMENT", None),
    ("rows not a list", "POST", PREDICT, '{"instances": "rows"}', 422, "INVALID_ARGUMENT", None),
    ("body not an object", "POST", PREDICT, "[1, 2]", 422, "INVALID_ARGUMENT", None),
    ("truncated JSON", "POST", PREDICT, '{"instances": [[0.1', 400, "MALFORMED_REQUEST", None),
    ("duplicate record key (last wins)", "POST", PREDICT, '{"records": [{"a": 9, "a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}]}', 200, None, None),
    ("costs 1e-12 vs 1e12", "POST", PREDICT, one_row('"costs": {"c_fp": 1e-12, "c_fn": 1e12}'), 200, None, [[0, 1e-12], [1e12, 0]]),
    ("costs 1e12 vs 1e-12", "POST", PREDICT, one_row('"costs": {"c_fp": 1e12, "c_fn": 1e-12}'), 200, None, [[0, 1e12], [1e-12, 0]]),
    ("costs 1e308 both (overflow)", "POST", PREDICT, one_row('"costs": {"c_fp": 1e308, "c_fn": 1e308}'), 200, None, [[0, 1e308], [1e308, 0]]),
    ("subnormal costs 5e-324", "POST", PREDICT, one_row('"costs": {"c_fp": 5e-324, "c_fn": 5e-324}'), 200, None, [[0, 5e-324], [5e-324, 0]]),
    ("zero costs", "POST", PREDICT, one_row('"costs": {"c_fp": 0, "c_fn": 0}'), 422, "INVALID_ARGUMENT", None),
    ("zero false-positive cost", "POST", PREDICT, one_row('"costs": {"c_fp": 0, "c_fn": 1}'), 200, None, [[0, 0], [1, 0]]),
    ("NaN cost", "POST", PREDICT, one_row('"costs": {"c_fp": NaN, "c_fn": 1}'), 422, "INVALID_ARGUMENT", None),
    ("Infinity cost", "POST", PREDICT, one_row('"costs": {"c_fp": Infinity, "c_fn": 1}'), 422, "INVALID_ARGUMENT", None),
    ("cost matrix 1e-12/1e12", "POST", PREDICT, one_row('"cost_matrix": [[0, 1e-12], [1e12, 0]]'), 200, None, [[0, 1e-12], [1e12, 0]]),
    ("cost matrix with NaN", "POST", PREDICT, one_row('"cost_matrix": [[0, NaN], [1, 0]]'), 422, "INVALID_ARGUMENT", None),
    ("priors [0.5, 0.5]", "POST", PREDICT, one_row('"priors": [0.5, 0.5]'), 200, None, None),
    ("priors [1e-300, 1]", "POST", PREDICT, one_row('"priors": [1e-300, 1]'), 200, None, None),
    ("priors [1, 0]", "POST", PREDICT, one_row('"priors": [1, 0]'), 422, "INVALID_ARGUMENT", None),
    ("priors with NaN", "POST", PREDICT, one_row('"priors": [NaN, 1]'), 422, "INVALID_ARGUMENT", None),
    ("negative prior", "POST", PREDICT, one_row('"priors": [-0.5, 1.5]'), 422, "INVALID_ARGUMENT", None),
    ("three priors for two classes", "POST", PREDICT, one_row('"priors": [0.5, 0.5, 0]'), 422, "INVALID_ARGUMENT", None),
    ("empty priors", "POST", PREDICT, one_row('"priors": []'), 422, "INVALID_ARGUMENT", None),
    ("huge version in body", "POST", PREDICT, one_row(f'"version": {BIG}'), 422, "INVALID_ARGUMENT", None),
    ("huge version in alias body", "PUT", "/v1/models/fraud/aliases/p", f'{{"version": {BIG}}}', 422, "INVALID_ARGUMENT", None),
    ("huge version in path", "GET", f"/v1/models/fraud/versions/{BIG}", None, 422, "INVALID_ARGUMENT", None),
    ("negative huge version in path", "GET", f"/v1/models/fraud/versions/-{BIG}", None, 422, "INVALID_ARGUMENT", None),
    ("huge offset (models)", "GET", f"/v1/models?offset={BIG}", None, 422, "INVALID_ARGUMENT", None),
    ("huge offset (versions)", "GET", f"/v1/models/fraud/versions?offset={BIG}", None, 422, "INVALID_ARGUMENT", None),
    ("unicode model name", "POST", "/v1/models/mod%C3%A8le/predict", one_row(), 422, "INVALID_ARGUMENT", None),
    ("evaluate NaN label", "POST", EVALUATE, one_row('"labels": [NaN]'), 422, "INVALID_ARGUMENT", None),
    ("evaluate unknown label", "POST", EVALUATE, one_row('"labels": [7]'), 422, "INVALID_ARGUMENT", None),
    ("evaluate one row", "POST", EVALUATE, one_row('"labels": [1]'), 200, None, None),
    ("train: NaN label", "POST", "/v1/models/x/versions", '{"features": [[1, 2]], "labels": [NaN]}', 422, "INVALID_ARGUMENT", None),
    ("train: Infinity feature", "POST", "/v1/models/x/versions", '{"features": [[Infinity, 2], [1, 2]], "labels": [0, 1]}', 422, "INVALID_ARGUMENT", None),
    ("train: no rows", "POST", "/v1/models/x/versions", '{"features": [], "labels": []}', 422, "INVALID_ARGUMENT", None),
    ("train: evaluation_fraction 5e-324", "POST", "/v1/models/x/versions", TRAIN[:-1] + ', "evaluation_fraction": 5e-324}', 422, "INVALID_ARGUMENT", None),
    ("train: evaluation_fraction 1 - 2**-53", "POST", "/v1/models/x/versions", TRAIN[:-1] + ', "evaluation_fraction": 0.9999999999999999}', 422, "INVALID_ARGUMENT", None),
    ("train: holdout calibration_fraction 5e-324", "POST", "/v1/models/x/versions", TRAIN[:-1] + ', "calibration_split": "holdout", "calibration_fraction": 5e-324}', 422, "INVALID_ARGUMENT", None),
]  # fmt: skip


@pytest.fixture
def client(database_url: str) -> Iterator[TestClient]:
    """The real app (limits: 100,000 predict rows, 64 MiB bodies) with model ``fraud``."""
    settings = Settings(
        database_url=database_url, max_predict_rows=MAX_ROWS, max_body_bytes=64 * 2**20
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        r = c.post("/v1/models/fraud/versions", json=train_body())
        assert r.status_code == 201, r.text
        yield c


def _finite(value: Any, where: str = "body") -> None:
    """Fail if any number in a JSON document is NaN or infinite."""
    if isinstance(value, float):
        assert math.isfinite(value), f"{where}: {value}"
    elif isinstance(value, dict):
        for k, v in value.items():
            _finite(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _finite(v, f"{where}[{i}]")


def check_answer(body: dict[str, Any], costs: list[list[float]] | None) -> None:
    """A 200 predict answer is finite and each decision is the least-expected-cost one."""
    _finite(body)
    if "predictions" not in body:
        return
    c = np.asarray(costs if costs is not None else [[0, 1], [1, 0]], np.float64)
    proba = np.array([p["probabilities"] for p in body["predictions"]])
    reference = decide(proba, c)
    classes = body["classes"]
    for i, p in enumerate(body["predictions"]):
        assert p["decision"] == classes[int(reference.labels_index[i])], (i, p)
        assert p["decision"] == classes[int(p["probabilities"][1] >= p["threshold"])], (i, p)
        assert p["threshold"] == pytest.approx(CostMatrix(c).threshold, rel=1e-12, abs=0)
        assert p["expected_cost"] == pytest.approx(float(reference.expected_cost[i]), rel=1e-12)


@pytest.mark.parametrize(
    ("case", "method", "path", "body", "status", "code", "costs"), CASES, ids=[c[0] for c in CASES]
)
def test_bad_input_table(
    client: TestClient,
    case: str,
    method: str,
    path: str,
    body: str | None,
    status: int,
    code: str | None,
    costs: list[list[float]] | None,
) -> None:
    """Each hostile input gets exactly its status and code, or a checked correct answer."""
    headers = {"content-type": "application/json"} if body is not None else {}
    r = client.request(method, path, content=body, headers=headers)
    assert r.status_code == status, r.text
    answer = r.json()
    _finite(answer)
    if code is not None:
        assert answer["code"] == code, answer
        assert answer["detail"], answer
    else:
        check_answer(answer, costs)


def test_nan_feature_is_a_missing_value(client: TestClient) -> None:
    """The NaN literal is read as a missing value: same answer as JSON null."""
    nan = client.post(
        PREDICT, content='{"instances": [[NaN, 0.2, 0.3, 0.4]]}',
        headers={"content-type": "application/json"},
    )  # fmt: skip
    null = client.post(PREDICT, json={"instances": [[None, 0.2, 0.3, 0.4]]})
    assert nan.status_code == null.status_code == 200
    ids = {"predictions": None}  # each request's rows get ids of their own in the log
    assert {**nan.json(), **ids} == {**null.json(), **ids}
    assert [{**p, "id": None} for p in nan.json()["predictions"]] == [
        {**p, "id": None} for p in null.json()["predictions"]
    ]


def test_huge_costs_keep_the_threshold(client: TestClient) -> None:
    """Regression: c_fp = c_fn = 1e308 overflowed a + b to inf and gave threshold 0 (every
    row positive); decisions are invariant to scaling costs, so the answer equals 1/1's."""
    rows = {"instances": [[0.1, 0.2, 0.3, 0.4], [1.0, -1.0, 0.5, 2.0]]}
    huge = client.post(PREDICT, json={**rows, "costs": {"c_fp": 1e308, "c_fn": 1e308}}).json()
    unit = client.post(PREDICT, json={**rows, "costs": {"c_fp": 1, "c_fn": 1}}).json()
    for h, u in zip(huge["predictions"], unit["predictions"], strict=True):
        assert h["threshold"] == u["threshold"] == 0.5
        assert h["decision"] == u["decision"]


def test_threshold_is_scale_invariant_at_the_float_limits() -> None:
    """Unit regression for models.decisions.rule: extreme but valid costs, same threshold."""
    p = np.array([[0.7, 0.3], [0.2, 0.8]])
    for scale in (5e-324, 1e-308, 1.0, 1e300, 1e308, np.finfo(np.float64).max):
        c = np.array([[0.0, scale], [scale, 0.0]])
        d = decide(p, c)
        assert d.threshold is not None
        np.testing.assert_array_equal(d.threshold, [0.5, 0.5])
        np.testing.assert_array_equal(d.labels_index, [0, 1])
        assert CostMatrix(c).threshold == 0.5
        assert np.all(np.isfinite(d.expected_cost))
        rows = decide(p, np.stack([c, c]))
        np.testing.assert_array_equal(rows.threshold, [0.5, 0.5])


def test_unicode_feature_names(client: TestClient) -> None:
    """Unicode feature names train, are listed and are matched by records."""
    names = ["größe", "温度", "😀", "naïve"]
    r = client.post("/v1/models/uni/versions", json=train_body(feature_names=names))
    assert r.status_code == 201, r.text
    assert r.json()["data"]["feature_names"] == names
    record = dict(zip(names, [0.1, 0.2, 0.3, 0.4], strict=True))
    by_name = client.post("/v1/models/uni/predict", json={"records": [record]})
    by_position = client.post("/v1/models/uni/predict", json={"instances": [[0.1, 0.2, 0.3, 0.4]]})
    assert by_name.status_code == by_position.status_code == 200, by_name.text
    same = [{**p, "id": None} for p in by_name.json()["predictions"]]  # ids: per request
    assert same == [{**p, "id": None} for p in by_position.json()["predictions"]]


def test_one_row_and_the_row_limit(client: TestClient) -> None:
    """One row, exactly the limit (100,000 rows) and one row over it (413 naming it)."""
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(MAX_ROWS, 4)), 4)
    X[::97, 2] = np.nan  # some missing values
    rows = [[None if math.isnan(v) else v for v in row] for row in X.tolist()]
    one = client.post(PREDICT, json={"instances": rows[:1], "costs": {"c_fp": 1, "c_fn": 5}})
    assert one.status_code == 200, one.text
    body = json.dumps({"instances": rows, "costs": {"c_fp": 1, "c_fn": 5}})
    full = client.post(PREDICT, content=body, headers={"content-type": "application/json"})
    assert full.status_code == 200, full.text[:300]
    answer = full.json()
    assert len(answer["predictions"]) == MAX_ROWS
    check_answer(answer, [[0, 1], [5, 0]])
    # the same decision (each request's rows get ids of their own in the log)
    assert {**answer["predictions"][0], "id": None} == {**one.json()["predictions"][0], "id": None}
    over = client.post(PREDICT, json={"instances": rows + rows[:1]})
    assert over.status_code == 413, over.text[:300]
    assert over.json()["code"] == "PAYLOAD_TOO_LARGE"
    assert str(MAX_ROWS) in over.json()["detail"].replace(",", "")


# ---------------------------------------------------------------- issue 17: crafted inputs
def infer_body(parameters: str) -> str:
    """A raw /v2 infer body with one valid row and ``parameters`` (raw JSON text)."""
    tensor = (
        '{"name": "features", "shape": [1, 4], "datatype": "FP64", "data": [0.1, 0.2, 0.3, 0.4]}'
    )
    return '{"inputs": [' + tensor + '], "parameters": ' + parameters + "}"


def train_json(**params: Any) -> str:
    return json.dumps(train_body(**params))


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


INFER = "/v2/models/fraud/infer"
NUL = "\u0000"
MANY_CLASSES = 300  # over the default COSTWISE_MAX_CLASSES (256)
CELLS_ROWS, CELLS_FEATURES = 100, 5_000  # 500,000 cells: over MAX_CELLS, under the row limit
MAX_CELLS = 400_000  # the fixture's COSTWISE_MAX_CELLS: exactly the 100,000 x 4 request fits

# Times with no UTC equivalent (year 0 or 10000 in UTC), on every route that takes one:
# a 422 naming the field from one shared check (app.api.time_window), never a 500.
EARLY, LATE = "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"
DATE_CASES: list[tuple[str, str, str, str, int, str]] = [
    (f"{method} {route} {field}={value}", method, path, body, 422, f"{prefix}{field}")
    for field, value in (("since", EARLY), ("until", LATE))
    for method, route, path, body, prefix in (
        ("GET", "priors", f"/v1/models/fraud/priors?{field}={value.replace('+', '%2B')}", "", ""),
        ("POST", "priors", "/v1/models/fraud/priors", json.dumps({field: value}), ""),
        ("GET", "monitoring", f"/v1/models/fraud/monitoring?{field}={value.replace('+', '%2B')}", "", ""),
        ("POST", "recalibrate", "/v1/models/fraud/versions/1/recalibrate", json.dumps({"from_outcomes": {field: value}}), "from_outcomes."),
    )
]  # fmt: skip

# (case, method, path, raw JSON body, status, field the error must name). On /v2 the
# error body is {"error": "..."}: the field must appear in it.
NAMED_CASES: list[tuple[str, str, str, str, int, str]] = [
    ("v2 cost_matrix JSON text nested 1,000 levels", "POST", INFER, infer_body(json.dumps({"cost_matrix": nested(1000)})), 400, "parameters.cost_matrix"),
    ("v2 cost_matrix JSON text nested 100,000 levels", "POST", INFER, infer_body(json.dumps({"cost_matrix": nested(100_000)})), 400, "parameters.cost_matrix"),
    ("v2 priors JSON text nested 1,000 levels", "POST", INFER, infer_body(json.dumps({"priors": nested(1000)})), 400, "parameters.priors"),
    ("v2 cost_matrix JSON text of depth 3", "POST", INFER, infer_body(json.dumps({"cost_matrix": "[[[0, 1], [1, 0]]]"})), 400, "parameters.cost_matrix"),
    ("v2 cost_matrix not JSON", "POST", INFER, infer_body(json.dumps({"cost_matrix": "[[0, 1], [1"})), 400, "parameters.cost_matrix"),
    ("v2 parameters object nested 1,000 levels", "POST", INFER, infer_body('{"x": ' + nested(1000) + "}"), 400, "body"),
    ("train: random_state -1", "POST", "/v1/models/x/versions", train_json(random_state=-1), 422, "random_state"),
    ("train: random_state 2^32", "POST", "/v1/models/x/versions", train_json(random_state=2**32), 422, "random_state"),
    ("train (job mode): random_state 2^32", "POST", "/v1/models/x/versions?mode=job", train_json(random_state=2**32), 422, "random_state"),
    ("train (job mode): random_state -2^70", "POST", "/v1/models/x/versions?mode=job", train_json(random_state=-(2**70)), 422, "random_state"),
    ("train: NUL in description", "POST", "/v1/models/x/versions", train_json(description=f"a{NUL}b"), 422, "description"),
    ("train: NUL in a feature name", "POST", "/v1/models/x/versions", train_json(feature_names=["a", f"b{NUL}", "c", "d"]), 422, "feature_names"),
    ("train: NUL in a tag value", "POST", "/v1/models/x/versions", train_json(tags={"team": f"x{NUL}"}), 422, "tags"),
    ("train: NUL in a tag key", "POST", "/v1/models/x/versions", train_json(tags={f"t{NUL}": "x"}), 422, "tags"),
    ("train: NUL in an algorithm parameter", "POST", "/v1/models/x/versions", train_json(params={"c_fp": f"1{NUL}"}), 422, "params"),
    ("train (job mode): NUL in description", "POST", "/v1/models/x/versions?mode=job", train_json(description=NUL), 422, "description"),
    ("train: NUL in string labels", "POST", "/v1/models/x/versions", json.dumps({"features": [[1.0], [2.0], [3.0], [4.0]], "labels": ["a", f"b{NUL}", "a", f"b{NUL}"]}), 422, "labels"),
    ("train: 300 classes (over COSTWISE_MAX_CLASSES)", "POST", "/v1/models/x/versions", json.dumps({"features": [[float(i)] for i in range(2 * MANY_CLASSES)], "labels": [i % MANY_CLASSES for i in range(2 * MANY_CLASSES)]}), 422, "labels"),
    ("predict: rows x features over COSTWISE_MAX_CELLS", "POST", PREDICT, json.dumps({"instances": [[0.5] * CELLS_FEATURES] * CELLS_ROWS}), 413, "instances"),
    ("train: rows x features over COSTWISE_MAX_CELLS", "POST", "/v1/models/x/versions", json.dumps({"features": [[0.5] * CELLS_FEATURES] * CELLS_ROWS, "labels": [0, 1] * (CELLS_ROWS // 2)}), 413, "features"),
    *DATE_CASES,
]  # fmt: skip


@pytest.fixture
def named_client(database_url: str) -> Iterator[TestClient]:
    """As :func:`client`, with COSTWISE_MAX_CELLS = 400,000."""
    settings = Settings(
        database_url=database_url,
        max_predict_rows=MAX_ROWS,
        max_body_bytes=64 * 2**20,
        max_cells=MAX_CELLS,
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        r = c.post("/v1/models/fraud/versions", json=train_body())
        assert r.status_code == 201, r.text
        yield c


@pytest.mark.parametrize(
    ("case", "method", "path", "body", "status", "field"),
    NAMED_CASES,
    ids=[c[0] for c in NAMED_CASES],
)
def test_crafted_input_names_its_field(
    named_client: TestClient, case: str, method: str, path: str, body: str, status: int, field: str
) -> None:
    """Each crafted input is a 4xx naming its field, the same on SQLite and PostgreSQL;
    nothing was registered and no job was created."""
    r = named_client.request(
        method, path, content=body, headers={"content-type": "application/json"}
    )
    assert r.status_code == status, r.text[:500]
    answer = r.json()
    if path.startswith("/v2/"):
        assert field in answer["error"] or field == "body", answer
    else:
        assert answer["field"] is not None and answer["field"].startswith(field), answer
        assert answer["code"] in ("INVALID_ARGUMENT", "MALFORMED_REQUEST", "PAYLOAD_TOO_LARGE")
    assert named_client.get("/v1/models/x").status_code == 404
    assert named_client.get("/v1/jobs").json()["jobs"] == []


def _csv(rows: int = 40, header: str = "a,b,label") -> bytes:
    lines = [header] + [f"{i % 7},{(i * 3) % 5},{i % 2}" for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def test_two_files_in_one_upload_is_a_422(named_client: TestClient) -> None:
    files = [("file", ("a.csv", _csv(), "text/csv")), ("file", ("b.csv", _csv(), "text/csv"))]
    r = named_client.post("/v1/models/x/versions", files=files)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "file"
    assert "got 2" in r.json()["detail"]
    one = named_client.post(
        "/v1/models/x/versions", files=files[:1], data={"params": '{"n_estimators": 5}'}
    )
    assert one.status_code == 201, one.text


@pytest.mark.parametrize(
    ("case", "content", "data", "field"),
    [
        ("NUL in a CSV column name", _csv(header="a,b\u0000,label"), {}, "file"),
        ("NUL in a CSV label", _csv() + b"1,2,x\x00\n", {}, "file"),
        ("NUL in the form description", _csv(), {"description": "d\u0000"}, "description"),
        ("NUL in the label column", _csv(), {"label_column": "label\u0000"}, "label_column"),
    ],
    ids=lambda v: (
        v if isinstance(v, str) and not v.startswith(("file", "desc", "label_")) else None
    ),
)
def test_nul_in_a_csv_upload_is_a_422(
    named_client: TestClient, case: str, content: bytes, data: dict[str, str], field: str
) -> None:
    """SQLite would store a NUL, PostgreSQL refuses it: both databases answer 422."""
    r = named_client.post(
        "/v1/models/x/versions", files={"file": ("d.csv", content, "text/csv")}, data=data
    )
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field, r.json()
    assert "NUL" in r.json()["detail"]


ROW = [0.1, 0.2, 0.3, 0.4]
V2_INFER = "/v2/models/fraud/infer"
SMALL_ROWS, SMALL_CELLS = 1_000, 4_000  # the limits of ``small_limits_client``


def _v2(data: Any, shape: list[int], indent: int | None = None) -> str:
    tensor = {"name": "x", "shape": shape, "datatype": "FP64", "data": data}
    return json.dumps({"inputs": [tensor]}, indent=indent)


@pytest.fixture
def small_limits_client(database_url: str) -> Iterator[TestClient]:
    """Small limits (1,000 rows, 4,000 cells, 2 classes) and every body of 1 KiB or more
    parsed in the worker process, so that the proofs below need kilobytes, not 60 MiB.
    The scan allows 2 x (2 + 2) + 6 x 1,000 + 1,024 = 7,032 values for costs and labels."""
    settings = Settings(
        database_url=database_url,
        max_predict_rows=SMALL_ROWS,
        max_cells=SMALL_CELLS,
        max_classes=2,
        parse_offload_bytes=1024,
        parse_workers=1,
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        r = c.post("/v1/models/fraud/versions", json=train_body())
        assert r.status_code == 201, r.text
        yield c


REC = dict(zip("abcd", ROW, strict=True))
TWICE, THRICE = 2 * SMALL_ROWS, 3 * SMALL_ROWS
# (case, path, body, field): over the limits, whatever the layout; refused by the scan of
# the body before anything is decoded (app.api.bodies.scan, in the parse worker)
OVERSIZED: list[tuple[str, str, str, str]] = [
    ("2x the rows, compact", PREDICT, json.dumps({"instances": [ROW] * TWICE}, separators=(",", ":")), "instances"),
    ("2x the rows, spaced", PREDICT, json.dumps({"instances": [ROW] * TWICE}), "instances"),
    ("2x the rows, pretty-printed", PREDICT, json.dumps({"instances": [ROW] * TWICE}, indent=2), "instances"),
    ("3x the rows as records", PREDICT, json.dumps({"records": [REC] * THRICE}, indent=1), "records"),
    ("3x the rows as records with row costs", PREDICT, json.dumps({"records": [REC] * THRICE, "row_costs": [{"c_fp": 1, "c_fn": 2}] * THRICE}), "records"),
    ("4x the cells, pretty-printed", PREDICT, json.dumps({"instances": [[0.5] * 40] * 400}, indent=2), "instances"),
    ("/v2: 4x the cells, flat data", V2_INFER, _v2([0.5] * 16_000, [400, 40]), "inputs"),
    ("/v2: 4x the cells, nested, pretty-printed", V2_INFER, _v2([[0.5] * 40] * 400, [400, 40], indent=2), "inputs"),
    ("evaluate: 2x the rows", EVALUATE, json.dumps({"instances": [ROW] * TWICE, "labels": [0] * TWICE}, indent=1), "instances"),
]  # fmt: skip


def test_far_over_the_limits_is_refused_before_decoding(small_limits_client: TestClient) -> None:
    """413 naming the field, from the count of values and rows outside strings (any
    layout, /v1 and /v2), before the body is decoded; the same on both databases."""
    for case, path, body, field in OVERSIZED:
        r = small_limits_client.post(
            path, content=body, headers={"content-type": "application/json"}
        )
        assert r.status_code == 413, (case, r.text[:300])
        if path == V2_INFER:
            assert r.json()["error"].startswith(f"{field}: "), (case, r.text)
            assert "before decoding" in r.text, (case, r.text)
        else:
            assert r.json()["field"] == field, (case, r.text)
            assert "before decoding" in r.json()["detail"], (case, r.text)
            assert r.json()["code"] == "PAYLOAD_TOO_LARGE", (case, r.text)


@pytest.mark.parametrize("indent", [None, 2])
def test_over_the_cell_limit_after_decoding(
    small_limits_client: TestClient, indent: int | None
) -> None:
    """Over COSTWISE_MAX_CELLS but within the scan's allowance for costs: decoded (in the
    parse worker) and then refused with the exact count; under the limits: served."""
    c, headers = small_limits_client, {"content-type": "application/json"}
    body = json.dumps({"instances": [[0.5] * 5] * SMALL_ROWS}, indent=indent)  # 5,000 cells
    r = c.post(PREDICT, content=body, headers=headers)
    assert r.status_code == 413, r.text[:300]
    assert r.json()["field"] == "instances" and "5000 cells" in r.json()["detail"]
    v2 = _v2([[0.5] * 5] * SMALL_ROWS, [SMALL_ROWS, 5], indent=indent)
    r = c.post(V2_INFER, content=v2, headers=headers)
    assert r.status_code == 413 and r.json()["error"].startswith("inputs: "), r.text[:300]
    assert "5000 cells" in r.json()["error"]
    fits = json.dumps({"instances": [ROW] * SMALL_ROWS}, indent=indent)  # 4,000 cells
    r = c.post(PREDICT, content=fits, headers=headers)
    assert r.status_code == 200 and len(r.json()["predictions"]) == SMALL_ROWS, r.text[:300]


# ------------------------------------------------- the feedback loop (issue 25, item 7)
_X, _Y = dataset(200, seed=5)
_LABELLED = f'"instances": {json.dumps(_X.tolist())}, "labels": {json.dumps(_Y.tolist())}'
_BATCH = '"input": {"uri": "INPUT"}, "output": {"uri": "OUTPUT"}'
LONE = "\\ud800"  # a JSON escape of a lone surrogate: parses, but is not Unicode text

# (case, path, raw JSON body (batch: INPUT and OUTPUT are replaced), field of the 422)
FEEDBACK_CASES: list[tuple[str, str, str, str]] = [
    ("outcome id: a lone surrogate", "/v1/models/fraud/outcomes", '{"outcomes": [{"id": "' + LONE + '", "label": 1}]}', "outcomes[0].id"),
    ("outcome id: surrogates reversed", "/v1/models/fraud/outcomes", '{"outcomes": [{"id": "ok", "label": 1}, {"id": "\\udfff\\ud800", "label": 0}]}', "outcomes[1].id"),
    ("recalibrate: holdout_fraction 5e-324", "/v1/models/fraud/versions/1/recalibrate", "{" + _LABELLED + ', "holdout_fraction": 5e-324}', "labels"),
    ("batch: alias a lone surrogate", "/v1/models/fraud/batch", "{" + _BATCH + ', "alias": "' + LONE + '"}', "alias"),
    ("batch: id column a lone surrogate", "/v1/models/fraud/batch", "{" + _BATCH + ', "id_columns": ["' + LONE + '"]}', "id_columns"),
]  # fmt: skip


@pytest.fixture
def feedback_client(database_url: str, tmp_path: Any) -> Iterator[tuple[TestClient, Any]]:
    """The real app with model ``fraud``, batch input ``in.csv`` under an allowed root."""
    (tmp_path / "in.csv").write_text("a,b,c,d\n0.1,0.2,0.3,0.4\n")
    settings = Settings(database_url=database_url, data_roots=[str(tmp_path)])
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        r = c.post("/v1/models/fraud/versions", json=train_body())
        assert r.status_code == 201, r.text
        yield c, tmp_path


@pytest.mark.parametrize(
    ("case", "path", "body", "field"), FEEDBACK_CASES, ids=[c[0] for c in FEEDBACK_CASES]
)
def test_feedback_loop_odd_inputs_are_a_4xx_naming_the_field(
    feedback_client: tuple[TestClient, Any], case: str, path: str, body: str, field: str
) -> None:
    """Unusual inputs of outcomes, recalibration and batch: a 4xx naming the field (a
    lone surrogate: the body and its position), never a 500 from the database driver,
    Arrow or ``math.ceil(inf)``; nothing registered, no job created."""
    client, root = feedback_client
    raw = body.replace("INPUT", (root / "in.csv").as_uri())
    raw = raw.replace("OUTPUT", (root / "out").as_uri())
    r = client.post(path, content=raw, headers={"content-type": "application/json"})
    answer = r.json()
    if LONE in raw or "\\udfff" in raw:
        # Every JSON body is decoded by one parser (app/api/bodies), which refuses an
        # escape that is not Unicode text: a 400 naming the body and the position.
        assert r.status_code == 400, r.text[:500]
        assert answer["code"] == "MALFORMED_REQUEST" and answer["field"] == "body", answer
        assert "line 1 column" in answer["detail"], answer
    else:
        assert r.status_code == 422, r.text[:500]
        assert answer["code"] == "INVALID_ARGUMENT" and answer["field"] == field, answer
    assert client.get("/v1/models/fraud/versions").json()["versions"][0]["version"] == 1
    assert client.get("/v1/jobs").json()["jobs"] == []
