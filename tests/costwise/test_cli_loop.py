"""The loop on the command line, against a live server: train, predict with ids,
send the outcomes by those ids, read the realised cost with ``costwise monitor``."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from costwise import Client
from tests.costwise.conftest import ADMIN_KEY, Service
from tests.costwise.test_cli_remote import FRAUD_CSV, ROOT, _env, costwise

C_FP, C_FN = 1.0, 20.0


@pytest.fixture(scope="module")
def remote(server: Service) -> list[str]:
    return ["--url", server.url, "--api-key", ADMIN_KEY]


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _trained(model: str, tmp_path: Path, remote: list[str]) -> tuple[list[str], list[list[str]]]:
    """Train ``model`` (20 rounds, synchronously) on the first 1000 rows of the fraud CSV;
    the CSV's header and rows."""
    lines = list(csv.reader(FRAUD_CSV.read_text().splitlines()))
    header, data = lines[0], lines[1:]
    train = _write(tmp_path / "train.csv", header, data[:1000])
    costwise(
        "train", str(train), "--model", model, "--label-column", "fraud",
        "--n-estimators", "20", "--mode", "sync", *remote,
    )  # fmt: skip
    return header, data


def _with_ids(path: Path, header: list[str], rows: list[list[str]], prefix: str) -> Path:
    """``rows`` written to ``path`` with a first column ``txn`` holding ``<prefix>-<i>``."""
    return _write(path, ["txn", *header], [[f"{prefix}-{i}", *r] for i, r in enumerate(rows)])


def _realised(decisions: list[dict[str, str]], labels: dict[str, int]) -> float:
    """sum of C[label][decision] with C = [[0, c_fp], [c_fn, 0]]."""
    cost = {(0, 1): C_FP, (1, 0): C_FN}
    return sum(cost.get((labels[d["id"]], int(d["decision"])), 0.0) for d in decisions)


def _joined(server: Service, labelled: int) -> None:
    """Wait until ``labelled`` outcomes are joined (the log writes its rows, and joins
    the outcomes that came before them, off the request path)."""
    deadline = time.monotonic() + 30
    with Client(server.url, api_key=ADMIN_KEY) as c:
        while time.monotonic() < deadline:
            doc = c.monitoring("loop")
            if doc["versions"] and doc["versions"][0]["total"]["labelled"] >= labelled:
                return
            time.sleep(0.2)


def test_train_predict_with_ids_send_outcomes_and_monitor(
    server: Service, remote: list[str], tmp_path: Path
) -> None:
    header, data = _trained("loop", tmp_path, remote)
    # 1. the caller's ids: a txn column, sent as the rows' ids, written back
    traffic = _with_ids(tmp_path / "traffic.csv", header, data[1000:1200], "txn")
    out = tmp_path / "decisions.csv"
    costs = ["--c-fp", str(C_FP), "--c-fn", str(C_FN)]
    run = costwise(
        "predict", str(traffic), "--model", "loop", "--id-column", "txn", *costs,
        "--chunk-size", "64", "-o", str(out), *remote,
    )  # fmt: skip
    assert "left out column(s) that are not features of loop v1: fraud" in run.stderr
    decided = _read(out)
    assert [d["id"] for d in decided] == [f"txn-{i}" for i in range(200)]
    # the outcomes come back in the same file: its txn and fraud columns
    sent = costwise(
        "outcomes", "send", str(traffic), "--model", "loop",
        "--id-column", "txn", "--label-column", "fraud", *remote,
    )  # fmt: skip
    counts = dict(kv.split("=") for kv in sent.stdout.split())
    assert int(counts.get("recorded", 0)) + int(counts.get("pending", 0)) == 200, sent.stdout
    # 2. the server's ids: written by predict, reported with id,label
    more = _write(tmp_path / "more.csv", header, data[1200:1250])
    out2 = tmp_path / "more-decisions.csv"
    costwise("predict", str(more), "--model", "loop", *costs, "-o", str(out2), *remote)
    decided2 = _read(out2)
    assert len({d["id"] for d in decided2}) == 50 and all(d["id"] for d in decided2)
    outcomes = _write(
        tmp_path / "outcomes.csv",
        ["id", "label"],
        [[d["id"], row[-1]] for d, row in zip(decided2, data[1200:1250], strict=True)],
    )
    costwise("outcomes", "send", str(outcomes), "--model", "loop", *remote)
    # 3. monitor: the realised cost of exactly those 250 rows
    labels = {f"txn-{i}": int(row[-1]) for i, row in enumerate(data[1000:1200])}
    labels.update({d["id"]: int(row[-1]) for d, row in zip(decided2, data[1200:1250], strict=True)})
    _joined(server, 250)
    doc: dict[str, Any] = json.loads(costwise("monitor", "loop", "--json", *remote).stdout)
    total = doc["versions"][0]["total"]
    assert (total["predictions"], total["labelled"]) == (250, 250), total
    expected = _realised(decided + decided2, labels)
    assert expected > 0 and total["realised_cost"] == pytest.approx(expected)
    table = costwise("monitor", "loop", *remote).stdout.splitlines()
    last = table[-1].split("\t")
    assert last[:3] == ["total", "250", "250"] and float(last[4]) == pytest.approx(expected)


def test_review_through_the_command_line_loop(
    server: Service, remote: list[str], tmp_path: Path
) -> None:
    """predict --c-review, outcomes by id, monitor: one line per action, its realised
    cost the sum of C[label][action] over the rows that took it."""
    header, data = _trained("review-loop", tmp_path, remote)
    traffic = _with_ids(tmp_path / "traffic.csv", header, data[1000:1300], "r")
    out = tmp_path / "decisions.csv"
    costwise(
        "predict", str(traffic), "--model", "review-loop", "--id-column", "txn",
        "--c-fp", str(C_FP), "--c-fn", str(C_FN), "--c-review", "0.5", "-o", str(out), *remote,
    )  # fmt: skip
    decided = _read(out)
    costwise(
        "outcomes", "send", str(traffic), "--model", "review-loop",
        "--id-column", "txn", "--label-column", "fraud", *remote,
    )  # fmt: skip
    labels = {f"r-{i}": int(row[-1]) for i, row in enumerate(data[1000:1300])}
    matrix = {"negative": (0.0, C_FN), "positive": (C_FP, 0.0), "review": (0.5, 0.5)}
    want: dict[str, list[float]] = {}
    for d in decided:
        figures = want.setdefault(d["action"], [0, 0.0])
        figures[0] += 1
        figures[1] += matrix[d["action"]][labels[d["id"]]]
    assert "review" in want and len(want) >= 2
    deadline = time.monotonic() + 30
    with Client(server.url, api_key=ADMIN_KEY) as c:
        while time.monotonic() < deadline:
            doc = c.monitoring("review-loop")
            if doc["versions"] and doc["versions"][0]["total"]["labelled"] >= 300:
                break
            time.sleep(0.2)
    table = costwise("monitor", "review-loop", *remote).stdout.splitlines()
    rows = [line.split("\t") for line in table if line.startswith("action\t")]
    assert {r[1] for r in rows} == set(want)
    for r in rows:
        taken, cost = want[r[1]]
        assert (int(r[2]), int(r[4])) == (taken, taken)
        assert float(r[5]) == pytest.approx(cost, rel=1e-3)  # printed to 4 digits


def test_server_commands_say_they_need_a_server() -> None:
    for command in (["monitor"], ["outcomes", "send"], ["jobs"]):
        text = costwise(*command, "--help").stdout
        assert "instead of the local registry" not in text, command
        assert "required: give it or set $COSTWISE_URL" in " ".join(text.split()), command
    out = costwise("monitor", "loop", check=False)
    assert out.returncode == 2 and "needs a server: give --url" in out.stderr


def test_a_reader_that_leaves_early_ends_the_command_quietly(remote: list[str]) -> None:
    """``costwise jobs | head``: no trace when the pipe's reader is gone."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "jobs", *remote],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader leaves before the first line is written
    with proc.stderr:
        err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141, err  # 128 + SIGPIPE, as a shell reports it
    assert "Traceback" not in err and "BrokenPipe" not in err and "Errno 32" not in err, err
