"""Measure the hostile-input limits of issue 17 on a real ``costwise serve`` process.

Phases (each short; the machine is shared, so every figure is compared with a baseline
taken in the same run):

1. ``live``: ``/health/live`` latency (p50/p99/max) while a 60 MiB predict body over the
   row limit is sent and refused, vs. the same polling with nothing else going on; the
   server's peak RSS during it.
2. ``largest``: peak RSS of the largest allowed predict (100,000 rows, body under 64 MiB),
   alone and N at once (N = COSTWISE_MAX_LARGE_REQUESTS, default 4), and the RSS after
   (freed memory is handed back with malloc_trim when the last large request ends).
3. ``keys``: predict throughput with a valid key, quiet, during a flood of random keys,
   and during the same flood sent without keys (the control), in alternating rounds.

RSS figures are the server process's and, apart, its children's (the body-parsing
worker process, app.api.bodies.parse_pool).

Usage: ``python bench/reliability/hostile.py [--seconds 10]``. Writes
``bench/results/reliability/hostile.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.record import write_result  # noqa: E402
from bench.reliability.server import Server, start_server  # noqa: E402

ADMIN = "admin-" + secrets.token_urlsafe(32)


def rss_mib(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


def children_rss_mib(pid: int) -> float:
    """RSS of the process's children (the body-parsing worker), summed."""
    try:
        kids = psutil.Process(pid).children(recursive=True)
        return sum(k.memory_info().rss for k in kids) / 2**20
    except psutil.Error:
        return 0.0


class PeakRss:
    """Samples a process's RSS (and its children's, summed) every 20 ms in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self.peak_children = 0.0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mib(self.pid))
            self.peak_children = max(self.peak_children, children_rss_mib(self.pid))
            time.sleep(0.02)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def figures(self, first: float, first_label: str) -> dict[str, list[float]]:
        """The RSS in MiB of the process (``first``, the peak, now) and of its children
        (the peak, now), keyed ``rss_mib_{first_label}_peak_after`` and
        ``children_rss_mib_peak_after``."""
        return {
            f"rss_mib_{first_label}_peak_after": [
                round(first, 1),
                round(self.peak, 1),
                round(rss_mib(self.pid), 1),
            ],
            "children_rss_mib_peak_after": [
                round(self.peak_children, 1),
                round(children_rss_mib(self.pid), 1),
            ],
        }


def percentiles(values: list[float]) -> dict[str, float]:
    """How many latencies (seconds), their median, 99th percentile and maximum in ms
    (only ``n`` when there are none)."""
    v = sorted(values)
    if not v:
        return {"n": 0}
    return {
        "n": len(v),
        "p50_ms": round(1000 * v[len(v) // 2], 1),
        "p99_ms": round(1000 * v[min(len(v) - 1, int(len(v) * 0.99))], 1),
        "max_ms": round(1000 * v[-1], 1),
    }


def poll_live(base: str, stop: threading.Event) -> list[float]:
    out: list[float] = []
    with httpx.Client(base_url=base, timeout=60) as c:
        while not stop.is_set():
            t = time.perf_counter()
            c.get("/health/live")
            out.append(time.perf_counter() - t)
            time.sleep(0.02)
    return out


def rows_body(n_rows: int, n_features: int, seed: int = 0) -> bytes:
    X = np.round(np.random.default_rng(seed).normal(size=(n_rows, n_features)), 6)
    return json.dumps({"instances": X.tolist()}).encode()


def phase_live(server: Server, seconds: float) -> dict[str, Any]:
    stop = threading.Event()
    holder: dict[str, list[float]] = {}
    t = threading.Thread(target=lambda: holder.update(v=poll_live(server.base_url, stop)))
    t.start()
    time.sleep(seconds / 2)
    stop.set()
    t.join()
    baseline = percentiles(holder["v"])
    body = rows_body(200_000, 30)  # ~60 MiB, over the 100,000-row limit
    stop = threading.Event()
    t = threading.Thread(target=lambda: holder.update(v=poll_live(server.base_url, stop)))
    headers = {"content-type": "application/json", "X-API-Key": ADMIN}
    with PeakRss(server.pid) as peak:
        start = rss_mib(server.pid)
        t.start()
        sent = time.perf_counter()
        r = httpx.post(
            server.base_url + "/v1/models/bench/predict", content=body, headers=headers, timeout=120
        )
        took = time.perf_counter() - sent
        time.sleep(0.5)
        stop.set()
        t.join()
    return {
        "body_mib": round(len(body) / 2**20, 1),
        "status": r.status_code,
        "code": r.json().get("code"),
        "request_seconds": round(took, 2),
        "live_idle": baseline,
        "live_during": percentiles(holder["v"]),
        **peak.figures(start, "start"),
    }


def phase_largest(server: Server, n: int) -> dict[str, Any]:
    body = rows_body(100_000, 60)  # the row limit, a body just under 64 MiB
    headers = {"content-type": "application/json", "X-API-Key": ADMIN}
    url = server.base_url + "/v1/models/bench/predict"
    out: dict[str, Any] = {"body_mib": round(len(body) / 2**20, 1)}

    def send(results: list[int]) -> None:
        results.append(httpx.post(url, content=body, headers=headers, timeout=300).status_code)

    for k in (1, n):
        before = rss_mib(server.pid)
        statuses: list[int] = []
        with PeakRss(server.pid) as peak:
            threads = [threading.Thread(target=send, args=(statuses,)) for _ in range(k)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            took = time.perf_counter() - t0
        time.sleep(1.0)
        out[f"concurrent_{k}"] = {
            "statuses": sorted(statuses),
            "seconds": round(took, 2),
            **peak.figures(before, "before"),
        }
    return out


async def _predicts(base: str, key: str, seconds: float, clients: int) -> int:
    body = {"instances": [[0.1] * 60] * 5}
    done = 0
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(base_url=base, timeout=30, headers={"X-API-Key": key}) as c:

        async def one() -> None:
            nonlocal done
            while time.monotonic() < deadline:
                r = await c.post("/v1/models/bench/predict", json=body)
                done += r.status_code == 200

        await asyncio.gather(*(one() for _ in range(clients)))
    return done


async def _flood(base: str, seconds: float, clients: int, random_keys: bool = True) -> int:
    """Anonymous predicts, each with a fresh random key (or, as the control, no key: the
    same requests and 401s without any key to check)."""
    sent = 0
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(base_url=base, timeout=30) as c:

        async def one() -> None:
            nonlocal sent
            while time.monotonic() < deadline:
                key = "cw_" + secrets.token_urlsafe(32)
                await c.post(
                    "/v1/models/bench/predict",
                    json={"instances": [[0.1]]},
                    headers={"X-API-Key": key} if random_keys else {},
                )
                sent += 1

        await asyncio.gather(*(one() for _ in range(clients)))
    return sent


def phase_keys(server: Server, seconds: float, rounds: int = 3) -> dict[str, Any]:
    """Predict throughput (8 clients, valid key) quiet, during a flood of random keys and
    during the same flood without keys (the control: the HTTP cost of the flood's own
    requests), in alternating rounds."""
    with httpx.Client(base_url=server.base_url, headers={"X-API-Key": ADMIN}) as c:
        key = c.post("/v1/keys", json={"name": "bench", "role": "predictor"}).json()["key"]

    async def with_flood(random_keys: bool) -> tuple[int, int]:
        a, b = await asyncio.gather(
            _predicts(server.base_url, key, seconds, 8),
            _flood(server.base_url, seconds, 4, random_keys),
        )
        return a, b

    out: dict[str, list[float]] = {"quiet": [], "random_keys": [], "no_keys": []}
    flood_rates: dict[str, list[float]] = {"random_keys": [], "no_keys": []}
    for _ in range(rounds):
        out["quiet"].append(asyncio.run(_predicts(server.base_url, key, seconds, 8)) / seconds)
        for name, random_keys in (("random_keys", True), ("no_keys", False)):
            done, sent = asyncio.run(with_flood(random_keys))
            out[name].append(done / seconds)
            flood_rates[name].append(sent / seconds)
    mean = {k: sum(v) / len(v) for k, v in out.items()}
    return {
        "seconds": seconds,
        "rounds": rounds,
        "predicts_per_s": {k: [round(x, 1) for x in v] for k, v in out.items()},
        "flood_requests_per_s": {k: [round(x, 1) for x in v] for k, v in flood_rates.items()},
        "ratio_random_keys_vs_quiet": round(mean["random_keys"] / mean["quiet"], 3),
        "ratio_no_keys_vs_quiet": round(mean["no_keys"] / mean["quiet"], 3),
        "ratio_random_keys_vs_no_keys": round(mean["random_keys"] / mean["no_keys"], 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {"COSTWISE_AUTH": "on", "COSTWISE_BOOTSTRAP_ADMIN_KEY": ADMIN}
        server = start_server(
            f"sqlite:///{tmp}/bench.db", Path(tmp) / "server.log", env=env, serve=True
        )
        try:
            X = np.random.default_rng(1).normal(size=(400, 60))
            y = (X[:, 0] + X[:, 1] > 0).astype(int)
            r = httpx.post(
                server.base_url + "/v1/models/bench/versions",
                json={"features": X.tolist(), "labels": y.tolist(), "n_estimators": 20},
                headers={"X-API-Key": ADMIN},
                timeout=120,
            )
            r.raise_for_status()
            result = {
                "memory_gib": round(psutil.virtual_memory().total / 2**30),
                "rss_mib_idle": round(rss_mib(server.pid), 1),
                "live": phase_live(server, args.seconds),
                "largest": phase_largest(server, 4),
                "keys": phase_keys(server, args.seconds),
            }
        finally:
            server.stop()
    write_result(__file__, result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
