"""Training from a dataset reference through the Python client and ``costwise train``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app.db import upgrade_to_head
from costwise import Client, Forbidden, InvalidArgument
from costwise.types import Job, Version
from tests.app.api.conftest import dataset
from tests.conftest import fresh_database
from tests.costwise.conftest import ADMIN_KEY, service_settings, serving
from tests.costwise.test_cli_remote import _env, costwise


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("data")
    X, y = dataset(1500)
    table = pa.table({f"x{j}": X[:, j] for j in range(X.shape[1])} | {"label": y})
    pq.write_table(table, root / "train.parquet", row_group_size=256)
    return root


@pytest.fixture(scope="module")
def url(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database("sqlite", tmp_path_factory) as database_url:
        upgrade_to_head(database_url)
        settings = service_settings(database_url, data_roots=[str(data_root)], job_min_rows=1000)
        with serving(settings) as base:
            yield base


def test_client_trains_from_a_reference_sync_and_as_a_job(url: str, data_root: Path) -> None:
    uri = f"file://{data_root}/train.parquet"
    with Client(url, api_key=ADMIN_KEY) as c:
        v = c.train("ref", dataset=uri, columns=["x0", "x1", "x2"], mode="sync")
        assert isinstance(v, Version) and v.data["feature_names"] == ["x0", "x1", "x2"]
        job = c.train("ref", dataset=uri, description="from parquet")
        assert isinstance(job, Job)  # 1,500 rows >= job_min_rows
        done = c.wait_for_job(job.id, poll_interval=0.05)
        assert done.status == "succeeded" and done.version == 2
        assert "reading" in done.timings
        with pytest.raises(Forbidden):
            c.train("ref", dataset="file:///etc/passwd.csv")
        with pytest.raises(InvalidArgument):
            c.train("ref", dataset=uri, label_column="nope")
        with pytest.raises(ValueError):
            c.train("ref", np.zeros((2, 2)), [0, 1], dataset=uri)


def test_cli_trains_from_a_reference_remotely_and_locally(
    url: str, data_root: Path, tmp_path: Path
) -> None:
    uri = f"file://{data_root}/train.parquet"
    out = costwise(
        "train", "--model", "cli", "--dataset", uri, "--mode", "job", "--progress",
        "--poll-interval", "0.05", "--url", url, "--api-key", ADMIN_KEY,
    )  # fmt: skip
    assert json.loads(out.stdout)["version"] == 1
    assert "# job " in out.stderr  # (reading 1,500 rows is over before the first poll)
    db = tmp_path / "local.db"
    env = _env(COSTWISE_DATABASE_URL=f"sqlite:///{db}", COSTWISE_DATA_ROOTS=str(data_root))
    costwise("db", "upgrade", env=env)
    local = costwise(
        "train", "--model", "loc", "--dataset", uri, "--columns", "x0,x1", "--progress", env=env
    )
    assert json.loads(local.stdout)["version"] == 1
    assert "reading" in local.stderr
    refused = costwise("train", "--model", "loc", "--dataset", "file:///etc/x.csv", env=env,
                       check=False)  # fmt: skip
    assert refused.returncode == 2 and "error [FORBIDDEN]" in refused.stderr
    neither = costwise("train", "--model", "loc", env=env, check=False)
    assert neither.returncode == 2 and "one of the two" in neither.stderr
