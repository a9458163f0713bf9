"""The container files: their structure, and the commands they run, run here for real."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
COSTWISE = [sys.executable, "-m", "app.cli"]


def test_compose_runs_postgres_then_migration_then_api() -> None:
    spec = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = spec["services"]
    assert set(services) >= {"postgres", "migrate", "api"}
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    migrate, api = services["migrate"], services["api"]
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert migrate["command"] == ["costwise", "db", "upgrade"]
    assert api["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert api["command"][:2] == ["costwise", "serve"]
    for svc in (migrate, api):
        assert svc["environment"]["COSTWISE_DATABASE_URL"].startswith("postgresql://")
    env = api["environment"]
    assert env["COSTWISE_ENV"] == "prod" and env["COSTWISE_AUTH"] == "on"
    assert "COSTWISE_BOOTSTRAP_ADMIN_KEY" in env["COSTWISE_BOOTSTRAP_ADMIN_KEY"]


def test_compose_runs_redis_and_job_workers_on_the_same_image() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    redis, api, worker = services["redis"], services["api"], services["worker"]
    assert "redis-cli" in redis["healthcheck"]["test"]
    assert worker["image"] == api["image"] and worker["command"] == ["costwise", "worker"]
    # "mode: replicated": podman-compose (and other tools than Docker's) start the
    # replicas only with it
    assert worker["deploy"] == {"mode": "replicated", "replicas": worker["deploy"]["replicas"]}
    assert worker["deploy"]["replicas"] >= 2
    for svc in (api, worker):
        assert svc["environment"]["COSTWISE_QUEUE"] == "redis"
        assert svc["environment"]["COSTWISE_REDIS_URL"] == "redis://redis:6379/0"
        assert svc["depends_on"]["redis"]["condition"] == "service_healthy"
    assert worker["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert (
        worker["environment"]["COSTWISE_DATABASE_URL"]
        == api["environment"]["COSTWISE_DATABASE_URL"]
    )
    assert worker["healthcheck"] == {"disable": True}  # the image's probe is the API's port


def test_container_worker_command_starts_and_drains_its_queue(
    database_url: str, redis_url: str
) -> None:
    """What the compose worker runs, here: `costwise worker` (--burst: exit when idle)."""
    env = {
        **os.environ,
        "COSTWISE_DATABASE_URL": database_url,
        "COSTWISE_QUEUE": "redis",
        "COSTWISE_REDIS_URL": redis_url,
        "COSTWISE_QUEUE_NAME": f"costwise:test:{os.getpid()}:{time.time_ns()}",
    }
    out = subprocess.run(
        [*COSTWISE, "worker", "--burst"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "costwise worker" in out.stdout + out.stderr


def test_dockerfile_is_multistage_nonroot_with_healthcheck() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert text.count("FROM ") >= 2
    assert "\nUSER costwise" in text
    assert "HEALTHCHECK" in text and "/health/live" in text
    assert 'CMD ["costwise", "serve"]' in text
    for path in ("app", "models", "costwise", "migrations", "pyproject.toml", "README.md"):
        assert f"COPY {path}" in text or f" {path} " in text, path


def test_dockerfile_healthcheck_follows_the_configured_port() -> None:
    """The image itself is built and run, and this probe run in it with ``podman exec``,
    by scripts/container_test.py (CI's container step)."""
    text = (ROOT / "Dockerfile").read_text()
    probe = text[text.index("HEALTHCHECK") :].split("\nCMD [")[0]
    assert "os.environ.get('COSTWISE_PORT'" in probe and ":8000/" not in probe


def test_dockerignore_sends_only_what_the_image_copies() -> None:
    lines = (ROOT / ".dockerignore").read_text().split("\n")
    rules = [line for line in lines if line and not line.startswith("#")]
    assert rules[0] == "*"
    kept = {rule[1:] for rule in rules if rule.startswith("!")}
    assert kept == {"pyproject.toml", "README.md", "app", "models", "costwise", "migrations"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve_and_probe(
    env: dict[str, str], *args: str, then: Callable[[str], None] | None = None
) -> httpx.Response:
    """Start `costwise serve`, wait for /health/ready, run ``then(base_url)``, stop it."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [*COSTWISE, "serve", "--port", str(port), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                ready = httpx.get(f"{base}/health/ready", timeout=2)
            except httpx.TransportError:
                if proc.poll() is not None:
                    out = proc.stdout.read().decode() if proc.stdout else ""
                    raise AssertionError(f"server exited: {out[-2000:]}") from None
                time.sleep(0.2)
                continue
            if then is not None:
                then(base)
            return ready
        raise AssertionError("server did not start in 30 s")
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_container_commands_migrate_then_serve(database_url: str, tmp_path: Path) -> None:
    """What compose runs: `costwise db upgrade`, then `costwise serve --no-migrate` with
    the compose file's production settings (auth on, a bootstrap admin key)."""
    key = "cw_" + secrets.token_urlsafe(32)  # prod refuses a patterned bootstrap key
    env = {
        **os.environ,
        "COSTWISE_DATABASE_URL": database_url,
        "COSTWISE_ENV": "prod",
        "COSTWISE_AUTH": "on",
        "COSTWISE_BOOTSTRAP_ADMIN_KEY": key,
    }
    up = subprocess.run(
        [*COSTWISE, "db", "upgrade"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert up.returncode == 0, up.stderr

    def authenticated(base: str) -> None:
        assert httpx.get(f"{base}/v1/models", timeout=5).status_code == 401
        ok = httpx.get(f"{base}/v1/models", headers={"Authorization": f"Bearer {key}"}, timeout=5)
        assert ok.status_code == 200, ok.text

    r = _serve_and_probe(env, "--no-migrate", then=authenticated)
    assert r.status_code == 200 and r.json()["status"] == "ok"


def test_serve_refuses_an_unmigrated_database(empty_database_url: str) -> None:
    env = {**os.environ, "COSTWISE_DATABASE_URL": empty_database_url}
    port = _free_port()
    out = subprocess.run(
        [*COSTWISE, "serve", "--no-migrate", "--port", str(port)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0
    assert "costwise db upgrade" in out.stdout + out.stderr


@pytest.mark.parametrize("kind", ["sqlite"])
def test_default_sqlite_serve_needs_no_setup(tmp_path: Path, kind: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COSTWISE_")}
    env["COSTWISE_DATABASE_URL"] = f"sqlite:///{tmp_path}/sub/dir/costwise.db"
    r = _serve_and_probe(env)
    assert r.status_code == 200
    assert (tmp_path / "sub" / "dir" / "costwise.db").exists()


@pytest.mark.slow
def test_dockerfile_compiles_the_kernels_into_a_cache_the_server_reads(tmp_path: Path) -> None:
    """The image's warm-up step, run as the Dockerfile runs it: it fills NUMBA_CACHE_DIR
    (set for the runtime user too), so a serving process loads the kernels instead of
    compiling them on its first training."""
    text = (ROOT / "Dockerfile").read_text()
    assert "python -m models.catalog.warmup" in text
    assert "NUMBA_CACHE_DIR=/opt/costwise/numba-cache" in text
    # numba uses a cache directory only if it can write there: the warm-up runs as the
    # serving user, into a directory of that user
    runtime = text[text.index("AS runtime") :]
    assert runtime.index("\nUSER costwise") < runtime.index("models.catalog.warmup")
    assert "chown costwise:costwise /data /opt/costwise/numba-cache" in runtime
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "models.catalog.warmup"], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert list(tmp_path.rglob("*.nbi")) and list(tmp_path.rglob("*.nbc"))
