"""An idle-connection flood against ``costwise serve``, and the callers that must survive it.

The attack (issue 25, item 6): thousands of anonymous connections opened and left silent,
every one the server closes opened again at once. :func:`start_flood` runs it in a process
of its own (so that its loop does not share a GIL with the measuring threads); the probe
(:func:`probe`, a fresh connection per probe, as a kubelet does) and the keyed client
(:func:`keyed_client`) run as threads of the caller and record every answer.

Used by ``tests/reliability/test_connection_flood.py`` (assertions) and by this file as a
script (figures, with a baseline measured in the same run)::

    python bench/reliability/flood.py [--connections 3000] [--seconds 20] [--workers 1]
        [--max-connections 2048]

which writes ``bench/results/reliability/flood[-w<workers>][-c<max connections>].json``. Loopback (127.0.0.1) only.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import multiprocessing
import resource
import selectors
import socket
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.record import run_header, write_result  # noqa: E402
from bench.reliability.server import Server, start_server  # noqa: E402

ADMIN = "admin-flood-7Rk2pQ9xW4mZ1vB8nC3tY6hJ0sLdFgA5"
FD_MARGIN = 256  # descriptors the flood process needs besides its sockets


def raise_open_files(wanted: int) -> int:
    """Raise this process's RLIMIT_NOFILE soft limit to ``wanted`` (at most the hard
    limit); returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return int(soft)


def flood_size(wanted: int) -> int:
    """The number of flood connections the hard RLIMIT_NOFILE allows (``wanted`` if it
    allows it, else fewer)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return wanted
    return max(0, min(wanted, int(hard) - FD_MARGIN))


def _hold(
    host: str,
    port: int,
    count: int,
    ready: EventType,
    stop: EventType,
    counters: Any,
) -> None:
    """Open ``count`` silent connections; open again each one the server closes, at once,
    until ``stop``. ``counters``: [opened, closed by the server, bytes answered, open now]."""
    raise_open_files(count + FD_MARGIN)
    selector = selectors.DefaultSelector()

    def open_one() -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        code = s.connect_ex((host, port))
        if code not in (0, errno.EINPROGRESS):
            s.close()
            return
        selector.register(s, selectors.EVENT_READ)
        counters[0] += 1

    for _ in range(count):
        open_one()
    counters[3] = len(selector.get_map())
    ready.set()
    while not stop.is_set():
        for key, _ in selector.select(timeout=0.05):
            s = key.fileobj
            assert isinstance(s, socket.socket)
            try:
                data = s.recv(4096)
            except (ConnectionResetError, ConnectionRefusedError, BlockingIOError):
                data = b""
            if data:  # the server answered a silent connection: recorded, and kept open
                counters[2] += len(data)
                continue
            selector.unregister(s)
            s.close()
            counters[1] += 1
            open_one()
        counters[3] = len(selector.get_map())
    for key in list(selector.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]


@dataclass
class Flood:
    """A running flood process and its counters."""

    process: multiprocessing.process.BaseProcess
    stop_event: EventType
    counters: Any
    size: int

    def figures(self) -> dict[str, int]:
        opened, closed, answered, open_now = list(self.counters)
        return {
            "connections": self.size,
            "opened": opened,
            "closed_by_server": closed,
            "bytes_answered": answered,
            "open_at_end": open_now,
        }

    def stop(self) -> dict[str, int]:
        self.stop_event.set()
        self.process.join(timeout=30)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=10)
        return self.figures()


def start_flood(base_url: str, count: int, timeout: float = 60.0) -> Flood:
    """Start the flood process; return once its ``count`` connections are opened."""
    host, port = base_url.removeprefix("http://").split(":")
    context = multiprocessing.get_context("spawn")
    ready, stop = context.Event(), context.Event()
    counters = context.Array("q", 4, lock=False)  # written by the flood process only
    process = context.Process(
        target=_hold, args=(host, int(port), count, ready, stop, counters), daemon=True
    )
    process.start()
    if not ready.wait(timeout):
        process.kill()
        raise RuntimeError("the flood process did not open its connections in time")
    return Flood(process, stop, counters, count)


@dataclass
class Calls:
    """Statuses (or exception names) and latencies of one caller."""

    statuses: list[int | str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, started: float, outcome: int | str) -> None:
        elapsed = time.perf_counter() - started
        with self.lock:  # probes record from several threads
            self.seconds.append(elapsed)
            self.statuses.append(outcome)

    @property
    def ok(self) -> int:
        return sum(1 for s in self.statuses if s == 200)

    @property
    def failures(self) -> list[int | str]:
        return [s for s in self.statuses if s != 200]

    def summary(self) -> dict[str, Any]:
        v = sorted(self.seconds)
        out: dict[str, Any] = {"calls": len(v), "ok_200": self.ok, "failures": self.failures[:20]}
        if v:
            out.update(
                p50_ms=round(1000 * v[len(v) // 2], 1),
                p99_ms=round(1000 * v[min(len(v) - 1, int(len(v) * 0.99))], 1),
                max_ms=round(1000 * v[-1], 1),
            )
        return out


FRESH = httpx.Limits(max_keepalive_connections=0)  # every request on a new connection


def probe(base_url: str, stop: threading.Event, calls: Calls, every: float = 0.1) -> None:
    """Start a GET /health/live every ``every`` seconds (/health/ready every fifth time)
    whether or not earlier probes have been answered (as a kubelet probes), each on a fresh
    connection with a 5 s timeout; waits for all of them at ``stop``."""

    def one(client: httpx.Client, path: str) -> None:
        started = time.perf_counter()
        try:
            calls.record(started, client.get(path).status_code)
        except httpx.HTTPError as exc:
            calls.record(started, f"{path} {type(exc).__name__}")

    with (
        httpx.Client(base_url=base_url, timeout=5, limits=FRESH) as fresh,
        ThreadPoolExecutor(max_workers=64) as pool,
    ):
        i, next_at = 0, time.perf_counter()
        while not stop.is_set():
            pool.submit(one, fresh, "/health/ready" if i % 5 == 4 else "/health/live")
            i += 1
            next_at += every
            stop.wait(max(0.0, next_at - time.perf_counter()))


def keyed_client(
    base_url: str, key: str, model: str, stop: threading.Event, calls: Calls, pause: float = 0.05
) -> None:
    """A client with a valid key: a predict on its kept-alive connection, then a GET of the
    model on a fresh connection, and again until ``stop``."""
    headers = {"X-API-Key": key}
    body = {"instances": [[0.1, -0.2, 0.3, 0.4]]}
    with (
        httpx.Client(base_url=base_url, headers=headers, timeout=5) as kept,
        httpx.Client(base_url=base_url, headers=headers, timeout=5, limits=FRESH) as fresh,
    ):
        while not stop.is_set():
            started = time.perf_counter()
            try:
                calls.record(
                    started, kept.post(f"/v1/models/{model}/predict", json=body).status_code
                )
            except httpx.HTTPError as exc:
                calls.record(started, f"predict {type(exc).__name__}")
            started = time.perf_counter()
            try:
                calls.record(started, fresh.get(f"/v1/models/{model}").status_code)
            except httpx.HTTPError as exc:
                calls.record(started, f"get {type(exc).__name__}")
            stop.wait(pause)


def server_connections(server: Server) -> int:
    """Established TCP connections of the server process (its workers included)."""
    port = int(server.base_url.rsplit(":", 1)[1])
    processes = [psutil.Process(server.pid)]
    processes += processes[0].children(recursive=True)
    total = 0
    for p in processes:
        with contextlib.suppress(psutil.Error):
            total += sum(
                1
                for c in p.net_connections(kind="tcp")
                if c.status == psutil.CONN_ESTABLISHED and c.laddr and c.laddr.port == port
            )
    return total


def server_rss_mib(server: Server) -> float:
    """Resident memory of the server process and its workers, MiB."""
    try:
        proc = psutil.Process(server.pid)
        return sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)]) / 2**20
    except psutil.Error:
        return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its children so far."""
    try:
        proc = psutil.Process(pid)
        total = 0.0
        for p in [proc, *proc.children(recursive=True)]:
            t = p.cpu_times()
            total += t.user + t.system
        return total
    except psutil.Error:
        return 0.0


def measure(
    server: Server, model: str, seconds: float, flood_connections: int = 0
) -> dict[str, Any]:
    """Run the probe and the keyed client for ``seconds``, under a flood of
    ``flood_connections`` idle connections (0: none, the baseline)."""
    flood = start_flood(server.base_url, flood_connections) if flood_connections else None
    stop = threading.Event()
    probes, keyed = Calls(), Calls()
    threads = [
        threading.Thread(target=probe, args=(server.base_url, stop, probes)),
        threading.Thread(target=keyed_client, args=(server.base_url, ADMIN, model, stop, keyed)),
    ]
    held: list[int] = []
    rss: list[float] = []
    server_cpu = cpu_seconds(server.pid)
    flood_cpu = cpu_seconds(flood.process.pid) if flood and flood.process.pid else 0.0
    try:
        for t in threads:
            t.start()
        ends = time.monotonic() + seconds
        while time.monotonic() < ends:
            time.sleep(min(1.0, max(0.0, ends - time.monotonic())))
            held.append(server_connections(server))
            rss.append(server_rss_mib(server))
        server_cpu = cpu_seconds(server.pid) - server_cpu
        if flood and flood.process.pid:
            flood_cpu = cpu_seconds(flood.process.pid) - flood_cpu
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
        flood_figures = flood.stop() if flood else None
    return {
        "seconds": seconds,
        "cpu_share_server_flood": [round(server_cpu / seconds, 2), round(flood_cpu / seconds, 2)],
        "flood": flood_figures,
        "server_connections_min_max": [min(held), max(held)] if held else None,
        "server_rss_mib_max": round(max(rss), 1) if rss else None,
        "probes": probes.summary(),
        "keyed": keyed.summary(),
    }


def train(server: Server, model: str) -> None:
    """Register a small model (4 features, 30 stumps) under ``model`` with the admin key."""
    X = np.round(np.random.default_rng(0).normal(size=(300, 4)), 4)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    r = httpx.post(
        f"{server.base_url}/v1/models/{model}/versions",
        json={"features": X.tolist(), "labels": y.tolist(), "n_estimators": 30},
        headers={"X-API-Key": ADMIN},
        timeout=120,
    )
    r.raise_for_status()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connections", type=int, default=3000)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--max-connections", type=int, default=None, help="COSTWISE_MAX_CONNECTIONS (default: 2048)"
    )
    args = parser.parse_args()
    size = flood_size(args.connections)
    raise_open_files(size + FD_MARGIN)
    with tempfile.TemporaryDirectory() as tmp:
        env = {"COSTWISE_AUTH": "on", "COSTWISE_BOOTSTRAP_ADMIN_KEY": ADMIN}
        if args.max_connections:
            env["COSTWISE_MAX_CONNECTIONS"] = str(args.max_connections)
        server = start_server(
            f"sqlite:///{tmp}/flood.db",
            Path(tmp) / "server.log",
            env=env,
            serve=True,
            workers=args.workers,
        )
        try:
            train(server, "flood")
            baseline = measure(server, "flood", args.seconds / 2)
            flooded = measure(server, "flood", args.seconds, size)
        finally:
            server.stop()
    ratios = {
        f"{who}_{q}": round(flooded[who][q] / baseline[who][q], 2)
        for who in ("probes", "keyed")
        for q in ("p50_ms", "p99_ms")
        if baseline[who].get(q)
    }
    result = {
        **run_header(__file__),
        "workers": args.workers,
        "max_connections": args.max_connections or 2048,
        "baseline": baseline,
        "flood": flooded,
        "flood_over_baseline": ratios,
    }
    label = f"w{args.workers}" if args.workers > 1 else ""
    label += f"{'-' if label else ''}c{args.max_connections}" if args.max_connections else ""
    write_result(__file__, result, label=label)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
