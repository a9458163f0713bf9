"""One-row latency of /v2 infer (Open Inference Protocol) vs /v1 predict, in one process.

Usage (from the repository root)::

    .venv/bin/python -m bench serving.v2            # 20 rounds x 300 requests per route
    .venv/bin/python -m bench serving.v2 --quick    # 5 rounds x 100

The real app (``create_app``) on a temporary SQLite registry serves a 100-stump AdaBoost
model with Platt calibration (make_classification, 3,000 x 10). Requests are ASGI calls
made directly on the app (no socket, no HTTP client), so the figures are the
application's own time per request: JSON parsing, version resolution (one query),
cached model, decision, rendering. The two routes are measured in alternating rounds
with the same row and the same costs (``c_fp=1, c_fn=5``); the table gives the median
and 90th percentile per request over all rounds and the ratio of the medians. Results:
``bench/results/serving/v2.md`` (and ``.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from fastapi.testclient import TestClient
from sklearn.datasets import make_classification

from app.api.main import create_app
from app.api.wiring import tune_garbage_collector
from app.db import upgrade_to_head
from app.settings import Settings
from bench.record import run_header, write_result

RESULTS = Path(__file__).resolve().parents[1] / "results"


async def call(app: Any, path: str, body: bytes) -> int:
    """One POST straight into the ASGI app; returns the status (the body is discarded)."""
    done = False

    async def receive() -> dict[str, Any]:
        nonlocal done
        if done:
            return {"type": "http.disconnect"}
        done = True
        return {"type": "http.request", "body": body, "more_body": False}

    status = 0

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())],
    }  # fmt: skip
    await app(scope, receive, send)
    return status


async def timed(app: Any, path: str, body: bytes, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        status = await call(app, path, body)
        out.append(time.perf_counter() - t0)
        assert status == 200, (path, status)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    rounds, per_round = (5, 100) if args.quick else (20, 300)
    X, y = make_classification(3000, 10, n_informative=6, random_state=0)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/registry.db"
        upgrade_to_head(url)
        app = create_app(Settings(database_url=url))
        with TestClient(app) as client:
            r = client.post(
                "/v1/models/bench/versions",
                json={"features": np.round(X, 4).tolist(), "labels": y.tolist(),
                      "n_estimators": 100, "calibration": "platt"},
            )  # fmt: skip
            assert r.status_code == 201, r.text
        row = np.round(X[:1], 4).tolist()
        v1 = json.dumps({"instances": row, "costs": {"c_fp": 1, "c_fn": 5}}).encode()
        v2 = json.dumps(
            {"parameters": {"c_fp": 1, "c_fn": 5},
             "inputs": [{"name": "features", "shape": [1, 10], "datatype": "FP64", "data": row}]}
        ).encode()  # fmt: skip
        tune_garbage_collector()
        times: dict[str, list[float]] = {"v1": [], "v2": []}

        async def run() -> None:
            # inside the app's lifespan: its thread pools run only between start-up and shutdown
            async with app.router.lifespan_context(app):
                await timed(app, "/v1/models/bench/predict", v1, 200)  # warm-up (cache, paths)
                await timed(app, "/v2/models/bench/infer", v2, 200)
                for _ in range(rounds):
                    times["v1"] += await timed(app, "/v1/models/bench/predict", v1, per_round)
                    times["v2"] += await timed(app, "/v2/models/bench/infer", v2, per_round)

        asyncio.run(run())
    stats = {
        k: {"median_us": statistics.median(v) * 1e6,
            "p90_us": float(np.percentile(v, 90)) * 1e6, "n": len(v)}
        for k, v in times.items()
    }  # fmt: skip
    ratio = stats["v2"]["median_us"] / stats["v1"]["median_us"]
    result = {**run_header(__file__, argv), "rounds": rounds, "per_round": per_round,
              "routes": stats, "ratio_v2_over_v1": ratio}  # fmt: skip
    md = [
        f"# /v2 infer vs /v1 predict, one row ({result['date']})",
        "",
        f"Machine: {result['machine']}. In-process ASGI calls on the real app (SQLite "
        f"registry, 100-stump AdaBoost + Platt, 10 features, costs c_fp=1, c_fn=5); "
        f"{rounds} alternating rounds x {per_round} requests per route "
        "(`python -m bench serving.v2`).",
        "",
        "| route | median per request | p90 | requests |",
        "|---|---|---|---|",
        *(
            f"| {'POST /v1/models/{name}/predict' if k == 'v1' else 'POST /v2/models/{name}/infer'}"
            f" | {s['median_us']:.0f} us | {s['p90_us']:.0f} us | {s['n']} |"
            for k, s in stats.items()
        ),  # fmt: skip
        "",
        f"Ratio of medians, /v2 over /v1: **{ratio:.2f}**.",
        "",
    ]
    write_result(__file__, result, "\n".join(md), argv=argv, label="quick" if args.quick else "")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
