"""Training jobs run in-process, through the real app factory (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from app.api.main import create_app
from app.db import make_engine, make_session_factory
from app.registry.orm import TrainingJob, utcnow
from app.settings import Settings
from tests.app.jobs.conftest import (
    JOB_SETTINGS,
    boosting,
    counts,
    finished,
    long_body,
    poll,
    quick_body,
)


def make_client(database_url: str, **overrides: Any) -> TestClient:
    settings = Settings(database_url=database_url, **{**JOB_SETTINGS, **overrides})
    return TestClient(create_app(settings), raise_server_exceptions=False)


@pytest.fixture
def client(database_url: str) -> Iterator[TestClient]:
    with make_client(database_url) as c:
        yield c


def test_job_answers_202_then_registers_the_same_model_as_sync(
    client: TestClient, database_url: str
) -> None:
    r = client.post("/v1/models/fraud/versions?mode=job", json=quick_body(random_state=7))
    assert r.status_code == 202, r.text
    job = r.json()
    assert r.headers["location"] == f"/v1/jobs/{job['id']}"
    assert job["model"] == "fraud" and job["status"] in ("queued", "running")
    assert job["version"] is None and job["total"] == 40 * 6  # kfold: 5 fold fits + the final fit
    done = poll(client, job["id"], finished)
    assert done["status"] == "succeeded", done
    assert done["version"] == 1 and done["version_url"] == "/v1/models/fraud/versions/1"
    assert done["phase"] == "done" and done["progress"] == 1.0 and done["attempts"] == 1
    assert set(done["timings"]) >= {"binning", "boosting", "calibrating", "evaluating"}
    assert done["error"] is None and done["finished_at"] >= done["started_at"]
    version = client.get(done["version_url"]).json()
    sync = client.post("/v1/models/same/versions?mode=sync", json=quick_body(random_state=7))
    assert sync.status_code == 201, sync.text
    assert version["metrics"] == sync.json()["metrics"]
    assert version["artifact_sha256"] == sync.json()["artifact_sha256"]
    assert counts(database_url)["training_job_inputs"] == 0  # the data is deleted at the end


def test_auto_mode_uses_a_job_from_the_row_threshold(database_url: str) -> None:
    with make_client(database_url, job_min_rows=300) as c:
        small = c.post("/v1/models/m/versions", json=train_body_rows(200))
        assert small.status_code == 201, small.text
        large = c.post("/v1/models/m/versions", json=train_body_rows(400))
        assert large.status_code == 202, large.text
        assert poll(c, large.json()["id"], finished)["version"] == 2


def train_body_rows(n: int) -> dict[str, Any]:
    from tests.app.api.conftest import train_body

    return train_body(n=n, n_estimators=10)


def test_progress_is_observed_then_cancel_registers_nothing(
    client: TestClient, database_url: str
) -> None:
    job = client.post("/v1/models/long/versions?mode=job", json=long_body()).json()
    first = poll(client, job["id"], boosting)
    later = poll(client, job["id"], lambda j: j["done"] > first["done"] or finished(j))
    assert later["status"] == "running" and later["done"] > first["done"]
    # default calibration_split="kfold": 5 fold fits + the final fit count as one run
    assert later["total"] == 5000 * 6 and 0 < later["progress"] < 1
    assert later["heartbeat_at"] is not None and later["worker"]
    r = client.post(f"/v1/jobs/{job['id']}/cancel")
    assert r.status_code == 202, r.text
    assert r.json()["cancel_requested"] is True
    end = poll(client, job["id"], finished)
    assert end["status"] == "cancelled" and end["version"] is None, end
    assert end["done"] < 5000 * 6
    assert counts(database_url)["model_versions"] == 0
    assert client.get("/v1/models/long").status_code == 404
    again = client.post(f"/v1/jobs/{job['id']}/cancel")
    assert again.status_code == 409 and again.json()["code"] == "CONFLICT"


def test_cancel_a_queued_job_at_once(client: TestClient, database_url: str) -> None:
    running = client.post("/v1/models/a/versions?mode=job", json=long_body()).json()
    queued = client.post("/v1/models/b/versions?mode=job", json=quick_body()).json()
    poll(client, running["id"], boosting)  # concurrency 1: the second one waits
    r = client.post(f"/v1/jobs/{queued['id']}/cancel")
    assert r.status_code == 202 and r.json()["status"] == "cancelled", r.text
    assert client.post(f"/v1/jobs/{running['id']}/cancel").status_code == 202
    assert poll(client, running["id"], finished)["status"] == "cancelled"
    assert counts(database_url) == {
        "model_versions": 0,
        "artifacts": 0,
        "training_jobs": 2,
        "training_job_inputs": 0,
    }


@pytest.mark.parametrize(
    ("change", "status", "code", "field"),
    [
        ({"labels": [0] * 400}, 422, "INVALID_ARGUMENT", "labels"),
        ({"algorithm": "nope"}, 422, "INVALID_ARGUMENT", "algorithm"),
        ({"n_estimators": 6000}, 422, "INVALID_ARGUMENT", "n_estimators"),
        ({"params": {"c_fp": -1}}, 422, "INVALID_ARGUMENT", None),
        ({"tags": {"": "x"}}, 422, "INVALID_ARGUMENT", None),
        ({"feature_names": ["a"]}, 422, "INVALID_ARGUMENT", "feature_names"),
        ({"calibration": "magic"}, 422, "INVALID_ARGUMENT", "calibration"),
    ],
)
def test_bad_input_is_refused_synchronously_and_creates_no_job(
    client: TestClient, change: dict[str, Any], status: int, code: str, field: str | None
) -> None:
    r = client.post("/v1/models/m/versions?mode=job", json={**quick_body(), **change})
    assert r.status_code == status, r.text
    assert r.json()["code"] == code
    if field is not None:
        assert r.json()["field"] == field
    assert client.get("/v1/jobs").json()["total"] == 0


def test_unknown_job_and_bad_queries(client: TestClient) -> None:
    for r in (client.get("/v1/jobs/nope"), client.post("/v1/jobs/nope/cancel")):
        assert r.status_code == 404 and r.json()["code"] == "NOT_FOUND", r.text
    assert client.get("/v1/jobs?status=done").status_code == 422
    assert client.get("/v1/jobs?limit=0").status_code == 422
    assert client.post("/v1/models/m/versions?mode=later", json=quick_body()).status_code == 422


def test_list_filters_and_pages(client: TestClient) -> None:
    ids = [
        client.post(f"/v1/models/{name}/versions?mode=job", json=quick_body()).json()["id"]
        for name in ("x", "y", "x")
    ]
    for job_id in ids:
        poll(client, job_id, finished)
    everything = client.get("/v1/jobs").json()
    assert everything["total"] == 3
    assert [j["id"] for j in everything["jobs"]] == ids[::-1]  # newest first
    xs = client.get("/v1/jobs?model=x&status=succeeded").json()
    assert xs["total"] == 2 and {j["model"] for j in xs["jobs"]} == {"x"}
    page = client.get("/v1/jobs?limit=1&offset=1").json()
    assert page["total"] == 3 and [j["id"] for j in page["jobs"]] == [ids[1]]
    assert client.get("/v1/jobs?status=failed").json()["total"] == 0


def test_job_over_its_time_limit_fails_and_registers_nothing(database_url: str) -> None:
    with make_client(database_url, max_job_seconds=0.05) as c:
        job = c.post("/v1/models/slow/versions?mode=job", json=long_body()).json()
        end = poll(c, job["id"], finished)
    assert end["status"] == "failed" and end["version"] is None
    assert end["error"]["code"] == "TRAINING_TIME_LIMIT"
    assert "COSTWISE_MAX_JOB_SECONDS" in end["error"]["detail"]
    assert counts(database_url)["model_versions"] == 0


def _abandon(database_url: str, job_id: str, attempts: int) -> None:
    """What a process that died mid-job leaves: running, with an old heartbeat."""
    engine = make_engine(database_url)
    try:
        with make_session_factory(engine).begin() as session:
            old = utcnow() - timedelta(hours=1)
            session.execute(
                update(TrainingJob)
                .where(TrainingJob.id == job_id)
                .values(status="running", attempts=attempts, worker="gone:1", heartbeat_at=old)
            )
    finally:
        engine.dispose()


@pytest.mark.parametrize(("attempts", "status"), [(1, "succeeded"), (2, "failed")])
def test_a_job_left_running_by_a_dead_process_is_retried_or_failed(
    database_url: str, attempts: int, status: str
) -> None:
    with make_client(database_url, job_concurrency=1) as c:
        blocker = c.post("/v1/models/a/versions?mode=job", json=long_body()).json()
        job = c.post("/v1/models/b/versions?mode=job", json=quick_body()).json()
        poll(c, blocker["id"], boosting)
        _abandon(database_url, job["id"], attempts)  # as if a dead process was running it
        c.post(f"/v1/jobs/{blocker['id']}/cancel")
        poll(c, blocker["id"], finished)
    with make_client(database_url) as c:  # start-up recovers it (if not retried already)
        end = poll(c, job["id"], finished)
    assert end["status"] == status, end
    if status == "succeeded":
        assert end["attempts"] == 2 and end["version"] == 1 and end["worker"] != "gone:1"
    else:
        assert end["error"]["code"] == "JOB_ABANDONED" and "gone:1" in end["error"]["detail"]
        assert end["version"] is None
        assert counts(database_url)["model_versions"] == 0


def test_stopping_the_app_requeues_running_jobs_and_the_next_start_runs_them(
    database_url: str,
) -> None:
    with make_client(database_url) as c:
        job = c.post("/v1/models/m/versions?mode=job", json=quick_body(n_estimators=5000)).json()
        poll(c, job["id"], boosting)
    with make_client(database_url) as c:
        queued = c.get(f"/v1/jobs/{job['id']}").json()
        end = poll(c, job["id"], finished)
    assert queued["attempts"] in (0, 1)  # re-queued without using up an attempt
    assert end["status"] == "succeeded" and end["attempts"] == 1, end


def _job_gauges(client: TestClient) -> dict[str, float]:
    text = client.get("/metrics").text
    prefix = 'costwise_training_jobs{status="'
    return {
        line[len(prefix) : line.index('"', len(prefix))]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(prefix)
    }


def test_metrics_count_jobs_by_status_from_the_database(client: TestClient) -> None:
    assert _job_gauges(client) == dict.fromkeys(
        ("queued", "running", "succeeded", "failed", "cancelled"), 0.0
    )
    done = client.post("/v1/models/a/versions?mode=job", json=quick_body()).json()
    poll(client, done["id"], finished)
    running = client.post("/v1/models/b/versions?mode=job", json=long_body()).json()
    poll(client, running["id"], boosting)
    gauges = _job_gauges(client)
    assert (gauges["succeeded"], gauges["running"], gauges["cancelled"]) == (1.0, 1.0, 0.0)
    client.post(f"/v1/jobs/{running['id']}/cancel")
    poll(client, running["id"], finished)
    gauges = _job_gauges(client)
    assert (gauges["succeeded"], gauges["running"], gauges["cancelled"]) == (1.0, 0.0, 1.0)
