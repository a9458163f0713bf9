"""A dataset reference as the caller writes it: its JSON form checked, its format told.

``{"uri": ..., "format": "parquet"|"csv", "label_column": ..., "columns": [...]}``:
:meth:`DatasetRef.from_mapping` checks the shape (nothing is opened here) and names the
wrong key as ``<field>.<key>`` in its :class:`~app.errors.InvalidArgument`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from app.errors import InvalidArgument

__all__ = ["FORMATS", "DatasetRef", "Format", "infer_format"]

Format = Literal["parquet", "csv"]
FORMATS: tuple[str, ...] = ("parquet", "csv")
_SUFFIX_FORMAT = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".parq": "parquet",
    ".csv": "csv",
    ".csv.gz": "csv",
    ".csv.bz2": "csv",
}


def _field(name: str, prefix: str) -> str:
    return f"{prefix}.{name}" if prefix else name


@dataclass(frozen=True)
class DatasetRef:
    """A dataset reference as the service sees it (validated shape, not yet opened).

    ``format`` is inferred from the URI's suffix when absent (a directory, or a URI
    without a known suffix, needs it). ``label_column`` is for training only;
    ``columns`` (optional) are the feature columns, in this order.
    """

    uri: str
    format: Format
    label_column: str | None = None
    columns: tuple[str, ...] | None = None

    @classmethod
    def from_mapping(
        cls, value: Mapping[str, Any], *, field: str = "dataset", need_label: bool = False
    ) -> DatasetRef:
        """Build and check a reference from its JSON form; errors name ``field.<key>``."""
        if not isinstance(value, Mapping):
            raise InvalidArgument(f"{field} must be an object with a uri", field=field)
        unknown = sorted(set(value) - {"uri", "format", "label_column", "columns"})
        if unknown:
            raise InvalidArgument(
                f"{field}: unknown key(s) {unknown}; expected uri, format, label_column, columns",
                field=_field(unknown[0], field),
            )
        uri = value.get("uri")
        if not isinstance(uri, str) or not uri.strip() or "\x00" in uri:
            raise InvalidArgument(
                f"{field}.uri must be a non-empty string (file:// path or URL)",
                field=_field("uri", field),
            )
        fmt = value.get("format")
        if fmt is None:
            fmt = infer_format(uri)
            if fmt is None:
                raise InvalidArgument(
                    f"{field}.format is needed: the format of {uri!r} cannot be told from "
                    f"its suffix (expected one of {', '.join(FORMATS)})",
                    field=_field("format", field),
                )
        if fmt not in FORMATS:
            raise InvalidArgument(
                f"{field}.format must be one of {', '.join(FORMATS)}, got {fmt!r}",
                field=_field("format", field),
            )
        label = value.get("label_column")
        if label is not None and (not isinstance(label, str) or not label):
            raise InvalidArgument(
                f"{field}.label_column must be a non-empty string",
                field=_field("label_column", field),
            )
        if need_label and label is None:
            raise InvalidArgument(
                f"{field}.label_column is required to train (the column of the labels)",
                field=_field("label_column", field),
            )
        cols = value.get("columns")
        columns: tuple[str, ...] | None = None
        if cols is not None:
            if (
                not isinstance(cols, Sequence)
                or isinstance(cols, str)
                or not cols
                or not all(isinstance(c, str) and c for c in cols)
            ):
                raise InvalidArgument(
                    f"{field}.columns must be a non-empty list of column names",
                    field=_field("columns", field),
                )
            if len(set(cols)) != len(cols):
                raise InvalidArgument(
                    f"{field}.columns names a column twice", field=_field("columns", field)
                )
            if label is not None and label in cols:
                raise InvalidArgument(
                    f"{field}.columns must not include the label column {label!r}",
                    field=_field("columns", field),
                )
            columns = tuple(cols)
        return cls(
            uri=uri.strip(),
            format="csv" if fmt == "csv" else "parquet",
            label_column=label,
            columns=columns,
        )

    def to_mapping(self) -> dict[str, Any]:
        """JSON form (as stored in a job's payload)."""
        out: dict[str, Any] = {"uri": self.uri, "format": self.format}
        if self.label_column is not None:
            out["label_column"] = self.label_column
        if self.columns is not None:
            out["columns"] = list(self.columns)
        return out


def infer_format(uri: str) -> str | None:
    """``parquet`` / ``csv`` from the URI's suffix, or None when it does not tell."""
    try:
        path = urlsplit(uri).path.lower().rstrip("/")
    except ValueError:  # not a URI at all: the access check says so
        return None
    for suffix, fmt in sorted(_SUFFIX_FORMAT.items(), key=lambda kv: -len(kv[0])):
        if path.endswith(suffix):
            return fmt
    return None
