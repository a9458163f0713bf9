"""One partition of a batch: read its rows in blocks, decide them, write one Parquet file.

The same function runs in the job's worker (one partition after the other) and as a Dask
task (one task per partition): :func:`decide_part` gets the numpy-only
:class:`models.inference.model.InferenceModel`, the :class:`PartPlan` (columns,
costs, block size) and where to read and write, and returns the partition's
:class:`~app.services.batch.scoring.BlockSummary`. It opens its input with fsspec/pyarrow
through :class:`app.services.datasets.DatasetReader` (the roots are checked again where
it runs), reads only the columns it needs, and writes only the file it is given (inside the batch's temporary output directory).
Memory: one block of ``block_rows`` rows of the needed columns at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from app.services.batch.scoring import (
    BatchCosts,
    BatchShadow,
    BlockSummary,
    decide_block,
    output_schema,
)
from app.services.datasets import DatasetReader, DatasetRef, FetchPolicy
from models.inference.model import InferenceModel

__all__ = ["Part", "PartPlan", "decide_part"]

Progress = Callable[[int], None]  # rows decided since the last call


@dataclass(frozen=True)
class Part:
    """One input partition: a file (URI), its first row in the whole input, its rows."""

    uri: str
    first_row: int
    rows: int | None  # None: not known before reading (CSV)


@dataclass(frozen=True)
class PartPlan:
    """What every partition of a batch needs besides the model."""

    format: str  # "parquet" | "csv"
    features: list[str]
    id_fields: list[pa.Field]  # the id columns and their type (one schema for every part)
    costs: BatchCosts
    block_rows: int
    roots: tuple[str, ...]  # COSTWISE_DATA_ROOTS / _PROTOCOLS: a worker checks them again
    protocols: tuple[str, ...]
    fetch: FetchPolicy = field(default_factory=FetchPolicy)  # the fence, timeouts, size
    interval: bool = False  # each row's probability interval and stable flag

    @property
    def id_columns(self) -> list[str]:
        return [f.name for f in self.id_fields]

    def columns(self) -> list[str]:
        """The input columns read (each once, in a stable order)."""
        wanted = [*self.id_columns, *self.features, *self.costs.columns.values()]
        return list(dict.fromkeys(wanted))


def decide_part(
    model: InferenceModel,
    plan: PartPlan,
    part: Part,
    target: str,
    progress: Progress | None = None,
    shadow: BatchShadow | None = None,
) -> BlockSummary:
    """Decide every row of ``part`` and write them to the local Parquet file ``target``
    (with a ``shadow``, its decisions of the same rows in the same file)."""
    schema = output_schema(
        model,
        plan.id_fields,
        actions=plan.costs.has_actions,
        interval=plan.interval,
        shadow=shadow is not None,
    )
    ids = {f.name: f for f in plan.id_fields}
    reader = DatasetReader(plan.roots, plan.protocols, fetch=plan.fetch)  # checked here too
    ref = DatasetRef(part.uri, plan.format, None, tuple(plan.features))  # type: ignore[arg-type]
    opened = reader.open(ref, field="input")
    total = BlockSummary()
    first = part.first_row
    with pq.ParquetWriter(target, schema) as writer:
        for batch in opened.batches(columns=plan.columns(), batch_size=plan.block_rows):
            if ids:  # the id columns in the one output type (parts may differ, e.g. CSV)
                batch = batch.cast(pa.schema([ids.get(f.name, f) for f in batch.schema]))
            table, summary = decide_block(
                model,
                batch,
                features=plan.features,
                costs=plan.costs,
                id_columns=plan.id_columns,
                schema=schema,
                first_row=first,
                interval=plan.interval,
                shadow=shadow,
            )
            writer.write_table(table)
            total.add(summary)
            first += batch.num_rows
            if progress is not None:
                progress(batch.num_rows)
    return total
