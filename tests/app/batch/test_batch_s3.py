"""``s3://`` references for real: moto's ThreadedMotoServer (an S3 endpoint over HTTP on
127.0.0.1) read through s3fs, configured as a user would, from the environment
(``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_DEFAULT_REGION`` and the
endpoint in ``AWS_ENDPOINT_URL_S3``), with ``COSTWISE_DATA_PROTOCOLS`` allowing ``s3``.

A model trains from an ``s3://`` Parquet file, a batch decides an ``s3://`` partitioned
Parquet directory into an output under the data roots, and the decisions equal those of
the same rows read from local files. s3 stays refused where the protocols do not allow
it, and a missing object or bucket is a 422 naming ``input.uri`` / ``dataset.uri``."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.settings import Settings
from tests.app.api.conftest import dataset
from tests.app.batch.conftest import input_table, wait_job, write_partitioned
from tests.app.batch.test_batch_api import assert_same_decisions, batch_body, read_output

s3fs = pytest.importorskip("s3fs")  # the dev extra: s3fs, moto[s3], flask, flask-cors
moto_server = pytest.importorskip("moto.server")

BUCKET = "costwise-data"


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def s3(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An empty bucket; the AWS settings in the environment, as a user sets them."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "costwise-test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "costwise-test-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3_endpoint)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    s3fs.S3FileSystem.clear_instance_cache()
    fs = s3fs.S3FileSystem(endpoint_url=s3_endpoint)  # the test's own client
    fs.mkdir(BUCKET)
    yield fs
    fs.rm(BUCKET, recursive=True)
    s3fs.S3FileSystem.clear_instance_cache()


@pytest.fixture
def client(batch_settings: Settings) -> Iterator[TestClient]:
    app = create_app(batch_settings.model_copy(update={"data_protocols": ["file", "s3"]}))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def _train(client: TestClient, name: str, uri: str, label: str) -> Any:
    """Train ``name`` from the reference ``uri`` (sync); the response."""
    return client.post(
        f"/v1/models/{name}/versions",
        json={"dataset": {"uri": uri, "label_column": label}, "n_estimators": 30},
        params={"mode": "sync"},
    )


def _put_parquet(fs: Any, key: str, table: pa.Table) -> str:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, row_group_size=50)
    fs.pipe(f"{BUCKET}/{key}", buffer.getvalue())
    return f"s3://{BUCKET}/{key}"


def test_train_from_s3_then_batch_an_s3_directory_into_the_roots(
    client: TestClient, s3: Any, root: Path
) -> None:
    X, y = dataset(400, seed=3)
    train = pa.table({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "d": X[:, 3], "y": y})
    uri = _put_parquet(s3, "train/fraud.parquet", train)
    r = _train(client, "fraud", uri, "y")
    assert r.status_code == 201, r.text
    assert r.json()["data"]["n_rows"] == 400
    assert r.json()["data"]["feature_names"] == ["a", "b", "c", "d"]

    table = input_table(300, seed=4)
    bounds = [0, 120, 200, 300]
    for i in range(3):
        chunk = table.slice(bounds[i], bounds[i + 1] - bounds[i])
        _put_parquet(s3, f"tx/part-{i}.parquet", chunk)
    local = write_partitioned(table, root / "tx", parts=3)

    body = batch_body(local, root / "from-s3")
    body["input"] = {"uri": f"s3://{BUCKET}/tx", "format": "parquet"}
    r = client.post("/v1/models/fraud/batch", json=body)
    assert r.status_code == 202, r.text
    assert r.json()["total"] == 300  # the row counts from the objects' footers
    there = wait_job(client, r.json()["id"])
    assert there["status"] == "succeeded", there
    assert there["result"]["partitions"] == 3 and there["result"]["rows"] == 300

    r = client.post("/v1/models/fraud/batch", json=batch_body(local, root / "from-files"))
    here = wait_job(client, r.json()["id"])
    assert here["status"] == "succeeded", here
    assert {k: v for k, v in there["result"].items() if k != "output"} == {
        k: v for k, v in here["result"].items() if k != "output"
    }
    output = read_output(root / "from-s3")
    assert output.equals(read_output(root / "from-files"))
    r = client.post(
        "/v1/models/fraud/predict",
        json={
            "records": [{k: row[k] for k in "abcd"} for row in table.to_pylist()],
            "row_costs": [{"c_fp": 5.0, "c_fn": a} for a in table.column("amount").to_pylist()],
        },
    )
    assert r.status_code == 200, r.text
    assert_same_decisions(output, r.json()["predictions"], table.column("id").to_pylist())
    assert np.isfinite(output.column("expected_cost").to_numpy()).all()


@pytest.mark.parametrize(
    "uri", [f"s3://{BUCKET}/missing.parquet", "s3://no-such-bucket/train.parquet"]
)
def test_a_missing_s3_object_is_a_422_naming_the_field(
    client: TestClient, s3: Any, uri: str
) -> None:
    r = _train(client, "m", uri, "y")
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "dataset.uri"
    assert uri in r.json()["detail"]
    assert client.get("/v1/models/m/versions").status_code == 404


def test_s3_is_refused_where_the_protocols_do_not_allow_it(
    batch_settings: Settings, s3: Any
) -> None:
    uri = _put_parquet(s3, "t.parquet", input_table(20))
    assert batch_settings.data_protocols == ["file"]  # the default
    with TestClient(create_app(batch_settings), raise_server_exceptions=False) as c:
        r = _train(c, "m", uri, "amount")
    assert r.status_code == 403, r.text
    assert r.json()["field"] == "dataset.uri"
    assert "COSTWISE_DATA_PROTOCOLS" in r.json()["detail"]
