"""The batch's input and output references, checked before anything is read or written.

Root checks and reference errors are those of the data-set references
(:mod:`app.services.datasets`); this module adds what a batch needs on top: the input's
partitions with their row counts, column checks (present, numeric where numbers are
needed), and the output directory (``file://`` under an allowed root, not there yet).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds

from app.errors import Conflict, InvalidArgument, NotFound
from app.services.batch.parts import Part

__all__ = ["check_columns", "parts_of", "temporary_output"]


def _numeric(t: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_boolean(t)
        or pa.types.is_null(t)
    )


def check_columns(
    schema: pa.Schema, names: list[str], field: str, *, numeric: bool, what: str
) -> None:
    """Each of ``names`` is a column of ``schema`` (and numeric when ``numeric``)."""
    for name in names:
        index = schema.get_field_index(name)
        if index < 0:
            shown = ", ".join(repr(n) for n in schema.names[:20])
            more = " ..." if len(schema.names) > 20 else ""
            raise InvalidArgument(
                f"{field}: the input has no column {name!r} ({what}); its columns are "
                f"[{shown}{more}]",
                field=field,
            )
        t = schema.field(index).type
        if numeric and not _numeric(t):
            raise InvalidArgument(
                f"{field}: input column {name!r} ({what}) holds {t} values; expected numbers "
                "(integers, floats or booleans; null for missing)",
                field=field,
            )


def parts_of(dataset: ds.FileSystemDataset, protocol: str) -> list[Part]:
    """The data set's files in order, with their first row and row count when known."""
    parts: list[Part] = []
    first = 0
    for fragment in dataset.get_fragments():
        rows: int | None = None
        if isinstance(fragment, ds.ParquetFileFragment):
            rows = int(fragment.metadata.num_rows)  # the footer only
        uri = fragment.path if protocol == "file" else f"{protocol}://{fragment.path}"
        if protocol == "file":
            uri = Path(fragment.path).absolute().as_uri()
        parts.append(Part(uri, first, rows))
        first += rows or 0
    return parts


def part_file(directory: Path, index: int) -> Path:
    """The output file of input partition ``index``."""
    return directory / f"part-{index:05d}.parquet"


def check_free(output: Path) -> None:
    """Conflict when something is at ``output`` already (batches never overwrite)."""
    if output.exists() or output.is_symlink():
        raise Conflict(
            f"output: {output.as_uri()} already exists; batch decisions never overwrite "
            "(choose a new output, or remove it)",
            field="output",
        )


def temporary_output(target: Path, job_id: str) -> Path:
    """Where a batch writes before its output is complete: a hidden sibling of ``target``
    (same file system, so moving it into place is one rename)."""
    return target.with_name(f".{target.name}.costwise-{job_id}.tmp")


def move_into_place(tmp: Path, target: Path) -> None:
    """Rename the finished output into place; Conflict if something is there already."""
    if target.exists() or target.is_symlink():
        raise Conflict(
            f"output: {target.as_uri()} appeared while the batch ran; the decisions were "
            "not moved there (nothing was overwritten)",
            field="output",
        )
    os.rename(tmp, target)  # same directory: one atomic rename


# --------------------------------------------------------------------------------------
# PLACEHOLDER until app.services.datasets (branch i18-train) is merged: no root checks.
def input_dataset(settings: Any, request: Any) -> tuple[str, ds.FileSystemDataset, str]:
    uri = request.input_uri
    fmt = request.input_format or ("csv" if uri.endswith(".csv") else "parquet")
    path = uri.removeprefix("file://")
    if not Path(path).exists():
        raise NotFound(f"input: {uri} does not exist", field="input")
    return fmt, ds.dataset(path, format=fmt), "file"


def output_path(settings: Any, uri: str) -> Path:
    target = Path(uri.removeprefix("file://"))
    check_free(target)
    return target
