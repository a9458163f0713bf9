"""Predict latency with a shadow version on and off, in one run, with wrk.

Two ``costwise serve`` processes of this tree (one worker each, pinned to CPU 0), each on
its own SQLite registry with the same two versions of ``magic`` (100 stumps + Platt,
then 30 stumps + Platt on every other row); on ``shadow-on`` version 2
shadows version 1 (``PUT /v1/models/magic/shadow``), on ``shadow-off`` nothing does.
wrk (one thread, pinned to CPU 1) posts to version 1, in four cases: the single-row body of
bench/serving/predict_ab.py and a 1,000-row body (the first 1,000 rows of magic, the
same costs), each with 1 and with 16 connections. In each case rounds alternate between
the two servers (warm-up, then measured); the report is, per case, the median over rounds
of each one's p50 and mean, their ratio, and the shadow's counters (rows written and
dropped: under overload the shadow gives way) after the run. The shadow thread runs in
the server process, on the same core as the requests: its cost is in the figures.

    python -m bench serving.shadow [--rounds 5] [--seconds 5] [--cases 1x1,1x16,1000x1,1000x16]

Writes ``bench/results/serving/shadow.json`` (and ``.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import httpx

from bench.record import run_header, write_result
from bench.serving.predict_ab import BODY, magic, rounds, start, summarize

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ("shadow-off", "shadow-on")
DATASETS = Path(os.environ.get("COSTWISE_BENCH_DATA", "/work/shared/datasets"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument(
        "--cases", default="1x1,1x16,1000x1,1000x16", help="ROWSxCONNECTIONS, comma-separated"
    )
    args = parser.parse_args()
    cases = [tuple(int(v) for v in c.split("x")) for c in args.cases.split(",")]
    X, y = magic(DATASETS / "magic.csv")
    first = {"features": X, "labels": y, "n_estimators": 100, "calibration": "platt",
             "algorithm": "adaboost"}  # fmt: skip
    second = {**first, "features": X[::2], "labels": y[::2], "n_estimators": 30}  # sorted by label
    os.sched_setaffinity(0, {1})
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    counts: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        bodies = {}
        for n_rows in {n for n, _ in cases}:
            bodies[n_rows] = tmp / f"body-{n_rows}.json"
            rows = BODY["instances"] if n_rows == 1 else X[:n_rows]
            bodies[n_rows].write_text(json.dumps({**BODY, "instances": rows, "version": 1}))
        servers = {}
        try:
            for name in CONFIGS:
                servers[name] = start(name, ROOT, {}, tmp)
                base = servers[name][1]
                for body in (first, second):
                    r = httpx.post(base + "/v1/models/magic/versions", json=body, timeout=600)
                    assert r.status_code == 201, r.text[:500]
                if name == "shadow-on":
                    r = httpx.put(base + "/v1/models/magic/shadow", json={"version": 2})
                    assert r.status_code == 200, r.text[:500]
            load_before = os.getloadavg()
            for n_rows, connections in cases:
                case = f"{n_rows}x{connections}"
                print("case", case, "(rows x connections)", flush=True)
                results[case] = {name: [] for name in CONFIGS}
                rounds(servers, list(CONFIGS), bodies[n_rows], args, results[case], connections)
            load_after = os.getloadavg()
            for name in CONFIGS:
                shadow = httpx.get(servers[name][1] + "/v1/models/magic/shadow").json()
                counts[name] = shadow["counts"]
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait(timeout=30)
    summary = {case: summarize(runs, "shadow-off") for case, runs in results.items()}
    out = {
        **run_header(__file__),
        "load_average_before_after": [load_before, load_after],
        "summary": summary,
        "shadow_counts": counts,
        "runs": results,
    }
    write_result(__file__, out)
    print(json.dumps({"summary": summary, "shadow_counts": counts}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
