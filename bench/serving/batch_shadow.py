"""What a shadow costs a batch: ``costwise batch`` with and without ``--shadow``.

Usage (from the repository root)::

    .venv/bin/python -m bench serving.batch_shadow                     # 1,000,000 rows, 3 rounds
    .venv/bin/python -m bench serving.batch_shadow --rows 200000 --rounds 1

What it does, in one run:

1. trains model ``bench`` twice through the API into a fresh temporary SQLite registry
   (the default algorithm, 20 features; version 1 on 20,000 synthetic rows, version 2 on
   20,000 others), points ``production`` at version 1 and makes version 2 its shadow;
2. writes ``--rows`` synthetic rows as ``--partitions`` Parquet files (as
   ``bench.serving.batch`` does: an int64 ``id``, 20 float32 features, an ``amount``);
3. runs ``costwise batch bench IN OUT --cost c_fn=col:amount --cost c_fp=5 --id-column
   id`` in its own process, without and with ``--shadow``, alternating, ``--rounds``
   times each: wall time (start-up included), rows/s, peak RSS, output size; checks that
   the served columns of both outputs are equal;
4. writes bench/results/serving/batch_shadow.json and .md.

Threads are limited to one per process (OMP_NUM_THREADS=1); the machine is shared, so
the load averages are recorded and the ratio within the run is what to read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from bench.record import RESULTS, run_header, write_result
from bench.serving.batch import N_FEATURES, run_batch, synthetic, write_input

TRAIN_ROWS = 20_000


def train_two(database_url: str) -> None:
    """Versions 1 and 2 of ``bench``; production -> 1, shadow -> 2."""
    from fastapi.testclient import TestClient

    from app.api.main import create_app
    from app.db import upgrade_to_head
    from app.settings import Settings

    upgrade_to_head(database_url)
    settings = Settings(database_url=database_url, max_body_bytes=64 << 20)
    with TestClient(create_app(settings)) as client:
        for seed in (1, 2):
            X, y, _ = synthetic(TRAIN_ROWS, seed=seed)
            body = {
                "features": np.where(np.isnan(X), None, X.astype(np.float64)).tolist(),
                "labels": y.tolist(),
                "feature_names": [f"f{j}" for j in range(N_FEATURES)],
            }
            r = client.post("/v1/models/bench/versions", json=body, params={"mode": "sync"})
            r.raise_for_status()
        client.put("/v1/models/bench/aliases/production", json={"version": 1}).raise_for_status()
        client.put("/v1/models/bench/shadow", json={"version": 2}).raise_for_status()


def _size_mib(directory: Path) -> float:
    return round(sum(f.stat().st_size for f in directory.iterdir()) / 2**20, 1)


def same_served_columns(a: Path, b: Path) -> bool:
    import pyarrow.dataset as ds

    columns = ["id", "decision", "expected_cost", "proba_1"]
    return bool(
        ds.dataset(a).to_table(columns=columns).equals(ds.dataset(b).to_table(columns=columns))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    args = parser.parse_args()
    load_before = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="costwise-bench-batch-shadow-"))
    runs: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
    try:
        database_url = f"sqlite:///{tmp / 'registry.db'}"
        train_two(database_url)
        src = tmp / "input"
        write_input(src, args.rows, args.partitions)
        env = {k: v for k, v in os.environ.items() if not k.startswith("COSTWISE_")}
        env.update(COSTWISE_DATABASE_URL=database_url, COSTWISE_DATA_ROOTS=str(tmp),
                   OMP_NUM_THREADS="1", COSTWISE_LOG_LEVEL="warning")  # fmt: skip
        equal = True
        for i in range(args.rounds):
            for mode, extra in (("off", ()), ("on", ("--shadow",))):
                out = tmp / f"out-{mode}-{i}"
                run = run_batch(env, src, out, extra)
                run["output_mib"] = _size_mib(out)
                runs[mode].append(run)
                print(f"round {i} shadow {mode}: {run['seconds']} s, {run['rows_per_s']:,} rows/s, "
                      f"{run['peak_rss_mib']} MiB", flush=True)  # fmt: skip
            equal = equal and same_served_columns(tmp / f"out-off-{i}", tmp / f"out-on-{i}")
            shutil.rmtree(tmp / f"out-off-{i}")
            shutil.rmtree(tmp / f"out-on-{i}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    shadow_summary = runs["on"][-1]["summary"]["shadow"]
    result = {
        **run_header(__file__),
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in os.getloadavg()],
        "rows": args.rows,
        "partitions": args.partitions,
        "rounds": args.rounds,
        "runs": runs,
        "median_seconds": {m: statistics.median(r["seconds"] for r in runs[m]) for m in runs},
        "served_columns_equal": equal,
        "shadow_summary": shadow_summary,
    }
    write_results(args.out, result)


def write_results(directory: Path, r: dict[str, Any]) -> None:
    off, on = r["median_seconds"]["off"], r["median_seconds"]["on"]

    def row(mode: str, label: str) -> str:
        runs = r["runs"][mode]
        med = r["median_seconds"][mode]
        rss = max(x["peak_rss_mib"] for x in runs)
        out = runs[-1]["output_mib"]
        return f"| {label} | {med} | {round(r['rows'] / med):,} | {rss} | {out} |"

    s = r["shadow_summary"]
    lines = [
        f"# A shadow in a batch, {r['rows']:,} rows ({r['date']})",
        "",
        f"{r['machine']}; load average before {r['load_before']}, after {r['load_after']}.",
        f"{r['partitions']} Parquet files; two versions of the default algorithm (20 "
        "features, 20,000 training rows each); costs c_fn = amount, c_fp = 5. "
        f"Median of {r['rounds']} alternating rounds, start-up included.",
        "",
        "| `costwise batch` | seconds | rows/s | peak RSS (MiB) | output (MiB) |",
        "|---|---:|---:|---:|---:|",
        row("off", "without `--shadow`"),
        row("on", "with `--shadow`"),
        "",
        f"With the shadow: {on / off:.2f}x the time. The served columns are equal: "
        f"{r['served_columns_equal']}. The shadow (version {s['version']}) decided "
        f"{s['decided_differently']:,} rows differently.",
        "",
        f"Command: `{r['command']}`",
        "",
    ]
    write_result(__file__, r, "\n".join(lines), results=directory)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
