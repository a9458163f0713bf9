"""Helpers of the training-job tests: bodies that train fast or long, polling, counts."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.db import make_engine
from tests.app.api.conftest import train_body

FINISHED = ("succeeded", "failed", "cancelled")
JOB_SETTINGS: dict[str, Any] = {
    "max_train_rows": 20_000,
    "max_body_bytes": 20_000_000,
    "max_rounds": 5000,
    "job_progress_interval": 0.1,
    "job_heartbeat_timeout": 30.0,
}


def quick_body(**params: Any) -> dict[str, Any]:
    """Trains in well under a second."""
    return train_body(n=400, **{"n_estimators": 40, **params})


def long_body(**params: Any) -> dict[str, Any]:
    """Trains for several seconds (many rounds of stumps on 4000 rows)."""
    return train_body(n=4000, **{"n_estimators": 5000, **params})


Client = TestClient | httpx.Client


def poll(
    client: Client, job_id: str, until: Callable[[dict[str, Any]], bool], timeout: float = 30
) -> dict[str, Any]:
    """GET the job until ``until(job)`` holds; fails with the last state after ``timeout``."""
    deadline = time.monotonic() + timeout
    job: dict[str, Any] = {}
    while time.monotonic() < deadline:
        r = client.get(f"/v1/jobs/{job_id}")
        assert r.status_code == 200, r.text
        job = r.json()
        if until(job):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not reach the expected state in {timeout} s: {job}")


def finished(job: dict[str, Any]) -> bool:
    return job["status"] in FINISHED


def boosting(job: dict[str, Any]) -> bool:
    return job["status"] == "running" and job["phase"] == "boosting" and job["done"] > 0


def counts(database_url: str) -> dict[str, int]:
    """Rows of the registry tables (a half-registered version would show here)."""
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            return {
                t: int(conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one())
                for t in ("model_versions", "artifacts", "training_jobs", "training_job_inputs")
            }
    finally:
        engine.dispose()
