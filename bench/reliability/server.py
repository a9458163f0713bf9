"""A uvicorn child process serving the costwise app factory on 127.0.0.1 only.

Used by the reliability tests (tests/reliability) and the load run (bench/reliability/load.py).
The server is configured through ``COSTWISE_*`` environment variables and started as
``python -m uvicorn --factory app.api.main:create_app``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def probe_live(
    base_url: str,
    stop: Any,
    record: Callable[[float, float, int], None],
    *,
    timeout: float = 30.0,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """GET ``/health/live`` every 20 ms until ``stop`` (an Event) is set, calling
    ``record(sent at, latency, status)`` for each probe (status 0: no answer)."""
    with httpx.Client(base_url=base_url, timeout=timeout) as client:
        while not stop.is_set():
            sent = clock()
            try:
                status = client.get("/health/live").status_code
            except httpx.HTTPError:
                status = 0
            record(sent, clock() - sent, status)
            time.sleep(0.02)


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
    cwd: Path | None = None,
    serve: bool = False,
) -> Server:
    """Start uvicorn on a free loopback port and wait until ``/health/live`` answers.

    ``cwd`` (default: this checkout) is where ``app`` is imported from: another source
    tree (e.g. an older commit extracted with ``git archive``) serves its own code.
    ``serve=True`` starts it as ``costwise serve`` does (``python -m app.cli serve``: the
    production command of the Dockerfile and compose file, with its connection limits)
    instead of the bare ``uvicorn --factory`` command line.
    """
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
    if serve:
        command = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1"]
        command += ["--port", str(port), "--workers", str(workers)]
    with log_path.open("wb") as log_file:  # the child writes to its own copy of the file
        process = subprocess.Popen(
            command, cwd=cwd or ROOT, env=environment, stdout=log_file, stderr=subprocess.STDOUT
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
