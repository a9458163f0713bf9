"""Mixed load on the prediction log: is every answered row logged, every outcome kept?

Usage (from the repository root; queue heavy runs behind the lock)::

    .venv/bin/python bench/reliability/log_load.py
    .venv/bin/python bench/reliability/log_load.py --seconds 15 --runs 1          # short
    .venv/bin/python bench/reliability/log_load.py --database-url postgresql+psycopg://...
    .venv/bin/python bench/reliability/log_load.py --bench

Default mode (the attack that found the losses, issue 25): starts ``costwise serve`` on
127.0.0.1 (a fresh SQLite file, or the empty/disposable ``--database-url``), trains
model ``load``, then runs ``--runs`` consecutive rounds of ``--seconds`` each with
``--one-row`` clients sending single-row predicts and ``--big`` clients sending
``--big-rows``-row predicts, back to back. 0.3-0.6 s after each answer, an outcome is
sent for its id (one-row clients) or for 20 of its ids (big clients), without waiting
for the log. At the end it waits until the log queue is empty and counts, in the
database: answered rows = logged rows, every outcome recorded (none left pending, none
``unknown``), answers refused with 503 + Retry-After by the log's backpressure (counted
apart from errors), errors (any other non-2xx or transport error), and the server's
resident memory per round (RSS sampled every 0.5 s: the last round's peak against the
first's says whether it is flat).

``--bench``: throughput of one-row predicts (``--one-row`` clients alone) and of
``--big-rows``-row predicts (``--big`` clients alone), each with the prediction log on
and off (COSTWISE_PREDICTION_LOG=false), a fresh server per phase, ``--runs`` rounds
interleaving off and on in one run; the ratios of the median rows/s on/off are the
log's cost. Results go to ``--out`` (default
``bench/results/reliability/log_load-<database>[-bench].json`` and ``.md``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import orjson
from sqlalchemy import create_engine, func, select
from sqlalchemy.pool import NullPool

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.record import command, run_header, write_result  # noqa: E402
from bench.reliability.load import (  # noqa: E402
    _data,
    _percentiles,
    _train_body,
    timed_run,
)
from bench.reliability.server import Server, start_server  # noqa: E402

MIB = 2**20
BIG_SAMPLE = 20  # outcomes sent per big request


class Tally:
    """What the clients saw, per round."""

    def __init__(self) -> None:
        self.answered_rows = 0
        self.requests: Counter[str] = Counter()  # one / big
        self.latencies: dict[str, list[float]] = {"one": [], "big": []}  # answered ones
        self.refused: Counter[str] = Counter()  # 503 with Retry-After (log backpressure)
        self.refused_rows = 0
        self.errors: list[str] = []
        self.outcomes_sent = 0
        self.statuses: Counter[str] = Counter()
        self.outcome_errors: list[str] = []
        self.outcome_retries = 0
        self.pending_tasks: set[asyncio.Task[None]] = set()

    def error(self, what: str) -> None:
        self.errors.append(what[:300])


async def _outcomes(
    client: httpx.AsyncClient, tally: Tally, ids: list[str], rng: random.Random
) -> None:
    """Report outcomes for ``ids`` 0.3-0.6 s after their answer; a 503 is retried (up to
    5 attempts, backoff 0.2 s doubling) as the costwise client does: reports are
    idempotent. Retries are counted; a report still failing after them is an error."""
    await asyncio.sleep(rng.uniform(0.3, 0.6))
    items = [{"id": i, "label": rng.randint(0, 1)} for i in ids]
    for attempt in range(5):
        try:
            r = await client.post("/v1/models/load/outcomes", json={"outcomes": items})
        except httpx.HTTPError as error:
            tally.outcome_errors.append(repr(error)[:300])
            return
        if r.status_code != 503 or attempt == 4:
            break
        tally.outcome_retries += 1
        await asyncio.sleep(0.2 * 2**attempt)
    if r.status_code != 200:
        tally.outcome_errors.append(f"{r.status_code} {r.text[:200]}")
        return
    tally.outcomes_sent += len(items)
    for result in r.json()["results"]:
        tally.statuses[result["status"]] += 1


async def _predictor(
    base: str,
    stop: float,
    seed: int,
    rows: int,
    pool: np.ndarray,
    tally: Tally,
    outcomes: bool,
) -> None:
    rng = random.Random(seed)
    kind = "one" if rows == 1 else "big"
    bodies = []
    for _ in range(8):  # encoded once: the client's CPU goes to the server
        start = rng.randrange(len(pool) - rows)
        body = {"instances": pool[start : start + rows].tolist(), "costs": {"c_fp": 1, "c_fn": 5}}
        bodies.append(orjson.dumps(body))
    headers = {"content-type": "application/json"}
    # idle connections are let go after 1 s, before the server's keep-alive timeout (5 s):
    # httpx's default (5 s) raced it, and a POST sent on a connection the server was
    # closing failed with ReadError (a client-side race, not the service)
    limits = httpx.Limits(keepalive_expiry=1.0)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
        while time.monotonic() < stop:
            sent = time.perf_counter()
            try:
                r = await client.post(
                    "/v1/models/load/predict", content=rng.choice(bodies), headers=headers
                )
            except httpx.HTTPError as error:
                tally.error(f"{kind}: {error!r}")
                continue
            tally.requests[kind] += 1
            if r.status_code == 503 and "retry-after" in r.headers:
                tally.refused[kind] += 1
                tally.refused_rows += rows
                await asyncio.sleep(float(r.headers["retry-after"]))
                continue
            if r.status_code != 200:
                tally.error(f"{kind}: {r.status_code} {r.text[:200]}")
                continue
            tally.latencies[kind].append(time.perf_counter() - sent)
            predictions = orjson.loads(r.content)["predictions"]
            tally.answered_rows += len(predictions)
            if outcomes:
                ids = [p["id"] for p in predictions]
                if len(ids) > BIG_SAMPLE:
                    ids = rng.sample(ids, BIG_SAMPLE)
                task = asyncio.create_task(_outcomes(client, tally, ids, rng))
                tally.pending_tasks.add(task)
                task.add_done_callback(tally.pending_tasks.discard)
        while tally.pending_tasks:  # the client closes after its outcomes are sent
            await asyncio.gather(*list(tally.pending_tasks))


async def _round(
    server: Server, seconds: float, one_row: int, big: int, big_rows: int, outcomes: bool
) -> dict[str, Any]:
    pool, _ = _data(5000, seed=1)
    tally = Tally()

    def clients(stop: float) -> list[Coroutine[Any, Any, None]]:
        one = [
            _predictor(server.base_url, stop, i, 1, pool, tally, outcomes) for i in range(one_row)
        ]
        return one + [
            _predictor(server.base_url, stop, 1000 + i, big_rows, pool, tally, outcomes)
            for i in range(big)
        ]

    elapsed, memory = await timed_run(server.pid, seconds, clients)
    return {
        "seconds": round(elapsed, 1),
        "requests": dict(tally.requests),
        "answered_rows": tally.answered_rows,
        "rows_per_second": round(tally.answered_rows / elapsed, 1),
        "requests_per_second": {k: round(n / elapsed, 1) for k, n in tally.requests.items()},
        "latency": {k: _percentiles(v) for k, v in tally.latencies.items() if v},
        "refused_503": dict(tally.refused),
        "refused_rows": tally.refused_rows,
        "errors": len(tally.errors),
        "error_examples": tally.errors[:5],
        "outcomes_sent": tally.outcomes_sent,
        "outcome_statuses": dict(tally.statuses),
        "outcome_errors": len(tally.outcome_errors),
        "outcome_retries_503": tally.outcome_retries,
        "outcome_error_examples": tally.outcome_errors[:5],
        "memory": memory,
    }


def _metric(text: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)} ([0-9.e+]+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def _drain(server: Server, timeout: float = 120.0) -> dict[str, float]:
    """Wait until the log queue is empty; the log counters of /metrics."""
    deadline = time.monotonic() + timeout
    while True:
        text = httpx.get(server.base_url + "/metrics", timeout=30).text
        queued = _metric(text, "costwise_prediction_log_queued_rows")
        if queued == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    out = {"queued": queued}
    for outcome in ("written", "duplicate", "dropped", "failed", "refused"):
        out[outcome] = _metric(text, f'costwise_prediction_log_rows_total{{outcome="{outcome}"}}')
    out["waited"] = _metric(text, "costwise_prediction_log_waited_rows_total")
    for result in ("joined", "invalid", "conflict", "expired", "refused"):
        key = f"pending_{result}"
        out[key] = _metric(text, f'costwise_pending_outcomes_total{{result="{result}"}}')
    return out


def _database_counts(url: str) -> dict[str, int]:
    from app.registry.orm import LoggedPrediction, PendingOutcome

    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as c:
            logged = c.scalar(select(func.count()).select_from(LoggedPrediction.__table__))
            labelled = c.scalar(
                select(func.count())
                .select_from(LoggedPrediction.__table__)
                .where(LoggedPrediction.label.is_not(None))
            )
            pending = c.scalar(select(func.count()).select_from(PendingOutcome.__table__))
    finally:
        engine.dispose()
    return {
        "logged": int(logged or 0),
        "labelled": int(labelled or 0),
        "pending": int(pending or 0),
    }


def _start(url: str, log_dir: Path, env: dict[str, str]) -> Server:
    from app.db import upgrade_to_head

    upgrade_to_head(url)
    server = start_server(url, log_dir / f"server-{time.monotonic_ns()}.log", env=env, serve=True)
    with httpx.Client(base_url=server.base_url, timeout=120) as client:
        client.post("/v1/models/load/versions", json=_train_body(0)).raise_for_status()
        client.put("/v1/models/load/aliases/production", json={"version": 1}).raise_for_status()
    return server


def _url(database_url: str | None, tmp: str, name: str) -> str:
    if database_url is None:
        return f"sqlite:///{Path(tmp) / f'{name}.db'}"
    return database_url


def run_lossless(
    *,
    seconds: float = 60.0,
    runs: int = 2,
    one_row: int = 24,
    big: int = 8,
    big_rows: int = 1000,
    database_url: str | None = None,
    env: dict[str, str] | None = None,
    log_dir: Path | None = None,
) -> dict[str, Any]:
    """The mixed load, ``runs`` rounds on one server; the totals checked in the database."""
    with tempfile.TemporaryDirectory(prefix="costwise-log-load-") as tmp:
        url = _url(database_url, tmp, "registry")
        server = _start(url, log_dir or Path(tmp), env or {})
        rounds = []
        try:
            for _ in range(runs):
                rounds.append(asyncio.run(_round(server, seconds, one_row, big, big_rows, True)))
            counters = _drain(server)
            time.sleep(0.5)  # the last batch's join runs right after its commit
            counts = _database_counts(url)
        finally:
            server.stop()
        server_log = server.log()
    answered = sum(r["answered_rows"] for r in rounds)
    statuses: Counter[str] = Counter()
    for r in rounds:
        statuses.update(r["outcome_statuses"])
    first, last = rounds[0]["memory"], rounds[-1]["memory"]
    return {
        "config": {
            "seconds_per_round": seconds,
            "rounds": runs,
            "one_row_clients": one_row,
            "big_clients": big,
            "big_rows": big_rows,
            "database": url.split(":")[0].split("+")[0],
            "env": env or {},
        },
        "rounds": rounds,
        "answered_rows": answered,
        "logged_rows": counts["logged"],
        "lost_rows": answered - counts["logged"],
        "errors": sum(r["errors"] for r in rounds),
        "refused_503": sum(sum(r["refused_503"].values()) for r in rounds),
        "refused_rows": sum(r["refused_rows"] for r in rounds),
        "outcomes_sent": sum(r["outcomes_sent"] for r in rounds),
        "outcome_statuses": dict(statuses),
        "outcome_errors": sum(r["outcome_errors"] for r in rounds),
        "outcome_retries_503": sum(r["outcome_retries_503"] for r in rounds),
        "labelled_rows": counts["labelled"],
        "pending_left": counts["pending"],
        "log_counters": counters,
        "memory_flat": last["peak_mib"] <= first["peak_mib"] * 1.10 + 16,
        "server_log_tail": server_log[-1500:],
        **run_header(__file__),
    }


def run_bench(
    *,
    seconds: float = 20.0,
    rounds: int = 2,
    one_row: int = 24,
    big: int = 8,
    big_rows: int = 1000,
    database_url: str | None = None,
) -> dict[str, Any]:
    """Throughput of one-row and of ``big_rows``-row predicts, log on and off, in
    ``rounds`` interleaved rounds (off, on, for each kind); the ratio of the medians."""
    phases: dict[str, list[Any]] = {}
    with tempfile.TemporaryDirectory(prefix="costwise-log-bench-") as tmp:
        for i in range(rounds):
            for kind, (ones, bigs) in (("one_row", (one_row, 0)), ("big", (0, big))):
                for log in ("off", "on"):
                    url = _url(database_url, tmp, f"{log}-{kind}-{i}")
                    if database_url is not None:
                        _reset(url)
                    env = {} if log == "on" else {"COSTWISE_PREDICTION_LOG": "false"}
                    server = _start(url, Path(tmp), env)
                    try:
                        result = asyncio.run(_round(server, seconds, ones, bigs, big_rows, False))
                        if log == "on":
                            result["log_counters"] = _drain(server)
                    finally:
                        server.stop()
                    phases.setdefault(f"{kind}_log_{log}", []).append(result)
    medians = {
        name: float(np.median([r["rows_per_second"] for r in results]))
        for name, results in phases.items()
    }
    ratios = {
        kind: round(medians[f"{kind}_log_on"] / medians[f"{kind}_log_off"], 3)
        for kind in ("one_row", "big")
    }
    return {
        "config": {
            "seconds_per_phase": seconds,
            "rounds": rounds,
            "one_row_clients": one_row,
            "big_clients": big,
            "big_rows": big_rows,
            "database": (database_url or "sqlite").split(":")[0].split("+")[0],
        },
        "phases": phases,
        "median_rows_per_second": medians,
        "throughput_ratio_log_on_over_off": ratios,
        **run_header(__file__),
    }


def _reset(url: str) -> None:
    """Empty a disposable PostgreSQL database (every table of the public schema)."""
    engine = create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as c:
            c.exec_driver_sql("DROP SCHEMA public CASCADE")
            c.exec_driver_sql("CREATE SCHEMA public")
    finally:
        engine.dispose()


def _markdown(result: dict[str, Any], command: str) -> str:
    lines = [f"# Prediction log under load ({result['date']})", "", f"Machine: {result['machine']}"]
    lines += ["", f"Command: `{command}`", "", "```json"]
    shown = {k: v for k, v in result.items() if k not in ("server_log_tail",)}
    lines += [json.dumps(shown, indent=2), "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--one-row", type=int, default=24)
    parser.add_argument("--big", type=int, default=8)
    parser.add_argument("--big-rows", type=int, default=1000)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--bench", action="store_true", help="throughput, log on vs off")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.bench:
        result = run_bench(
            seconds=args.seconds or 20.0,
            rounds=args.runs,
            one_row=args.one_row,
            big=args.big,
            big_rows=args.big_rows,
            database_url=args.database_url,
        )
        failed = False
    else:
        result = run_lossless(
            seconds=args.seconds or 60.0,
            runs=args.runs,
            one_row=args.one_row,
            big=args.big,
            big_rows=args.big_rows,
            database_url=args.database_url,
        )
        failed = bool(
            result["lost_rows"]
            or result["errors"]
            or result["pending_left"]
            or result["outcome_statuses"].get("unknown")
        )
    database = result["config"]["database"]
    label = database + ("-bench" if args.bench else "")
    text = _markdown(result, command(__file__, argv))
    if args.out is None:
        write_result(__file__, result, text, label=label, argv=argv)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        args.out.with_suffix(".md").write_text(text)
    print(json.dumps({k: v for k, v in result.items() if k != "server_log_tail"}, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
