"""A real Dask cluster for tests: a ``dask scheduler`` and ``dask worker`` processes on
127.0.0.1 (random port, single-threaded workers, ``nice``), stopped on exit.

Shared by the tests that run work through Dask (batch decisions, distributed training);
each test module builds its own fixture from :func:`running_cluster`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.serving.batch import stop


@dataclass
class Cluster:
    """The scheduler's address and the processes (scheduler first, then the workers)."""

    address: str
    procs: list[subprocess.Popen[bytes]]

    @property
    def workers(self) -> list[subprocess.Popen[bytes]]:
        return self.procs[1:]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    dask = str(Path(sys.executable).with_name("dask"))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with log.open("wb") as out:
        return subprocess.Popen(
            ["nice", "-n", "10", dask, *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )


@contextmanager
def running_cluster(logs: Path, n_workers: int = 2) -> Iterator[Cluster]:
    """Start a scheduler and ``n_workers`` workers, wait for them, stop them on exit."""
    import distributed

    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = [
        _start(
            ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            logs / "scheduler.log",
        )
    ]
    try:
        for i in range(n_workers):
            procs.append(
                _start(
                    [
                        "worker",
                        address,
                        "--host",
                        "127.0.0.1",
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--name",
                        f"w{i}",
                        "--local-directory",
                        str(logs),
                    ],
                    logs / f"worker{i}.log",
                )  # fmt: skip
            )
        with distributed.Client(address, timeout="30s") as client:
            client.wait_for_workers(n_workers, timeout=60)
        yield Cluster(address, procs)
    finally:
        stop(procs)  # the benchmark's: SIGTERM, then SIGKILL after 20 s
