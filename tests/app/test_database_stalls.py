"""The parts of "a stalled database never freezes the process" that need no server:
the fail-fast state, the watchdog that cuts a call with no answer, serving recent
resolutions from memory, and stopping a training at shutdown. The end-to-end proofs
(relay, lock, uvicorn, SIGTERM) are in tests/reliability/test_stall.py."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.api.main import create_app
from app.db import DatabaseHealth, Timeouts, Watchdog, make_engine
from app.errors import Unavailable
from app.services.training.deadline import training_deadline
from app.settings import Settings
from models.boosting.progress import report
from tests.app.api.conftest import train_body

ROW = [0.1, 0.2, 0.3, 0.4]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_health_fails_fast_while_down_and_lets_one_probe_through_per_interval() -> None:
    clock = Clock()
    health = DatabaseHealth(probe_interval=0.5, clock=clock)
    assert health.allow() and health.allow() and health.down_since is None
    health.failed()
    assert health.down_since is not None
    assert not health.allow()  # the failing call was the probe of this interval
    with pytest.raises(Unavailable, match="not answering since"):
        health.check()
    clock.now += 0.5
    assert health.allow()  # one probe...
    assert not health.allow()  # ...and only one
    health.ok()
    assert health.down_since is None and health.allow() and health.allow()


def test_a_statement_timeout_is_an_outage_only_when_nothing_else_succeeded() -> None:
    """A statement cancelled by the statement timeout while other statements succeeded
    is one heavy statement, not the database down; with no success since it began, it
    is an outage like any other failure."""
    clock = Clock()
    health = DatabaseHealth(probe_interval=0.5, clock=clock)
    heavy = health.started()
    clock.now += 0.1
    health.ok()  # e.g. a predict's look-up, while the heavy statement ran
    clock.now += 0.2
    health.timed_out(heavy)
    assert health.down_since is None and health.failures == 0 and health.slow_statements == 1
    alone = health.started()  # nothing succeeds while this one runs
    clock.now += 0.3
    health.timed_out(alone)
    assert health.down_since is not None and health.failures == 1
    assert health.slow_statements == 1


def test_no_new_connection_is_tried_right_after_a_failure() -> None:
    """A server that accepts TCP and never answers (a stalled path): the first connect
    waits for its timeout (2 s) and marks the database down; another connect within the
    probe interval fails at once without trying (a request that had waited for a pooled
    connection meanwhile does not spend a second timeout); after the interval one is tried."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    health = DatabaseHealth(probe_interval=0.5)
    url = f"postgresql+psycopg://nobody@127.0.0.1:{port}/none"
    engine = make_engine(url, timeouts=Timeouts(connect=2.0), health=health, pool_pre_ping=False)

    def attempt() -> float:
        started = time.monotonic()
        with pytest.raises(Exception, match=r"timeout|not tried"), engine.connect():
            pass
        return time.monotonic() - started

    try:
        assert 1.9 <= attempt() < 10  # tried: the connect timeout
        assert health.down_since is not None and health.failures == 1
        assert attempt() < 0.3  # within the probe interval: not tried
        assert health.failures == 1  # and not counted as a failure
        time.sleep(0.5)
        assert attempt() >= 1.9 and health.failures == 2  # tried again after it
    finally:
        engine.dispose()
        listener.close()


def test_watchdog_cuts_a_call_whose_peer_never_answers() -> None:
    ours, theirs = socket.socketpair()
    watchdog = Watchdog(tick=0.01)
    try:
        started = time.monotonic()
        with watchdog.guard(ours, 0.2) as fired:
            data = ours.recv(10)  # would block forever: the peer never writes
        elapsed = time.monotonic() - started
        assert data == b"" and fired == [True] and watchdog.fired == 1
        assert elapsed < 5.0  # cut at the deadline, not when the peer answers
        with watchdog.guard(theirs, 5.0) as fired:  # a call that ends in time
            pass
        assert fired == [] and watchdog.fired == 1
    finally:
        ours.close()
        theirs.close()


@pytest.mark.postgres
@pytest.mark.parametrize("empty_database_url", ["postgres"], indirect=True)
def test_timeouts_reach_postgresql(empty_database_url: str) -> None:
    engine = make_engine(empty_database_url, timeouts=Timeouts(statement=1.5, lock=0.25))
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SHOW statement_timeout")).scalar() == "1500ms"
            assert conn.execute(text("SHOW lock_timeout")).scalar() == "250ms"
    finally:
        engine.dispose()


@pytest.fixture
def client(database_url: str) -> Iterator[TestClient]:
    # no prediction log: its writer's next successful flush would end the simulated
    # outage (any statement that succeeds proves the database up)
    settings = Settings(database_url=database_url, registry_stale_seconds=60, prediction_log=False)
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        yield c


def _predict(client: TestClient, **extra: object) -> dict[str, object]:
    r = client.post("/v1/models/m/predict", json={"instances": [ROW], **extra})
    return {"status": r.status_code, **r.json()}


def test_recent_resolutions_are_served_from_memory_while_the_database_is_down(
    client: TestClient,
) -> None:
    assert client.post("/v1/models/m/versions", json=train_body()).status_code == 201
    fresh = _predict(client)
    assert fresh["status"] == 200 and fresh["resolution"] is None
    services = client.app.state.services  # type: ignore[attr-defined]
    # no probe may pass while the test runs (a loaded machine can take longer than the
    # default 0.5 s between two calls)
    services.health.probe_interval = 3600.0
    services.health.failed()  # as a timed-out call would: down, probe spent
    stale = _predict(client)
    assert stale["status"] == 200, stale
    resolution = stale["resolution"]
    assert isinstance(resolution, dict) and resolution["stale"] is True
    assert str(resolution["resolved_at"]).endswith("Z")
    # the same decisions; each request's rows get ids of their own in the prediction log
    assert [{**p, "id": None} for p in stale["predictions"]] == [
        {**p, "id": None} for p in fresh["predictions"]
    ]
    never = _predict(client, version=1)  # never resolved this way: no memory of it
    assert never["status"] == 503 and never["code"] == "UNAVAILABLE", never
    write = client.put("/v1/models/m/aliases/production", json={"version": 1})
    assert write.status_code == 503 and write.json()["code"] == "UNAVAILABLE"
    assert client.get("/health/live").status_code == 200
    services.predictor.stale_seconds = 0  # disabled: every predict needs the database
    assert _predict(client)["status"] == 503
    services.health.ok()
    assert _predict(client)["resolution"] is None


def _infer(client: TestClient, path: str = "/v2/models/m/infer") -> dict[str, object]:
    tensor = {"name": "x", "shape": [1, 4], "datatype": "FP64", "data": ROW}
    r = client.post(path, json={"inputs": [tensor], "parameters": {"c_fp": 1, "c_fn": 5}})
    return {"status": r.status_code, **r.json()}


def _without_ids(answer: dict[str, object]) -> list[Any]:
    """The output tensors but the rows' ids (each logged request's rows get new ones)."""
    outputs: list[dict[str, Any]] = answer["outputs"]
    return [o for o in outputs if o["name"] != "id"]


def test_v2_infer_is_served_from_memory_while_the_database_is_down(client: TestClient) -> None:
    """/v2 infer like /v1 predict: a recent resolution keeps serving during an outage and
    its parameters say since when (``resolution_stale_since``); never resolved: 503."""
    assert client.post("/v1/models/m/versions", json=train_body()).status_code == 201
    fresh = _infer(client)
    assert fresh["status"] == 200, fresh
    assert "resolution_stale_since" not in fresh["parameters"]  # type: ignore[operator]
    services = client.app.state.services  # type: ignore[attr-defined]
    # no probe may pass while the test runs (a loaded machine can take longer than the
    # default 0.5 s between two calls)
    services.health.probe_interval = 3600.0
    services.health.failed()  # as a timed-out call would: down, probe spent
    stale = _infer(client)
    assert stale["status"] == 200, stale
    since = stale["parameters"]["resolution_stale_since"]  # type: ignore[index]
    assert isinstance(since, str) and since.endswith("Z")
    assert _without_ids(stale) == _without_ids(fresh)
    assert stale["model_version"] == fresh["model_version"] == "1"
    never = _infer(client, "/v2/models/m/versions/1/infer")  # never resolved this way
    assert never["status"] == 503 and "error" in never, never
    services.health.ok()
    again = _infer(client)
    assert again["status"] == 200 and "resolution_stale_since" not in again["parameters"]  # type: ignore[operator]


def test_a_stop_event_ends_a_training_at_its_next_round() -> None:
    stop = threading.Event()
    rounds = 0
    with pytest.raises(Unavailable, match="shutting down"), training_deadline(None, stop=stop):
        for i in range(100):
            report(i, 100, "boosting")
            rounds += 1
            if i == 3:
                stop.set()
    assert rounds == 4
