"""Batch with ``interval: true``: ``p_low``, ``p_high`` and ``stable`` columns equal to
what /v1 predict answers for the same rows, the job's count of unstable rows, and a
model without fold boosters refused at once naming ``interval``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.errors import InvalidArgument
from app.services.batch.dataframes import partition_decider
from app.settings import Settings
from tests.app.api.conftest import train_body
from tests.app.batch.conftest import FEATURES, input_table, wait_job, write_partitioned
from tests.app.batch.test_batch_api import batch_body, read_output


def _train_default(client: TestClient, name: str) -> None:
    body = train_body(300)
    del body["n_estimators"]  # the default algorithm chooses: a fold ensemble
    r = client.post(f"/v1/models/{name}/versions", json=body, params={"mode": "sync"})
    assert r.status_code == 201, r.text


def test_batch_interval_columns_equal_predict(client: TestClient, root: Path) -> None:
    _train_default(client, "folds")
    table = input_table(150, seed=6)
    src = write_partitioned(table, root / "tx")
    costs = {"c_fp": 5, "c_fn": {"column": "amount"}, "c_review": 2}
    r = client.post(
        "/v1/models/folds/batch", json=batch_body(src, root / "out", costs=costs, interval=True)
    )
    assert r.status_code == 202, r.text
    job = wait_job(client, r.json()["id"])
    assert job["status"] == "succeeded", job
    records = [{k: row[k] for k in FEATURES} for row in table.to_pylist()]
    row_costs = [
        {"c_fp": 5.0, "c_fn": a, "c_review": 2.0} for a in table.column("amount").to_pylist()
    ]
    r = client.post(
        "/v1/models/folds/predict",
        json={"records": records, "row_costs": row_costs, "interval": True},
    )
    assert r.status_code == 200, r.text
    answers = r.json()["predictions"]
    rows = read_output(root / "out").to_pylist()
    for row, answer in zip(rows, answers, strict=True):
        assert row["action"] == answer["action"]
        assert row["p_low"] == answer["interval"]["p_low"]
        assert row["p_high"] == answer["interval"]["p_high"]
        assert row["stable"] == answer["interval"]["stable"]
    unstable = sum(not a["interval"]["stable"] for a in answers)
    assert job["result"]["unstable"] == unstable
    assert 0 < unstable < len(answers)
    # without interval: no such columns and no count
    r = client.post("/v1/models/folds/batch", json=batch_body(src, root / "plain", costs=costs))
    job = wait_job(client, r.json()["id"])
    assert job["status"] == "succeeded", job
    assert "unstable" not in job["result"]
    names = read_output(root / "plain").column_names
    assert not {"p_low", "p_high", "stable"} & set(names)


def test_batch_interval_refused_for_one_booster(
    client: TestClient, trained: dict[str, Any], root: Path
) -> None:
    r = client.post("/v1/models/one/versions", json=train_body(algorithm="adaboost"))
    assert r.status_code == 201, r.text
    src = write_partitioned(input_table(30), root / "tx")
    r = client.post("/v1/models/one/batch", json=batch_body(src, root / "out", interval=True))
    assert 400 <= r.status_code < 500 and r.json()["field"] == "interval", r.text
    assert "'auto'" in r.json()["detail"]


def test_dataframe_partitions_with_intervals_equal_predict(
    client: TestClient, trained: dict[str, Any], batch_settings: Settings
) -> None:
    import pandas as pd

    _train_default(client, "folds")
    table = input_table(90, seed=8)
    costs = {"c_fn": {"column": "amount"}, "c_fp": 5}
    url = batch_settings.database_url
    decide = partition_decider("folds", database_url=url, costs=costs, interval=True)
    frame = table.to_pandas()
    out = pd.concat([decide(frame.iloc[i : i + 40]) for i in range(0, len(frame), 40)])
    assert list(out.columns) == list(decide.meta(frame).columns)
    assert list(out.columns)[-3:] == ["p_low", "p_high", "stable"]
    assert decide.spark_schema().endswith("`p_low` double, `p_high` double, `stable` boolean")
    records = [{k: row[k] for k in FEATURES} for row in table.to_pylist()]
    row_costs = [{"c_fp": 5.0, "c_fn": a} for a in table.column("amount").to_pylist()]
    r = client.post(
        "/v1/models/folds/predict",
        json={"records": records, "row_costs": row_costs, "interval": True},
    )
    answers = r.json()["predictions"]
    assert out["p_low"].tolist() == [a["interval"]["p_low"] for a in answers]
    assert out["p_high"].tolist() == [a["interval"]["p_high"] for a in answers]
    assert out["stable"].tolist() == [a["interval"]["stable"] for a in answers]
    with pytest.raises(InvalidArgument, match="interval"):
        partition_decider("fraud", database_url=url, costs=costs, interval=True)
