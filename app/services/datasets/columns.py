"""The columns of a data set: checked against the reference, converted to numpy.

:func:`check_columns` checks, before a row is read, that the label column and the named
feature columns exist and that the features are numbers (each failure an
:class:`~app.errors.InvalidArgument` naming ``<field>.label_column`` or
``<field>.columns``); :func:`batch_to_float32` and :func:`label_array` turn one record
batch into the float32 features (NaN for missing) and the labels, raising the same
errors for what only turns up while reading.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from app.errors import InvalidArgument
from app.services.datasets.references import DatasetRef

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

__all__ = ["batch_to_float32", "check_columns", "is_numeric", "label_array"]


def is_numeric(t: pa.DataType) -> bool:
    """Whether a column of type ``t`` reads as numbers (null, boolean and decimal too)."""
    import pyarrow as pa

    return bool(
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_boolean(t)
        or pa.types.is_null(t)
        or pa.types.is_decimal(t)
    )


def check_columns(
    ref: DatasetRef, schema: pa.Schema, field: str, *, show_names: bool = True
) -> list[str]:
    """The feature columns of ``ref`` in ``schema`` (``ref.columns``, else every column
    but the label), once the label and every feature are found and the features are
    numbers. ``show_names`` False (a remote file): the errors list none of the file's
    column names, and name a column the caller did not name by its position."""
    names = list(schema.names)
    if ref.label_column is not None and ref.label_column not in names:
        listed = (
            f" (columns: {', '.join(names[:20])}{', ...' if len(names) > 20 else ''})"
            if show_names
            else f" ({len(names)} columns)"
        )
        raise InvalidArgument(
            f"{field}.label_column: no column {ref.label_column!r} in the data set{listed}",
            field=f"{field}.label_column",
        )
    if ref.columns is not None:
        missing = [c for c in ref.columns if c not in names]
        if missing:
            raise InvalidArgument(
                f"{field}.columns: no column {missing[0]!r} in the data set",
                field=f"{field}.columns",
            )
        features = list(ref.columns)
    else:
        features = [n for n in names if n != ref.label_column]
    if not features:
        raise InvalidArgument(
            f"{field}.columns: the data set has no feature column", field=f"{field}.columns"
        )
    for name in features:
        t = schema.field(name).type
        if not is_numeric(t):
            shown = (
                repr(name)
                if show_names or ref.columns is not None
                else f"#{names.index(name) + 1} (by position in the file)"
            )
            raise InvalidArgument(
                f"{field}.columns: column {shown} holds {t}, expected numbers",
                field=f"{field}.columns",
            )
    return features


def batch_to_float32(
    batch: pa.RecordBatch,
    columns: Sequence[str],
    *,
    field: str = "dataset",
    label: Callable[[str], str] = repr,
) -> np.ndarray:
    """The named numeric columns of ``batch`` as one float32 (rows, columns) array;
    nulls become NaN. A non-numeric column raises InvalidArgument naming it
    (``label(name)``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = np.empty((batch.num_rows, len(columns)), dtype=np.float32)
    for j, name in enumerate(columns):
        col = batch.column(name)
        if not is_numeric(col.type):
            raise InvalidArgument(
                f"{field}.columns: column {label(name)} holds {col.type}, expected numbers",
                field=f"{field}.columns",
            )
        if pa.types.is_boolean(col.type):
            col = pc.cast(col, pa.uint8())
        values = col.to_numpy(zero_copy_only=False)
        if values.dtype.kind == "O":  # pragma: no cover - numeric types never give objects
            values = values.astype(np.float64)
        out[:, j] = values  # nulls arrive as NaN for float, as float NaN after cast
        if col.null_count and values.dtype.kind in "iu":
            out[~np.asarray(col.is_valid()), j] = np.nan
    return out


def label_array(col: pa.Array, *, field: str, first_row: int = 0) -> np.ndarray:
    """Labels of one batch as numpy (numbers, or str for a string column); a null raises
    InvalidArgument naming the (0-based) row."""
    import pyarrow as pa

    if col.null_count:
        bad = int(np.flatnonzero(~np.asarray(col.is_valid()))[0])
        raise InvalidArgument(
            f"{field}: the label is missing in row {first_row + bad}", field=field
        )
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    values = col.to_numpy(zero_copy_only=False)
    if values.dtype.kind == "O":
        values = values.astype(str)
    return values
