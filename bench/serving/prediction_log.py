"""Prediction log: predict with logging on vs off, and logged rows against answered rows.

Predict with logging on vs off in one run, and a load run that counts logged rows against
answered rows.

Usage (from the repository root)::

    .venv/bin/python -m bench serving.prediction_log            # full run (~4 minutes)
    .venv/bin/python -m bench serving.prediction_log --quick    # smoke test

What it does, all in one run:

1. trains a 100-stump AdaBoost model with Platt calibration on ``magic.csv``
   (../shared/datasets, 19,020 x 10) into a fresh temporary SQLite registry (or
   ``--database-url``, which must be empty or disposable) with ``costwise train``;
2. starts two ``costwise serve`` processes on that registry, one with
   ``COSTWISE_PREDICTION_LOG=false`` (off) and one with the default (on), both pinned to
   CPU 0 with ``taskset``; ``wrk`` (with /work/shared/tools/wrk-post.lua) and this
   process run on CPU 1. The "on" server's log writer thread shares CPU 0 with its
   requests, so its cost is in the figures;
3. measures, interleaving off and on (``--rounds`` times): single-row predictions with
   per-request costs at concurrency 1 and 16 (wrk, after a warm-up), and the end-to-end
   time of one 10,000-row request (median of sequential requests, httpx);
4. runs ``--load-clients`` (32) wrk connections for ``--load-seconds`` (60) of
   single-row predictions against the "on" server, waits until its log queue is empty
   (``costwise_prediction_log_queued_rows`` = 0), then compares the rows the server
   answered (``costwise_predicted_rows_total``, over the server's life) with the rows
   in ``logged_predictions`` and with the writer's counters (dropped, duplicate, failed);
5. writes bench/results/serving/prediction_log.json and .md (ratios on/off, goal: at
   most 10% slower with logging on; machine and load average recorded).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from sqlalchemy import create_engine, text

from bench.record import run_header, table, write_result
from bench.serving.service import (
    CLIENT_CPU,
    DATASET,
    MODEL_NAME,
    RESULTS,
    Server,
    costwise_cmd,
    costwise_spec,
    fail,
    load_dataset,
    measured_wrk,
    ms,
    preflight,
    run_wrk,
    servers,
    time_big,
    train_costwise,
)

COSTS = {"c_fp": 1.0, "c_fn": 20.0}
N_BIG = 10_000
GOAL_SLOWDOWN = 1.10  # at most 10% slower with logging on


def metric_sum(client: httpx.Client, base: str, name: str) -> float:
    """Sum over labels of one Prometheus series of ``base``/metrics."""
    total = 0.0
    for ln in client.get(base + "/metrics").text.splitlines():
        if ln.startswith(name + "{") or ln.startswith(name + " "):
            total += float(ln.rsplit(" ", 1)[1])
    return total


def log_counter(client: httpx.Client, base: str, outcome: str) -> float:
    for ln in client.get(base + "/metrics").text.splitlines():
        if ln.startswith(f'costwise_prediction_log_rows_total{{outcome="{outcome}"}}'):
            return float(ln.rsplit(" ", 1)[1])
    return 0.0


def wait_drained(client: httpx.Client, base: str, timeout: float = 120.0) -> float:
    """Seconds until the server's log queue is empty."""
    t0 = time.monotonic()
    while metric_sum(client, base, "costwise_prediction_log_queued_rows") > 0:
        if time.monotonic() - t0 > timeout:
            fail(f"log queue of {base} not drained after {timeout} s")
        time.sleep(0.1)
    return time.monotonic() - t0


def logged_rows(database_url: str) -> int:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM logged_predictions")).scalar_one())
    finally:
        engine.dispose()


def ratio(on: float, off: float) -> float:
    return round(on / off, 3) if off else float("nan")


def in_process(db_url: str, X: np.ndarray, quick: bool) -> dict[str, Any]:
    """The cost of logging without HTTP and without the noise of other processes.

    ``Predictor.predict`` on the trained model, with the log off and on (interleaved,
    best of several rounds), the writer not running while timed: that is the cost on
    the request path. After each round the queue is written in this thread (untimed for
    the predictions, as a served process's writer drains it), and that CPU time divided
    by the rows written is the cost per row off the request path, paid by the same
    process. Total with logging = on + writer x rows.
    """
    from app.db import make_engine, make_session_factory
    from app.services.feedback.prediction_log import PredictionLogWriter
    from app.services.prediction.predictor import Predictor
    from app.services.prediction.request import CostRequest, DecisionRequest, Rows

    engine = make_engine(db_url)
    sessions = make_session_factory(engine, readonly=True)
    writer = PredictionLogWriter(engine, max_rows=10**8, batch_rows=10_000)  # never started
    off, on = Predictor(sessions), Predictor(sessions, log=writer)
    costs = CostRequest(costs=COSTS)
    on.predict(MODEL_NAME, DecisionRequest(Rows(instances=X[:1].tolist()), costs))
    writer.write_pending()  # warm: connection, statement
    out: dict[str, Any] = {}
    cases = (("1 row", 1, 200 if quick else 1000), (f"{N_BIG:,} rows", N_BIG, 3 if quick else 10))
    for label, n, reps in cases:
        rows = DecisionRequest(Rows(instances=X[:n].tolist()), costs)
        best = {"off": float("inf"), "on": float("inf")}
        queued, writer_cpu = 0, 0.0
        written = writer.stats.written
        for _ in range(3 if quick else 7):
            for name, predictor in (("off", off), ("on", on)):
                t0 = time.perf_counter()
                for _ in range(reps):
                    predictor.predict(MODEL_NAME, rows)
                best[name] = min(best[name], (time.perf_counter() - t0) / reps * 1e3)
            # what the writer thread would do, timed in this thread between rounds (untimed
            # for the predictions): a served process drains its queue, so the timed calls
            # must not run with every earlier round's rows still held in memory
            queued += writer.stats.queued
            cpu0 = time.process_time()
            writer.write_pending()
            writer_cpu += time.process_time() - cpu0
        writer_cpu_ms_per_row = writer_cpu * 1e3 / queued
        if writer.stats.written - written != queued:
            fail(f"in process: {queued} rows queued, {writer.stats.written - written} written")
        total_on = best["on"] + writer_cpu_ms_per_row * n
        out[label] = {
            "off_ms": round(best["off"], 4),
            "on_request_path_ms": round(best["on"], 4),
            "writer_cpu_ms_per_row": round(writer_cpu_ms_per_row, 5),
            "on_total_ms": round(total_on, 4),
            "slowdown_request_path": ratio(best["on"], best["off"]),
            "slowdown_total": ratio(total_on, best["off"]),
            "rows_written": queued,
        }
        print(f"  in process, {label}: {out[label]}", flush=True)
    engine.dispose()
    return out


def cpu_ms_per_request(run: dict[str, Any], seconds: float) -> float:
    return run["cpu"]["server_cpu_pct"] / 100 * seconds * 1e3 / max(1, run["requests"])


def summarise(res: dict[str, Any]) -> list[tuple[str, float, float, float, bool]]:
    """(measure, off, on, on/off slowdown, within goal) per measure, medians over rounds."""
    rows = []
    for c in (1, 16):
        off = [r[f"off_c{c}"] for r in res["rounds"]]
        on = [r[f"on_c{c}"] for r in res["rounds"]]
        off_rps = statistics.median(x["rps"] for x in off)
        on_rps = statistics.median(x["rps"] for x in on)
        slow = ratio(off_rps, on_rps)  # requests per second: off/on is the slowdown
        rows.append((f"1 row, c={c}: req/s", off_rps, on_rps, slow, slow <= GOAL_SLOWDOWN))
        off_p50 = statistics.median(ms(x["lat_p50_us"]) for x in off)
        on_p50 = statistics.median(ms(x["lat_p50_us"]) for x in on)
        slow = ratio(on_p50, off_p50)
        rows.append((f"1 row, c={c}: p50 ms", off_p50, on_p50, slow, slow <= GOAL_SLOWDOWN))
        # CPU time of the server process (all its threads: the log writer too) per
        # request: what logging costs, whatever share of CPU 0 other processes took
        off_cpu = statistics.median(cpu_ms_per_request(x, res["wrk_seconds"]) for x in off)
        on_cpu = statistics.median(cpu_ms_per_request(x, res["wrk_seconds"]) for x in on)
        slow = ratio(on_cpu, off_cpu)
        rows.append(
            (f"1 row, c={c}: server CPU ms/request", off_cpu, on_cpu, slow, slow <= GOAL_SLOWDOWN)
        )
    off_big = statistics.median(r["off_big"]["median_ms"] for r in res["rounds"])
    on_big = statistics.median(r["on_big"]["median_ms"] for r in res["rounds"])
    slow = ratio(on_big, off_big)
    rows.append((f"{N_BIG:,} rows: median ms", off_big, on_big, slow, slow <= GOAL_SLOWDOWN))
    return rows


def markdown(res: dict[str, Any]) -> str:
    out = [
        f"# Prediction log benchmark, {res['date']}",
        "",
        f"Command: `{res['command']}`  ",
        f"Machine: {res['machine']}; load average before: {res['loadavg_before']} "
        "(the machine was shared with other work: compare the ratios, measured in the "
        "same run, rather than the absolute figures).  ",
        f"Model: {res['model']}. Servers pinned to CPU 0, wrk and the client to CPU 1; "
        f"{res['rounds_n']} interleaved rounds (off, on) of {res['wrk_seconds']} s wrk runs "
        f"and {res['n_big']} sequential {N_BIG:,}-row requests; medians over rounds. "
        "Server CPU ms/request is the CPU time of the server process (request threads and "
        "the log writer) per answered request: the least disturbed by other processes.",
        "",
        "| measure | logging off | logging on | slowdown (on/off) | within 10% |",
        "|---|---:|---:|---:|:---:|",
    ]
    for name, off, on, slow, ok in res["summary"]:
        out.append(f"| {name} | {off:,.3f} | {on:,.3f} | {slow:.3f} | {'yes' if ok else 'NO'} |")
    out += [
        "",
        "In process (`Predictor.predict` without HTTP; best of 7 interleaved rounds; the "
        "writer's CPU per row measured while it drains what the timed calls queued):",
        "",
    ]
    columns = ["request", "log off ms", "log on, request path ms", "writer CPU ms per row",
               "log on, total ms", "slowdown request path", "slowdown total"]  # fmt: skip
    out += table(columns, (
        (label, f"{r['off_ms']:.4f}", f"{r['on_request_path_ms']:.4f}",
         f"{r['writer_cpu_ms_per_row']:.5f}", f"{r['on_total_ms']:.4f}",
         f"{r['slowdown_request_path']:.3f}", f"{r['slowdown_total']:.3f}")
        for label, r in res["in_process"].items()
    ))  # fmt: skip
    load = res["load"]
    out += [
        "",
        f"## Load: {load['clients']} clients, {load['seconds']} s, single-row predictions, "
        "logging on",
        "",
        f"- wrk: {load['wrk']['requests']:,} requests, {load['wrk']['rps']:.1f} req/s, "
        f"p50 {ms(load['wrk']['lat_p50_us']):.2f} ms, p99 {ms(load['wrk']['lat_p99_us']):.2f} ms, "
        f"non-2xx {load['wrk']['err_status']}",
        f"- rows answered by the server (costwise_predicted_rows_total, whole run): "
        f"{load['answered_rows']:,}",
        f"- rows in logged_predictions after the queue drained "
        f"({load['drain_seconds']:.2f} s): {load['logged_rows']:,}",
        f"- writer counters: written {load['written']:,}, dropped {load['dropped']:,}, "
        f"duplicate {load['duplicate']:,}, failed {load['failed']:,}",
        f"- lost rows (answered - logged): {load['answered_rows'] - load['logged_rows']:,}",
        "",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short runs (smoke test)")
    ap.add_argument("--dataset", type=Path, default=DATASET)
    ap.add_argument("--database-url", help="registry to use (default: a fresh SQLite file)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--load-seconds", type=int, default=60)
    ap.add_argument("--load-clients", type=int, default=32)
    ap.add_argument("--output-dir", type=Path, default=RESULTS)
    ap.add_argument("--label", default="", help="names this configuration's result files")
    args = ap.parse_args(argv)
    seconds, warmup, n_big = (3, 1, 5) if args.quick else (10, 3, 15)
    load_seconds = 10 if args.quick else args.load_seconds
    wrk = preflight(args.dataset)
    os.sched_setaffinity(0, {CLIENT_CPU})
    loadavg_before = [round(x, 2) for x in os.getloadavg()]
    X, _, _ = load_dataset(args.dataset)

    with tempfile.TemporaryDirectory(prefix="costwise-bench-log-") as tmp_s:
        tmp = Path(tmp_s)
        db_url = args.database_url or f"sqlite:///{tmp / 'costwise.db'}"
        base_env = {**os.environ, "COSTWISE_DATABASE_URL": db_url, "COSTWISE_LOG_LEVEL": "warning"}
        if args.database_url:
            subprocess.run([*costwise_cmd(), "db", "upgrade"], env=base_env, check=True)
        print("training (CLI, 100 stumps, Platt) ...", flush=True)
        trained = train_costwise(args.dataset, base_env)
        rng = np.random.default_rng(0)
        single_file = tmp / "single.json"
        single_file.write_bytes(
            json.dumps(
                {"instances": [X[int(rng.integers(len(X)))].tolist()], "costs": COSTS}
            ).encode()
        )
        big = json.dumps(
            {"instances": X[rng.choice(len(X), N_BIG, replace=False)].tolist(), "costs": COSTS}
        ).encode()
        specs = []
        for name, logging_on in (("off", False), ("on", True)):
            env = {**base_env, "COSTWISE_PREDICTION_LOG": "true" if logging_on else "false"}
            specs.append(costwise_spec(name, env, tmp / f"{name}.log", "--no-migrate"))
        print("in process (no HTTP): predict with the log off and on ...", flush=True)
        inproc = in_process(db_url, X, args.quick)
        logged_before = logged_rows(db_url)  # rows the in-process run wrote
        rounds: list[dict[str, Any]] = []
        with servers(*specs) as started, httpx.Client(timeout=120) as client:
            off, on = started
            srv: Server
            for r in range(args.rounds):
                res: dict[str, Any] = {}
                for c in (1, 16):
                    for srv in (off, on):
                        print(f"round {r + 1}: wrk {srv.name} c={c} ({seconds} s) ...", flush=True)
                        res[f"{srv.name}_c{c}"] = w = measured_wrk(
                            wrk, srv, srv.predict_url, single_file, c, warmup, seconds
                        )
                        print(f"  {w['rps']:.1f} req/s, p50 {ms(w['lat_p50_us']):.3f} ms, "
                              f"CPU 0 others {w['cpu']['cpu0_others_pct']}%")  # fmt: skip
                for srv in (off, on):
                    res[f"{srv.name}_big"] = b = time_big(
                        client, srv.predict_url, big, n_big, N_BIG, metrics_base=srv.base
                    )
                    print(
                        f"  {srv.name} {N_BIG:,} rows: median {b['median_ms']:.1f} ms", flush=True
                    )
                # the next runs start with the log written (its cost is in the run above)
                res["drain_after_big_seconds"] = round(wait_drained(client, on.base), 3)
                print(f"  log queue drained after {res['drain_after_big_seconds']} s", flush=True)
                rounds.append(res)
            print(
                f"load: {args.load_clients} clients, {load_seconds} s, logging on ...", flush=True
            )
            w = run_wrk(
                wrk, on.predict_url, single_file, args.load_clients, load_seconds, on.proc.pid
            )
            on.check_alive()
            drain = wait_drained(client, on.base)
            answered = metric_sum(client, on.base, "costwise_predicted_rows_total")
            counters = {
                k: log_counter(client, on.base, k)
                for k in ("written", "dropped", "duplicate", "failed")
            }
        logged = logged_rows(db_url) - logged_before
    load = {
        "clients": args.load_clients,
        "seconds": load_seconds,
        "wrk": w,
        "answered_rows": int(answered),
        "logged_rows": logged,
        "drain_seconds": round(drain, 3),
        **{k: int(v) for k, v in counters.items()},
    }
    result: dict[str, Any] = {
        **run_header(__file__, argv),
        "loadavg_before": loadavg_before,
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "model": f"100 stumps, Platt, {args.dataset.name} ({X.shape[0]:,} x {X.shape[1]})",
        "train": {k: trained.get(k) for k in ("wall_seconds", "command")},
        "database": "postgresql" if args.database_url else "sqlite",
        "rounds_n": args.rounds,
        "wrk_seconds": seconds,
        "n_big": n_big,
        "rounds": rounds,
        "in_process": inproc,
        "load": load,
    }
    result["summary"] = summarise(result)
    md = markdown(result)
    write_result(__file__, result, md, label=args.label, argv=argv, results=args.output_dir)
    print(md)
    return 0 if load["answered_rows"] == load["logged_rows"] else 1


if __name__ == "__main__":
    sys.exit(main())
