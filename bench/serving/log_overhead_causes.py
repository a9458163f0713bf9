"""Where the prediction log's cost on a 10,000-row request comes from (issue 14).

``bench/serving/prediction_log.py`` measures a 10,000-row predict about 13% slower with the
log on (goal: at most 10%). This benchmark separates the two candidate causes by running
three servers side by side (each pinned to CPU 0 with ``taskset``, the client on CPU 1,
as in that benchmark) and timing 15 sequential 10,000-row predicts on each, in
interleaved rounds:

* ``off``: ``COSTWISE_PREDICTION_LOG=false``;
* ``on``: the default log (the writer drains its queue while the next requests run);
* ``on_deferred``: the log on, but the writer never writes during the run (its batch size
  and flush interval set so high that the rows only wait in memory): what is left is the
  request path's own work (the rows' ids, the log entry, the larger response).

Per server: the median end-to-end time, the median time inside the app (from the
server's own ``/metrics`` request histogram) and the response size.

Usage::

    .venv/bin/python -m bench serving.log_overhead_causes [--rounds 3]

Writes ``bench/results/serving/log_overhead_causes.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from bench.record import run_header, write_result
from bench.serving.service import (
    CLIENT_CPU,
    DATASET,
    MODEL_NAME,
    costwise_spec,
    load_dataset,
    preflight,
    servers,
    time_big,
    train_costwise,
)

N_BIG = 10_000
VARIANTS: dict[str, dict[str, str]] = {
    "off": {"COSTWISE_PREDICTION_LOG": "false"},
    "on": {"COSTWISE_PREDICTION_LOG": "true"},
    "on_deferred": {
        "COSTWISE_PREDICTION_LOG": "true",
        "COSTWISE_PREDICTION_LOG_FLUSH_SECONDS": "60",  # the longest allowed
        "COSTWISE_PREDICTION_LOG_BATCH_ROWS": "10000000",
        "COSTWISE_PREDICTION_LOG_QUEUE_ROWS": "10000000",
    },
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    preflight(DATASET)
    os.sched_setaffinity(0, {CLIENT_CPU})
    load_before = [round(x, 2) for x in os.getloadavg()]
    X, _, _ = load_dataset(DATASET)
    res: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="costwise-log-causes-") as tmp_s:
        tmp = Path(tmp_s)
        db_url = f"sqlite:///{tmp / 'costwise.db'}"
        env = {**os.environ, "COSTWISE_DATABASE_URL": db_url, "COSTWISE_LOG_LEVEL": "warning"}
        train_costwise(DATASET, env)
        rng = np.random.default_rng(0)
        body = json.dumps(
            {
                "instances": X[rng.choice(len(X), N_BIG, replace=False)].tolist(),
                "costs": {"c_fp": 1.0, "c_fn": 20.0},
            }
        ).encode()
        specs = []
        for name, extra in VARIANTS.items():
            specs.append(costwise_spec(name, {**env, **extra}, tmp / f"{name}.log", "--no-migrate"))
        with servers(*specs) as started_servers, httpx.Client(timeout=120) as client:
            for r in range(args.rounds):
                for srv, name in zip(started_servers, VARIANTS, strict=True):
                    url = f"{srv.base}/v1/models/{MODEL_NAME}/predict"
                    t = time_big(client, url, body, 15, N_BIG, srv.base)
                    res[name].append(t)
                    print(f"round {r + 1} {name}: {t['median_ms']:.2f} ms, in app "
                          f"{t.get('in_app_median_ms', float('nan')):.2f} ms", flush=True)  # fmt: skip
    summary = {
        name: {
            "median_ms": round(statistics.median(x["median_ms"] for x in runs), 3),
            "in_app_median_ms": round(statistics.median(x["in_app_median_ms"] for x in runs), 3),
            "response_bytes": runs[0]["response_bytes"],
        }
        for name, runs in res.items()
    }
    off = summary["off"]
    for s in summary.values():
        s["slowdown"] = round(s["median_ms"] / off["median_ms"], 3)
        s["in_app_slowdown"] = round(s["in_app_median_ms"] / off["in_app_median_ms"], 3)
    out = {
        **run_header(__file__),
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "summary": summary,
        "rounds": res,
    }
    lines = [
        f"# Where the log's cost on a {N_BIG:,}-row request comes from ({out['date']})",
        "",
        f"Command: `{out['command'].strip()}`  ",
        f"Machine: {out['machine']}; load average before {load_before}, after "
        f"{out['load_after']}. Servers pinned to CPU 0, the client to CPU 1; medians over "
        f"{args.rounds} interleaved rounds of per-round medians of 15 requests.",
        "",
        "| server | end to end (ms) | in the app (ms) | slowdown | in-app slowdown | response bytes |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, s in summary.items():
        lines.append(
            f"| {name} | {s['median_ms']} | {s['in_app_median_ms']} | {s['slowdown']} | "
            f"{s['in_app_slowdown']} | {s['response_bytes']:,} |"
        )
    write_result(__file__, out, "\n".join(lines), indent=1)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
