"""/health/live while the largest allowed predict is parsed: in a worker process vs not.

Starts ``costwise serve`` servers on their own SQLite registries, each with model
``bench`` (60 features), and for each configuration polls ``/health/live`` every 20 ms
(one client, sequential) while one predict of 100,000 rows x 60 features (59.6 MiB, the
row limit under the 64 MiB body limit) is sent and answered; also with nothing else
going on (idle). Configurations, measured in alternating rounds in the same run:

- ``process``: this checkout, COSTWISE_PARSE_WORKERS=1 (the default: parsed in a worker
  process);
- ``thread``: this checkout, COSTWISE_PARSE_WORKERS=0 (parsed in a thread of the server
  process, as before);
- ``before`` (with ``--before DIR``): another source tree, e.g. ``git archive ee919c7``.

Records the live latencies (p50 / p99 / max), the predict's duration and status, the
server's peak RSS and that of its children (the parse worker).

    python bench/reliability/parse_offload.py [--before /tmp/i17-parse-before] [--rounds 2]

Writes ``bench/results/reliability/parse_offload.json``.
"""

from __future__ import annotations

import argparse
import json
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
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.record import run_header, write_result  # noqa: E402
from bench.reliability.hostile import percentiles  # noqa: E402
from bench.reliability.server import Server, start_server  # noqa: E402

URL = "/v1/models/bench/predict"


class Sampler:
    """Polls /health/live every 20 ms and the RSS of the server and its children."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.live: list[float] = []
        self.failures = 0
        self.peak_server = self.peak_children = 0.0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._poll), threading.Thread(target=self._rss)]

    def _poll(self) -> None:
        with httpx.Client(base_url=self.server.base_url, timeout=60) as c:
            while not self._stop.is_set():
                t = time.perf_counter()
                try:
                    ok = c.get("/health/live").status_code == 200
                except httpx.HTTPError:
                    ok = False
                self.live.append(time.perf_counter() - t)
                self.failures += not ok
                time.sleep(0.02)

    def _rss(self) -> None:
        proc = psutil.Process(self.server.pid)
        while not self._stop.is_set():
            try:
                self.peak_server = max(self.peak_server, proc.memory_info().rss / 2**20)
                kids = sum(k.memory_info().rss for k in proc.children(recursive=True)) / 2**20
                self.peak_children = max(self.peak_children, kids)
            except psutil.Error:
                pass
            time.sleep(0.02)

    def __enter__(self) -> Sampler:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()


def body(n_rows: int = 100_000, n_features: int = 60) -> bytes:
    X = np.round(np.random.default_rng(0).normal(size=(n_rows, n_features)), 6)
    return json.dumps({"instances": X.tolist()}).encode()


def seed(server: Server) -> None:
    X = np.random.default_rng(1).normal(size=(400, 60))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    r = httpx.post(
        server.base_url + "/v1/models/bench/versions",
        json={"features": X.tolist(), "labels": y.tolist(), "n_estimators": 20},
        timeout=300,
    )
    r.raise_for_status()


def one_round(server: Server, payload: bytes, idle_s: float) -> dict[str, Any]:
    with Sampler(server) as idle:
        time.sleep(idle_s)
    headers = {"content-type": "application/json"}
    with Sampler(server) as busy:
        time.sleep(0.3)
        t = time.perf_counter()
        r = httpx.post(server.base_url + URL, content=payload, headers=headers, timeout=600)
        took = time.perf_counter() - t
        time.sleep(0.3)
    return {
        "status": r.status_code,
        "predict_s": round(took, 2),
        "live_idle": percentiles(idle.live),
        "live_during": percentiles(busy.live),
        "live_failures": busy.failures,
        "peak_rss_mib_server": round(busy.peak_server, 1),
        "peak_rss_mib_children": round(busy.peak_children, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="another source tree to measure too")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--idle", type=float, default=3.0, help="seconds of idle polling")
    args = parser.parse_args()
    configs: list[tuple[str, dict[str, str], Path | None]] = [
        ("process", {"COSTWISE_PARSE_WORKERS": "1"}, None),
        ("thread", {"COSTWISE_PARSE_WORKERS": "0"}, None),
    ]
    if args.before is not None:
        configs.append(("before", {}, args.before))
    payload = body()
    result: dict[str, Any] = {
        **run_header(__file__),
        "body_mib": round(len(payload) / 2**20, 1),
        "rounds": {name: [] for name, _, _ in configs},
    }
    servers: dict[str, Server] = {}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for name, env, tree in configs:
                servers[name] = start_server(
                    f"sqlite:///{tmp}/{name}.db",
                    Path(tmp) / f"{name}.log",
                    env=env,
                    cwd=tree,
                    serve=True,
                    timeout=120,
                )
                seed(servers[name])
            for _ in range(args.rounds):
                for name, _, _ in configs:
                    out = one_round(servers[name], payload, args.idle)
                    result["rounds"][name].append(out)
                    print(name, json.dumps(out), flush=True)
        finally:
            for server in servers.values():
                server.stop()
    write_result(__file__, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
