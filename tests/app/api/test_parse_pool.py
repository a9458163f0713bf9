"""The body-parsing worker pool: outcomes come back as the same errors, a dead worker is
a 503 and the next body is parsed by a fresh pool."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from app.api.bodies.parse_pool import BodyInvalid, ParsePool
from app.api.bodies.parsing import Limits, predict_input
from app.api.schemas import PredictRequest
from app.errors import PayloadTooLarge, Unavailable

LIMITS = Limits(max_rows=10, max_features=5, max_cells=20, max_classes=2)


def die() -> None:  # runs in the worker process
    os._exit(3)


def worker_pid() -> int:  # runs in the worker process
    return os.getpid()


def run(pool: ParsePool, fn: Any, *args: Any) -> Any:
    return asyncio.run(pool.run(fn, *args))


@pytest.mark.parametrize("workers", [1, 0], ids=["process", "thread"])
def test_outcomes_come_back_as_the_same_errors(workers: int) -> None:
    pool = ParsePool(workers, offload_bytes=1024)
    try:
        ok = run(
            pool, predict_input, b'{"instances": [[1, 2], [3, null]]}', PredictRequest, LIMITS, True
        )
        assert ok.rows.matrix is not None and ok.rows.matrix.shape == (2, 2)
        assert ok.rows.field == "instances"
        with pytest.raises(BodyInvalid) as invalid:
            run(pool, predict_input, b'{"instances": [[1, "x"]]}', PredictRequest, LIMITS, True)
        assert invalid.value.errors[0]["loc"] == ("instances", 0, 1)
        with pytest.raises(BodyInvalid) as malformed:
            run(pool, predict_input, b'{"instances": [[1', PredictRequest, LIMITS, True)
        assert malformed.value.errors[0]["type"] == "json_invalid"
        with pytest.raises(PayloadTooLarge) as too_large:  # rebuilt with field and limit
            run(
                pool,
                predict_input,
                b'{"instances": [' + b"[1]," * 30 + b"[1]]}",
                PredictRequest,
                LIMITS,
                True,
            )
        assert too_large.value.field == "instances" and too_large.value.extra == {"limit": 10}
    finally:
        pool.close()


def test_a_dead_worker_is_a_503_and_the_pool_starts_afresh() -> None:
    pool = ParsePool(1, offload_bytes=1024)
    try:
        first = run(pool, worker_pid)
        assert first != os.getpid()  # another process
        with pytest.raises(Unavailable) as dead:
            run(pool, die)
        assert dead.value.field == "body"
        second = run(pool, worker_pid)
        assert second not in (first, os.getpid())
    finally:
        pool.close()


def body_and_pid(body: bytes, large: bool) -> tuple[bytes, int, bool]:  # in the worker
    return body, os.getpid(), large


def spilled_files() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("costwise-body-*")}


@pytest.mark.parametrize("workers", [1, 0], ids=["process", "thread"])
def test_a_body_reaches_the_worker_whole_and_leaves_no_file(workers: int) -> None:
    """Chunks go through a temporary file (0 workers: joined in a thread), arrive as the
    joined bytes, and the file is gone after the parse, whether it succeeded or not."""
    pool = ParsePool(workers, offload_bytes=1024)
    chunks = [bytes([i]) * 70_000 for i in range(20)]
    whole = b"".join(chunks)
    before = spilled_files()
    try:
        body, pid, large = asyncio.run(pool.run_on_body(body_and_pid, list(chunks)))
        assert body == whole and large is True
        assert (pid != os.getpid()) == (workers == 1)
        with pytest.raises(BodyInvalid):
            asyncio.run(
                pool.run_on_body(
                    predict_input, [b'{"instances": [[1', b"]"], PredictRequest, LIMITS
                )
            )
        assert spilled_files() - before == set()  # (another process may remove its own)
    finally:
        pool.close()


def _gone(pid: int) -> bool:
    """No such process, or only its zombie (an orphan's exit status nobody collected)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return "\nState:\tZ" in status


def test_workers_exit_when_their_server_process_is_killed() -> None:
    """A server process killed (SIGKILL: no shutdown runs) leaves no idle worker behind."""
    script = (
        "import asyncio, os\n"
        "from app.api.bodies.parse_pool import ParsePool\n"
        "pool = ParsePool(1, offload_bytes=1024)\n"
        "print(asyncio.run(pool.run(os.getpid)), flush=True)\n"
        "import time; time.sleep(120)\n"
    )
    root = Path(__file__).resolve().parents[3]
    server = subprocess.Popen(
        [sys.executable, "-c", script], cwd=root, stdout=subprocess.PIPE, text=True
    )
    try:
        worker = int(server.stdout.readline())  # type: ignore[union-attr]
        assert worker != server.pid and not _gone(worker)
    finally:
        server.kill()
        server.wait()
        server.stdout.close()  # type: ignore[union-attr]
    deadline = time.monotonic() + 15
    while not _gone(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    outlived = not _gone(worker)
    if outlived:  # leave nothing behind, then fail
        os.kill(worker, signal.SIGKILL)
    assert not outlived, f"worker {worker} outlived its server process"
