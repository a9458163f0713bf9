"""Batch decisions on a real Dask cluster: a ``dask scheduler`` and two ``dask worker``
processes on 127.0.0.1 (random ports, ``nice``, stopped after the module). The same
partitioned Parquet input decided through them gives the very output of the in-process
path, and predict's decisions."""

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
from app.cli.progress import ProgressBar
from app.services.batch.scoring import BatchCosts
from app.services.batch.service import BatchRequest
from app.settings import Settings
from tests.app.batch.conftest import input_table, wait_job, write_partitioned
from tests.app.batch.test_batch_api import (
    assert_same_decisions,
    batch_body,
    predicted,
    read_output,
)
from tests.dask_cluster import free_port, running_cluster

distributed = pytest.importorskip("distributed")  # the dask extra (part of dev)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Address of a scheduler with two single-threaded workers."""
    with running_cluster(tmp_path_factory.mktemp("dask")) as cluster:
        yield cluster.address


@pytest.fixture
def dask_client(batch_settings: Settings, scheduler: str) -> Iterator[TestClient]:
    settings = batch_settings.model_copy(update={"dask_scheduler": scheduler})
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        yield c


def _run(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/v1/models/fraud/batch", json=body)
    assert r.status_code == 202, r.text
    return wait_job(client, r.json()["id"], timeout=120)


def test_partitions_decided_on_dask_equal_the_in_process_path(
    client: TestClient, dask_client: TestClient, trained: dict[str, Any], root: Path
) -> None:
    table = input_table(600)
    src = write_partitioned(table, root / "tx", parts=6)
    here = _run(client, batch_body(src, root / "here"))
    there = _run(dask_client, batch_body(src, root / "there"))
    assert here["status"] == there["status"] == "succeeded", (here, there)
    assert there["result"]["engine"] == "dask" and here["result"]["engine"] == "worker"
    assert there["result"]["partitions"] == 6
    assert {k: v for k, v in there["result"].items() if k not in ("engine", "output")} == {
        k: v for k, v in here["result"].items() if k not in ("engine", "output")
    }
    a, b = read_output(root / "here"), read_output(root / "there")
    assert b.equals(a)
    row_costs = [{"c_fp": 5.0, "c_fn": x} for x in table.column("amount").to_pylist()]
    assert_same_decisions(b, predicted(client, table, row_costs=row_costs), table["id"].to_pylist())


def test_an_error_in_a_dask_task_fails_the_job_naming_the_row(
    dask_client: TestClient, trained: dict[str, Any], root: Path
) -> None:
    table = input_table(600)
    amount = table.column("amount").to_numpy().copy()
    amount[517] = float("nan")
    table = table.set_column(table.schema.get_field_index("amount"), "amount", pa.array(amount))
    src = write_partitioned(table, root / "tx", parts=6)
    job = _run(dask_client, batch_body(src, root / "out"))
    assert job["status"] == "failed", job
    assert job["error"]["code"] == "INVALID_ARGUMENT"
    assert "row 517" in job["error"]["detail"] and "'amount'" in job["error"]["detail"]
    assert sorted(p.name for p in root.iterdir()) == ["tx"]


def test_an_unreachable_scheduler_fails_the_job_cleanly(
    batch_settings: Settings, trained: dict[str, Any], root: Path
) -> None:
    settings = batch_settings.model_copy(
        update={"dask_scheduler": f"tcp://127.0.0.1:{free_port()}"}
    )
    src = write_partitioned(input_table(60), root / "tx", parts=2)
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        job = _run(c, batch_body(src, root / "out"))
    assert job["status"] == "failed"
    assert job["error"]["code"] == "UNAVAILABLE"
    assert "COSTWISE_DASK_SCHEDULER" in job["error"]["detail"]
    assert sorted(p.name for p in root.iterdir()) == ["tx"]


def test_dask_reports_progress_once_per_partition_as_it_finishes(
    dask_client: TestClient, trained: dict[str, Any], root: Path
) -> None:
    """The batch door on the cluster (what a job and ``costwise batch`` run) calls its
    progress once per finished partition: every step of ``done`` is one partition's rows
    (sizes all different, so each step names its partition), the bar draws each count."""
    sizes = [40, 70, 100, 130, 160, 190]
    table = input_table(sum(sizes))
    src = root / "tx"
    src.mkdir()
    first = 0
    for i, n in enumerate(sizes):
        pq.write_table(table.slice(first, n), src / f"part-{i}.parquet", row_group_size=50)
        first += n
    reports: list[tuple[str, int, int]] = []
    drawn = io.StringIO()
    bar = ProgressBar(drawn, min_interval=0.0, unit="rows")

    def progress(phase: str, done: int, total: int) -> None:
        reports.append((phase, done, total))
        bar(phase, done, total)

    request = BatchRequest(
        src.as_uri(),
        (root / "out").as_uri(),
        "parquet",
        id_columns=["id"],
        costs=BatchCosts.of({"c_fn": {"column": "amount"}, "c_fp": 5}),
    )
    service = dask_client.app.state.services.batches  # type: ignore[attr-defined]
    result = service.run("progress-test", "fraud", request, progress, lambda _v, _r, move: move())
    assert result["engine"] == "dask" and result["rows"] == sum(sizes)

    scoring = [(done, total) for phase, done, total in reports if phase == "scoring"]
    assert {total for _, total in scoring} == {sum(sizes)}
    counts = [done for done, _ in scoring]
    assert counts == sorted(counts) and counts[0] == 0 and counts[-1] == sum(sizes)
    steps = np.diff(sorted(set(counts))).tolist()
    assert sorted(steps) == sizes  # one report per partition, none merged
    for count in sorted(set(counts))[1:]:
        assert f"rows {count}/{sum(sizes)}" in drawn.getvalue()
    assert read_output(root / "out").num_rows == sum(sizes)


def test_a_shadow_on_dask_writes_what_the_in_process_path_writes(
    client: TestClient, dask_client: TestClient, trained: dict[str, Any], root: Path
) -> None:
    from tests.app.batch.test_batch_shadow import _train_reordered

    shadow = _train_reordered(client)
    client.put("/v1/models/fraud/aliases/production", json={"version": trained["version"]})
    assert client.put("/v1/models/fraud/shadow", json={"version": shadow}).status_code == 200
    table = input_table(400)
    src = write_partitioned(table, root / "tx", parts=4)
    here = _run(client, batch_body(src, root / "here", shadow=True))
    there = _run(dask_client, batch_body(src, root / "there", shadow=True))
    assert here["status"] == there["status"] == "succeeded", (here, there)
    assert there["result"]["shadow"] == here["result"]["shadow"]
    assert there["result"]["shadow"]["version"] == shadow
    a, b = read_output(root / "here"), read_output(root / "there")
    assert b.equals(a) and "shadow_decision" in b.column_names
