"""A batch job run by a real ``costwise worker`` process (arq on Redis, PostgreSQL): the
same decisions as predict, written by the worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.api.conftest import train_body
from tests.app.batch.conftest import input_table, write_partitioned
from tests.app.batch.test_batch_api import assert_same_decisions, batch_body, predicted, read_output
from tests.app.jobs.conftest import finished, poll
from tests.app.jobs.test_worker_redis import Workers, api, env, workers  # noqa: F401  fixtures

pytestmark = pytest.mark.parametrize(
    "empty_database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


def test_a_worker_process_runs_a_batch_job(
    env: dict[str, str],  # noqa: F811
    workers: Workers,  # noqa: F811
    tmp_path: Path,
) -> None:
    root = tmp_path / "data"
    root.mkdir()
    workers.env["COSTWISE_DATA_ROOTS"] = str(root)
    workers.start()
    table = input_table(400)
    src = write_partitioned(table, root / "tx", parts=2)
    with api(env, data_roots=[str(root)]) as c:
        r = c.post("/v1/models/fraud/versions", json=train_body(300), params={"mode": "sync"})
        assert r.status_code == 201, r.text
        job = c.post("/v1/models/fraud/batch", json=batch_body(src, root / "out"))
        assert job.status_code == 202, job.text
        end = poll(c, job.json()["id"], finished, timeout=60)
        assert end["status"] == "succeeded", (end, workers.output())
        assert str(workers.procs[0].pid) in end["worker"]
        assert end["result"]["rows"] == 400
        row_costs = [{"c_fp": 5.0, "c_fn": a} for a in table.column("amount").to_pylist()]
        answers = predicted(c, table, row_costs=row_costs)
    assert_same_decisions(read_output(root / "out"), answers, table.column("id").to_pylist())
