"""POST /v1/models/{name}/batch: the decisions predict gives, written as Parquet; bad
references refused at once; a failed job leaves no output."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from tests.app.api.conftest import train_body
from tests.app.batch.conftest import FEATURES, input_table, wait_job, write_partitioned


def batch_body(src: Path, out: Path, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "input": {"uri": src.as_uri(), "format": "parquet"},
        "output": {"uri": out.as_uri()},
        "costs": {"c_fn": {"column": "amount"}, "c_fp": 5},
        "id_columns": ["id"],
    }
    body.update(extra)
    return body


def predicted(client: TestClient, table: pa.Table, **costs: Any) -> list[dict[str, Any]]:
    """What predict answers for the rows of ``table`` (records, per-row costs)."""
    records = [{k: row[k] for k in FEATURES} for row in table.to_pylist()]
    r = client.post("/v1/models/fraud/predict", json={"records": records, **costs})
    assert r.status_code == 200, r.text
    return list(r.json()["predictions"])


def read_output(out: Path) -> pa.Table:
    files = sorted(out.iterdir())
    assert [f.name for f in files] == [f"part-{i:05d}.parquet" for i in range(len(files))]
    return pa.concat_tables([pq.read_table(f) for f in files])


def assert_same_decisions(output: pa.Table, answers: list[dict[str, Any]], ids: list[str]) -> None:
    assert output.num_rows == len(answers)
    assert output.column("id").to_pylist() == ids
    rows = output.to_pylist()
    for row, answer in zip(rows, answers, strict=True):
        assert row["decision"] == answer["decision"]
        assert row["threshold"] == answer["threshold"]
        assert [row["proba_0"], row["proba_1"]] == answer["probabilities"]
        assert row["expected_cost"] == answer["expected_cost"]


def test_batch_decides_every_row_as_predict_does(
    client: TestClient, trained: dict[str, Any], root: Path
) -> None:
    table = input_table()
    src = write_partitioned(table, root / "tx")
    out = root / "decisions"
    r = client.post("/v1/models/fraud/batch", json=batch_body(src, out))
    assert r.status_code == 202, r.text
    assert r.headers["location"] == f"/v1/jobs/{r.json()['id']}"
    assert r.json()["kind"] == "batch"
    job = wait_job(client, r.json()["id"])
    assert job["status"] == "succeeded", job
    assert job["version"] == trained["version"]

    row_costs = [{"c_fp": 5.0, "c_fn": a} for a in table.column("amount").to_pylist()]
    answers = predicted(client, table, row_costs=row_costs)
    output = read_output(out)
    assert_same_decisions(output, answers, table.column("id").to_pylist())

    decisions = output.column("decision").to_numpy()
    result = job["result"]
    assert result["rows"] == table.num_rows == job["done"] == job["total"]
    assert result["partitions"] == 3
    assert result["engine"] == "worker"
    assert result["decided_positive"] == int((decisions == 1).sum())
    assert result["decided"] == {"0": int((decisions == 0).sum()), "1": int((decisions == 1).sum())}
    total = sum(a["expected_cost"] for a in answers)
    assert result["total_expected_cost"] == pytest.approx(total, rel=1e-12)
    assert result["output"] == out.as_uri()
    assert [p.name for p in root.iterdir() if p.name.startswith(".")] == []  # no temporary


def test_batch_with_one_matrix_priors_and_a_csv_input(
    client: TestClient, trained: dict[str, Any], root: Path
) -> None:
    table = input_table(120, seed=3)
    src = root / "tx.csv"
    pacsv.write_csv(table, src)
    out = root / "out"
    assert client.put("/v1/models/fraud/aliases/prod", json={"version": 1}).status_code == 200
    body = batch_body(
        src, out, costs=None, cost_matrix=[[0, 2], [7, 0]], priors=[0.8, 0.2], alias="prod"
    )
    body["input"] = {"uri": src.as_uri()}  # format from the suffix
    r = client.post("/v1/models/fraud/batch", json=body)
    assert r.status_code == 202, r.text
    job = wait_job(client, r.json()["id"])
    assert job["status"] == "succeeded", job
    assert job["version"] == 1
    answers = predicted(client, table, cost_matrix=[[0, 2], [7, 0]], priors=[0.8, 0.2])
    assert_same_decisions(read_output(out), answers, table.column("id").to_pylist())


def test_a_bad_cost_in_one_row_fails_the_job_naming_it_and_leaves_no_output(
    client: TestClient, trained: dict[str, Any], root: Path
) -> None:
    table = input_table()
    amount = table.column("amount").to_numpy().copy()
    amount[250] = -3.0
    table = table.set_column(table.schema.get_field_index("amount"), "amount", pa.array(amount))
    src = write_partitioned(table, root / "tx")
    out = root / "decisions"
    r = client.post("/v1/models/fraud/batch", json=batch_body(src, out))
    assert r.status_code == 202, r.text
    job = wait_job(client, r.json()["id"])
    assert job["status"] == "failed"
    assert job["error"]["code"] == "INVALID_ARGUMENT"
    detail = job["error"]["detail"]
    assert "row 250" in detail and "'amount'" in detail and "-3.0" in detail, detail
    assert job["result"] is None
    assert sorted(p.name for p in root.iterdir()) == ["tx"]  # no output, no temporary


def _bad(
    client: TestClient, body: dict[str, Any], status: int, code: str, words: str, model="fraud"
) -> None:
    r = client.post(f"/v1/models/{model}/batch", json=body)
    assert r.status_code == status, r.text
    assert r.json()["code"] == code, r.text
    assert words in r.json()["detail"], r.text


def test_bad_references_are_refused_at_once_and_create_no_job(
    client: TestClient, trained: dict[str, Any], root: Path, tmp_path: Path
) -> None:
    table = input_table(60)
    src = write_partitioned(table, root / "tx", parts=2)
    out = root / "out"
    outside = tmp_path / "outside.parquet"
    pq.write_table(table, outside)
    (root / "not-parquet.parquet").write_text("id,a\n1,2\n")
    strings = table.set_column(1, "a", pa.array([f"x{i}" for i in range(60)]))
    pq.write_table(strings, root / "strings.parquet")
    (root / "taken").mkdir()

    def body(**kw: Any) -> dict[str, Any]:
        return batch_body(src, out, **kw)

    cases: list[tuple[dict[str, Any], int, str, str]] = [
        (body(input={"uri": (root / "missing.parquet").as_uri()}), 422, "INVALID_ARGUMENT",
         "no such file"),
        (body(input={"uri": outside.as_uri()}), 403, "FORBIDDEN", "not under an allowed"),
        (body(input={"uri": (root / "tx" / ".." / "tx").as_uri() + "/..", "format": "parquet"}),
         403, "FORBIDDEN", ".."),
        (body(input={"uri": (root / "not-parquet.parquet").as_uri()}), 422, "INVALID_ARGUMENT",
         "not a readable parquet"),
        (body(input={"uri": (root / "strings.parquet").as_uri()}), 422, "INVALID_ARGUMENT",
         "'a' holds string"),
        (body(input={"uri": "http://127.0.0.1:9/tx.parquet"}), 403, "FORBIDDEN",
         "COSTWISE_DATA_PROTOCOLS"),
        (body(output={"uri": (tmp_path / "elsewhere").as_uri()}), 403, "FORBIDDEN",
         "not under an allowed"),
        (body(output={"uri": "http://127.0.0.1:9/out"}), 422, "INVALID_ARGUMENT",
         "not a file://"),
        (body(output={"uri": (root / "taken").as_uri()}), 409, "CONFLICT", "already exists"),
        (body(output={"uri": (root / "no" / "dir").as_uri()}), 422, "INVALID_ARGUMENT",
         "does not exist"),
        (body(id_columns=["nope"]), 422, "INVALID_ARGUMENT", "no column 'nope'"),
        (body(costs={"c_fp": 1, "c_fn": {"column": "id"}}), 422, "INVALID_ARGUMENT",
         "'id' (the cost c_fn) holds string"),
        (body(costs={"c_fp": 1, "c_fn": {"column": "nope"}}), 422, "INVALID_ARGUMENT",
         "no column 'nope'"),
        (body(costs={"c_fn": {"column": "amount"}}), 422, "INVALID_ARGUMENT", "c_fp is required"),
        (body(costs={"c_fn": 1, "c_fp": -1}), 422, "INVALID_ARGUMENT", ">= 0"),
        (body(priors=[0.5, 0.3, 0.2]), 422, "INVALID_ARGUMENT", "priors"),
        (body(input={"uri": src.as_uri(), "format": "parquet", "columns": ["a", "b"]}), 422,
         "INVALID_ARGUMENT", "takes 4 features"),
        (body(version=9), 404, "NOT_FOUND", "9"),
        (body(alias="nope"), 404, "NOT_FOUND", "nope"),
    ]  # fmt: skip
    for case, status, code, words in cases:
        _bad(client, case, status, code, words)
    r = client.post("/v1/models/nobody/batch", json=body())
    assert r.status_code == 404
    assert client.get("/v1/jobs").json()["total"] == 0  # no job was created
    assert not out.exists()


def test_a_model_without_feature_names_needs_the_columns(client: TestClient, root: Path) -> None:
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    r = client.post(
        "/v1/models/plain/versions",
        json={"features": X.tolist(), "labels": y.tolist(), "n_estimators": 10},
        params={"mode": "sync"},
    )
    assert r.status_code == 201, r.text
    src = root / "x.parquet"
    pq.write_table(pa.table({"u": X[:, 0], "v": X[:, 1], "w": X[:, 2]}), src)
    body: dict[str, Any] = {
        "input": {"uri": src.as_uri()},
        "output": {"uri": (root / "o").as_uri()},
    }
    _bad(client, body, 422, "INVALID_ARGUMENT", "without feature names", model="plain")
    body["input"]["columns"] = ["u", "v", "w"]
    r = client.post("/v1/models/plain/batch", json=body)
    assert r.status_code == 202, r.text
    job = wait_job(client, r.json()["id"])
    assert job["status"] == "succeeded", job
    out = read_output(root / "o")
    answers = client.post("/v1/models/plain/predict", json={"instances": X.tolist()}).json()
    assert out.column("decision").to_pylist() == [p["decision"] for p in answers["predictions"]]
    assert ds.dataset(root / "o").count_rows() == 200


def test_a_cancelled_batch_stops_and_leaves_no_output(
    client: TestClient, trained: dict[str, Any], root: Path
) -> None:
    table = input_table(60_000)  # ~940 blocks of 64 rows: seconds of work
    src = write_partitioned(table, root / "tx", parts=2)
    out = root / "decisions"
    r = client.post("/v1/models/fraud/batch", json=batch_body(src, out))
    assert r.status_code == 202, r.text
    job_id = r.json()["id"]
    while (job := client.get(f"/v1/jobs/{job_id}").json())["status"] == "queued":
        time.sleep(0.01)
    assert job["status"] == "running", job
    assert client.post(f"/v1/jobs/{job_id}/cancel").status_code == 202
    job = wait_job(client, job_id)
    assert job["status"] == "cancelled", job
    assert job["done"] < 60_000
    assert sorted(p.name for p in root.iterdir()) == ["tx"]  # no output, no temporary


def test_a_batch_past_the_job_time_limit_fails_and_leaves_no_output(
    batch_settings: Any, root: Path
) -> None:
    from app.api.main import create_app

    settings = batch_settings.model_copy(update={"max_job_seconds": 0.2})
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        r = c.post("/v1/models/fraud/versions", json=train_body(300), params={"mode": "sync"})
        assert r.status_code == 201, r.text
        src = write_partitioned(input_table(60_000), root / "tx", parts=2)
        r = c.post("/v1/models/fraud/batch", json=batch_body(src, root / "out"))
        job = wait_job(c, r.json()["id"])
    assert job["status"] == "failed", job
    assert job["error"]["code"] == "BATCH_TIME_LIMIT"
    assert "COSTWISE_MAX_JOB_SECONDS" in job["error"]["detail"]
    assert sorted(p.name for p in root.iterdir()) == ["tx"]
