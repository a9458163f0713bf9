"""The client against the real service: uvicorn on a free port, in a thread.

``server`` is one service per test module (its registry on SQLite, and again on
PostgreSQL when ``COSTWISE_TEST_DATABASE_URL`` is set) with authentication on and a
bootstrap admin key; ``fraud`` is a model trained on it through the client.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn

from app.api.main import create_app
from app.db import upgrade_to_head
from app.settings import Settings
from costwise import Client, Retry
from tests.app.api.conftest import dataset
from tests.conftest import DATABASE_KINDS, fresh_database

ADMIN_KEY = "cw_test_bootstrap_admin_key_0123456789abcdef"
FEATURES = ["a", "b", "c", "d"]
FAST_RETRY = Retry(attempts=3, backoff=0.01, max_delay=0.05)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(settings: Settings) -> Iterator[str]:
    """Run the app built from ``settings`` with uvicorn; yield its base URL."""
    port = free_port()
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def service_settings(database_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": database_url,
        "auth": "on",
        "bootstrap_admin_key": ADMIN_KEY,
        "key_cache_seconds": 0,
        "max_predict_rows": 5000,
        "max_train_rows": 20000,
        "max_body_bytes": 2_000_000,
        "max_rounds": 500,
        "max_features": 50,
    }
    values.update(overrides)
    return Settings(**values)


@dataclass(frozen=True)
class Service:
    url: str
    database_url: str


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    with fresh_database(request.param, tmp_path_factory) as database_url:
        upgrade_to_head(database_url)
        with serving(service_settings(database_url)) as url:
            yield Service(url, database_url)


@pytest.fixture
def client(server: Service) -> Iterator[Client]:
    with Client(server.url, api_key=ADMIN_KEY, retry=FAST_RETRY) as c:
        yield c


@pytest.fixture(scope="module")
def fraud(server: Service) -> dict[str, Any]:
    """Model ``fraud`` (version 1) trained through the client: its data and version."""
    X, y = dataset(300)
    with Client(server.url, api_key=ADMIN_KEY) as c:
        version = c.train("fraud", X, y, feature_names=FEATURES, n_estimators=30, mode="sync")
    return {"X": X, "y": y, "version": version}
