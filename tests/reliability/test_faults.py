"""Proof 5: faults — PostgreSQL stopped under load, a training killed half-way, a
tampered artifact. PostgreSQL only (skipped without ``COSTWISE_TEST_DATABASE_URL``).

This module stops the PostgreSQL cluster for a few seconds, so it must never run while
other tests use PostgreSQL: the suite runs sequentially (no xdist) and this module is the
only one that does it. The cluster is ALWAYS started again in a ``finally`` block and the
test waits until it accepts connections before it ends.

Decision (documented in docs/reliability.md): while the database is unreachable, every
request that needs it gets ``503 UNAVAILABLE``, except predictions of a version resolved
recently (COSTWISE_REGISTRY_STALE_SECONDS, default 300 s) whose model is loaded: those
are served from memory and say so (``resolution: {stale: true, resolved_at}``), so that
a registry outage does not stop serving. With the setting at 0 every prediction is a 503.
"""

from __future__ import annotations

import glob
import os
import subprocess
import threading
import time
from collections import Counter
from typing import Any

import httpx
import numpy as np
import psutil
import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from tests.app.api.conftest import train_body
from tests.reliability.conftest import connection, flip_artifact_byte, write_result

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.parametrize("empty_database_url", ["postgres"], indirect=True),
]

ROW = [0.1, 0.2, 0.3, 0.4]


def _cluster() -> list[str]:
    versions = sorted(os.path.basename(p) for p in glob.glob("/etc/postgresql/*"))
    if not versions:
        pytest.skip("no local PostgreSQL cluster to stop (/etc/postgresql is empty)")
    return ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main"]


def _pg_accepts(url: str) -> bool:
    u = make_url(url)
    try:
        with psycopg.connect(
            host=u.host, port=u.port or 5432, user=u.username, dbname=u.database, connect_timeout=2
        ):
            return True
    except psycopg.OperationalError:
        return False


def _start_postgres(url: str, timeout: float = 60.0) -> None:
    """Start the cluster (idempotent) and wait until it accepts connections."""
    subprocess.run([*_cluster(), "start"], check=False, capture_output=True, timeout=120)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _pg_accepts(url):
            return
        time.sleep(0.5)
    raise RuntimeError("PostgreSQL did not come back")


def _predict(client: httpx.Client) -> httpx.Response:
    return client.post("/v1/models/fraud/predict", json={"instances": [ROW]})


def test_postgres_outage_gives_503_then_recovers(database_url: str, server_factory: Any) -> None:
    """Under load, stop PostgreSQL: answers are 200 or 503 UNAVAILABLE (never another
    error), and every request sent and answered while the cluster is stopped is a 503;
    /health/live stays up, /health/ready says 503; start it again: the same server
    process serves 200s again without a restart."""
    _cluster()
    server = server_factory(database_url, workers=1)
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        assert client.post("/v1/models/fraud/versions", json=train_body()).status_code == 201
        assert _predict(client).status_code == 200  # loaded and cached
    phase = ["up"]
    seen: Counter[str] = Counter()
    bad: list[str] = []
    stop = threading.Event()

    def load() -> None:
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            calls = (lambda: _predict(client), lambda: client.get("/v1/models"))
            while not stop.is_set():
                for call in calls:
                    before = phase[0]
                    r = call()
                    when = before if phase[0] == before else "transition"
                    code = r.json().get("code", "") if r.status_code != 200 else ""
                    if r.status_code == 200 and r.json().get("resolution") is not None:
                        code = "stale"  # a predict served from memory (never a listing)
                    seen[f"{when} {r.status_code} {code}".strip()] += 1
                    if r.status_code not in (200, 503) or (
                        r.status_code == 503 and code != "UNAVAILABLE"
                    ):
                        bad.append(f"{r.status_code} {r.text[:200]}")

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    outage: dict[str, Any] = {}
    try:
        time.sleep(1.5)
        phase[0] = "stopping"
        subprocess.run([*_cluster(), "stop", "-m", "fast"], check=True, timeout=120)
        phase[0] = "down"  # the cluster is stopped: nothing may answer 200 from here
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            time.sleep(1.0)
            r = _predict(client)
            outage["predict"] = (r.status_code, r.json())
            listing = client.get("/v1/models")
            outage["list"] = listing.status_code
            outage["list_detail"] = listing.json().get("detail", "")
            outage["live"] = client.get("/health/live").status_code
            outage["ready"] = client.get("/health/ready").status_code
            time.sleep(2.0)
    finally:
        phase[0] = "starting"
        _start_postgres(database_url)
        phase[0] = "back"
    recovered_after = None
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        start = time.monotonic()
        while time.monotonic() - start < 30:
            if _predict(client).status_code == 200 and client.get("/v1/models").status_code == 200:
                recovered_after = time.monotonic() - start
                break
            time.sleep(0.2)
        time.sleep(1.0)
        stop.set()
        for t in threads:
            t.join()
        assert client.get("/health/ready").status_code == 200
    write_result(
        "faults-outage",
        {"responses": dict(seen), "recovered_after_s": recovered_after, "outage": outage},
    )
    assert not bad, bad[:5]
    status, body = outage["predict"]
    assert status == 200 and body["resolution"]["stale"] is True, body  # from memory
    assert body["resolution"]["resolved_at"].endswith("Z"), body
    assert outage["list"] == 503 and outage["ready"] == 503 and outage["live"] == 200
    detail = outage["list_detail"]
    assert "password" not in detail and "postgres" not in detail.lower(), detail
    assert recovered_after is not None, seen
    assert seen["back 200"] > 0 and seen["down 503 UNAVAILABLE"] > 0, seen  # the listings
    assert seen["down 200 stale"] > 0, seen
    assert seen["down 200"] == 0, seen  # nothing served from the database while down
    assert server.process.poll() is None  # the same process, never restarted


def test_training_killed_half_way_leaves_no_version(database_url: str, server_factory: Any) -> None:
    """kill -9 the server while it trains: nothing of that training is in the registry."""
    server = server_factory(database_url, workers=1)
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(40_000, 20)), 3)
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=len(X)) > 0).astype(int)
    body = {  # depth-6 trees x 4000 rounds: minutes of work, far more than the wait below
        "features": X.tolist(),
        "labels": y.tolist(),
        "n_estimators": 4000,
        "weak_learner": "tree",
        "max_depth": 6,
    }
    outcome: list[str] = []

    def train() -> None:
        try:
            r = httpx.post(f"{server.base_url}/v1/models/big/versions", json=body, timeout=300)
            outcome.append(f"answered {r.status_code}")
        except httpx.HTTPError as error:
            outcome.append(f"connection lost: {type(error).__name__}")

    thread = threading.Thread(target=train)
    thread.start()
    process, busy, deadline = psutil.Process(server.pid), 0.0, time.monotonic() + 90
    while busy < 3.0 and time.monotonic() < deadline:  # 3 s of CPU: parsed, boosting
        time.sleep(0.25)
        cpu = process.cpu_times()
        busy = cpu.user + cpu.system
    server.process.kill()  # SIGKILL: no cleanup, no rollback handler runs
    server.process.wait(timeout=30)
    thread.join(timeout=60)
    assert outcome and outcome[0].startswith("connection lost"), outcome
    assert busy >= 3.0, f"the server had used only {busy:.1f} s of CPU: not training yet?"
    with connection(database_url) as conn:
        versions = conn.execute(
            text(
                "SELECT count(*) FROM model_versions v JOIN registered_models m "
                "ON m.id = v.model_id WHERE m.name = 'big'"
            )
        ).scalar_one()
        artifacts = conn.execute(text("SELECT count(*) FROM artifacts")).scalar_one()
    assert versions == 0 and artifacts == 0
    restarted = server_factory(database_url, workers=1)
    r = httpx.get(f"{restarted.base_url}/v1/models/big/versions", timeout=30)
    assert r.status_code == 404 or r.json()["versions"] == [], r.text


def test_tampered_artifact_is_refused_by_every_worker(
    database_url: str, server_factory: Any
) -> None:
    """One byte changed in the stored artifact: every predict (both workers) gets 409
    ARTIFACT_CORRUPTED, reads still work, and the intact version still serves."""
    server = server_factory(database_url, workers=2)
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        for seed in (0, 1):
            r = client.post("/v1/models/fraud/versions", json=train_body(seed=seed))
            assert r.status_code == 201, r.text
        flip_artifact_byte(database_url, "fraud", 1)
        for _ in range(8):  # enough to reach both workers
            r = client.post("/v1/models/fraud/predict", json={"instances": [ROW], "version": 1})
            assert r.status_code == 409, r.text
            assert r.json()["code"] == "ARTIFACT_CORRUPTED"
            ok = client.post("/v1/models/fraud/predict", json={"instances": [ROW], "version": 2})
            assert ok.status_code == 200 and ok.json()["version"] == 2
        assert client.get("/v1/models/fraud/versions/1").status_code == 200
