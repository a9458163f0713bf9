"""``costwise ... --url``: the CLI through the client against the real service."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from costwise import Client
from tests.app.api.conftest import dataset
from tests.costwise.conftest import ADMIN_KEY, Service

ROOT = Path(__file__).resolve().parents[2]
FRAUD_CSV = ROOT / "examples" / "fraud.csv"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COSTWISE_")}
    env.update(extra)
    return env


def costwise(
    *args: str, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT,
        env=env or _env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check:
        assert out.returncode == 0, out.stderr
    return out


@pytest.fixture(scope="module")
def remote(server: Service) -> list[str]:
    return ["--url", server.url, "--api-key", ADMIN_KEY]


@pytest.fixture(scope="module")
def trained(remote: list[str]) -> dict[str, Any]:
    out = costwise(
        "train", str(FRAUD_CSV), "--model", "clifraud", "--label-column", "fraud",
        "--n-estimators", "20", "--mode", "sync", *remote,
    )  # fmt: skip
    return dict(json.loads(out.stdout))


def test_train_with_url_registers_a_version_and_prints_it(trained: dict[str, Any]) -> None:
    assert (trained["model"], trained["version"]) == ("clifraud", 1)
    assert 0.0 <= trained["metrics"]["auc"] <= 1.0


def test_models_with_url_lists_what_the_server_has(
    server: Service, remote: list[str], trained: dict[str, Any]
) -> None:
    out = costwise("models", *remote)
    assert "clifraud\tlatest=v1\t" in out.stdout.splitlines()
    assert "HTTP Request" not in out.stderr
    from_env = costwise("models", env=_env(COSTWISE_URL=server.url, COSTWISE_API_KEY=ADMIN_KEY))
    assert from_env.stdout == out.stdout


def test_predict_with_url_in_chunks_writes_what_local_predict_writes(
    server: Service, remote: list[str], trained: dict[str, Any], tmp_path: Path
) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("\n".join(FRAUD_CSV.read_text().splitlines()[:51]) + "\n")
    common = ["predict", str(rows), "--model", "clifraud", "--ignore", "fraud"]
    costs = ["--c-fp", "1", "--c-fn", "7"]
    remote_csv, local_csv = tmp_path / "remote.csv", tmp_path / "local.csv"
    quiet = costwise(*common, *costs, "--chunk-size", "7", "-o", str(remote_csv), *remote)
    assert "\r" not in quiet.stderr  # no bar when stderr is not a terminal
    assert quiet.stderr.rstrip().endswith("# clifraud v1: 50 rows")
    local = _env(COSTWISE_DATABASE_URL=server.database_url)
    bar = ["--chunk-size", "13", "--progress", "-o", str(local_csv)]
    out = costwise(*common, *costs, *bar, env=local)
    assert "predicting" in out.stderr and "rows 13/50" in out.stderr  # local: chunks + bar
    remote_rows = [r.split(",") for r in remote_csv.read_text().splitlines()]
    local_rows = [r.split(",") for r in local_csv.read_text().splitlines()]
    assert len(remote_rows) == 51 and remote_rows[0][:5] == ["row", "id", "decision", "p_0", "p_1"]
    assert all(r[1] for r in remote_rows[1:] + local_rows[1:])  # each logged row's id
    assert [r[:1] + r[2:] for r in remote_rows] == [r[:1] + r[2:] for r in local_rows]
    assert {r[5] for r in remote_rows[1:]} == {"0.125"}  # 1 / (1 + 7)


def test_train_as_a_job_shows_phase_and_rounds(remote: list[str]) -> None:
    out = costwise(
        "train", str(FRAUD_CSV), "--model", "clijob", "--label-column", "fraud",
        "--n-estimators", "30", "--mode", "job", "--progress", "--poll-interval", "0.05", *remote,
    )  # fmt: skip
    assert json.loads(out.stdout)["version"] == 1
    # default kfold calibration: 5 fold fits + the final fit = 6 x 30 rounds
    assert "# job " in out.stderr and "round " in out.stderr and "/180" in out.stderr


def test_jobs_lists_shows_and_refuses_to_cancel_a_finished_job(
    server: Service, remote: list[str]
) -> None:
    with Client(server.url, api_key=ADMIN_KEY) as c:
        job = c.train("clijobs", csv=FRAUD_CSV, label_column="fraud", n_estimators=10, mode="job")
        c.wait_for_job(job.id, poll_interval=0.05)
    listing = costwise("jobs", "--model", "clijobs", *remote)
    assert listing.stdout.splitlines()[1].startswith(f"{job.id}\tclijobs\tsucceeded\tdone")
    shown = json.loads(costwise("jobs", job.id, *remote).stdout)
    assert (shown["id"], shown["status"], shown["version"]) == (job.id, "succeeded", 1)
    refused = costwise("jobs", job.id, "--cancel", *remote, check=False)
    assert refused.returncode == 2 and "error [CONFLICT]" in refused.stderr


def test_ctrl_c_cancels_the_remote_job_and_exits_130(
    server: Service, remote: list[str], tmp_path: Path
) -> None:
    X, y = dataset(20_000, d=8)
    heavy = tmp_path / "heavy.csv"
    lines = [",".join([*(f"x{i}" for i in range(8)), "label"])]
    lines += [
        ",".join([*(f"{v:.4f}" for v in row), str(label)]) for row, label in zip(X, y, strict=True)
    ]
    heavy.write_text("\n".join(lines) + "\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "train", str(heavy), "--model", "interrupted",
         "--n-estimators", "500", "--weak-learner", "tree", "--mode", "job",
         "--poll-interval", "0.05", *remote],
        cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # A suite started in the background by a non-interactive shell inherits SIGINT
        # ignored, and Python then installs no KeyboardInterrupt handler: restore it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    with Client(server.url, api_key=ADMIN_KEY) as c:
        deadline = time.monotonic() + 60
        while not [j for j in c.list_jobs(model="interrupted").jobs if j.done > 0]:
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr
        assert "cancelled" in stderr and stdout == ""
        (job,) = c.list_jobs(model="interrupted").jobs
        final = c.wait_for_job(job.id, poll_interval=0.05, timeout=60)
    assert final.status == "cancelled" and final.version is None


def test_errors_from_the_server_exit_2_with_the_code(remote: list[str], tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("a,b\n1,2\n")
    out = costwise(
        "predict", str(rows), "--model", "nope", "--c-fp", "1", "--c-fn", "1", *remote, check=False
    )
    assert out.returncode == 2 and "error [NOT_FOUND]" in out.stderr


def test_jobs_without_a_server_says_how_to_give_one() -> None:
    out = costwise("jobs", check=False)
    assert out.returncode == 2 and "--url" in out.stderr and "COSTWISE_URL" in out.stderr


def test_compare_reads_the_server_and_names_the_bad_field(
    remote: list[str], trained: dict[str, Any]
) -> None:
    """`costwise compare` asks the server's comparison; a version compared with itself is
    the server's 422 naming the field, exit 2 with the code."""
    version = str(trained["version"])
    out = costwise("compare", "clifraud", "--a", version, "--b", version, *remote, check=False)
    assert out.returncode == 2, out.stderr
    assert "error [INVALID_ARGUMENT]" in out.stderr and "b" in out.stderr, out.stderr
    out = costwise("compare", "--help")
    assert "--a" in out.stdout and "--b" in out.stdout and "server" in out.stdout
