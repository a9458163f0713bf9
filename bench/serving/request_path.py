"""One-row predict over HTTP against the same server's ``/health/live``, and where its time goes.

A real server: ``costwise serve`` (uvicorn, one worker, pinned to CPU 0 with ``taskset``)
on a fresh SQLite registry with the prediction log on (``COSTWISE_PREDICTION_LOG=true``)
and authentication off, holding one model trained through the API (100 stumps, Platt,
``magic.csv`` of the shared datasets). The load generator runs pinned to CPU 1: ``wrk``
with /work/shared/tools/wrk-post.lua when it is installed, else a keep-alive HTTP/1.1
client of this module on asyncio/uvloop (``client`` in the result says which). Each
round measures ``GET /health/live`` (the floor: the HTTP stack and nothing else) and the
one-row ``POST /v1/models/magic/predict`` of bench/serving/predict_ab.py (costs
``{"c_fp": 1, "c_fn": 20}``), at 1 connection (p50, p99) and at 16 (requests/s), one
after the other; the report is the median over rounds and the ratios predict / live.
The server's CPU time per request (from /proc, user + system over the measured run) is
reported too: it is what bounds throughput, and varies less than latency on a shared
machine.

Then, in this process, on a copy of the same registry, the parts of a one-row predict:
CPU time per call of each step (body parse, version look-up, cost setting, scoring and
decision, provenance, log hand-off, rendering), the round trip to a prediction thread, and
whole requests through the ASGI app without sockets (predict, and ``/health/live``).

    python -m bench serving.request_path [--rounds 3] [--seconds 6] [--client auto|wrk|python] \
        [--baseline DIR]

``--baseline DIR`` serves another source tree alike in the same rounds (e.g. an export of
an earlier commit: ``git archive <commit> | tar -x -C DIR``).

Writes ``bench/results/serving/request_path.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

import httpx

from bench.datasets import DATA_DIR
from bench.record import run_header, write_result
from bench.serving import predict_ab

ROOT = Path(__file__).resolve().parents[2]
WRK_LUA = Path("/work/shared/tools/wrk-post.lua")
PREDICT = "/v1/models/magic/predict"
LIVE = "/health/live"
TRAIN = {"n_estimators": 100, "calibration": "platt", "algorithm": "adaboost"}


# ---------------------------------------------------------------- the client
async def _connection(
    host: str, port: int, request: bytes, stop: float, latencies: list[int]
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < stop:
            started = time.perf_counter_ns()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            at = head.lower().index(b"content-length:") + 15
            await reader.readexactly(int(head[at : head.index(b"\r\n", at)]))
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(head.decode(errors="replace")[:200])
            latencies.append(time.perf_counter_ns() - started)
    finally:
        writer.close()


async def _python_load(
    url: str, body: bytes | None, connections: int, seconds: float
) -> dict[str, Any]:
    hostport, path = url.split("//", 1)[1].split("/", 1)
    host, port = hostport.split(":")
    if body is None:
        request = f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\n\r\n".encode()
    else:
        request = (
            f"POST /{path} HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
    latencies: list[int] = []
    started = time.perf_counter()
    stop = started + seconds
    await asyncio.gather(
        *(_connection(host, int(port), request, stop, latencies) for _ in range(connections))
    )
    elapsed = time.perf_counter() - started
    latencies.sort()

    def q(p: float) -> int:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] // 1000

    return {"requests": len(latencies), "rps": round(len(latencies) / elapsed, 1),
            "lat_p50_us": q(0.5), "lat_p99_us": q(0.99)}  # fmt: skip


def load(
    client: str, url: str, body_file: Path | None, connections: int, seconds: float
) -> dict[str, Any]:
    """One run of ``connections`` keep-alive connections for ``seconds`` (latencies in us)."""
    if client == "wrk":
        cmd = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s",
               "-s", str(WRK_LUA), url]  # fmt: skip
        env = {**os.environ, "BODY_FILE": str(body_file) if body_file else ""}
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
        line = next(ln for ln in out.splitlines() if ln.startswith("WRKJSON "))
        res: dict[str, Any] = json.loads(line[len("WRKJSON ") :])
        if res["err_status"] or res["err_connect"] or res["err_read"]:
            raise RuntimeError(f"wrk saw errors: {res}")
        return res
    import uvloop

    body = body_file.read_bytes() if body_file else None
    return uvloop.run(_python_load(url, body, connections, seconds))


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (s)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(
    client: str, pid: int, url: str, body: Path | None, c: int, seconds: float
) -> dict[str, Any]:
    load(client, url, body, c, 1)  # warm-up
    before = cpu_seconds(pid)
    res = load(client, url, body, c, seconds)
    res["server_cpu_us_per_request"] = round((cpu_seconds(pid) - before) / res["requests"] * 1e6, 1)
    return res


# ------------------------------------------------------- the parts, in process
def _per_call(fn: Callable[[], Any], n: int, repeats: int = 5) -> float:
    """Median over ``repeats`` of the process CPU time per call of ``fn`` (us)."""
    fn()
    values = []
    for _ in range(repeats):
        started = time.process_time_ns()
        for _ in range(n):
            fn()
        values.append((time.process_time_ns() - started) / n / 1000)
    return round(statistics.median(values), 1)


def parts(database: Path, body: bytes) -> dict[str, float]:
    """CPU us per call of each step of a one-row predict, on the registry ``database``."""
    os.environ.update({"COSTWISE_DATABASE_URL": f"sqlite:///{database}",
                       "COSTWISE_LOG_LEVEL": "warning", "COSTWISE_PREDICTION_LOG": "true"})  # fmt: skip
    import uvloop

    from app.api.bodies.parsing import predict_input
    from app.api.bodies.scan import Limits
    from app.api.deps import in_prediction_thread
    from app.api.main import create_app
    from app.api.routes.predict import _predict_json
    from app.api.schemas import PredictRequest

    app = create_app()
    services = app.state.services
    predictor = services.predictor
    limits = Limits.of(services.settings)
    out: dict[str, float] = {}

    async def asgi(method: str, path: str, payload: bytes) -> None:
        headers = [(b"host", b"127.0.0.1")]
        if payload:
            headers += [(b"content-type", b"application/json"),
                        (b"content-length", str(len(payload)).encode())]  # fmt: skip
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
                 "root_path": "", "query_string": b"", "headers": headers,
                 "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8000), "state": {}}  # fmt: skip

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": payload, "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] != 200:
                raise RuntimeError(f"{path}: {message['status']}")

        await app(scope, receive, send)

    async def per_request(method: str, path: str, payload: bytes, n: int) -> float:
        values = []
        for k in range(6):
            started = time.process_time_ns()
            for _ in range(n):
                await asgi(method, path, payload)
            if k:  # the first is a warm-up
                values.append((time.process_time_ns() - started) / n / 1000)
        return round(statistics.median(values), 1)

    async def hop(n: int) -> float:
        values = []
        for _ in range(5):
            started = time.process_time_ns()
            for _ in range(n):
                await in_prediction_thread(services, lambda: None)
            values.append((time.process_time_ns() - started) / n / 1000)
        return round(statistics.median(values), 1)

    async def main() -> None:
        async with app.router.lifespan_context(app):
            req = predict_input(body, PredictRequest, limits)
            resolved = predictor.resolve("magic")
            loaded = predictor.entry(resolved)
            X = predictor._matrix(loaded.model, req.rows)
            proba, decisions, setting, raw = predictor._decide(loaded.model, X, req.costs)
            p = predictor.predict("magic", req)
            n = 2000
            out["parse and check the body"] = _per_call(
                lambda: predict_input(body, PredictRequest, limits), n
            )
            out["resolve the version (registry read)"] = _per_call(
                lambda: predictor.resolve("magic"), n
            )
            out["model from the cache"] = _per_call(lambda: predictor.entry(resolved), n)
            out["feature matrix"] = _per_call(lambda: predictor._matrix(loaded.model, req.rows), n)
            out["cost setting"] = _per_call(lambda: req.costs.setting(1, 2), n)
            out["score, calibrate, decide"] = _per_call(
                lambda: predictor._decide(loaded.model, X, req.costs), n
            )
            out["provenance"] = _per_call(
                lambda: predictor._provenance(resolved, loaded, setting, req.costs), n
            )
            out["log hand-off (queue)"] = _per_call(
                lambda: predictor._log(resolved, X, None, proba, raw, decisions, setting, None), n
            )
            out["render the response (JSON)"] = _per_call(lambda: _predict_json(p), n)
            out["predictor.predict, whole (log writer's CPU included)"] = _per_call(
                lambda: predictor.predict("magic", req), 500
            )
            out["round trip to a prediction thread"] = await hop(1000)
            out["ASGI request: /health/live"] = await per_request("GET", LIVE, b"", 1000)
            out["ASGI request: one-row predict"] = await per_request("POST", PREDICT, body, 500)

    os.sched_setaffinity(0, {0})
    uvloop.run(main())
    return out


# ------------------------------------------------------------------- the run
def dataset() -> Path:
    if (DATA_DIR / "magic.csv").exists():
        return DATA_DIR / "magic.csv"
    raise SystemExit(f"magic.csv not found in {DATA_DIR} (set COSTWISE_DATASETS_DIR)")


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in runs))


def _ratios(summary: dict[str, float], prefix: str) -> dict[str, float]:
    s = {k[len(prefix) :]: v for k, v in summary.items() if k.startswith(prefix)}
    return {
        "p50 at c=1, predict / live": round(s["predict_c1_p50_us"] / s["live_c1_p50_us"], 3),
        "p99 at c=1, predict / live": round(s["predict_c1_p99_us"] / s["live_c1_p99_us"], 3),
        "requests/s at c=16, predict / live": round(s["predict_c16_rps"] / s["live_c16_rps"], 3),
        "server CPU per request at c=1, predict / live": round(
            s["predict_c1_server_cpu_us"] / s["live_c1_server_cpu_us"], 3
        ),
        "server CPU per request at c=16, predict / live": round(
            s["predict_c16_server_cpu_us"] / s["live_c16_server_cpu_us"], 3
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--client", choices=("auto", "wrk", "python"), default="auto")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="another source tree (e.g. an export of an earlier commit) served and measured "
        "alike in the same rounds, for a comparison within one run",
    )
    args = parser.parse_args()
    client = args.client
    if client == "auto":
        client = "wrk" if shutil.which("wrk") else "python"
    predict_ab.DATASET = dataset()
    X, y = predict_ab.magic()
    os.sched_setaffinity(0, {1})
    trees = {"now": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        body_file = tmp / "body.json"
        body_file.write_text(json.dumps(predict_ab.BODY))
        servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
        try:
            for tree_name, tree in trees.items():
                env = {"COSTWISE_PREDICTION_LOG": "true", "COSTWISE_AUTH": "off",
                       "PYTHONPATH": str(tree)}  # fmt: skip
                servers[tree_name] = proc, base = predict_ab.start(tree_name, tree, env, tmp)
                r = httpx.post(base + "/v1/models/magic/versions",
                               json={"features": X, "labels": y, **TRAIN}, timeout=600)  # fmt: skip
                assert r.status_code == 201, r.text[:500]
            load_before = os.getloadavg()
            for k in range(args.rounds):
                for tree_name, (proc, base) in servers.items():
                    for name, path, body in (("live", LIVE, None), ("predict", PREDICT, body_file)):
                        for c in (1, 16):
                            res = measured(client, proc.pid, base + path, body, c, args.seconds)
                            runs.setdefault(f"{tree_name}_{name}_c{c}", []).append(res)
                            print(k, tree_name, name, c, res, flush=True)
            load_after = os.getloadavg()
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait(timeout=30)
        in_process = parts(tmp / "now.db", body_file.read_bytes())
    summary: dict[str, float] = {}
    for key, rs in runs.items():
        summary[f"{key}_p50_us"] = _median(rs, "lat_p50_us")
        summary[f"{key}_p99_us"] = _median(rs, "lat_p99_us")
        summary[f"{key}_rps"] = _median(rs, "rps")
        summary[f"{key}_server_cpu_us"] = _median(rs, "server_cpu_us_per_request")
    ratios = {name: _ratios(summary, name + "_") for name in trees}
    busy = max(load_before[0], load_after[0]) > 0.75 * (os.cpu_count() or 1)
    now = ratios["now"]
    goals = {
        "p50 within 2.5x of /health/live": now["p50 at c=1, predict / live"] <= 2.5,
        "throughput at least 35% of /health/live": now["requests/s at c=16, predict / live"]
        >= 0.35,
        "server CPU per request at c=16 within 1 / 0.35 = 2.86x of /health/live": now[
            "server CPU per request at c=16, predict / live"
        ]
        <= 1 / 0.35,
    }
    out = {
        **run_header(__file__),
        "client": client,
        "trees": {name: str(tree) for name, tree in trees.items()},
        "load_average_before_after": [load_before, load_after],
        # other processes competed for the server's CPU: latencies and requests/s are not
        # the service's own, the CPU time per request still is (goals not judged on them)
        "machine_busy": busy,
        "train_params": TRAIN,
        "summary": summary,
        "ratios": ratios,
        "goals": goals,
        "in_process_cpu_us": in_process,
        "runs": runs,
    }
    write_result(__file__, out, markdown(out, args))
    print(json.dumps({"summary": summary, "ratios": ratios, "goals": goals, "busy": busy,
                      "in_process_cpu_us": in_process}, indent=2))  # fmt: skip
    return 0


def markdown(out: dict[str, Any], args: argparse.Namespace) -> str:
    s = out["summary"]
    lines = [
        f"# One-row predict against /health/live, {out['date'][:10]}",
        "",
        f"Command: `{out['command']}`; machine: {out['machine']}; load average before/after "
        f"{[round(x, 2) for x in out['load_average_before_after'][0]]} / "
        f"{[round(x, 2) for x in out['load_average_before_after'][1]]}.",
        "",
        f"Server: `costwise serve`, one worker pinned to CPU 0, SQLite registry, prediction log "
        f"on, authentication off; client `{out['client']}` pinned to CPU 1; {args.rounds} rounds "
        f"of {args.seconds:g} s per measurement (medians). Trees: "
        + ", ".join(f"{k} = `{v}`" for k, v in out["trees"].items())
        + ".",
        "",
    ]
    if out["machine_busy"]:
        lines += [
            "**The machine was busy** (load average above 0.75 per CPU): other processes "
            "shared the server's CPU, so latencies and requests/s are not the service's own "
            "and the goals are not judged on them; the server's CPU time per request is.",
            "",
        ]
    for tree in out["trees"]:
        r = out["ratios"][tree]
        lines += [
            f"## {tree}",
            "",
            "| | /health/live | one-row predict | predict / live |",
            "|---|---:|---:|---:|",
        ]
        g = {key[len(tree) + 1 :]: v for key, v in s.items() if key.startswith(tree + "_")}.get
        lines += [
            f"| p50 at c=1 (ms) | {g('live_c1_p50_us', 0.0) / 1000:.3f} | "
            f"{g('predict_c1_p50_us', 0.0) / 1000:.3f} | {r['p50 at c=1, predict / live']:.2f}x |",
            f"| p99 at c=1 (ms) | {g('live_c1_p99_us', 0.0) / 1000:.3f} | "
            f"{g('predict_c1_p99_us', 0.0) / 1000:.3f} | {r['p99 at c=1, predict / live']:.2f}x |",
            f"| requests/s at c=16 | {g('live_c16_rps', 0.0):,.0f} | {g('predict_c16_rps', 0.0):,.0f} | "
            f"{r['requests/s at c=16, predict / live']:.0%} |",
            f"| server CPU per request at c=1 (us) | {g('live_c1_server_cpu_us', 0.0):.0f} | "
            f"{g('predict_c1_server_cpu_us', 0.0):.0f} | "
            f"{r['server CPU per request at c=1, predict / live']:.2f}x |",
            f"| server CPU per request at c=16 (us) | {g('live_c16_server_cpu_us', 0.0):.0f} | "
            f"{g('predict_c16_server_cpu_us', 0.0):.0f} | "
            f"{r['server CPU per request at c=16, predict / live']:.2f}x |",
            "",
        ]
    verdict = "; ".join(f"{k}: {'yes' if v else '**no**'}" for k, v in out["goals"].items())
    lines += [
        f"Goals (issue 31, point 6){' (not judged: busy machine)' if out['machine_busy'] else ''}"
        f": {verdict}.",
        "",
        "Where a one-row predict's time goes, in process (CPU us per call, median of 5; the "
        "log writer's thread and the prediction thread count, as they run in the process):",
        "",
        "| step | CPU us |",
        "|---|---:|",
        *(f"| {k} | {v:.1f} |" for k, v in out["in_process_cpu_us"].items()),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
