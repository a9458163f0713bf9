"""Single-row predict latency of several source trees (or settings), in one run, with wrk.

Each configuration is a ``costwise serve`` process (one worker, pinned to CPU 0 with
``taskset``) on its own SQLite registry holding the same model (100 stumps, Platt, on
``magic.csv`` through the API); wrk (``-t1 -c1``, pinned to CPU 1, with
/work/shared/tools/wrk-post.lua) posts the single-row body of bench/serving/service.py
(one row, costs ``{"c_fp": 1, "c_fn": 20}``). Rounds alternate between configurations
(a warm-up run, then a measured run each), so that machine noise hits all of them alike;
the report is the median over rounds of each one's p50 and mean, and the ratio to the
first configuration.

    python -m bench serving.predict_ab --tree before=/tmp/tree-9fe3de5 --tree now=. \\
        [--env now-inline=.:COSTWISE_X=1] [--rounds 5] [--seconds 5] [--train '{}'] [--label x]

``--tree NAME=DIR`` serves the source tree DIR; ``--env NAME=DIR:VAR=VALUE[,VAR=VALUE]``
the same with settings; ``--train JSON`` trains with these parameters instead (``'{}'``:
the service default). Writes ``bench/results/serving/predict_ab[-<label>].json``.
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

from bench.datasets import DATA_DIR
from bench.record import run_header, write_result
from bench.reliability.server import free_port

ROOT = Path(__file__).resolve().parents[2]

DATASET = DATA_DIR / "magic.csv"
WRK_LUA = Path("/work/shared/tools/wrk-post.lua")
BODY = {"instances": [[28.7967, 16.0021, 2.6449, 0.3918, 0.1982, 27.7004, 22.011, -8.2027,
                       40.092, 81.8828]], "costs": {"c_fp": 1.0, "c_fn": 20.0}}  # fmt: skip


def magic(path: Path | None = None) -> tuple[list[list[float]], list[Any]]:
    """The rows of magic.csv (features, label last) at ``path`` (``DATASET``)."""
    import csv

    with (path or DATASET).open() as f:
        rows = list(csv.reader(f))
    header, data = rows[0], rows[1:]
    label = len(header) - 1
    X = [[float(v) for i, v in enumerate(r) if i != label] for r in data]
    return X, [int(r[label]) for r in data]


def start(
    name: str, tree: Path, env: dict[str, str], tmp: Path
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    environment = {
        **os.environ,
        "COSTWISE_DATABASE_URL": f"sqlite:///{tmp / name}.db",
        "COSTWISE_LOG_LEVEL": "warning",
        **env,
    }
    cmd = ["taskset", "-c", "0", sys.executable, "-m", "app.cli", "serve", "--host",
           "127.0.0.1", "--port", str(port), "--workers", "1"]  # fmt: skip
    with (tmp / f"{name}.log").open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=tree, env=environment, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(base + "/health/live", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"{name} did not start: {(tmp / f'{name}.log').read_text()[-2000:]}")


def wrk(url: str, body_file: Path, seconds: int, connections: int = 1) -> dict[str, Any]:
    cmd = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s",
           "-s", str(WRK_LUA), url]  # fmt: skip
    out = subprocess.run(cmd, env={**os.environ, "BODY_FILE": str(body_file)},
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    line = next(ln for ln in out.splitlines() if ln.startswith("WRKJSON "))
    res: dict[str, Any] = json.loads(line[len("WRKJSON ") :])
    return res


def rounds(
    servers: dict[str, tuple[subprocess.Popen[bytes], str]],
    names: list[str],
    body_file: Path,
    args: argparse.Namespace,
    results: dict[str, list[dict[str, Any]]],
    connections: int = 1,
) -> None:
    """``args.rounds`` rounds of wrk on each named server's predict in turn (a 2 s warm-up,
    then ``args.seconds``), each result appended to ``results[name]`` and printed."""
    for k in range(args.rounds):
        for name in names:
            url = servers[name][1] + "/v1/models/magic/predict"
            wrk(url, body_file, 2, connections)  # warm-up
            res = wrk(url, body_file, args.seconds, connections)
            results[name].append(res)
            print(k, name, res["lat_p50_us"], res["lat_mean_us"], res["rps"], flush=True)


def summarize(results: dict[str, list[dict[str, Any]]], baseline: str) -> dict[str, Any]:
    """Per config, the medians over its runs of wrk's p50 and mean latency and requests per
    second, and its median p50 over the ``baseline`` config's (same run)."""
    summary = {
        name: {
            "p50_us_median": statistics.median(r["lat_p50_us"] for r in runs),
            "mean_us_median": statistics.median(r["lat_mean_us"] for r in runs),
            "rps_median": statistics.median(r["rps"] for r in runs),
        }
        for name, runs in results.items()
    }
    for name in summary:
        summary[name]["p50_ratio_to_" + baseline] = round(
            summary[name]["p50_us_median"] / summary[baseline]["p50_us_median"], 3
        )
    return summary


def parse_config(spec: str, with_env: bool) -> tuple[str, Path, dict[str, str]]:
    name, _, rest = spec.partition("=")
    tree, _, assignments = rest.partition(":") if with_env else (rest, "", "")
    env = dict(a.split("=", 1) for a in assignments.split(",") if a)
    return name, Path(tree).resolve(), env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", default=[])
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument(
        "--train",
        default=None,
        help="JSON object of training parameters instead of 100 stumps + Platt "
        "('{}': the service default)",
    )
    parser.add_argument("--label", default="", help="suffix of the result file name")
    args = parser.parse_args()
    configs = [parse_config(s, False) for s in args.tree] + [
        parse_config(s, True) for s in args.env
    ]
    X, y = magic()
    params = (
        {"n_estimators": 100, "calibration": "platt", "algorithm": "adaboost"}
        if args.train is None
        else json.loads(args.train)
    )
    train = {"features": X, "labels": y, **params}
    os.sched_setaffinity(0, {1})
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in configs}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        body_file = tmp / "body.json"
        body_file.write_text(json.dumps(BODY))
        servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
        try:
            for name, tree, env in configs:
                servers[name] = start(name, tree, env, tmp)
                r = httpx.post(servers[name][1] + "/v1/models/magic/versions", json=train,
                               timeout=600)  # fmt: skip
                assert r.status_code == 201, r.text[:500]
            load_before = os.getloadavg()
            rounds(servers, [name for name, _, _ in configs], body_file, args, results)
            load_after = os.getloadavg()
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait(timeout=30)
    summary = summarize(results, configs[0][0])
    out = {
        **run_header(__file__),
        "load_average_before_after": [load_before, load_after],
        "configs": {name: {"tree": str(tree), "env": env} for name, tree, env in configs},
        "train_params": params,
        "summary": summary,
        "runs": results,
    }
    write_result(__file__, out, label=args.label)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
