"""Training from a dataset reference over the API: sync, job, bad references, CSV > body."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from tests.app.api.conftest import dataset


def _write(root: Path, n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, y = dataset(n, seed=seed)
    X = X.astype(np.float32).astype(np.float64)  # the reference is read as float32
    X[::37, 2] = np.nan
    t = pa.table({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "d": X[:, 3], "y": y})
    pq.write_table(t, root / "train.parquet", row_group_size=128)
    t.to_pandas().to_csv(root / "train.csv", index=False)
    return X, y


@pytest.fixture
def settings(database_url: str, root: Path) -> Settings:
    return Settings(
        database_url=database_url,
        max_body_bytes=4096,  # far smaller than the CSV: only a reference can train on it
        max_train_rows=5000,
        max_rounds=200,
        data_roots=[str(root)],
        job_min_rows=1000,
    )


def _ref(root: Path, name: str = "train.parquet", **kw: Any) -> dict[str, Any]:
    return {"dataset": {"uri": f"file://{root}/{name}", "label_column": "y", **kw}}


def _versions(client: TestClient, name: str) -> int:
    r = client.get(f"/v1/models/{name}/versions")
    return 0 if r.status_code == 404 else len(r.json()["versions"])


def test_train_from_parquet_then_predict_raw_rows(client: TestClient, root: Path) -> None:
    X, y = _write(root)
    r = client.post("/v1/models/m/versions?mode=sync", json=_ref(root))
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["data"]["n_rows"] == 600 and v["data"]["dataset"]["binned"] is True
    assert v["data"]["feature_names"] == ["a", "b", "c", "d"]
    assert v["data"]["missing_values"] == int(np.isnan(X).sum())
    assert v["metrics"]["auc"] > 0.8
    rows = np.where(np.isnan(X[:50]), None, X[:50]).tolist()
    p = client.post("/v1/models/m/predict", json={"instances": rows})
    assert p.status_code == 200, p.text
    decided = [row["decision"] for row in p.json()["predictions"]]
    assert np.mean(np.asarray(decided) == y[:50]) > 0.8


def test_csv_larger_than_the_body_limit_trains_by_reference(client: TestClient, root: Path) -> None:
    _write(root)
    assert (root / "train.csv").stat().st_size > 4096
    r = client.post(
        "/v1/models/c/versions?mode=sync", json=_ref(root, "train.csv", columns=["a", "b", "c"])
    )
    assert r.status_code == 201, r.text
    assert r.json()["data"]["feature_names"] == ["a", "b", "c"]


def test_large_reference_runs_as_a_job_that_reports_reading(client: TestClient, root: Path) -> None:
    _write(root, n=1500)
    r = client.post("/v1/models/j/versions", json=_ref(root))
    assert r.status_code == 202, r.text
    job_id = r.json()["id"]
    phases = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        phases.add(job["phase"])
        if job["status"] in ("succeeded", "failed", "cancelled"):
            break
        time.sleep(0.05)
    assert job["status"] == "succeeded", job
    assert "reading" in job["timings"]
    assert _versions(client, "j") == 1


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"dataset": {"uri": "file:///etc/passwd.csv", "label_column": "y"}}, 403, "dataset.uri"),
        ("../train.parquet", 403, "dataset.uri"),
        ("missing.parquet", 422, "dataset.uri"),
        ("fake.parquet", 422, "dataset.uri"),
        ({"label_column": "nope"}, 422, "dataset.label_column"),
        ({"columns": ["a", "zz"]}, 422, "dataset.columns"),
        ("strings.parquet", 422, "dataset.columns"),
        (  # fetching is off by default (COSTWISE_DATA_PROTOCOLS=file)
            {"dataset": {"uri": "http://127.0.0.1:9/x.parquet", "label_column": "y"}},
            403,
            "dataset.uri",
        ),
        ({"dataset": {"uri": "file:///x.parquet"}}, 422, "dataset.label_column"),
    ],
)
def test_bad_references_are_4xx_and_register_nothing(
    client: TestClient, root: Path, body: Any, status: int, field: str
) -> None:
    _write(root)
    (root / "fake.parquet").write_text("a,b\n1,2\n")
    pq.write_table(pa.table({"a": ["x", "y"], "y": [0, 1]}), root / "strings.parquet")
    if isinstance(body, str):
        body = _ref(root, body)
    elif "dataset" not in body:
        body = {"dataset": {**_ref(root)["dataset"], **body}}
    for mode in ("sync", "job"):
        r = client.post(f"/v1/models/bad/versions?mode={mode}", json=body)
        assert r.status_code == status, r.text
        assert r.json()["field"] == field, r.json()
    assert _versions(client, "bad") == 0
    assert client.get("/v1/jobs").json()["jobs"] == []


def test_a_bad_value_found_while_reading_fails_the_job(client: TestClient, root: Path) -> None:
    lines = ["a,b,y"] + [f"{i},{i % 7},{i % 2}" for i in range(1200)] + ["1,2,"]
    (root / "late.csv").write_text("\n".join(lines) + "\n")
    r = client.post("/v1/models/late/versions?mode=job", json=_ref(root, "late.csv"))
    assert r.status_code == 202, r.text
    job_id = r.json()["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["status"] in ("succeeded", "failed"):
            break
        time.sleep(0.05)
    assert job["status"] == "failed", job
    assert job["error"]["field"] == "dataset.label_column"
    assert "row 1200" in job["error"]["detail"]
    assert _versions(client, "late") == 0


@pytest.mark.parametrize(
    ("extra", "labels", "setting"),
    [
        ({"algorithm": "adaboost", "n_estimators": 5}, 2, "COSTWISE_MAX_TRAIN_ROWS"),
        ({}, 3, "COSTWISE_MAX_TRAIN_ROWS"),  # auto, but a third class: read unbinned
    ],
)
def test_row_limit_stops_reading_for_unbinned_trainings(
    client: TestClient, root: Path, extra: dict[str, Any], labels: int, setting: str
) -> None:
    """Reading stops once the inline row limit is passed: a bad row far past it is never
    read (were the file read through first, its missing label would be the 422)."""
    n = 200_000
    rng = np.random.default_rng(0)
    y = (np.arange(n) % labels).astype(float)
    y[150_000] = np.nan  # a missing label far beyond COSTWISE_MAX_TRAIN_ROWS (5,000)
    t = pa.table({"a": rng.random(n), "b": rng.random(n), "y": pa.array(y, mask=np.isnan(y))})
    pq.write_table(t, root / "big.parquet", row_group_size=10_000)
    r = client.post(
        "/v1/models/big/versions?mode=sync", json={**_ref(root, "big.parquet"), **extra}
    )
    assert r.status_code == 413, r.text
    body = r.json()
    assert body["code"] == "PAYLOAD_TOO_LARGE" and body["limit"] == 5000
    assert setting in body["detail"] and "reading stopped" in body["detail"]
    assert _versions(client, "big") == 0
    # the default algorithm on two classes reads on (binned): the missing label is found
    if labels == 2 and extra:
        r = client.post("/v1/models/big/versions?mode=sync", json=_ref(root, "big.parquet"))
        assert r.status_code == 422 and "row 150000" in r.json()["detail"], r.text
