"""Database stalls under predict load: liveness latency, predict outcomes, recovery.

A real uvicorn server (:mod:`bench.reliability.server`) reaches PostgreSQL through a
:class:`bench.reliability.relay.Relay`. While clients predict and a prober calls
``/health/live`` every 20 ms, the database stalls for ``seconds``:

- ``relay``: the relay stops forwarding (the server's connections stay open, nothing
  comes back);
- ``lock``: another connection (direct, not through the relay) holds
  ``LOCK TABLE aliases IN ACCESS EXCLUSIVE MODE``, which every version resolution waits for.

Then it ends (thaw / rollback) and the run goes on for ``after`` seconds. Figures:
``/health/live`` latency of the calls in flight during the stall (p50, p99, max), the
predicts in flight during the stall by outcome (200 fresh, 200 stale from memory, 503) with their worst latency, and the
recovery: seconds from the end of the stall to the first fresh 200 after which every
predict is a fresh 200.

    python bench/reliability/stall.py                      # 20 s relay freeze + 12 s lock
    python bench/reliability/stall.py --before /tmp/before # the same against another tree

Needs ``COSTWISE_TEST_DATABASE_URL`` (a PostgreSQL server where it may create and drop a
database). Writes ``bench/results/reliability/stall[-label].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.db import normalize_url, upgrade_to_head  # noqa: E402
from bench.record import run_header, write_result  # noqa: E402
from bench.reliability.relay import Relay  # noqa: E402
from bench.reliability.server import Server, probe_live, start_server  # noqa: E402

ROW = [0.1, 0.2, 0.3, 0.4]


def train_body(n: int = 300) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(n, 4)), 4)
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    return {
        "features": X.tolist(),
        "labels": y.tolist(),
        "feature_names": ["a", "b", "c", "d"],
        "n_estimators": 20,
    }


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


@dataclass
class Record:
    sent: float
    seconds: float
    status: int
    stale: bool = False
    code: str = ""  # error code of a non-200 answer


@dataclass
class Observed:
    live: list[Record] = field(default_factory=list)
    predicts: list[Record] = field(default_factory=list)


def _live_prober(base_url: str, stop: threading.Event, out: list[Record]) -> None:
    probe_live(base_url, stop, lambda *sample: out.append(Record(*sample)), timeout=120)


def _predictor(base_url: str, stop: threading.Event, out: list[Record], model: str) -> None:
    with httpx.Client(base_url=base_url, timeout=120) as client:
        while not stop.is_set():
            t = time.monotonic()
            try:
                r = client.post(f"/v1/models/{model}/predict", json={"instances": [ROW]})
                body = r.json()
                stale = r.status_code == 200 and body.get("resolution") is not None
                code = "" if r.status_code == 200 else str(body.get("code", ""))
                out.append(Record(t, time.monotonic() - t, r.status_code, stale, code))
            except httpx.HTTPError:
                out.append(Record(t, time.monotonic() - t, 0))
            time.sleep(0.01)


@contextmanager
def held_lock(direct_url: str) -> Iterator[None]:
    """``LOCK TABLE aliases IN ACCESS EXCLUSIVE MODE`` held by another connection."""
    u = make_url(direct_url)
    conn = psycopg.connect(
        host=u.host,
        port=u.port or 5432,
        user=u.username,
        password=u.password,
        dbname=u.database,
    )
    try:
        conn.execute("LOCK TABLE aliases IN ACCESS EXCLUSIVE MODE")
        yield
    finally:
        conn.rollback()
        conn.close()


def measure(
    server: Server,
    stall: Any,  # a context manager: the stall lasts while it is entered
    *,
    seconds: float,
    before: float = 2.0,
    after: float = 6.0,
    clients: int = 4,
    model: str = "fraud",
    during: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Run the load, stall for ``seconds`` inside ``stall``, and summarise.

    ``during`` is called once half-way through the stall (e.g. to try a write).
    """
    observed = Observed()
    stop = threading.Event()
    threads = [threading.Thread(target=_live_prober, args=(server.base_url, stop, observed.live))]
    threads += [
        threading.Thread(target=_predictor, args=(server.base_url, stop, observed.predicts, model))
        for _ in range(clients)
    ]
    for t in threads:
        t.start()
    try:
        time.sleep(before)
        with stall:
            started = time.monotonic()
            time.sleep(seconds / 2)
            if during is not None:
                during()
            time.sleep(max(0.0, started + seconds - time.monotonic()))
        ended = time.monotonic()
        time.sleep(after)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=180)
    return summarise(observed, started, ended)


def _slow(r: Record, started: float) -> dict[str, Any]:
    """One of the slowest predicts: when it was sent (relative to the stall's start)."""
    return {
        "sent_after_start_s": round(r.sent - started, 2),
        "seconds": round(r.seconds, 2),
        "status": r.status,
        "stale": r.stale,
        "code": r.code,
    }


def summarise(observed: Observed, started: float, ended: float) -> dict[str, Any]:
    # calls in flight at any moment of the stall (sent before its end, answered after
    # its start): a call blocked for the whole stall counts too
    during = [r for r in observed.live if r.sent <= ended and r.sent + r.seconds >= started]
    live_ms = [r.seconds * 1000 for r in during]
    sent_during = [
        r for r in observed.predicts if r.sent <= ended and r.sent + r.seconds >= started
    ]
    outcomes: Counter[str] = Counter()
    for r in sent_during:
        outcomes["200 stale" if r.stale else f"{r.status} {r.code}".strip()] += 1
    slowest = sorted(sent_during, key=lambda r: -r.seconds)[:10]
    fresh_after = [r for r in observed.predicts if r.sent > ended]
    recovery = None
    for i, r in enumerate(fresh_after):  # first fresh 200 from which all are fresh 200s
        if all(x.status == 200 and not x.stale for x in fresh_after[i:]):
            recovery = r.sent + r.seconds - ended
            break
    return {
        "stall_seconds": round(ended - started, 2),
        "live_during": {
            "n": len(live_ms),
            "p50_ms": percentile(live_ms, 50),
            "p99_ms": percentile(live_ms, 99),
            "max_ms": max(live_ms, default=None),
            "non_200": sum(r.status != 200 for r in during),
        },
        "predicts_during": {
            "n": len(sent_during),
            "outcomes": dict(outcomes),
            "max_s": max((r.seconds for r in sent_during), default=None),
            "p99_s": percentile([r.seconds for r in sent_during], 99),
            "p99_9_s": percentile([r.seconds for r in sent_during], 99.9),
            "over_2_56_s": sum(r.seconds > 2.56 for r in sent_during),
            "slowest": [_slow(r, started) for r in slowest],
            "median_s": statistics.median([r.seconds for r in sent_during])
            if sent_during
            else None,
        },
        "predicts_after": len(fresh_after),
        "recovery_s": None if recovery is None else round(recovery, 3),
    }


@contextmanager
def frozen(relay: Relay) -> Iterator[None]:
    relay.freeze()
    try:
        yield
    finally:
        relay.thaw()


@contextmanager
def stall_database(server_url: str) -> Iterator[str]:
    """A fresh database migrated to head on ``server_url``, dropped afterwards."""
    server_url = normalize_url(server_url)
    name = f"costwise_stall_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with admin.connect() as c:
        c.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = make_url(server_url).set(database=name).render_as_string(hide_password=False)
    try:
        upgrade_to_head(url)
        yield url
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def through(relay: Relay, url: str) -> str:
    return (
        make_url(url).set(host="127.0.0.1", port=relay.port).render_as_string(hide_password=False)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--relay-seconds", type=float, default=20.0)
    parser.add_argument("--lock-seconds", type=float, default=12.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--before", type=Path, help="serve the app of this source tree")
    parser.add_argument("--label", default="")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the server")
    args = parser.parse_args()
    server_url = os.environ.get("COSTWISE_TEST_DATABASE_URL")
    if not server_url:
        sys.exit("COSTWISE_TEST_DATABASE_URL is not set")
    env = dict(kv.split("=", 1) for kv in args.env)
    results: dict[str, Any] = {
        **run_header(__file__),
        "source": str(args.before or ROOT),
        "clients": args.clients,
    }
    with stall_database(server_url) as url:
        u = make_url(url)
        with Relay(u.host or "127.0.0.1", u.port or 5432) as relay:
            log = Path("/tmp") / f"costwise-stall-{os.getpid()}.log"
            server = start_server(through(relay, url), log, env=env, cwd=args.before)
            try:
                with httpx.Client(base_url=server.base_url, timeout=60) as c:
                    assert c.post("/v1/models/fraud/versions", json=train_body()).status_code == 201
                    assert c.post("/v1/models/fraud/predict", json={"instances": [ROW]}).is_success
                results["relay_freeze"] = measure(
                    server, frozen(relay), seconds=args.relay_seconds, clients=args.clients
                )
                print(json.dumps(results["relay_freeze"], indent=1), flush=True)
                results["held_lock"] = measure(
                    server, held_lock(url), seconds=args.lock_seconds, clients=args.clients
                )
                print(json.dumps(results["held_lock"], indent=1), flush=True)
            finally:
                server.stop()
    write_result(__file__, results, label=args.label)


if __name__ == "__main__":
    main()
