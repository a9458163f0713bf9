"""Proof: /health/live keeps answering while the largest allowed predict is parsed.

A real ``costwise serve`` process (SQLite, default limits) receives one predict of
100,000 rows x 60 features (59.6 MiB, the row limit under the 64 MiB body limit) while a
client polls ``/health/live`` every 20 ms. The body is parsed in the parse worker
process (:mod:`app.api.bodies.parse_pool`), so the event loop keeps serving: liveness answers
keep coming while the predict is in flight, with no long gap. Parsed in the server
process instead, the same body held the loop 1.0-9.2 s (bench/reliability/parse_offload.py,
docs/reliability.md). The bounds are generous (a loaded 2-CPU machine); the figures go to
``bench/reliability/out/parse-offload.json``.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from tests.reliability.conftest import post_json_bytes, write_result

ROWS, FEATURES = 100_000, 60


def test_live_answers_while_the_largest_allowed_predict_is_parsed(
    server_factory: Any, tmp_path: Path
) -> None:
    server = server_factory(f"sqlite:///{tmp_path / 'registry.db'}", serve=True)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, FEATURES))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    train = {"features": X.tolist(), "labels": y.tolist(), "n_estimators": 10}
    with httpx.Client(base_url=server.base_url, timeout=300) as c:
        assert c.post("/v1/models/big/versions", json=train).status_code == 201
    body = json.dumps({"instances": np.round(rng.normal(size=(ROWS, FEATURES)), 6).tolist()})
    assert len(body) < 64 * 2**20

    answered: list[float] = []  # when each /health/live answer arrived
    stop = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=server.base_url, timeout=60) as c:
            while not stop.is_set():
                assert c.get("/health/live").status_code == 200
                answered.append(time.monotonic())
                time.sleep(0.02)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        time.sleep(0.5)
        sent = time.monotonic()
        r = post_json_bytes(server.base_url + "/v1/models/big/predict", body, timeout=600)
        done = time.monotonic()
    finally:
        stop.set()
        poller.join()
    assert r.status_code == 200, r.text[:300]
    assert len(r.json()["predictions"]) == ROWS
    during = [t for t in answered if sent <= t <= done]
    marks = [sent, *during, done]
    longest_gap = max(b - a for a, b in zip(marks, marks[1:], strict=False))
    write_result(
        "parse-offload",
        {
            "body_mib": round(len(body) / 2**20, 1),
            "predict_s": round(done - sent, 2),
            "live_answers_during": len(during),
            "longest_gap_s": round(longest_gap, 3),
        },
    )
    # liveness kept answering all along the request (upload, parse, predict, answer) ...
    assert len(during) >= 20, (len(during), done - sent)
    # ... with no gap near the length of a parse on the event loop (>= 1 s measured)
    assert longest_gap < 1.5, (longest_gap, done - sent)
