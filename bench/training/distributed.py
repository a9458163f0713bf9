"""Calibrated AdaBoost on a Dask cluster (two workers) against one process, same data.

Writes ``--rows`` x 50 standard normal features with a logistic label (a few features
matter) as ``--partitions`` Parquet files, then trains calibrated AdaMEC (``--rounds``
stumps, 5-fold cross-fitted Platt calibration) twice, each in its own child process:

* ``one process``: reads the files (pyarrow), bins them (the same merged-summary edges),
  and fits :class:`models.boosting.calibrated.CalibratedBoosting` on the codes
  (:func:`models.boosting.prebinned.fit_prebinned`, fold fits on both CPUs);
* ``dask``: :func:`models.distributed.fit_calibrated_adaboost` driven from the child,
  with a ``dask scheduler`` and two single-threaded ``dask worker --no-nanny`` processes
  on 127.0.0.1 holding the data.

Reported: wall time (reading included), the peak RSS (VmHWM) of every process, the bytes
that reach the driver per round (the reduced histogram) and the bytes the workers send
each other per round (``transfer_outgoing_bytes_total``, rounds 2 to the last).

Run::

    flock /tmp/costwise-heavy.lock nice -n 5 .venv/bin/python -m bench training.distributed
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.record import heading, run_header, table, versions, write_result
from bench.serving.batch import start_cluster, stop

D = 50
NAMES = [f"f{j}" for j in range(D)]


def peak_mib(pid: int | str = "self") -> float:
    """VmHWM (peak resident memory) of a process, MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def write_data(directory: Path, rows: int, partitions: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True)
    rng = np.random.default_rng(0)
    beta = np.zeros(D)
    beta[:5] = [1.0, -0.8, 0.6, 0.5, -0.4]
    bounds = np.linspace(0, rows, partitions + 1).astype(int)
    for i in range(partitions):
        n = bounds[i + 1] - bounds[i]
        X = rng.normal(size=(n, D))
        y = (rng.random(n) < 1 / (1 + np.exp(-(X @ beta - 1.0)))).astype(np.int64)
        columns = {name: X[:, j] for j, name in enumerate(NAMES)}
        pq.write_table(pa.table({**columns, "label": y}), directory / f"part-{i:03d}.parquet")


def one_process(src: str, rounds: int) -> dict[str, Any]:
    """Child: read, bin and fit in this process."""
    import pyarrow.parquet as pq

    from models.boosting.adaboost import AdaBoost
    from models.boosting.calibrated import CalibratedBoosting
    from models.boosting.prebinned import fit_prebinned
    from models.distributed import edges_of, merge, parquet_parts, summarize
    from models.features.binning import BinnedRows

    started = time.perf_counter()
    files = parquet_parts(src)
    parts = []
    for f in files:  # pass 1: summaries (the same edges as the workers find)
        t = pq.read_table(f).to_pandas()
        parts.append(summarize(t[NAMES].to_numpy(np.float64), t["label"].to_numpy()))
    edges = edges_of(merge(*parts))
    del parts
    n = sum(pq.read_metadata(f).num_rows for f in files)
    codes = BinnedRows.empty(n, D)
    y = np.empty(n, dtype=np.int64)
    at = 0
    for f in files:  # pass 2: codes
        t = pq.read_table(f).to_pandas()
        m = len(t)
        codes[at : at + m] = edges.encode(t[NAMES].to_numpy(np.float64))
        y[at : at + m] = t["label"].to_numpy()
        at += m
        del t
    read_seconds = time.perf_counter() - started
    model = CalibratedBoosting(AdaBoost(n_estimators=rounds), split="kfold", n_folds=5,
                               random_state=0)  # fmt: skip
    fit_prebinned(model, codes, y, edges)
    return {
        "seconds": round(time.perf_counter() - started, 2),
        "read_and_bin_seconds": round(read_seconds, 2),
        "peak_rss_mib": peak_mib(),
    }


def step_cost(src: str) -> dict[str, Any]:
    """Child: seconds of one round's task on one partition in this process (the work a
    worker does per round for its rows, without Dask), median of 5."""
    from models.distributed import parquet_parts
    from models.distributed.partitions import encode_part, start_weights, step, summarize_part
    from models.distributed.rows import edges_of

    first = parquet_parts(src)[0]
    edges = edges_of(summarize_part(first, NAMES, "label", 200_000))
    part = encode_part(first, NAMES, "label", edges, [0, 1], 5)
    W = start_weights(part, [1.0] * 6)
    update = (0, 100, 1.0, -1.0, 1.0, 0.1, 1.0)
    step(part, W, [update] * 6)  # compile
    times = []
    for _ in range(5):
        t = time.perf_counter()
        step(part, W, [update] * 6)
        times.append(time.perf_counter() - t)
    return {"rows": part.n_rows, "seconds": round(float(np.median(times)), 4)}


def on_dask(src: str, rounds: int, address: str) -> dict[str, Any]:
    """Child: drive the distributed training; measure bytes per round."""
    import distributed

    from models.distributed import fit_calibrated_adaboost

    client = distributed.Client(address, timeout="30s", set_as_default=False)

    def sent() -> int:
        out = client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total)
        return int(sum(out.values()))

    marks: dict[int, int] = {}
    round_seconds: dict[int, float] = {}

    def on_round(t: int, facts: dict[str, Any]) -> None:
        round_seconds[t] = time.perf_counter()
        if t in (0, rounds - 1):
            marks[t] = sent()

    started = time.perf_counter()
    fit = fit_calibrated_adaboost(client, src, NAMES, "label", n_estimators=rounds, n_folds=5,
                                  on_round=on_round)  # fmt: skip
    seconds = time.perf_counter() - started
    client.close()
    per_round = (round_seconds[rounds - 1] - round_seconds[0]) / (rounds - 1)
    return {
        "seconds": round(seconds, 2),
        "seconds_per_round": round(per_round, 3),
        "driver_peak_rss_mib": peak_mib(),
        "bytes_to_driver_per_round": fit.info["hist_bytes_per_round"],
        "bytes_between_workers_per_round": round((marks[rounds - 1] - marks[0]) / (rounds - 1)),
        "rounds": fit.info["rounds"],
    }


def child(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "training.distributed", *args],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{args[1]} run failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--child", choices=["single", "dask", "step"], help=argparse.SUPPRESS)
    parser.add_argument("--src", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "single":
        print(json.dumps(one_process(args.src, args.rounds)))
        return
    if args.child == "step":
        print(json.dumps(step_cost(args.src)))
        return
    if args.child == "dask":
        print(json.dumps(on_dask(args.src, args.rounds, args.address)))
        return

    load_before = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="costwise-bench-distributed-"))
    procs: list[subprocess.Popen[bytes]] = []
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    try:
        src = tmp / "data"
        write_data(src, args.rows, args.partitions)
        size = sum(f.stat().st_size for f in src.iterdir())
        common = ["--rounds", str(args.rounds), "--src", str(src)]
        step = child(["--child", "step", *common], env)
        print(f"one partition's round task: {step}", file=sys.stderr, flush=True)
        single = child(["--child", "single", *common], env)
        print(f"one process: {single}", file=sys.stderr, flush=True)
        logs = tmp / "dask"
        logs.mkdir()
        address, procs = start_cluster(env, logs)
        dask = child(["--child", "dask", "--address", address, *common], env)
        dask["workers_peak_rss_mib"] = [peak_mib(p.pid) for p in procs[1:]]
        dask["scheduler_peak_rss_mib"] = peak_mib(procs[0].pid)
        print(f"dask: {dask}", file=sys.stderr, flush=True)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    result = {
        **run_header(__file__),
        "versions": versions("numpy", "dask", "distributed", "pyarrow"),
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in os.getloadavg()],
        "rows": args.rows,
        "features": D,
        "partitions": args.partitions,
        "rounds": args.rounds,
        "n_folds": 5,
        "input_mib": round(size / 2**20, 1),
        "step_task": step,
        "one_process": single,
        "dask_two_workers": dask,
    }
    write_result(__file__, result, markdown(result))


def markdown(r: dict[str, Any]) -> str:
    s, d = r["one_process"], r["dask_two_workers"]
    lines = heading("Calibrated AdaBoost: one process vs a Dask cluster of two workers", r)
    lines += [
        "",
        f"{r['rows']:,} rows x {r['features']} features in {r['partitions']} Parquet files "
        f"({r['input_mib']} MiB); {r['rounds']} stumps, {r['n_folds']}-fold Platt calibration. "
        f"Load average (1, 5, 15 min) before {r['load_before']}, after {r['load_after']}: "
        "the 2 CPUs are shared, seconds are noisy.",
        "",
        *table(
            ["run", "seconds", "peak RSS per process (MiB)"],
            [
                ["one process", s["seconds"], s["peak_rss_mib"]],
                [
                    "Dask, 2 workers",
                    d["seconds"],
                    f"driver {d['driver_peak_rss_mib']}, workers "
                    f"{', '.join(str(m) for m in d['workers_peak_rss_mib'])}, scheduler "
                    f"{d['scheduler_peak_rss_mib']}",
                ],
            ],
        ),
        "",
        f"Per round on Dask: {d['seconds_per_round']} s; {d['bytes_to_driver_per_round']:,} "
        f"bytes to the driver (the reduced histogram); "
        f"{d['bytes_between_workers_per_round']:,} bytes sent by the workers (to each other "
        f"and to the driver). One partition's round task alone ({r['step_task']['rows']:,} "
        f"rows, in one process): {r['step_task']['seconds']} s.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
