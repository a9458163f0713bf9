"""Partition functions for a DataFrame you already have on Dask or Spark.

When the data already lives in a Dask DataFrame or a Spark DataFrame, let that engine run
the partitions: :func:`partition_decider` loads a registered version from the registry
(the numpy-only :class:`models.inference.model.InferenceModel`, verified against its sha256)
and returns a :class:`PartitionDecider`, a picklable function of one pandas DataFrame
that decides its rows exactly as ``/v1/models/{name}/predict`` does (the same code:
:func:`app.services.batch.scoring.decide_block`), with per-row costs from its columns::

    from app.services.batch.dataframes import partition_decider

    decide = partition_decider(
        "fraud", alias="prod", database_url="postgresql+psycopg://...",
        costs={"c_fn": {"column": "amount"}, "c_fp": 5}, id_columns=["id"],
    )
    decided = ddf.map_partitions(decide, meta=decide.meta(ddf._meta))       # Dask
    decided = sdf.mapInPandas(decide.iter_pandas, schema=decide.spark_schema(  # Spark
        {"id": "string"}))

Each output frame has the id columns, ``proba_<class>``, ``decision``, ``threshold`` and
``expected_cost`` (the Parquet columns of ``POST /v1/models/{name}/batch``) and keeps the
input's index. Error messages count rows from the start of the partition. pandas must be
installed (Dask and Spark bring it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from app.services.batch.checks import check_model_costs, features_of
from app.services.batch.scoring import BatchCosts, decide_block, output_schema
from app.services.prediction.intervals import check_request as check_interval
from app.services.prediction.predictor import Predictor
from models.inference.model import InferenceModel

__all__ = ["PartitionDecider", "partition_decider"]

_SPARK_TYPES = {pa.float64(): "double", pa.int64(): "bigint", pa.bool_(): "boolean",
                pa.string(): "string", pa.large_string(): "string"}  # fmt: skip


@dataclass(frozen=True)
class PartitionDecider:
    """Decides pandas DataFrames (see the module docstring); built by
    :func:`partition_decider`, or directly from an ``InferenceModel``."""

    model: InferenceModel
    features: list[str]
    costs: BatchCosts = field(default_factory=BatchCosts)
    id_columns: list[str] = field(default_factory=list)
    interval: bool = False  # p_low, p_high and stable columns

    def _schema(self, table: pa.Table) -> pa.Schema:
        ids = [table.schema.field(c) for c in self.id_columns]
        return output_schema(
            self.model, ids, actions=self.costs.has_actions, interval=self.interval
        )

    def __call__(self, frame: Any) -> Any:
        """The decisions of one pandas DataFrame, as a pandas DataFrame (same index)."""
        columns = list(dict.fromkeys([*self.id_columns, *self.features,
                                      *self.costs.columns.values()]))  # fmt: skip
        table = pa.Table.from_pandas(frame[columns], preserve_index=False)
        out, _ = decide_block(
            self.model,
            table,
            features=self.features,
            costs=self.costs,
            id_columns=self.id_columns,
            schema=self._schema(table),
            interval=self.interval,
        )
        result = out.to_pandas()
        result.index = frame.index
        return result

    def iter_pandas(self, frames: Iterable[Any]) -> Iterator[Any]:
        """For Spark's ``DataFrame.mapInPandas``: decide each frame of the iterator."""
        for frame in frames:
            yield self(frame)

    def meta(self, sample: Any) -> Any:
        """An empty frame with the output's columns and types (Dask's ``meta``), from an
        empty (or any) frame of the input."""
        head = sample.iloc[:0]
        columns = list(dict.fromkeys([*self.id_columns, *self.features,
                                      *self.costs.columns.values()]))  # fmt: skip
        table = pa.Table.from_pandas(head[columns], preserve_index=False)
        return self._schema(table).empty_table().to_pandas()

    def spark_schema(self, id_types: Mapping[str, str] | None = None) -> str:
        """The output schema as a Spark DDL string (``mapInPandas``'s ``schema``);
        ``id_types`` gives the Spark type of each id column (default ``string``)."""
        types = dict(id_types or {})
        fields = output_schema(self.model, [], actions=self.costs.has_actions)
        label = _SPARK_TYPES.get(fields.field("decision").type, "string")
        parts = [f"`{c}` {types.get(c, 'string')}" for c in self.id_columns]
        parts += [f"`{f.name}` double" for f in fields if f.name.startswith("proba_")]
        parts.append(f"`decision` {label}")
        parts += ["`action` string"] if self.costs.has_actions else []
        parts += ["`threshold` double", "`expected_cost` double"]
        if self.interval:
            parts += ["`p_low` double", "`p_high` double", "`stable` boolean"]
        return ", ".join(parts)


def partition_decider(
    name: str,
    *,
    database_url: str | None = None,
    predictor: Predictor | None = None,
    version: int | None = None,
    alias: str | None = None,
    costs: Mapping[str, Any] | None = None,
    cost_matrix: list[list[Any]] | None = None,
    priors: list[float] | None = None,
    actions: list[str] | None = None,
    id_columns: Iterable[str] = (),
    columns: list[str] | None = None,
    interval: bool = False,
) -> PartitionDecider:
    """Load ``name`` (``version`` / ``alias``, default the latest) from the registry at
    ``database_url`` (or through ``predictor``) and check the costs against it, as
    ``POST /v1/models/{name}/batch`` does. ``columns``: the feature columns, default the
    model's feature names. ``interval``: also ``p_low``, ``p_high`` and ``stable``."""
    engine = None
    if predictor is None:
        from app.db import make_engine, make_session_factory
        from app.settings import DEFAULT_DATABASE_URL

        engine = make_engine(database_url or DEFAULT_DATABASE_URL)
        predictor = Predictor(make_session_factory(engine, readonly=True), cache_size=1)
    try:
        model = predictor.load(predictor.resolve(name, version, alias))
    finally:
        if engine is not None:
            engine.dispose()
    batch_costs = BatchCosts.of(costs, cost_matrix, priors, actions)
    features = features_of(model, columns)
    check_model_costs(model, batch_costs)
    if interval:
        check_interval(model)
    return PartitionDecider(model, features, batch_costs, list(id_columns), interval)
