"""A batch that asks (``"shadow": true``) is decided by the model's shadow version too:
the output's shadow columns are what predict answers with that version under the same
per-row costs, the job's result counts its decisions and the rows decided differently;
a model without a shadow, or a shadow that is the batch's own version, is a 422 naming
``shadow`` and no job is created."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests.app.api.conftest import dataset
from tests.app.batch.conftest import FEATURES, input_table, wait_job, write_partitioned
from tests.app.batch.test_batch_api import (
    assert_same_decisions,
    batch_body,
    predicted,
    read_output,
)


def _train_reordered(client: TestClient) -> int:
    """A second version, on other rows, with its features named in reverse order."""
    X, y = dataset(400, seed=7)
    body = {
        "features": X[:, ::-1].tolist(),
        "labels": y.tolist(),
        "feature_names": FEATURES[::-1],
        "n_estimators": 8,
    }
    r = client.post("/v1/models/fraud/versions", json=body, params={"mode": "sync"})
    assert r.status_code == 201, r.text
    return int(r.json()["version"])


def _jobs(client: TestClient) -> int:
    return int(client.get("/v1/jobs").json()["total"])


def test_a_batch_decided_by_the_shadow_too(
    client: TestClient, trained: dict[str, Any], root: Path
) -> None:
    table = input_table()
    src = write_partitioned(table, root / "tx")
    r = client.post("/v1/models/fraud/batch", json=batch_body(src, root / "a", shadow=True))
    assert r.status_code == 422 and r.json()["field"] == "shadow", r.text
    assert "no shadow" in r.json()["detail"]
    shadow = _train_reordered(client)
    production = {"version": trained["version"]}
    assert client.put("/v1/models/fraud/aliases/production", json=production).status_code == 200
    assert client.put("/v1/models/fraud/shadow", json={"version": shadow}).status_code == 200
    same = batch_body(src, root / "b", shadow=True, version=shadow)
    r = client.post("/v1/models/fraud/batch", json=same)
    assert r.status_code == 422 and r.json()["field"] == "shadow", r.text
    assert _jobs(client) == 0

    out = root / "decisions"
    r = client.post("/v1/models/fraud/batch", json=batch_body(src, out, shadow=True))
    assert r.status_code == 202, r.text
    job = wait_job(client, r.json()["id"])
    assert job["status"] == "succeeded", job
    assert job["version"] == trained["version"]

    row_costs = [{"c_fp": 5.0, "c_fn": a} for a in table.column("amount").to_pylist()]
    served = predicted(client, table, row_costs=row_costs)
    theirs = predicted(client, table, row_costs=row_costs, version=shadow)
    assert served != theirs
    output = read_output(out)
    assert_same_decisions(output, served, table.column("id").to_pylist())  # unchanged
    rows = output.to_pylist()
    assert output.column_names[-4:] == [
        "shadow_proba_0", "shadow_proba_1", "shadow_decision", "shadow_expected_cost",
    ]  # fmt: skip
    for row, answer in zip(rows, theirs, strict=True):
        assert row["shadow_decision"] == answer["decision"]
        assert [row["shadow_proba_0"], row["shadow_proba_1"]] == answer["probabilities"]
        assert row["shadow_expected_cost"] == answer["expected_cost"]
    mine = np.array([a["decision"] for a in served])
    other = np.array([a["decision"] for a in theirs])
    differing = int((mine != other).sum())
    assert 0 < differing < len(rows)  # another model: some rows decided differently
    result = job["result"]["shadow"]
    assert result["version"] == shadow and result["rows"] == table.num_rows
    assert result["decided"] == {"0": int((other == 0).sum()), "1": int((other == 1).sum())}
    total = sum(a["expected_cost"] for a in theirs)
    assert result["total_expected_cost"] == pytest.approx(total, rel=1e-12)
    assert result["decided_differently"] == differing
    # a batch that does not ask has no shadow columns
    r = client.post("/v1/models/fraud/batch", json=batch_body(src, root / "plain"))
    job = wait_job(client, r.json()["id"])
    assert "shadow" not in job["result"]
    assert not any(c.startswith("shadow_") for c in read_output(root / "plain").column_names)
