"""Outcomes and monitoring through the client and the CLI, against the real server."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from costwise import Client
from costwise.types import OutcomesReport
from tests.costwise.conftest import ADMIN_KEY, Service
from tests.costwise.test_cli_remote import costwise


def _until_written(client: Client, items: list[dict[str, Any]]) -> OutcomesReport:
    """Send outcomes, then wait until the pending ones are recorded (the log writes
    within ~0.2 s and joins them); the report sent again says ``unchanged`` for those."""
    first = client.send_outcomes("fraud", items)
    assert first.counts.get("unknown", 0) == 0
    assert first.counts["pending"] + first.counts["recorded"] == len(items), first.counts
    deadline = time.monotonic() + 10
    while True:
        report = client.send_outcomes("fraud", items)
        if report.counts["pending"] == 0 or time.monotonic() > deadline:
            return first if first.counts["pending"] == 0 else report
        time.sleep(0.1)


def test_client_predict_ids_outcomes_and_monitoring(client: Client, fraud: dict[str, Any]) -> None:
    X, y = fraud["X"], fraud["y"]
    out = client.predict(
        "fraud", X[:20], costs={"c_fp": 1, "c_fn": 4}, ids=[f"c{i}" for i in range(20)]
    )
    assert [p.id for p in out.predictions] == [f"c{i}" for i in range(20)]
    assert client.predict("fraud", X[:2]).predictions[0].id  # the service's own id
    items = [{"id": f"c{i}", "label": int(y[i])} for i in range(10)]
    report = _until_written(client, items)
    assert report.counts["recorded"] + report.counts["unchanged"] == 10
    assert report.results[0].status in ("recorded", "unchanged")
    again = client.send_outcomes("fraud", [(f"c{i}", int(y[i])) for i in range(10)])
    assert again.counts["unchanged"] == 10
    deadline = time.monotonic() + 10  # the second request's 2 rows may be a later batch
    while True:
        doc = client.monitoring("fraud", bucket="hour")
        (v,) = doc["versions"]
        if v["total"]["predictions"] == 22 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert v["total"]["predictions"] == 22 and v["total"]["labelled"] == 10
    expected = sum(
        [[0, 1], [4, 0]][int(y[i])][[0, 1].index(out.predictions[i].decision)] for i in range(10)
    )
    assert v["total"]["realised_cost"] == expected
    assert client.set_prediction_log("fraud", False).prediction_log is False
    assert client.predict("fraud", X[:1]).predictions[0].id is None
    assert client.set_prediction_log("fraud", True).prediction_log is True


def test_cli_outcomes_send_and_monitor(
    server: Service, fraud: dict[str, Any], tmp_path: Path
) -> None:
    X, y = fraud["X"], fraud["y"]
    with Client(server.url, api_key=ADMIN_KEY) as c:
        c.predict("fraud", X[:6], ids=[f"cli{i}" for i in range(6)])
        _until_written(c, [{"id": "cli0", "label": int(y[0])}])
    csv = tmp_path / "outcomes.csv"
    lines = ["id,label,cost"] + [
        f"cli{i},{int(y[i])},{'2.5' if i == 1 else ''}" for i in range(1, 4)
    ]
    csv.write_text("\n".join([*lines, "nobody,1,", "cli4,7,"]) + "\n")
    remote = ["--url", server.url, "--api-key", ADMIN_KEY]
    out = costwise("outcomes", "send", str(csv), "--model", "fraud", *remote, check=False)
    assert out.returncode == 1, out.stderr  # one invalid label
    assert "recorded=3" in out.stdout and "pending=1" in out.stdout and "invalid=1" in out.stdout
    assert "cli4\tinvalid" in out.stderr and "nobody" not in out.stderr  # pending: accepted
    mon = costwise("monitor", "fraud", "--bucket", "day", *remote)
    assert "# fraud version 1" in mon.stdout and "total\t" in mon.stdout
    doc = json.loads(costwise("monitor", "fraud", "--json", *remote).stdout)
    assert doc["versions"][0]["total"]["labelled"] >= 4
    bad = tmp_path / "bad.csv"
    bad.write_text("id,outcome\nx,1\n")
    err = costwise("outcomes", "send", str(bad), "--model", "fraud", *remote, check=False)
    assert err.returncode == 2 and "missing column(s) ['label']" in err.stderr
