"""A real ``costwise worker`` process (arq) against Redis and PostgreSQL.

Redis comes from the ``redis_url`` fixture (tests/conftest.py: FAILS when
``COSTWISE_TEST_REDIS_URL`` is set and Redis does not answer). Each test uses its own
queue name and a fresh PostgreSQL database.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.settings import Settings
from tests.app.jobs.conftest import JOB_SETTINGS, boosting, counts, finished, long_body, poll

ROOT = Path(__file__).resolve().parents[3]
HEARTBEAT_TIMEOUT = 2.0

pytestmark = pytest.mark.parametrize(
    "empty_database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


@pytest.fixture
def env(database_url: str, redis_url: str, tmp_path: Path) -> dict[str, str]:
    """Settings shared by the API and the workers of one test (its own queue)."""
    return {
        "COSTWISE_DATABASE_URL": database_url,
        "COSTWISE_QUEUE": "redis",
        "COSTWISE_REDIS_URL": redis_url,
        "COSTWISE_QUEUE_NAME": f"costwise:test:{uuid.uuid4().hex}",
        "COSTWISE_JOB_HEARTBEAT_TIMEOUT": str(HEARTBEAT_TIMEOUT),
        "COSTWISE_JOB_PROGRESS_INTERVAL": "0.1",
    }


class Workers:
    """Starts ``costwise worker`` processes; kills what is left at the end."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env = {**os.environ, **env}
        self.logs = logs
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> subprocess.Popen[bytes]:
        log = open(self.logs / f"worker-{len(self.procs)}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "worker"],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.procs.append(proc)
        return proc

    def output(self) -> str:
        return "\n".join(p.read_text()[-3000:] for p in sorted(self.logs.glob("worker-*.log")))

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def workers(env: dict[str, str], tmp_path: Path) -> Iterator[Workers]:
    w = Workers(env, tmp_path)
    yield w
    w.stop_all()


def api(env: dict[str, str], **overrides: Any) -> TestClient:
    settings = Settings(
        database_url=env["COSTWISE_DATABASE_URL"],
        queue="redis",
        redis_url=env["COSTWISE_REDIS_URL"],
        queue_name=env["COSTWISE_QUEUE_NAME"],
        **{**JOB_SETTINGS, **overrides},
    )
    return TestClient(create_app(settings), raise_server_exceptions=False)


def test_worker_runs_a_job_with_progress_then_cancels_another(
    env: dict[str, str], workers: Workers, database_url: str
) -> None:
    workers.start()
    with api(env) as c:
        job = c.post("/v1/models/m/versions?mode=job", json=long_body(n_estimators=1500))
        assert job.status_code == 202, job.text
        seen = poll(c, job.json()["id"], lambda j: boosting(j) or finished(j), timeout=40)
        assert seen["status"] == "running", workers.output()
        assert seen["worker"] and str(workers.procs[0].pid) in seen["worker"]
        end = poll(c, job.json()["id"], finished, timeout=40)
        assert end["status"] == "succeeded" and end["version"] == 1, (end, workers.output())
        assert c.get(end["version_url"]).status_code == 200
        assert end["done"] > seen["done"] and set(end["timings"]) >= {"boosting", "registering"}

        other = c.post("/v1/models/m/versions?mode=job", json=long_body()).json()
        poll(c, other["id"], boosting, timeout=40)
        assert c.post(f"/v1/jobs/{other['id']}/cancel").status_code == 202
        stopped = poll(c, other["id"], finished, timeout=20)
    assert stopped["status"] == "cancelled" and stopped["version"] is None
    assert counts(database_url)["model_versions"] == 1


@pytest.mark.parametrize(("max_attempts", "status"), [(2, "succeeded"), (1, "failed")])
def test_a_killed_worker_leaves_no_version_and_the_job_is_retried_or_failed(
    env: dict[str, str], workers: Workers, database_url: str, max_attempts: int, status: str
) -> None:
    first = workers.start()
    with api(env, job_max_attempts=max_attempts) as c:
        job = c.post("/v1/models/m/versions?mode=job", json=long_body(n_estimators=2500)).json()
        running = poll(c, job["id"], lambda j: boosting(j) or finished(j), timeout=40)
        assert running["status"] == "running", workers.output()
        first.kill()  # SIGKILL mid-job: no clean-up code runs
        first.wait()
        assert counts(database_url)["model_versions"] == 0
        workers.start()
        end = poll(c, job["id"], finished, timeout=60)
    assert end["status"] == status, (end, workers.output())
    versions = counts(database_url)["model_versions"]
    if status == "succeeded":
        assert end["attempts"] == 2 and end["version"] == 1 and versions == 1
        assert str(workers.procs[1].pid) in end["worker"]
    else:
        assert end["error"]["code"] == "JOB_ABANDONED" and versions == 0
        assert str(first.pid) in end["error"]["detail"]
    assert counts(database_url)["artifacts"] == versions
    assert counts(database_url)["training_job_inputs"] == 0


def test_unreachable_redis_is_503_and_creates_no_job(env: dict[str, str]) -> None:
    with api({**env, "COSTWISE_REDIS_URL": "redis://127.0.0.1:1/0"}) as c:
        r = c.post("/v1/models/m/versions?mode=job", json=long_body(n_estimators=10))
        assert r.status_code == 503 and r.json()["code"] == "UNAVAILABLE", r.text
        assert "COSTWISE_REDIS_URL" in r.json()["detail"]
        assert c.get("/v1/jobs").json()["total"] == 0
