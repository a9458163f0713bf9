"""The partition function for a user's own Dask or Spark DataFrame: predict's decisions
for each pandas partition (Spark's mapInPandas is an iterator-of-pandas function, tested
without Spark; Dask's map_partitions with dask.dataframe when it is installed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from app.errors import InvalidArgument
from app.services.batch.dataframes import partition_decider
from app.settings import Settings
from tests.app.batch.conftest import FEATURES, input_table
from tests.app.batch.test_batch_api import predicted

COSTS = {"c_fn": {"column": "amount"}, "c_fp": 5}


def _frames(table: Any, size: int) -> list[pd.DataFrame]:
    frame = table.to_pandas()
    frame.index = frame.index + 1000  # an index that is not 0..n: kept as it is
    return [frame.iloc[i : i + size] for i in range(0, len(frame), size)]


def test_partitions_decided_as_predict_does(
    client: TestClient, trained: dict[str, Any], batch_settings: Settings, root: Path
) -> None:
    table = input_table(250)
    decide = partition_decider(
        "fraud", database_url=batch_settings.database_url, costs=COSTS, id_columns=["id"]
    )
    frames = _frames(table, 70)
    out = pd.concat(list(decide.iter_pandas(iter(frames))))  # as mapInPandas calls it
    assert list(out.index) == list(pd.concat(frames).index)
    assert list(out.columns) == list(decide.meta(frames[0]).columns)
    assert list(out.columns) == ["id", "proba_0", "proba_1", "decision", "threshold",
                                 "expected_cost"]  # fmt: skip
    row_costs = [{"c_fp": 5.0, "c_fn": a} for a in table.column("amount").to_pylist()]
    answers = predicted(client, table, row_costs=row_costs)
    assert out["id"].tolist() == table.column("id").to_pylist()
    assert out["decision"].tolist() == [a["decision"] for a in answers]
    assert out["threshold"].tolist() == [a["threshold"] for a in answers]
    assert out["expected_cost"].tolist() == [a["expected_cost"] for a in answers]
    assert out[["proba_0", "proba_1"]].values.tolist() == [a["probabilities"] for a in answers]
    schema = decide.spark_schema({"id": "string"})
    assert schema == (
        "`id` string, `proba_0` double, `proba_1` double, `decision` bigint, "
        "`threshold` double, `expected_cost` double"
    )


def test_bad_costs_are_refused_when_the_function_is_built_and_rows_named_when_run(
    client: TestClient, trained: dict[str, Any], batch_settings: Settings
) -> None:
    url = batch_settings.database_url
    with pytest.raises(InvalidArgument, match="c_fp is required"):
        partition_decider("fraud", database_url=url, costs={"c_fn": {"column": "amount"}})
    # a fixed c_tn above some per-row c_fp values is checked per row, not refused up front
    costs = {"c_fp": {"column": "amount"}, "c_fn": 500.0, "c_tn": 3.0}
    frame = input_table(20).to_pandas()
    frame["amount"] = frame["amount"].clip(lower=3.0)
    assert len(partition_decider("fraud", database_url=url, costs=costs)(frame)) == 20
    decide = partition_decider("fraud", database_url=url, costs=COSTS)
    frame.loc[7, "amount"] = -1.0
    with pytest.raises(InvalidArgument, match=r"row 7, 'c_fn' \(input column 'amount'\)"):
        decide(frame)
    assert set(FEATURES) <= set(frame.columns)


def test_map_partitions_on_a_dask_dataframe(
    client: TestClient, trained: dict[str, Any], batch_settings: Settings
) -> None:
    dd = pytest.importorskip("dask.dataframe")
    table = input_table(200)
    frame = table.to_pandas()
    decide = partition_decider(
        "fraud", database_url=batch_settings.database_url, costs=COSTS, id_columns=["id"]
    )
    ddf = dd.from_pandas(frame, npartitions=4)
    out = ddf.map_partitions(decide, meta=decide.meta(frame)).compute(scheduler="sync")
    pd.testing.assert_frame_equal(out, decide(frame))
