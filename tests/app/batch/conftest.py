"""Batch fixtures: the real app on a fresh registry, data roots under a temporary
directory, a trained two-class model with feature names, and partitioned Parquet input."""

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
from tests.app.api.conftest import dataset, train_body

N_ROWS = 300
FEATURES = ["a", "b", "c", "d"]


@pytest.fixture
def batch_settings(database_url: str, root: Path) -> Settings:
    return Settings(
        database_url=database_url,
        max_predict_rows=1000,
        max_train_rows=5000,
        max_body_bytes=2_000_000,
        max_features=50,
        data_roots=[str(root)],
        batch_block_rows=64,  # several blocks per partition
        job_progress_interval=0.05,
    )


@pytest.fixture
def settings(batch_settings: Settings) -> Settings:
    """What ``client`` serves with."""
    return batch_settings


@pytest.fixture
def trained(client: TestClient) -> dict[str, Any]:
    r = client.post("/v1/models/fraud/versions", json=train_body(N_ROWS), params={"mode": "sync"})
    assert r.status_code == 201, r.text
    return r.json()


def input_table(n: int = N_ROWS, seed: int = 1) -> pa.Table:
    """Rows with an id (strings), the four features (some missing) and an amount."""
    X, _ = dataset(n, seed=seed)
    rng = np.random.default_rng(seed)
    amount = np.round(rng.lognormal(3.0, 1.2, n), 2)
    columns: dict[str, Any] = {"id": [f"tx-{i:05d}" for i in range(n)]}
    for j, name in enumerate(FEATURES):
        col = X[:, j].astype(object)
        col[rng.random(n) < 0.03] = None  # missing values
        columns[name] = pa.array(col.tolist(), pa.float64())
    columns["amount"] = amount
    return pa.table(columns)


def write_partitioned(table: pa.Table, directory: Path, parts: int = 3) -> Path:
    """``table`` as ``parts`` Parquet files in ``directory`` (in row order)."""
    directory.mkdir()
    bounds = np.linspace(0, table.num_rows, parts + 1).astype(int)
    for i in range(parts):
        chunk = table.slice(bounds[i], bounds[i + 1] - bounds[i])
        pq.write_table(chunk, directory / f"part-{i}.parquet", row_group_size=50)
    return directory


def wait_job(client: TestClient, job_id: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["status"] in ("succeeded", "failed", "cancelled"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s: {job}")
