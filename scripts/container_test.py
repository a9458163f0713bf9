"""The container test: the image and the compose services, built and run for real with podman.

Run by ``.ci/run`` after the test suite (``scripts/container_test.sh`` prepares podman
first). Needs what ``../shared/tools/container-env.sh`` exports (``PODMAN_COMPOSE``,
``CONTAINER_RUN_FLAGS``, ``CONTAINERS_CONF``), PostgreSQL and Redis on 127.0.0.1, and the
project's ``.venv`` (the host's reference server)::

    source ../shared/tools/container-env.sh
    .venv/bin/python scripts/container_test.py [--json FILE]

It builds the image from the ``Dockerfile`` (tag ``costwise:latest``, the compose file's
image), then:

1. trains and predicts the README's curl walk-through on a host ``costwise serve`` (the
   reference numbers), then in the container, run as the image's own user on a free port
   of 127.0.0.1, and checks that the numbers are the same: decisions exactly; AUC, Brier
   score, probabilities, thresholds and expected costs within 1e-12 relative
   (the image's Python and C library are not the host's, and their ``exp``/``log`` may
   round the last bit differently: :func:`same_numbers`);
2. checks that no numba kernel is compiled at run time: numba's cache log
   (``NUMBA_DEBUG_CACHE``) shows kernels loaded and none saved, and nothing is written
   under the numba cache directory, the user's home or the data volume;
3. runs the image's ``HEALTHCHECK`` command with ``podman exec`` (and checks that it
   fails when pointed at a port nothing serves);
4. brings up the compose services ``migrate``, ``api`` and ``worker`` (two replicas)
   against the machine's PostgreSQL and Redis, with an override file written here (host
   network, 127.0.0.1 only, a database and a queue of its own), trains through the API as
   a job that a Redis worker runs, predicts, and compares with the host's numbers.

Containers, volumes, the database and the override are removed at the end, whatever
happens; the image and podman's build cache are kept (a rerun builds in seconds).
Prints the figures (build time, image size, time to ready, first training) at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import re
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "localhost/costwise:latest"
NUMBA_CACHE = "/opt/costwise/numba-cache"
CSV = ROOT / "examples" / "fraud.csv"
# The README's walk-through (section "Walk-through with curl"): one transaction, two costs.
RECORD = {
    "amount": 420.0,
    "hour": 14,
    "merchant_risk": 0.25,
    "distance_km": 40,
    "card_age_days": 900,
    "n_txn_24h": 2,
    "online": 1,
}
PARAMS = '{"n_estimators": 100, "calibration": "platt"}'
COSTS = ({"c_fp": 1, "c_fn": 2}, {"c_fp": 1, "c_fn": 420})
TAG = f"cwct{os.getpid()}"
figures: dict[str, Any] = {}


def say(msg: str) -> None:
    print(f"[container] {msg}", flush=True)


def run(
    *args: str, check: bool = True, timeout: float = 900, **kw: Any
) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    if check and out.returncode != 0:
        raise SystemExit(
            f"command failed ({out.returncode}): {shlex.join(args)}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
        )
    return out


def podman(
    *args: str, check: bool = True, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return run("podman", *args, check=check, timeout=timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(
    base: str, timeout: float, alive: Any = None, headers: dict[str, str] | None = None
) -> float:
    """Seconds until ``/health/ready`` answers 200; ``alive()`` False means it died."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            if httpx.get(f"{base}/health/ready", timeout=2, headers=headers).status_code == 200:
                return time.perf_counter() - start
        except httpx.TransportError:
            pass
        if alive is not None and not alive():
            raise SystemExit(f"{base}: the server exited before it was ready")
        time.sleep(0.2)
    raise SystemExit(f"{base}: not ready after {timeout:.0f} s")


def walk_through(
    base: str, headers: dict[str, str] | None = None, mode: str = "sync"
) -> dict[str, Any]:
    """The README's steps 1 and 2: train version 1 of "fraud", predict with two costs."""
    headers = headers or {}
    with httpx.Client(base_url=base, headers=headers, timeout=300) as client:
        start = time.perf_counter()
        with CSV.open("rb") as f:
            r = client.post(
                f"/v1/models/fraud/versions?mode={mode}",
                files={"file": ("fraud.csv", f, "text/csv")},
                data={"label_column": "fraud", "params": PARAMS},
            )
        job = None
        if mode == "job":
            assert r.status_code == 202, r.text
            job_id = r.json()["id"]
            while True:
                job = client.get(f"/v1/jobs/{job_id}").json()
                if job["status"] in ("succeeded", "failed", "cancelled"):
                    break
                if time.perf_counter() - start > 300:
                    raise SystemExit(f"job {job_id} not done after 300 s: {job}")
                time.sleep(0.2)
            assert job["status"] == "succeeded", job
            version = client.get(job["version_url"]).json()
        else:
            assert r.status_code == 201, r.text
            version = r.json()
        train_s = time.perf_counter() - start
        predictions = []
        for costs in COSTS:
            p = client.post("/v1/models/fraud/predict", json={"records": [RECORD], "costs": costs})
            assert p.status_code == 200, p.text
            pred = p.json()["predictions"][0]
            pred.pop("id")
            predictions.append(pred)
    metrics = version["metrics"]
    return {
        "auc": metrics["auc"],
        "brier": metrics["brier"],
        "predictions": predictions,
        "train_s": train_s,
        "job": job,
    }


#: Relative tolerance of the floating-point figures compared with the host's: the image
#: runs its own Python build and C library, whose ``exp`` and ``log`` may round the last
#: bit differently from the host's (seen: p = 0.31423513381424584 in the image against
#: 0.31423513381424617 on a host with another glibc, the same model and decisions).
RELATIVE = 1e-12


def _close(a: Any, b: Any) -> bool:
    """``a`` and ``b`` equal, numbers within RELATIVE of each other, members alike."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= RELATIVE * max(abs(a), abs(b))
    return bool(a == b)


def same_numbers(where: str, got: dict[str, Any], want: dict[str, Any]) -> None:
    for key in ("auc", "brier", "predictions"):
        if not _close(got[key], want[key]):
            raise SystemExit(
                f"{where}: {key} differs from the host's: {got[key]!r} != {want[key]!r}"
            )
    decisions = [(p["decision"], p["action"]) for p in got["predictions"]]
    if decisions != [(p["decision"], p["action"]) for p in want["predictions"]]:
        raise SystemExit(f"{where}: decisions {decisions} are not the host's")
    thresholds = [p["threshold"] for p in got["predictions"]]
    if abs(thresholds[0] - 1 / 3) > 1e-6 or abs(thresholds[1] - 1 / 421) > 1e-6:
        raise SystemExit(f"{where}: thresholds {thresholds} are not 1/3 and 1/421")
    say(
        f"{where}: AUC {got['auc']}, p = {got['predictions'][0]['probabilities'][1]}, "
        f"thresholds {thresholds[0]:.6f} / {thresholds[1]:.6f}, decisions "
        f"{[p['decision'] for p in got['predictions']]}: the host's (numbers within "
        f"{RELATIVE:g} relative)"
    )


@contextlib.contextmanager
def host_server() -> Iterator[str]:
    """A host ``costwise serve`` on a temporary SQLite registry: the reference numbers."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="costwise-ct-host-") as tmp:
        env = {
            **os.environ,
            "COSTWISE_DATABASE_URL": f"sqlite:///{tmp}/registry.db",
            "COSTWISE_QUEUE": "inprocess",
        }
        log = open(Path(tmp) / "serve.log", "w")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_ready(f"http://127.0.0.1:{port}", 120, alive=lambda: proc.poll() is None)
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
            log.close()


def build() -> None:
    say("building the image from the Dockerfile")
    start = time.perf_counter()
    # docker format: the OCI image format has no HEALTHCHECK (podman drops it)
    out = run(
        "podman", "build", "--format", "docker", "--tag", IMAGE, "--file", "Dockerfile", ".",
        cwd=ROOT, timeout=1800,
    )  # fmt: skip
    figures["build_s"] = round(time.perf_counter() - start, 1)
    warm = [line for line in out.stdout.splitlines() if "numba kernels" in line]
    size = int(podman("image", "inspect", "--format", "{{.Size}}", IMAGE).stdout.strip())
    figures["image_bytes"] = size
    say(
        f"built in {figures['build_s']} s, {size / 1e6:.0f} MB; {' '.join(warm) or 'warm-up cached'}"
    )


def healthcheck_command() -> str:
    spec = json.loads(
        podman("image", "inspect", "--format", "{{json .Config.Healthcheck}}", IMAGE).stdout
    )
    test = spec["Test"]
    if test[0] == "CMD-SHELL":
        return str(test[1])
    if test[0] == "CMD":
        return shlex.join(test[1:])
    raise SystemExit(f"unexpected HEALTHCHECK {test}")


def numba_files(container: str) -> list[str]:
    """Every numba cache file and every file under the cache directory and the user's home."""
    out = podman(
        "exec",
        container,
        "sh",
        "-c",
        f"find {NUMBA_CACHE} /data -type f \\( -path '{NUMBA_CACHE}/*' -o -name '*.nbi' -o -name '*.nbc' \\)"
        " -printf '%p %s %T@\\n' | sort",
    )
    return out.stdout.splitlines()


def run_image(reference: dict[str, Any]) -> None:
    port = free_port()
    name, volume = f"{TAG}-api", f"{TAG}-data"
    base = f"http://127.0.0.1:{port}"
    podman("volume", "create", volume)
    try:
        start = time.perf_counter()
        podman(
            "run",
            "--detach",
            "--name",
            name,
            *shlex.split(os.environ["CONTAINER_RUN_FLAGS"]),
            "--env",
            "COSTWISE_HOST=127.0.0.1",
            "--env",
            f"COSTWISE_PORT={port}",
            "--env",
            "NUMBA_DEBUG_CACHE=1",
            "--volume",
            f"{volume}:/data",
            IMAGE,
        )

        def alive() -> bool:
            state = podman("inspect", "--format", "{{.State.Running}}", name, check=False)
            return state.stdout.strip() == "true"

        figures["ready_s"] = round(wait_ready(base, 120, alive=alive), 2)
        user = podman("exec", name, "id", "-un").stdout.strip()
        top = podman("top", name, "user", "args").stdout
        if user != "costwise" or "costwise serve" not in top or "root" in top:
            raise SystemExit(f"the server does not run as the image's user costwise:\n{top}")
        say(f"container ready in {figures['ready_s']} s on 127.0.0.1:{port}, serving as {user}")
        cached = numba_files(name)
        if not any(".nbc " in f for f in cached):
            raise SystemExit(f"no compiled kernel in {NUMBA_CACHE}: {cached[:5]}")

        got = walk_through(base)
        figures["first_training_s"] = round(got["train_s"], 2)
        figures["host_first_training_s"] = round(reference["train_s"], 2)
        same_numbers("container", got, reference)

        logs = podman("logs", name).stdout + podman("logs", name).stderr
        loaded = logs.count("[cache] data loaded from")
        saved = logs.count("[cache] data saved to")
        after = numba_files(name)
        diff = podman("diff", name).stdout.split()
        written = [
            p for p in diff if "numba" in p or p.endswith((".nbi", ".nbc")) or "/.cache" in p
        ]
        if saved or not loaded or after != cached or written:
            raise SystemExit(
                f"kernels compiled at run time: {loaded} loaded, {saved} saved, "
                f"new files {sorted(set(after) - set(cached))[:5]}, written {written[:5]}"
            )
        say(
            f"first training {figures['first_training_s']} s (host {figures['host_first_training_s']} s); "
            f"numba: {loaded} kernels loaded from the image's cache, 0 compiled, nothing written"
        )

        probe = healthcheck_command()
        ok = podman("exec", name, "sh", "-c", probe, check=False)
        wrong = podman(
            "exec", "--env", f"COSTWISE_PORT={free_port()}", name, "sh", "-c", probe, check=False
        )
        if ok.returncode != 0 or wrong.returncode == 0:
            raise SystemExit(
                f"HEALTHCHECK: {ok.returncode} on the served port (want 0), "
                f"{wrong.returncode} on a closed one (want != 0): {probe}\n{ok.stderr[-1000:]}"
            )
        say("HEALTHCHECK command (podman exec): 0 on COSTWISE_PORT, fails on a closed port")

        start = time.perf_counter()
        podman("stop", "--time", "30", name)
        figures["stop_s"] = round(time.perf_counter() - start, 2)
        code = podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip()
        if code != "0":
            raise SystemExit(f"the server exited with {code} on SIGTERM")
        say(f"stopped (SIGTERM) in {figures['stop_s']} s, exit code 0")
    finally:
        if podman("container", "exists", name, check=False).returncode == 0:
            tail = podman("logs", "--tail", "30", name, check=False)
            if sys.exc_info()[0] is not None:
                print(tail.stdout[-3000:], tail.stderr[-3000:], sep="\n")
            podman("rm", "--force", name, check=False)
        podman("volume", "rm", "--force", volume, check=False)


def admin_url() -> str:
    url = os.environ.get(
        "COSTWISE_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
    )
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def database(action: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin_url(), autocommit=True) as conn:
        if action == "create":
            conn.execute(f'CREATE DATABASE "{name}"')
        else:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def override(db_url: str, redis_url: str, port: int, key: str) -> str:
    """The compose override: the machine's PostgreSQL and Redis on 127.0.0.1, host network.

    The compose file's ``postgres`` and ``redis`` services get a profile that is never
    enabled (no image registry here; the machine runs both). A database and a queue of
    its own.
    """
    env = (
        "    environment:\n"
        f"      COSTWISE_DATABASE_URL: {json.dumps(db_url)}\n"
        f"      COSTWISE_REDIS_URL: {json.dumps(redis_url)}\n"
        f"      COSTWISE_QUEUE_NAME: {json.dumps('costwise:' + TAG)}\n"
    )
    return (
        "services:\n"
        "  postgres: {profiles: [on-the-machine]}\n"
        "  redis: {profiles: [on-the-machine]}\n"
        "  migrate:\n    network_mode: host\n" + env
        + "  api:\n    network_mode: host\n    ports: !reset []\n" + env
        + f'      COSTWISE_HOST: 127.0.0.1\n      COSTWISE_PORT: "{port}"\n'
        + f"      COSTWISE_BOOTSTRAP_ADMIN_KEY: {json.dumps(key)}\n"
        + "  worker:\n    network_mode: host\n" + env
    )  # fmt: skip


def compose(reference: dict[str, Any]) -> None:
    pc = os.environ["PODMAN_COMPOSE"]
    db = f"costwise_{TAG}"
    db_url = f"{admin_url().rsplit('/', 1)[0]}/{db}"
    redis_url = os.environ.get("COSTWISE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    port = free_port()
    key = "cw_" + secrets.token_urlsafe(32)
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {key}"}
    database("create", db)
    with tempfile.TemporaryDirectory(prefix="costwise-ct-compose-") as tmp:
        over = Path(tmp) / "docker-compose.override.yml"
        over.write_text(override(db_url, redis_url, port, key))
        files = ["-f", str(ROOT / "docker-compose.yml"), "-f", str(over)]
        args = [pc, "--project-name", TAG, *files]
        env = {**os.environ, "COSTWISE_BOOTSTRAP_ADMIN_KEY": key}
        try:
            say(f"compose up: migrate, api, worker x2 (project {TAG}, database {db})")
            start = time.perf_counter()
            # The order of the compose file's conditions, kept here: its postgres and
            # redis services (and so the health conditions on them) are the machine's.
            up = [*args, "up", "--detach", "--no-build", "--no-deps"]
            run(*up, "migrate", env=env, cwd=ROOT, timeout=600)
            migrate = podman(
                "ps", "--all", "--format", "{{.Names}}",
                "--filter", f"label=io.podman.compose.project={TAG}",
                "--filter", "label=com.docker.compose.service=migrate",
            ).stdout.split()  # fmt: skip
            if len(migrate) != 1:
                raise SystemExit(f"compose migrate: containers {migrate}")
            code = podman("wait", migrate[0], timeout=300).stdout.strip()
            if code != "0":
                raise SystemExit(f"compose migrate exited with {code}")
            run(*up, "api", "worker", env=env, cwd=ROOT, timeout=600)
            wait_ready(base, 180, headers=headers)
            figures["compose_ready_s"] = round(time.perf_counter() - start, 2)
            ps = podman(
                "ps",
                "--all",
                "--filter",
                f"label=io.podman.compose.project={TAG}",
                "--format",
                "{{.Names}} {{.State}} {{.ExitCode}}",
            ).stdout.split("\n")
            ps = [line for line in ps if line.strip()]
            # podman's State is "running" in newer releases, "Up 30 seconds ago" in 4.x
            workers = [
                line for line in ps if "worker" in line and re.search(r"\b(running|Up)\b", line)
            ]
            migrate = [line for line in ps if "migrate" in line]
            if len(workers) != 2 or not migrate or not migrate[0].endswith(" 0"):
                raise SystemExit("compose services not as expected:\n" + "\n".join(ps))
            say(f"compose: API ready {figures['compose_ready_s']} s after `up`; " + "; ".join(ps))
            if httpx.get(f"{base}/v1/models", timeout=5).status_code != 401:
                raise SystemExit("compose API: /v1/models without a key is not 401")
            got = walk_through(base, headers=headers, mode="job")
            job = got["job"]
            figures["compose_job_s"] = round(got["train_s"], 2)
            same_numbers("compose (job on a Redis worker)", got, reference)
            say(
                f"compose: job {job['id']} {job['status']} on worker {job['worker']} in {figures['compose_job_s']} s"
            )
        except BaseException:
            for line in podman(
                "ps",
                "--all",
                "--filter",
                f"label=io.podman.compose.project={TAG}",
                "--format",
                "{{.Names}}",
                check=False,
            ).stdout.split():
                tail = podman("logs", "--tail", "25", line, check=False)
                print(f"--- {line}\n{tail.stdout[-2500:]}{tail.stderr[-2500:]}")
            raise
        finally:
            run(
                *args,
                "down",
                "--volumes",
                "--timeout",
                "30",
                check=False,
                env=env,
                cwd=ROOT,
                timeout=300,
            )
            database("drop", db)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--no-build", action="store_true", help="use the image already built")
    opts = parser.parse_args()
    for var in ("PODMAN_COMPOSE", "CONTAINER_RUN_FLAGS"):
        if not os.environ.get(var):
            raise SystemExit(f"{var} is not set: source ../shared/tools/container-env.sh first")
    total = time.perf_counter()
    if not opts.no_build:
        build()
    with host_server() as host:
        reference = walk_through(host)
    say(f"host reference: AUC {reference['auc']}, first training {reference['train_s']:.2f} s")
    run_image(reference)
    compose(reference)
    figures["total_s"] = round(time.perf_counter() - total, 1)
    figures["date"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    figures["machine"] = f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}"
    say("passed: " + json.dumps(figures))
    if opts.json:
        opts.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
