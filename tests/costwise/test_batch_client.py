"""Batch decisions through the Python client and ``costwise batch`` (remote and local),
against the real service (uvicorn on a free port)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest

from app.db import upgrade_to_head
from costwise import Client
from tests.app.api.conftest import dataset
from tests.app.batch.conftest import FEATURES, input_table, write_partitioned
from tests.conftest import DATABASE_KINDS, fresh_database
from tests.costwise.conftest import ADMIN_KEY, Service, service_settings, serving
from tests.costwise.test_cli_remote import costwise

COSTS = {"c_fn": {"column": "amount"}, "c_fp": 5}


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def data_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Service, Path]]:
    root = tmp_path_factory.mktemp("data")
    with fresh_database(request.param, tmp_path_factory) as database_url:
        upgrade_to_head(database_url)
        settings = service_settings(database_url, data_roots=[str(root)])
        with serving(settings) as url:
            with Client(url, api_key=ADMIN_KEY) as c:
                X, y = dataset(300)
                c.train("fraud", X, y, feature_names=FEATURES, n_estimators=20, mode="sync")
            yield Service(url, database_url), root


def _input(directory: Path, name: str, n: int, parts: int) -> tuple[Any, Path, Path]:
    """``n`` rows of :func:`input_table`, the directory ``<name>-in`` holding them in
    ``parts`` Parquet files, and the output directory ``<name>-out`` (not created)."""
    table = input_table(n)
    src = write_partitioned(table, directory / f"{name}-in", parts=parts)
    return table, src, directory / f"{name}-out"


def _expected(client: Client, table: Any) -> list[Any]:
    records = [{k: r[k] for k in FEATURES} for r in table.to_pylist()]
    row_costs = [{"c_fp": 5.0, "c_fn": a} for a in table.column("amount").to_pylist()]
    answer = client.predict("fraud", records=records, row_costs=row_costs)
    return [p.decision for p in answer.predictions]


def test_the_client_submits_a_batch_and_waits_for_its_result(
    data_server: tuple[Service, Path],
) -> None:
    server, root = data_server
    table, src, out = _input(root, "client", 200, parts=2)
    with Client(server.url, api_key=ADMIN_KEY) as c:
        job = c.batch(
            "fraud", src.as_uri(), out.as_uri(), format="parquet", costs=COSTS,
            id_columns=["id"],
        )  # fmt: skip
        assert job.kind == "batch" and job.status in ("queued", "running", "succeeded")
        done = c.wait_for_job(job.id, poll_interval=0.05, timeout=60)
        assert done.status == "succeeded", done.error
        assert done.result is not None and done.result["rows"] == 200
        expected = _expected(c, table)
    written = ds.dataset(out).to_table()
    assert written.column("decision").to_pylist() == expected


def test_costwise_batch_with_url_follows_the_job_with_a_progress_bar(
    data_server: tuple[Service, Path],
) -> None:
    server, root = data_server
    table, src, out = _input(root, "cli", 150, parts=3)
    run = costwise(
        "batch", "fraud", str(src), str(out), "--format", "parquet",
        "--cost", "c_fn=col:amount", "--cost", "c_fp=5", "--id-column", "id",
        "--progress", "--poll-interval", "0.05",
        "--url", server.url, "--api-key", ADMIN_KEY,
    )  # fmt: skip
    result = json.loads(run.stdout)
    assert result["rows"] == 150 and result["output"] == out.as_uri()
    assert "rows" in run.stderr and "done" in run.stderr
    with Client(server.url, api_key=ADMIN_KEY) as c:
        expected = _expected(c, table)
    assert ds.dataset(out).to_table().column("decision").to_pylist() == expected


def test_costwise_batch_locally_decides_into_the_output(
    data_server: tuple[Service, Path], tmp_path: Path
) -> None:
    server, _ = data_server
    table, src, out = _input(tmp_path, "local", 120, parts=2)
    from tests.costwise.test_cli_remote import _env as env_of

    run = costwise(
        "batch", "fraud", str(src), str(out), "--format", "parquet",
        "--cost", "c_fn=col:amount", "--cost", "c_fp=5", "--progress",
        env=env_of(COSTWISE_DATABASE_URL=server.database_url),
    )  # fmt: skip
    result = json.loads(run.stdout)
    assert result["rows"] == 120 and result["engine"] == "worker"
    assert "scoring" in run.stderr
    with Client(server.url, api_key=ADMIN_KEY) as c:
        expected = _expected(c, table)
    assert ds.dataset(out).to_table().column("decision").to_pylist() == expected
    bad = costwise(
        "batch", "fraud", str(src), str(tmp_path / "o2"), "--format", "parquet",
        "--cost", "c_fn=col:nope", "--cost", "c_fp=5",
        env=env_of(COSTWISE_DATABASE_URL=server.database_url), check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and "no column 'nope'" in bad.stderr


def test_costwise_batch_decides_among_actions_with_a_column_cost(
    data_server: tuple[Service, Path], tmp_path: Path
) -> None:
    """--actions with a K x A --cost-matrix whose decline cell is the amount, remote and
    local: the action column is predict's with the same per-row matrices."""
    server, root = data_server
    table, src, out = _input(root, "actions", 80, parts=2)
    matrix = '[[0, 4, {"column": "amount"}], [100, 4, 0]]'
    from tests.costwise.test_cli_remote import _env as env_of

    remote = costwise(
        "batch", "fraud", str(src), str(out), "--format", "parquet",
        "--actions", "approve,review,decline", "--cost-matrix", matrix,
        "--url", server.url, "--api-key", ADMIN_KEY,
    )  # fmt: skip
    assert json.loads(remote.stdout)["rows"] == 80
    local_out = tmp_path / "actions-local"
    local = costwise(
        "batch", "fraud", str(src), str(local_out), "--format", "parquet",
        "--actions", "approve,review,decline", "--cost-matrix", matrix,
        env=env_of(COSTWISE_DATABASE_URL=server.database_url),
    )  # fmt: skip
    assert json.loads(local.stdout)["rows"] == 80
    records = [{k: r[k] for k in FEATURES} for r in table.to_pylist()]
    per_row = [[[0.0, 4.0, a], [100.0, 4.0, 0.0]] for a in table.column("amount").to_pylist()]
    with Client(server.url, api_key=ADMIN_KEY) as c:
        answer = c.predict(
            "fraud", records=records, actions=["approve", "review", "decline"],
            row_cost_matrices=per_row,
        )  # fmt: skip
    expected = [p.action for p in answer.predictions]
    assert len(set(expected)) >= 2
    assert ds.dataset(out).to_table().column("action").to_pylist() == expected
    assert ds.dataset(local_out).to_table().column("action").to_pylist() == expected
