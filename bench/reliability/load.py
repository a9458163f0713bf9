"""Load run: N concurrent clients against a real uvicorn on 127.0.0.1, memory sampled.

Usage (from the repository root; a full run takes over a minute, so queue it)::

    .venv/bin/python bench/reliability/load.py
    .venv/bin/python bench/reliability/load.py --seconds 20 --clients 16     # short
    .venv/bin/python bench/reliability/load.py --database-url postgresql+psycopg://...
    .venv/bin/python bench/reliability/load.py --auth   # COSTWISE_AUTH=on, keys sent

What it does:

1. migrates a registry (default: a fresh SQLite file in a temporary directory; or the
   ``--database-url`` given, which must be empty or disposable), starts
   ``uvicorn --factory app.api.main:create_app`` on a free port of 127.0.0.1 (never
   another interface) and seeds model ``load`` (one version, alias ``production``);
2. runs ``--clients`` asyncio clients for ``--seconds``: each request is a predict of 1-50
   rows with random costs (``c_fp = 1``, ``c_fn`` in [1, 500]; one in ten with per-row
   costs, one in ten with deployment priors), or (one in five) a read: list models, list
   versions, get the model; one extra client trains a new version every
   ``--train-every`` seconds;
3. samples the resident set size (RSS) of the server and its worker processes every
   0.5 s (psutil) and compares the mean of the last third of the run with the middle
   third: growth under 5 % + 8 MiB counts as "stops growing";
4. prints a summary and writes it as JSON (``--out``, default
   ``bench/results/reliability/load.json``): requests and errors by kind, latency
   percentiles, throughput, RSS start/peak/end.

Any non-2xx answer or transport error counts as an error; the exit status is 1 if there
was any.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import secrets
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psutil
from sklearn.datasets import make_classification

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.record import run_header, write_result  # noqa: E402
from bench.reliability.server import Server, start_server  # noqa: E402

FEATURES = ["a", "b", "c", "d", "e", "f"]
MIB = 2**20


def _data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(
        n_samples=n, n_features=len(FEATURES), n_informative=4, random_state=seed
    )
    return np.round(X, 4), y


def _train_body(seed: int) -> dict[str, Any]:
    X, y = _data(600, seed)
    return {
        "features": X.tolist(),
        "labels": y.tolist(),
        "feature_names": FEATURES,
        "n_estimators": 40,
    }


@dataclass
class Tally:
    """Requests, errors and latencies (seconds) by kind of request."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    examples: list[str] = field(default_factory=list)

    def record(self, kind: str, seconds: float, ok: bool, what: str = "") -> None:
        self.latencies[kind].append(seconds)
        if not ok:
            self.errors[kind] += 1
            if len(self.examples) < 10:
                self.examples.append(f"{kind}: {what}"[:300])


async def _call(
    client: httpx.AsyncClient, tally: Tally, kind: str, method: str, url: str, **kw: Any
) -> None:
    start = time.perf_counter()
    try:
        r = await client.request(method, url, **kw)
        ok, what = r.is_success, f"{r.status_code} {r.text[:200]}"
    except httpx.HTTPError as error:
        ok, what = False, repr(error)
    tally.record(kind, time.perf_counter() - start, ok, what)


async def _client(
    base: str, stop: float, seed: int, tally: Tally, pool: np.ndarray, headers: dict[str, str]
) -> None:
    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=base, timeout=60, headers=headers) as client:
        while time.monotonic() < stop:
            roll = rng.random()
            if roll < 0.2:
                path = rng.choice(["/v1/models", "/v1/models/load/versions", "/v1/models/load"])
                await _call(client, tally, "read", "GET", path)
                continue
            n = rng.randint(1, 50)
            start = rng.randrange(len(pool) - n)
            body: dict[str, Any] = {"instances": pool[start : start + n].tolist()}
            if roll < 0.3:
                body["row_costs"] = [{"c_fp": 1.0, "c_fn": rng.uniform(1, 500)} for _ in range(n)]
                kind = "predict_row_costs"
            else:
                body["costs"] = {"c_fp": 1.0, "c_fn": rng.uniform(1, 500)}
                kind = "predict"
                if roll < 0.4:
                    p = rng.uniform(0.01, 0.5)
                    body["priors"] = [1 - p, p]
                    kind = "predict_priors"
            await _call(client, tally, kind, "POST", "/v1/models/load/predict", json=body)


async def _trainer(
    base: str, stop: float, every: float, tally: Tally, headers: dict[str, str]
) -> None:
    seed = 100
    async with httpx.AsyncClient(base_url=base, timeout=300, headers=headers) as client:
        while time.monotonic() + every < stop:
            await asyncio.sleep(every)
            seed += 1
            body = _train_body(seed)
            await _call(client, tally, "train", "POST", "/v1/models/load/versions", json=body)


def _bearer(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


def _rss(pid: int) -> int:
    """RSS of ``pid`` and all its descendants (uvicorn workers), in bytes."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += proc.memory_info().rss
    return total


async def _sampler(pid: int, stop: float, samples: list[tuple[float, int]]) -> None:
    t0 = time.monotonic()
    while time.monotonic() < stop:
        samples.append((time.monotonic() - t0, _rss(pid)))
        await asyncio.sleep(0.5)
    samples.append((time.monotonic() - t0, _rss(pid)))


async def timed_run(
    pid: int, seconds: float, clients: Callable[[float], list[Coroutine[Any, Any, Any]]]
) -> tuple[float, dict[str, Any]]:
    """Run the coroutines ``clients(stop)`` (``stop``: the ``time.monotonic()`` at which
    they end, ``seconds`` from now) while sampling the RSS of ``pid`` every 0.5 s; the
    seconds it took and :func:`memory_summary` of the samples."""
    samples: list[tuple[float, int]] = []
    start = time.monotonic()
    stop = start + seconds
    await asyncio.gather(_sampler(pid, stop, samples), *clients(stop))
    return time.monotonic() - start, memory_summary(samples)


def _percentiles(values: list[float]) -> dict[str, float]:
    ms = np.asarray(values) * 1000
    return {
        "n": len(values),
        "p50_ms": round(float(np.percentile(ms, 50)), 2),
        "p95_ms": round(float(np.percentile(ms, 95)), 2),
        "p99_ms": round(float(np.percentile(ms, 99)), 2),
        "max_ms": round(float(ms.max()), 2),
    }


def memory_summary(samples: list[tuple[float, int]]) -> dict[str, Any]:
    """Start, peak and end RSS (MiB) and whether the last third grew over the middle third."""
    rss = [r for _, r in samples]
    third = max(1, len(rss) // 3)
    middle = statistics.fmean(rss[third : 2 * third] or rss)
    last = statistics.fmean(rss[2 * third :] or rss)
    return {
        "start_mib": round(rss[0] / MIB, 1),
        "peak_mib": round(max(rss) / MIB, 1),
        "end_mib": round(rss[-1] / MIB, 1),
        "middle_third_mean_mib": round(middle / MIB, 1),
        "last_third_mean_mib": round(last / MIB, 1),
        "stops_growing": last <= middle * 1.05 + 8 * MIB,
        "samples": len(rss),
    }


async def _drive(
    server: Server, seconds: float, clients: int, train_every: float, keys: dict[str, str]
) -> dict[str, Any]:
    pool, _ = _data(5000, seed=1)
    tally = Tally()
    elapsed, memory = await timed_run(
        server.pid,
        seconds,
        lambda stop: [
            _trainer(server.base_url, stop, train_every, tally, _bearer(keys.get("admin"))),
            *(
                _client(server.base_url, stop, i, tally, pool, _bearer(keys.get("predictor")))
                for i in range(clients)
            ),
        ],
    )
    requests = sum(len(v) for v in tally.latencies.values())
    return {
        "requests": requests,
        "errors": sum(tally.errors.values()),
        "errors_by_kind": dict(tally.errors),
        "error_examples": tally.examples,
        "throughput_rps": round(requests / elapsed, 1),
        "latency": {k: _percentiles(v) for k, v in sorted(tally.latencies.items())},
        "memory": memory,
        "elapsed_s": round(elapsed, 1),
    }


def run_load(
    *,
    seconds: float = 60.0,
    clients: int = 32,
    workers: int = 1,
    train_every: float = 10.0,
    database_url: str | None = None,
    log_dir: Path | None = None,
    auth: bool = False,
) -> dict[str, Any]:
    """Start a server, seed it, drive the load and return the summary (server stopped).

    With ``auth``, the server runs with ``COSTWISE_AUTH=on`` and a bootstrap admin key;
    the seeding step creates a ``predictor`` key over the API; the predicting and reading
    clients send the predictor key, the trainer the admin key (``Authorization: Bearer``).
    """
    from app.db import upgrade_to_head

    with tempfile.TemporaryDirectory(prefix="costwise-load-") as tmp:
        url = database_url or f"sqlite:///{Path(tmp) / 'registry.db'}"
        upgrade_to_head(url)
        keys = {"admin": secrets.token_urlsafe(32)} if auth else {}
        env = {"COSTWISE_AUTH": "on", "COSTWISE_BOOTSTRAP_ADMIN_KEY": keys["admin"]} if auth else {}
        log = (log_dir or Path(tmp)) / "server.log"
        server = start_server(url, log, workers=workers, env=env)
        try:
            with httpx.Client(
                base_url=server.base_url, timeout=120, headers=_bearer(keys.get("admin"))
            ) as client:
                if auth:
                    r = client.post("/v1/keys", json={"name": "load", "role": "predictor"})
                    r.raise_for_status()
                    keys["predictor"] = r.json()["key"]
                r = client.post("/v1/models/load/versions", json=_train_body(0))
                r.raise_for_status()
                client.put("/v1/models/load/aliases/production", json={"version": 1})
            result = asyncio.run(_drive(server, seconds, clients, train_every, keys))
        finally:
            server.stop()
    result.update(
        {
            "config": {
                "seconds": seconds,
                "clients": clients,
                "workers": workers,
                "train_every_s": train_every,
                "database": url.split(":")[0],
                "auth": "on (predictor key; admin key for training)" if auth else "off",
            },
            **run_header(__file__),
        }
    )
    return result


def main(argv: list[str] | None = None) -> int:
    """Command line entry point: run, print the summary, write ``--out``; 1 on any error."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--train-every", type=float, default=10.0)
    parser.add_argument("--database-url", default=None)
    parser.add_argument(
        "--out", type=Path, default=None, help="default: bench/results/reliability/load.json"
    )
    parser.add_argument("--auth", action="store_true", help="COSTWISE_AUTH=on, keys sent")
    args = parser.parse_args(argv)
    result = run_load(
        seconds=args.seconds,
        clients=args.clients,
        workers=args.workers,
        train_every=args.train_every,
        database_url=args.database_url,
        auth=args.auth,
    )
    if args.out is None:
        write_result(__file__, result, argv=argv)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "error_examples"}, indent=2))
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
