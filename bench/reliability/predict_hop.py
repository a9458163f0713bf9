"""Cost of running every predict in the thread pool (issue 17) vs inline on the loop.

Before issue 17, predicts of <= 256 rows ran inline on the event loop; now every predict
runs in the thread pool, because resolving its version reads the database. This starts
two uvicorn servers on their own SQLite registries, one serving this checkout and one
serving ``--before`` (another source tree, e.g. ``git archive 9ae26e7``), trains the same
model on both, then alternates rounds of sequential 1-row predicts against each (same
client, same machine, same minutes) and reports latency percentiles and their ratio.

    python bench/reliability/predict_hop.py --before /tmp/i17-before

Writes ``bench/results/reliability/predict_hop.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.db import upgrade_to_head  # noqa: E402
from bench.record import run_header, write_result  # noqa: E402
from bench.reliability.server import start_server  # noqa: E402
from bench.reliability.stall import ROW, percentile, train_body  # noqa: E402


def _round(client: httpx.Client, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        r = client.post(
            "/v1/models/fraud/predict", json={"instances": [ROW], "costs": {"c_fp": 1, "c_fn": 5}}
        )
        out.append((time.perf_counter() - t) * 1000)
        assert r.status_code == 200, r.text
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    servers = {}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for label, tree in (("before", args.before), ("after", None)):
                url = f"sqlite:///{tmp}/{label}.db"
                upgrade_to_head(url)
                servers[label] = start_server(url, Path(tmp) / f"{label}.log", cwd=tree)
            clients = {k: httpx.Client(base_url=s.base_url, timeout=30) for k, s in servers.items()}
            for c in clients.values():
                assert c.post("/v1/models/fraud/versions", json=train_body()).status_code == 201
                _round(c, 50)  # warm up: model loaded, connections open
            samples: dict[str, list[float]] = {k: [] for k in clients}
            for _ in range(args.rounds):
                for label, c in clients.items():
                    samples[label] += _round(c, args.requests)
        finally:
            for s in servers.values():
                s.stop()
    summary: dict[str, Any] = {
        k: {
            "n": len(v),
            "p50_ms": statistics.median(v),
            "p90_ms": percentile(v, 90),
            "p99_ms": percentile(v, 99),
            "mean_ms": statistics.fmean(v),
        }
        for k, v in samples.items()
    }
    summary["ratio_p50_after_over_before"] = (
        summary["after"]["p50_ms"] / summary["before"]["p50_ms"]
    )
    summary["ratio_mean_after_over_before"] = (
        summary["after"]["mean_ms"] / summary["before"]["mean_ms"]
    )
    result = {**run_header(__file__), **summary}
    print(json.dumps(result, indent=1))
    write_result(__file__, result)


if __name__ == "__main__":
    main()
