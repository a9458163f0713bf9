"""Batch decisions at scale: ``costwise batch`` in process and on Dask, beside the scorer.

A synthetic Parquet data set decided by ``costwise batch`` in the job's process and on a
local Dask cluster (2 workers), beside the in-process scorer.

Usage (from the repository root)::

    .venv/bin/python -m bench serving.batch                  # 10,000,000 rows
    .venv/bin/python -m bench serving.batch --rows 1000000   # a smaller run

What it does, in one run:

1. trains model ``bench`` (20 features, the default algorithm and settings) through the
   API on 20,000 synthetic rows into a fresh temporary SQLite registry;
2. writes ``--rows`` synthetic rows (an int64 ``id``, 20 float32 features with 1%
   missing, a log-normal ``amount``) as ``--partitions`` Parquet files, generated in
   chunks of 500,000 rows (never all in memory; not kept: a temporary directory);
3. measures the in-process scorer: :func:`app.services.decisions.row_decisions.decide_rows` (the
   code predict runs) on 1,000,000 rows already in memory as float64, in blocks of
   65,536, with per-row costs (``c_fn`` = amount, ``c_fp`` = 5): rows/s with no I/O;
4. runs ``costwise batch bench IN OUT --cost c_fn=col:amount --cost c_fp=5 --id-column id``
   as a child process (what a batch job runs: read, decide, write Parquet, move into
   place), first in the process itself, then with ``COSTWISE_DASK_SCHEDULER`` pointing at
   a ``dask scheduler`` with two single-threaded ``dask worker --no-nanny`` processes on
   127.0.0.1; wall time (start-up included: imports, registry, model), rows/s and peak
   RSS (``/usr/bin/time -f %M`` of the command; the workers' ``VmHWM``); checks that
   both outputs hold the same decisions;
5. writes bench/results/serving/batch.json and .md.

The machine is shared (2 CPUs, other engineers' tests running): the load averages
before and after are recorded, and the comparison that matters is the ratio within the
run. Threads are limited to one per process (OMP_NUM_THREADS=1, pyarrow's pools 1).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.record import RESULTS, run_header, write_result
from bench.reliability.server import free_port

ROOT = Path(__file__).resolve().parents[2]
N_FEATURES = 20
CHUNK = 500_000
TRAIN_ROWS = 20_000
SCORER_ROWS = 1_000_000


def synthetic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features (float32, 1% missing), labels and amounts of ``n`` rows."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    w = np.linspace(1.5, -1.0, N_FEATURES)
    logit = X @ w * 0.6 + 0.8 * X[:, 0] * X[:, 1] - 1.5
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    X[rng.random(X.shape) < 0.01] = np.nan
    amount = np.round(rng.lognormal(3.0, 1.2, n), 2)
    return X, y, amount


def train(database_url: str) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from app.api.main import create_app
    from app.db import upgrade_to_head
    from app.settings import Settings

    upgrade_to_head(database_url)
    X, y, _ = synthetic(TRAIN_ROWS, seed=1)
    body = {
        "features": np.where(np.isnan(X), None, X.astype(np.float64)).tolist(),
        "labels": y.tolist(),
        "feature_names": [f"f{j}" for j in range(N_FEATURES)],
    }
    settings = Settings(database_url=database_url, max_body_bytes=64 << 20)
    with TestClient(create_app(settings)) as client:
        r = client.post("/v1/models/bench/versions", json=body, params={"mode": "sync"})
        r.raise_for_status()
        return dict(r.json())


def write_input(directory: Path, rows: int, partitions: int) -> float:
    """``rows`` rows as ``partitions`` Parquet files, in chunks; seconds taken."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    started = time.perf_counter()
    directory.mkdir()
    per_part = -(-rows // partitions)
    names = [f"f{j}" for j in range(N_FEATURES)]
    first = 0
    for p in range(partitions):
        n_part = min(per_part, rows - first)
        with pq.ParquetWriter(directory / f"part-{p:04d}.parquet", _schema(names)) as writer:
            done = 0
            while done < n_part:
                n = min(CHUNK, n_part - done)
                X, _, amount = synthetic(n, seed=1000 + p * 1000 + done // CHUNK)
                cols = [pa.array(np.arange(first + done, first + done + n, dtype=np.int64))]
                cols += [pa.array(X[:, j], from_pandas=True) for j in range(N_FEATURES)]
                cols.append(pa.array(amount))
                writer.write_table(pa.Table.from_arrays(cols, schema=_schema(names)))
                done += n
        first += n_part
    return time.perf_counter() - started


def _schema(names: list[str]) -> Any:
    import pyarrow as pa

    fields = [pa.field("id", pa.int64())] + [pa.field(n, pa.float32()) for n in names]
    return pa.schema([*fields, pa.field("amount", pa.float64())])


def scorer_rate(database_url: str) -> dict[str, Any]:
    """Rows/s of predict's decision code on rows in memory (no I/O)."""
    from app.db import make_engine, make_session_factory
    from app.services.decisions.request_costs import cost_setting
    from app.services.decisions.row_decisions import decide_rows
    from app.services.prediction.predictor import Predictor

    engine = make_engine(database_url)
    predictor = Predictor(make_session_factory(engine))
    model = predictor.load(predictor.resolve("bench"))
    X, _, amount = synthetic(SCORER_ROWS, seed=7)
    X64 = X.astype(np.float64)
    block = 65_536
    started = time.perf_counter()
    for s in range(0, SCORER_ROWS, block):
        xb = X64[s : s + block]
        costs = np.zeros((len(xb), 4))
        costs[:, 0], costs[:, 1] = 5.0, amount[s : s + block]
        setting = cost_setting(len(xb), 2, row_costs=costs)
        decide_rows(model, xb, setting, None)
    seconds = time.perf_counter() - started
    engine.dispose()
    return {"rows": SCORER_ROWS, "seconds": round(seconds, 3),
            "rows_per_s": round(SCORER_ROWS / seconds)}  # fmt: skip


def run_batch(
    env: dict[str, str], src: Path, out: Path, extra: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``costwise batch`` (with ``extra`` arguments) as a child process: wall time, peak
    RSS, its JSON summary."""
    command = [
        sys.executable, "-m", "app.cli", "batch", "bench", str(src), str(out),
        "--format", "parquet", "--cost", "c_fn=col:amount", "--cost", "c_fp=5",
        "--id-column", "id", "--no-progress", *extra,
    ]  # fmt: skip
    rss_file = out.with_name(out.name + ".rss")
    timed = ["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *command]  # peak RSS, KiB
    started = time.perf_counter()
    proc = subprocess.run(timed, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    output = proc.stdout
    if proc.returncode != 0:
        raise RuntimeError(f"costwise batch failed ({proc.returncode}): {output}")
    peak_kib = int(rss_file.read_text().split()[-1])
    summary = json.loads(output)
    return {
        "seconds": round(seconds, 2),
        "rows_per_s": round(summary["rows"] / seconds),
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "summary": summary,
    }


def _peak_rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def start_cluster(env: dict[str, str], logs: Path) -> tuple[str, list[subprocess.Popen[bytes]]]:
    dask = str(Path(sys.executable).with_name("dask"))
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = []

    def start(args: list[str], log: str) -> None:
        with (logs / log).open("wb") as fh:
            procs.append(subprocess.Popen([dask, *args], stdout=fh, stderr=subprocess.STDOUT,
                                          env=env, start_new_session=True))  # fmt: skip

    start(["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
          "scheduler.log")  # fmt: skip
    for i in range(2):
        start(["worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
               "--no-dashboard", "--name", f"w{i}", "--local-directory", str(logs),
               "--memory-limit", "0"], f"worker{i}.log")  # fmt: skip
    import distributed

    with distributed.Client(address, timeout="30s") as client:
        client.wait_for_workers(2, timeout=60)
    return address, procs


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in reversed(procs):
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def same_decisions(a: Path, b: Path) -> bool:
    import pyarrow.dataset as ds

    ta = ds.dataset(a).to_table(columns=["id", "decision", "expected_cost"])
    tb = ds.dataset(b).to_table(columns=["id", "decision", "expected_cost"])
    return bool(ta.equals(tb))


def git_commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                         text=True, check=False)  # fmt: skip
    return out.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=20)
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    args = parser.parse_args()
    load_before = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="costwise-bench-batch-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        database_url = f"sqlite:///{tmp / 'registry.db'}"
        version = train(database_url)
        print(f"trained: {version['algorithm']} in {version['training_seconds']:.1f} s", flush=True)
        src = tmp / "input"
        generate_seconds = write_input(src, args.rows, args.partitions)
        size = sum(f.stat().st_size for f in src.iterdir())
        print(f"input: {args.rows:,} rows, {size / 2**20:.0f} MiB in {generate_seconds:.1f} s",
              flush=True)  # fmt: skip
        scorer = scorer_rate(database_url)
        print(f"in-process scorer: {scorer['rows_per_s']:,} rows/s", flush=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("COSTWISE_")}
        env.update(COSTWISE_DATABASE_URL=database_url, COSTWISE_DATA_ROOTS=str(tmp),
                   OMP_NUM_THREADS="1", COSTWISE_LOG_LEVEL="warning")  # fmt: skip
        in_worker = run_batch(env, src, tmp / "out-worker")
        print(
            f"batch in the worker: {in_worker['seconds']} s, "
            f"{in_worker['rows_per_s']:,} rows/s, {in_worker['peak_rss_mib']} MiB",
            flush=True,
        )
        logs = tmp / "dask"
        logs.mkdir()
        address, procs = start_cluster(env, logs)
        on_dask = run_batch({**env, "COSTWISE_DASK_SCHEDULER": address}, src, tmp / "out-dask")
        on_dask["workers_peak_rss_mib"] = [_peak_rss_mib(p.pid) for p in procs[1:]]
        stop(procs)
        procs = []
        print(f"batch on Dask: {on_dask['seconds']} s, {on_dask['rows_per_s']:,} rows/s, "
              f"client {on_dask['peak_rss_mib']} MiB, workers {on_dask['workers_peak_rss_mib']}",
              flush=True)  # fmt: skip
        equal = same_decisions(tmp / "out-worker", tmp / "out-dask")
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    load_after = os.getloadavg()
    result = {
        **run_header(__file__),
        "git_commit": git_commit(),
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in load_after],
        "rows": args.rows,
        "partitions": args.partitions,
        "input_mib": round(size / 2**20, 1),
        "generate_seconds": round(generate_seconds, 1),
        "model": {k: version.get(k) for k in ("algorithm", "params", "training_seconds")},
        "in_process_scorer": scorer,
        "batch_in_worker": in_worker,
        "batch_on_dask": on_dask,
        "outputs_equal": equal,
    }
    write_results(args.out, result)


def write_results(directory: Path, r: dict[str, Any]) -> None:
    label = "" if r["rows"] == 10_000_000 else f"{r['rows'] // 1_000_000}M"
    s, w, d = r["in_process_scorer"], r["batch_in_worker"], r["batch_on_dask"]
    lines = [
        f"# Batch decisions, {r['rows']:,} rows ({r['date']})",
        "",
        f"{r['machine']}; git {r['git_commit']}; load average before {r['load_before']}, "
        f"after {r['load_after']} (a shared machine: other engineers' tests ran meanwhile).",
        f"Input: {r['partitions']} Parquet files, {r['input_mib']} MiB (id, 20 float32 "
        f"features, amount), generated in {r['generate_seconds']} s. Model: "
        f"{r['model']['algorithm']} (default settings), trained on 20,000 rows.",
        "Costs: c_fn from the column amount, c_fp = 5 (per-row cost matrices).",
        "",
        "| run | seconds | rows/s | x scorer | peak RSS (MiB) |",
        "|---|---:|---:|---:|---|",
        f"| in-process scorer (1M rows in memory, no I/O) | {s['seconds']} | "
        f"{s['rows_per_s']:,} | 1.00 | |",
        f"| `costwise batch`, in the worker | {w['seconds']} | {w['rows_per_s']:,} | "
        f"{w['rows_per_s'] / s['rows_per_s']:.2f} | {w['peak_rss_mib']} |",
        f"| `costwise batch`, Dask (2 workers x 1 thread) | {d['seconds']} | "
        f"{d['rows_per_s']:,} | {d['rows_per_s'] / s['rows_per_s']:.2f} | client "
        f"{d['peak_rss_mib']}, workers {d['workers_peak_rss_mib']} |",
        "",
        f"Both outputs hold the same decisions: {r['outputs_equal']}. Summary: "
        f"{w['summary']['decided_positive']:,} rows decided positive, total expected cost "
        f"{w['summary']['total_expected_cost']:,.2f}.",
        "",
        f"Command: `{r['command']}`",
        "",
    ]
    write_result(__file__, r, "\n".join(lines), label=label, results=directory)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
