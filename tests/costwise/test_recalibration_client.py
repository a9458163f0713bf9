"""The client's recalibrate and estimate_priors against the real service (both databases)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from costwise import Client, InvalidArgument, NotFound
from costwise.types import PriorEstimate, Version
from tests.app.api.conftest import dataset
from tests.costwise.conftest import ADMIN_KEY, Service
from tests.costwise.test_cli_remote import costwise


def test_recalibrate_from_rows_returns_the_new_version(
    client: Client, fraud: dict[str, Any]
) -> None:
    X, y = dataset(400, seed=5)
    v = client.recalibrate("fraud", 1, X, y, method="isotonic", holdout_fraction=0.25)
    assert isinstance(v, Version) and v.parent_version == 1 and v.version >= 2
    assert v.calibration["method"] == "isotonic" and v.data["n_rows"] == 400
    assert v.calibration["n_holdout"] == 100
    assert set(v.metrics["recalibration"]) == {"before", "after"}
    assert client.get_version("fraud", v.version).parent_version == 1
    records = [dict(zip(["a", "b", "c", "d"], row, strict=True)) for row in X.tolist()]
    by_records = client.recalibrate("fraud", 1, records=records, labels=y, method="isotonic")
    assert by_records.data["fingerprint"] == v.data["fingerprint"]


def test_recalibrate_errors(client: Client, fraud: dict[str, Any]) -> None:
    X, _ = dataset(100, seed=6)
    with pytest.raises(InvalidArgument, match="all 100 labelled rows") as info:
        client.recalibrate("fraud", 1, X, [0] * 100)
    assert info.value.field == "labels"
    with pytest.raises(NotFound):
        client.recalibrate("fraud", 99, X, [0, 1] * 50)
    with pytest.raises(ValueError, match="not both"):
        client.recalibrate("fraud", 1, X, [0] * 100, from_outcomes=True)
    with pytest.raises(InvalidArgument) as info:
        client.recalibrate("fraud", 1, from_outcomes=True, until="2001-01-01T00:00:00Z")
    assert info.value.field == "from_outcomes"


def test_estimate_priors_and_predict_with_them(client: Client, fraud: dict[str, Any]) -> None:
    X, _ = dataset(300, seed=7)
    client.predict("fraud", X, version=1)
    for _ in range(100):  # the log is written off the request path: wait for it
        try:
            read = client.estimate_priors("fraud", version=1)
            break
        except NotFound:
            time.sleep(0.05)
    else:
        pytest.fail("the predictions were not logged within 5 s")
    assert read.id is None and read.recorded is False  # GET: computed, not recorded
    with pytest.raises(InvalidArgument, match="no prior estimate yet"):
        client.predict("fraud", X[:2], version=1, priors="estimated")
    est = client.estimate_priors("fraud", version=1, record=True)
    assert isinstance(est, PriorEstimate) and est.version == 1 and est.n_rows >= 1
    assert est.recorded is True and isinstance(est.id, int)
    assert abs(sum(est.priors) - 1.0) < 1e-9 and est.classes == [0, 1]
    answer = client.predict("fraud", X[:2], version=1, priors="estimated")
    assert answer.applied_costs.priors == est.priors
    assert answer.applied_costs.priors_estimate is not None
    assert answer.applied_costs.priors_estimate["id"] == est.id


def test_cli_recalibrate_with_url(server: Service, fraud: dict[str, Any], tmp_path: Path) -> None:
    X, y = dataset(300, seed=8)
    rows = tmp_path / "labelled.csv"
    lines = [
        "a,b,c,d,label",
        *(",".join(map(str, [*r, t])) for r, t in zip(X.tolist(), y, strict=True)),
    ]
    rows.write_text("\n".join(lines) + "\n")
    remote = ["--url", server.url, "--api-key", ADMIN_KEY]
    out = costwise("recalibrate", "fraud", "1", str(rows), "--method", "platt", *remote)
    summary = json.loads(out.stdout)
    assert summary["parent_version"] == 1 and summary["data"]["n_rows"] == 300
    bad = costwise(
        "recalibrate",
        "fraud",
        "1",
        "--from-outcomes",
        "--until",
        "2001-01-01",
        *remote,
        check=False,
    )
    assert bad.returncode == 2 and "field from_outcomes" in bad.stderr


def test_cli_priors_with_url(server: Service, fraud: dict[str, Any]) -> None:
    X, _ = dataset(200, seed=9)
    with Client(server.url, api_key=ADMIN_KEY) as c:
        c.predict("fraud", X, version=1)
    remote = ["--url", server.url, "--api-key", ADMIN_KEY]
    for _ in range(100):  # the log is written off the request path
        out = costwise("priors", "fraud", "--version", "1", *remote, check=False)
        if out.returncode == 0:
            break
        time.sleep(0.05)
    est = json.loads(out.stdout)
    assert est["version"] == 1 and est["n_rows"] >= 200 and est["converged"] is True
    assert abs(sum(est["priors"]) - 1.0) < 1e-9
