"""Shared helpers of the reliability proofs: seeded registries and a real uvicorn server.

Everything listens on 127.0.0.1 only. Servers are started as child processes
(``uvicorn --factory app.api.main:create_app``) configured through ``COSTWISE_*``
environment variables, and are always stopped by the fixture that started them.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from sklearn.datasets import make_classification

ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "bench" / "reliability" / "out"
FEATURES = ["a", "b", "c", "d"]


def dataset(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Four informative-ish features, binary labels, fixed seed."""
    X, y = make_classification(
        n_samples=n, n_features=4, n_informative=3, n_redundant=1, random_state=seed
    )
    return np.round(X, 4), y


def train_body(n: int = 300, seed: int = 0, **params: Any) -> dict[str, Any]:
    """A JSON training body on :func:`dataset` (30 stumps, Platt calibration)."""
    X, y = dataset(n, seed)
    body: dict[str, Any] = {
        "features": X.tolist(),
        "labels": y.tolist(),
        "feature_names": FEATURES,
        "n_estimators": 30,
    }
    body.update(params)
    return body


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_result(name: str, payload: Mapping[str, Any]) -> Path:
    """Write ``payload`` as JSON to ``bench/reliability/out/<name>.json`` (not committed)."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
    return path


@dataclass
class Server:
    """A uvicorn child process serving the app factory on 127.0.0.1."""

    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        """Terminate the server (and its workers) and wait for it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)


def start_server(
    database_url: str,
    log_path: Path,
    *,
    workers: int = 1,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> Server:
    """Start uvicorn on a free loopback port and wait until ``/health/live`` answers."""
    port = free_port()
    environment = {
        **os.environ,
        "COSTWISE_DATABASE_URL": database_url,
        "COSTWISE_LOG_LEVEL": "warning",
        **(env or {}),
    }
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "app.api.main:create_app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--log-level",
        "warning",
        "--no-access-log",
    ]
    log_file = log_path.open("wb")
    process = subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=log_file, stderr=subprocess.STDOUT
    )
    server = Server(process, f"http://127.0.0.1:{port}", log_path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{server.log()}")
        try:
            if httpx.get(server.base_url + "/health/live", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"server did not start within {timeout} s:\n{server.log()}")


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Any]:
    """Start servers with :func:`start_server`; every one is stopped at teardown."""
    started: list[Server] = []

    def factory(database_url: str, **kwargs: Any) -> Server:
        server = start_server(database_url, tmp_path / f"server{len(started)}.log", **kwargs)
        started.append(server)
        return server

    yield factory
    for server in started:
        server.stop()
