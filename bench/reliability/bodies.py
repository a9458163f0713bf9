"""A 60 MiB body on every POST/PUT/PATCH route of a real ``costwise serve``, while a
client polls ``/health/live`` every 20 ms (issue 25, item 4).

The routes and the media types each accepts come from the server's own OpenAPI document
(every operation with a request body, plus every other POST/PUT/PATCH: a new route is
measured without editing this file). Each gets one hostile body of ``--mib`` MiB sent
with its ``Content-Length``, the shape of the outside attack: JSON rows of zeros (31
million values, more than any limit allows), or for ``multipart/form-data`` a CSV file
of 15 million rows. Recorded per route: status and error code, how long the answer
took, ``/health/live`` latency during it (max and p99) and the peak RSS of the server
process and, apart, of its children (the parse worker, :mod:`app.api.bodies.parse_pool`),
sampled every 20 ms.

Usage: ``python bench/reliability/bodies.py [--mib 60] [--rounds 1]``; writes
``bench/results/reliability/bodies.json``. ``--one-row-before DIR [--rounds 5]`` instead
compares the single-row predict latency (p50 of sequential requests) of the source tree
DIR with this one, in alternating rounds (``bench/results/reliability/bodies-one-row-ab.json``). ``tests/reliability/test_body_limits.py`` runs the
same measurement as a proof.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import queue
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.record import write_result  # noqa: E402
from bench.reliability.hostile import PeakRss, children_rss_mib, percentiles, rss_mib  # noqa: E402
from bench.reliability.server import Server, probe_live, start_server  # noqa: E402

MODEL = "big"
PATH_VALUES = {"name": MODEL, "version": "1", "alias": "production", "job_id": "nosuchjob"}
JSON = "application/json"
FORM = "multipart/form-data"
BOUNDARY = "costwise-bodies-bench"


@dataclass(frozen=True)
class Target:
    """One route and one media type it accepts."""

    method: str
    template: str
    media_type: str

    @property
    def path(self) -> str:
        return re.sub(r"\{(\w+)\}", lambda m: PATH_VALUES.get(m.group(1), "x"), self.template)

    @property
    def id(self) -> str:
        kind = "" if self.media_type == JSON else " (multipart)"
        return f"{self.method} {self.template}{kind}"


def body_targets(openapi: dict[str, Any]) -> list[Target]:
    """Every POST, PUT and PATCH operation of the document, once per media type of its
    request body (JSON for one without a documented body)."""
    out = []
    for template, item in openapi["paths"].items():
        for method, op in item.items():
            if method not in ("post", "put", "patch"):
                continue
            content = (op.get("requestBody") or {}).get("content") or {JSON: {}}
            out.extend(Target(method.upper(), template, ctype) for ctype in content)
    return out


def hostile_json(size: int) -> bytes:
    """``{"instances": [[0,0,...,0], ...]}`` of ``size`` bytes: rows of 30 zeros."""
    row = b"[" + b",".join([b"0"] * 30) + b"]"
    n = (size - 20) // (len(row) + 1)
    return b'{"instances": [' + b",".join([row] * n) + b"]}"


def hostile_form(size: int) -> tuple[bytes, str]:
    """A multipart form with a CSV file of ``size`` bytes (``x,label`` rows of zeros)."""
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="rows.csv"\r\n'
        "Content-Type: text/csv\r\n\r\nx,label\n"
    ).encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    rows = b"0,0\n" * ((size - len(head) - len(tail)) // 4)
    return head + rows + tail, f"{FORM}; boundary={BOUNDARY}"


def hostile_body(target: Target, size: int) -> tuple[bytes, str]:
    if target.media_type == FORM:
        return hostile_form(size)
    return hostile_json(size), JSON


def _probe(base_url: str, samples: Any, stop: Any) -> None:
    """The prober's process: (sent at, latency, status) of each probe, every 20 ms."""
    probe_live(base_url, stop, lambda *sample: samples.put(sample), clock=time.perf_counter)


class Prober:
    """Polls ``/health/live`` every 20 ms from a process of its own (so that sending a
    60 MiB body from this one cannot delay a probe): (sent at, latency) pairs, on the
    system-wide monotonic clock of ``time.perf_counter``."""

    def __init__(self, base_url: str) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._queue = ctx.Queue()
        self._stop = ctx.Event()
        self._process = ctx.Process(
            target=_probe, args=(base_url, self._queue, self._stop), daemon=True
        )
        self._samples: list[tuple[float, float]] = []
        self.failures: list[str] = []

    def _drain(self) -> None:
        while True:
            try:
                sent, took, status = self._queue.get_nowait()
            except queue.Empty:
                return
            self._samples.append((sent, took))
            if status != 200:
                self.failures.append(f"probe sent at {sent:.3f}: status {status}")

    def between(self, start: float, end: float) -> list[float]:
        """Latencies of the probes sent in [start, end] (seconds)."""
        time.sleep(0.05)  # the last probes' samples are on their way
        self._drain()
        return [took for sent, took in self._samples if start <= sent <= end]

    def __enter__(self) -> Prober:
        self._process.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._process.join(timeout=10)
        self._drain()


def send_hostile(server: Server, prober: Prober, target: Target, size: int) -> dict[str, Any]:
    """Send one hostile body to ``target``; the answer, timings, probes and memory."""
    body, ctype = hostile_body(target, size)
    with PeakRss(server.pid) as peak:
        before = rss_mib(server.pid)
        sent = time.perf_counter()
        r = httpx.request(
            target.method,
            server.base_url + target.path,
            content=body,
            headers={"content-type": ctype},
            timeout=300,
        )
        done = time.perf_counter()
        time.sleep(0.1)  # probes sent just before the answer have come back
    try:
        answer = r.json()
    except ValueError:
        answer = {"text": r.text[:200]}
    return {
        "route": target.id,
        "body_mib": round(len(body) / 2**20, 1),
        "status": r.status_code,
        "code": answer.get("code"),
        "detail": str(answer.get("detail", answer.get("error", "")))[:160],
        "seconds": round(done - sent, 2),
        "live": percentiles(prober.between(sent, done)),
        "server_rss_mib": {"before": round(before, 1), "peak": round(peak.peak, 1)},
        "worker_rss_mib": {"peak": round(peak.peak_children, 1)},
    }


def train_small_model(server: Server) -> None:
    """Version 1 of ``big``: 4 features, 200 rows, 10 stumps (the routes' model)."""
    features = [[(i * 7 + j) % 11 / 10 for j in range(4)] for i in range(200)]
    labels = [int(sum(row) > 2.0) for row in features]
    body = {"features": features, "labels": labels, "n_estimators": 10}
    r = httpx.post(f"{server.base_url}/v1/models/{MODEL}/versions", json=body, timeout=120)
    r.raise_for_status()


ONE_ROW = json.dumps({"instances": [[0.3, 0.1, 0.7, 0.2]], "costs": {"c_fp": 1, "c_fn": 20}})


def one_row_ab(before: Path, rounds: int, requests: int) -> dict[str, Any]:
    """Single-row predict latency of the source tree ``before`` and of this one, each a
    ``costwise serve`` on its own SQLite registry with the same model; rounds alternate
    (sequential requests on one keep-alive connection); median over rounds of each p50."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        servers = {
            name: start_server(
                f"sqlite:///{tmp}/{name}.db", Path(tmp) / f"{name}.log", serve=True, cwd=tree
            )
            for name, tree in (("before", before), ("now", ROOT))
        }
        try:
            for server in servers.values():
                train_small_model(server)
            p50s: dict[str, list[float]] = {name: [] for name in servers}
            headers = {"content-type": JSON}
            for _ in range(rounds):
                for name, server in servers.items():
                    with httpx.Client(base_url=server.base_url, timeout=30) as c:
                        path = f"/v1/models/{MODEL}/predict"
                        for _ in range(50):  # warm-up
                            c.post(path, content=ONE_ROW, headers=headers)
                        took = []
                        for _ in range(requests):
                            t = time.perf_counter()
                            r = c.post(path, content=ONE_ROW, headers=headers)
                            took.append(time.perf_counter() - t)
                            assert r.status_code == 200, r.text
                    p50s[name].append(sorted(took)[len(took) // 2] * 1000)
        finally:
            for server in servers.values():
                server.stop()
    for name, values in p50s.items():
        out[name] = {"p50_ms_per_round": [round(v, 3) for v in values]}
        out[name]["p50_ms_median"] = round(sorted(values)[len(values) // 2], 3)
    out["ratio_now_to_before"] = round(
        out["now"]["p50_ms_median"] / out["before"]["p50_ms_median"], 3
    )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=60.0, help="body size (MiB)")
    parser.add_argument("--rounds", type=int, default=1, help="times each route is hit")
    parser.add_argument(
        "--one-row-before",
        type=Path,
        help="instead: single-row predict p50 of this source tree vs this one (A/B)",
    )
    parser.add_argument("--requests", type=int, default=500, help="A/B: requests per round")
    parser.add_argument(
        "--tree", type=Path, default=ROOT, help="serve this source tree (default: this one)"
    )
    parser.add_argument("--label", default="", help="names this configuration's result file")
    args = parser.parse_args()
    if args.one_row_before is not None:
        result = one_row_ab(args.one_row_before, max(args.rounds, 3), args.requests)
        result["load_average"] = list(psutil.getloadavg())
        write_result(__file__, result, label="one-row-ab")
        print(json.dumps(result, indent=2))
        return 0
    size = int(args.mib * 2**20)
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(
            f"sqlite:///{tmp}/registry.db", Path(tmp) / "server.log", serve=True, cwd=args.tree
        )
        try:
            train_small_model(server)
            targets = body_targets(httpx.get(server.base_url + "/openapi.json").json())
            results = []
            with Prober(server.base_url) as prober:
                time.sleep(2.0)
                idle = percentiles(prober.between(0, time.perf_counter()))
                for _ in range(args.rounds):
                    for target in targets:
                        results.append(send_hostile(server, prober, target, size))
                        print(json.dumps(results[-1]), flush=True)
            after = {
                "server_rss_mib": round(rss_mib(server.pid), 1),
                "worker_rss_mib": round(children_rss_mib(server.pid), 1),
            }
        finally:
            server.stop()
    out = {
        "load_average": list(psutil.getloadavg()),
        "body_mib": args.mib,
        "live_idle": idle,
        "routes": results,
        "after": after,
        "probe_failures": prober.failures,
    }
    out["tree"] = "this checkout" if args.tree == ROOT else str(args.tree)
    write_result(__file__, out, label=args.label)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
