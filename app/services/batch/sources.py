"""The batch's input and output references, checked before anything is read or written.

Root checks and reference errors are those of the data-set references
(:mod:`app.services.datasets`); this module adds what a batch needs on top: the input's
partitions with their row counts, column checks (present, numeric where numbers are
needed), and the output directory (``file://`` under an allowed root, not there yet).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pyarrow as pa

from app.errors import Conflict, InvalidArgument
from app.services.batch.parts import Part
from app.services.common.inputs import check_text
from app.services.datasets import DatasetReader, DatasetRef, OpenedDataset

__all__ = [
    "check_columns",
    "move_into_place",
    "open_input",
    "output_path",
    "part_file",
    "parts_of",
    "temporary_output",
]


def _numeric(t: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_boolean(t)
        or pa.types.is_null(t)
    )


def check_columns(
    schema: pa.Schema,
    names: list[str],
    field: str,
    *,
    numeric: bool,
    what: str,
    show: bool = True,
) -> None:
    """Each of ``names`` is a column of ``schema`` (and numeric when ``numeric``); the
    error lists the input's columns only when ``show`` (a local input)."""
    for name in names:
        check_text(name, field)  # Arrow encodes a looked-up name as UTF-8
        index = schema.get_field_index(name)
        if index < 0:
            shown = ", ".join(repr(n) for n in schema.names[:20])
            more = " ..." if len(schema.names) > 20 else ""
            listed = f"its columns are [{shown}{more}]" if show else f"it has {len(schema)} columns"
            raise InvalidArgument(
                f"{field}: the input has no column {name!r} ({what}); {listed}",
                field=field,
            )
        t = schema.field(index).type
        if numeric and not _numeric(t):
            raise InvalidArgument(
                f"{field}: input column {name!r} ({what}) holds {t} values; expected numbers "
                "(integers, floats or booleans; null for missing)",
                field=field,
            )


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


def open_input(
    reader: DatasetReader, uri: str, fmt: str | None, features: list[str]
) -> OpenedDataset:
    """The checked input (roots, existence, format, numeric feature columns: errors name
    ``input.uri`` / ``input.format`` / ``input.columns``)."""
    given = {"uri": uri} if fmt is None else {"uri": uri, "format": fmt}
    ref = replace(DatasetRef.from_mapping(given, field="input"), columns=tuple(features))
    return reader.open(ref, field="input")


def parts_of(opened: OpenedDataset) -> list[Part]:
    """The input's files in order, with their first row and row count when known (Parquet
    footers), as references a worker can open again (``file://``, or ``s3://`` and the
    like for the objects of a remote directory)."""
    if len(opened.files) <= 1:
        return [Part(opened.ref.uri, 0, opened.num_rows)]
    parts: list[Part] = []
    first = 0
    for uri, rows in opened.file_parts():  # a directory: local, or objects (s3://...)
        parts.append(Part(uri, first, rows))
        first += rows or 0
    return parts


def output_path(reader: DatasetReader, uri: str) -> Path:
    """The output directory: ``file://`` under an allowed root (403 otherwise), in an
    existing directory, and not there yet (409)."""
    target = Path(reader.resolve_local(uri, field="output.uri"))
    if not target.parent.is_dir():
        raise InvalidArgument(
            f"output.uri: the directory {target.parent.as_uri()} does not exist; the output "
            "is created inside an existing directory",
            field="output.uri",
        )
    check_free(target)
    return target
