"""Datasets by reference: open a file or URL the caller names, check it, read it in batches.

A *dataset reference* names data the service reads itself instead of receiving it in
the request body: ``{"uri": ..., "format": "parquet"|"csv", "label_column": ...,
"columns": [...]}``.

* ``file://`` URIs (or a bare absolute path) must resolve (``os.path.realpath``, so
  symlinks are followed) to a path under one of the operator's ``COSTWISE_DATA_ROOTS``;
  a path with a ``..`` segment, outside every root, or a symlink leading out of a root
  is refused with :class:`~app.errors.Forbidden` (403) and never opened. A directory
  (a partitioned Parquet data set, Hive-style ``key=value`` folders allowed) is checked
  file by file the same way.
* Other schemes (``http``, ``https``, and ``s3``/``gcs``/... when their fsspec package
  is installed) are read through fsspec and pyarrow, if ``COSTWISE_DATA_PROTOCOLS``
  allows the scheme.

Opening (:meth:`DatasetReader.open`) checks everything that can be checked before
reading a row: the file exists, it is in the named format, the label column and the
named columns exist, and the feature columns are numbers. Each failure is an
:class:`~app.errors.InvalidArgument` (422) naming the field ``dataset.uri``,
``dataset.format``, ``dataset.label_column`` or ``dataset.columns``; a value that only
turns out not to be a number while reading (CSV) raises the same error then.

Reading is bounded in memory: :meth:`OpenedDataset.batches` yields
``pyarrow.RecordBatch`` objects of at most ``batch_size`` rows with a small read-ahead
(the largest unit pyarrow decodes at once is one Parquet row group or one CSV block);
:meth:`OpenedDataset.feature_blocks` turns them into ``(X, y)`` blocks, ``X`` a
C-contiguous float32 array (missing values as NaN). A progress callback receives the
number of rows read so far after every batch.

pyarrow is imported lazily (importing it takes about a second), so a service that never
reads a reference never pays for it.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlsplit

import numpy as np

from app.errors import Forbidden, InvalidArgument

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    import pyarrow.dataset as pads

__all__ = [
    "DatasetRef",
    "DatasetReader",
    "OpenedDataset",
    "DEFAULT_BATCH_ROWS",
    "FORMATS",
]

Format = Literal["parquet", "csv"]
FORMATS: tuple[str, ...] = ("parquet", "csv")
DEFAULT_BATCH_ROWS = 65_536
_SUFFIX_FORMAT = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".parq": "parquet",
    ".csv": "csv",
    ".csv.gz": "csv",
    ".csv.bz2": "csv",
}
ProgressCallback = Callable[[int], None]


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
    path = urlsplit(uri).path.lower().rstrip("/")
    for suffix, fmt in sorted(_SUFFIX_FORMAT.items(), key=lambda kv: -len(kv[0])):
        if path.endswith(suffix):
            return fmt
    return None


def _is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass
class OpenedDataset:
    """A checked, opened reference: schema, sizes and bounded-memory readers.

    Attributes
    ----------
    ref : DatasetRef
    schema : pyarrow.Schema
        Schema of the whole data set (CSV: inferred from its first block).
    feature_columns : list of str
        The feature columns, in order (``ref.columns``, else every column but the label).
    num_rows : int or None
        Row count when known without reading the data (Parquet metadata); None for CSV.
    size_bytes : int or None
        Total size of the files when the file system tells it.
    files : list of str
        The files read (resolved paths for ``file://``).
    """

    ref: DatasetRef
    schema: pa.Schema
    feature_columns: list[str]
    num_rows: int | None
    size_bytes: int | None
    files: list[str]
    _dataset: pads.Dataset
    _field_prefix: str = "dataset"

    def batches(
        self,
        *,
        columns: Sequence[str] | None = None,
        batch_size: int = DEFAULT_BATCH_ROWS,
        progress: ProgressCallback | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Record batches of at most ``batch_size`` rows of ``columns`` (default: the
        features then the label), with a read-ahead of two batches and one file.

        Reading errors (a CSV cell that is not a number in a numeric column, a file that
        vanished, a truncated file) raise :class:`~app.errors.InvalidArgument`.
        """
        import pyarrow as pa

        if columns is None:
            columns = list(self.feature_columns)
            if self.ref.label_column is not None:
                columns.append(self.ref.label_column)
        rows = 0
        it = self._scan(list(columns), int(batch_size))
        while True:
            try:
                batch = next(it)
            except StopIteration:
                return
            except (pa.ArrowException, OSError, ValueError) as exc:
                raise InvalidArgument(
                    f"{self._field_prefix}.uri: reading {self.ref.uri!r} failed after "
                    f"{rows} rows: {_short(exc)}",
                    field=f"{self._field_prefix}.uri",
                ) from None
            if batch.num_rows == 0:
                continue
            rows += batch.num_rows
            yield batch
            if progress is not None:
                progress(rows)

    def _scan(self, columns: list[str], batch_size: int) -> Iterator[pa.RecordBatch]:
        """The record batches of the data set, in order.

        Parquet is scanned one row group at a time: the data set scanner decodes several
        row groups ahead of the reader whatever its read-ahead settings (measured on the
        benchmark's 3,000,000 x 50 file with 250,000-row groups: up to 588 MiB held by
        pyarrow, 199 MiB one row group at a time), and that memory adds to the codes'
        while a large data set trains.
        """
        import pyarrow as pa
        import pyarrow.dataset as pads

        # malloc, not pyarrow's own pool: what a read frees goes back to the allocator
        # that numpy uses (the training that follows), not kept by an arena
        pool = pa.system_memory_pool()
        if self.ref.format == "parquet" and isinstance(self._dataset, pads.FileSystemDataset):
            schema = self._dataset.schema
            for fragment in self._dataset.get_fragments():
                for part in fragment.split_by_row_group():
                    yield from pads.Scanner.from_fragment(
                        part, schema=schema, columns=columns, batch_size=batch_size,
                        batch_readahead=1, fragment_readahead=1, use_threads=True,
                        memory_pool=pool,
                    ).to_batches()  # fmt: skip
            return
        scanner = self._dataset.scanner(
            columns=columns,
            batch_size=batch_size,
            batch_readahead=2,
            fragment_readahead=1,
            use_threads=True,
            memory_pool=pool,
        )
        yield from scanner.to_batches()

    def feature_blocks(
        self,
        *,
        batch_size: int = DEFAULT_BATCH_ROWS,
        progress: ProgressCallback | None = None,
    ) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        """``(X, y)`` blocks: ``X`` float32 (rows, features) C-contiguous with NaN for
        missing values; ``y`` the label column as numpy (None without a label column).

        A missing label raises :class:`~app.errors.InvalidArgument` naming the row.
        """
        start = 0
        for batch in self.batches(batch_size=batch_size, progress=progress):
            X = batch_to_float32(batch, self.feature_columns, field=self._field_prefix)
            y = None
            if self.ref.label_column is not None:
                y = label_array(
                    batch.column(self.ref.label_column),
                    field=f"{self._field_prefix}.label_column",
                    first_row=start,
                )
            start += batch.num_rows
            yield X, y


def batch_to_float32(
    batch: pa.RecordBatch, columns: Sequence[str], *, field: str = "dataset"
) -> np.ndarray:
    """The named numeric columns of ``batch`` as one float32 (rows, columns) array;
    nulls become NaN. A non-numeric column raises InvalidArgument naming it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = np.empty((batch.num_rows, len(columns)), dtype=np.float32)
    for j, name in enumerate(columns):
        col = batch.column(name)
        if not _is_numeric(col.type):
            raise InvalidArgument(
                f"{field}.columns: column {name!r} holds {col.type}, expected numbers",
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


def _is_numeric(t: pa.DataType) -> bool:
    import pyarrow as pa

    return bool(
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_boolean(t)
        or pa.types.is_null(t)
        or pa.types.is_decimal(t)
    )


def _network_cause(exc: BaseException) -> BaseException | None:
    """The connection error behind fsspec's FileNotFoundError, if there is one (fsspec's
    http file system reports a refused connection as a missing file)."""
    seen = exc.__cause__ or exc.__context__
    while seen is not None:
        if isinstance(seen, ConnectionError | TimeoutError) or "Connect" in type(seen).__name__:
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


class DatasetReader:
    """Opens dataset references under the operator's policy (roots and protocols).

    Parameters
    ----------
    data_roots : sequence of str
        Directories ``file://`` references may read; empty refuses them all.
    protocols : sequence of str
        URI schemes allowed (``file``, ``http``, ``https``, ``s3``, ...).
    timeout : float
        Seconds to wait for a remote server (connect and each read).
    """

    def __init__(
        self,
        data_roots: Sequence[str],
        protocols: Sequence[str] = ("file", "http", "https"),
        *,
        timeout: float = 30.0,
    ) -> None:
        self._roots = [os.path.realpath(os.path.expanduser(r)) for r in data_roots if r]
        self._protocols = {p.lower().strip() for p in protocols if p.strip()}
        self._timeout = float(timeout)

    @classmethod
    def from_settings(cls, settings: Any) -> DatasetReader:
        """Build from :class:`app.settings.Settings`."""
        return cls(settings.data_roots, settings.data_protocols)

    # -- where ---------------------------------------------------------------------
    def resolve_local(self, uri: str, *, field: str = "dataset.uri") -> str:
        """The real path of a ``file://`` URI (or bare absolute path) under a root.

        Raises Forbidden (403) for ``..``, a path outside every root, a symlink out of a
        root, or when no root is configured. Does not check that the path exists.
        """
        parts = urlsplit(uri)
        if parts.scheme and parts.scheme != "file":
            raise InvalidArgument(f"{field}: not a file:// URI: {uri!r}", field=field)
        if parts.scheme == "file" and parts.netloc not in ("", "localhost"):
            raise Forbidden(
                f"{field}: file:// URIs name a local path (file:///path), got host "
                f"{parts.netloc!r}",
                field=field,
            )
        path = unquote(parts.path) if parts.scheme else uri
        if "\x00" in path:
            raise InvalidArgument(f"{field}: the path holds a NUL character", field=field)
        if not posixpath.isabs(path):
            raise InvalidArgument(
                f"{field}: a file path must be absolute (file:///path/to/data.parquet), "
                f"got {uri!r}",
                field=field,
            )
        if ".." in path.split("/"):
            raise Forbidden(f"{field}: a path with '..' is refused: {uri!r}", field=field)
        if not self._roots:
            raise Forbidden(
                f"{field}: reading local files is off (no COSTWISE_DATA_ROOTS configured)",
                field=field,
            )
        real = os.path.realpath(path)
        if not any(_is_under(real, root) for root in self._roots):
            raise Forbidden(
                f"{field}: {uri!r} is not under an allowed data root "
                "(COSTWISE_DATA_ROOTS; symlinks are followed)",
                field=field,
            )
        return real

    def _scheme(self, uri: str, field: str) -> str:
        scheme = urlsplit(uri).scheme.lower()
        if scheme == "" and uri.startswith("/"):
            scheme = "file"
        if not scheme:
            raise InvalidArgument(
                f"{field}: expected a URI (file:///path, https://...), got {uri!r}",
                field=field,
            )
        if scheme not in self._protocols:
            raise Forbidden(
                f"{field}: the {scheme}:// scheme is not allowed here "
                f"(COSTWISE_DATA_PROTOCOLS allows {', '.join(sorted(self._protocols))})",
                field=field,
            )
        return scheme

    # -- open ----------------------------------------------------------------------
    def open(self, ref: DatasetRef, *, field: str = "dataset") -> OpenedDataset:
        """Check and open ``ref``; see the module docstring for every refusal."""
        import pyarrow as pa
        import pyarrow.dataset as pads

        ufield = f"{field}.uri"
        scheme = self._scheme(ref.uri, ufield)
        if scheme == "file":
            path = self.resolve_local(ref.uri, field=ufield)
            filesystem = None
            if not os.path.exists(path):
                raise InvalidArgument(
                    f"{ufield}: no such file or directory: {ref.uri!r}", field=ufield
                )
            source: str | list[str] = path
            if os.path.isdir(path):
                source = self._local_files(path, ref, ufield)
        else:
            filesystem, source = self._remote(ref.uri, scheme, ufield)
        fmt = self._file_format(ref)
        try:
            dataset = pads.dataset(
                source,
                format=fmt,
                filesystem=filesystem,
                partitioning="hive"
                if isinstance(source, list) and ref.format == "parquet"
                else None,
                partition_base_dir=path if scheme == "file" and isinstance(source, list) else None,
            )
            schema = dataset.schema
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise InvalidArgument(
                f"{ufield}: {ref.uri!r} is not a readable {ref.format} data set: {_short(exc)}",
                field=ufield,
            ) from None
        files = list(dataset.files) if hasattr(dataset, "files") else []
        features = self._check_columns(ref, schema, field)
        if ref.format == "csv":
            # Types were inferred from the first block; read every numeric feature as
            # float64 so that a column of integers that later holds 1.5 reads, and a cell
            # that is not a number fails naming its column (booleans stay booleans).
            types = {
                name: pa.float64()
                for name in features
                if not pa.types.is_boolean(schema.field(name).type)
            }
            try:
                dataset = pads.dataset(
                    source, format=self._file_format(ref, types), filesystem=filesystem
                )
                schema = dataset.schema
            except (pa.ArrowException, OSError, ValueError) as exc:
                raise InvalidArgument(
                    f"{ufield}: {ref.uri!r} is not a readable csv data set: {_short(exc)}",
                    field=ufield,
                ) from None
        num_rows: int | None = None
        if ref.format == "parquet":
            try:
                num_rows = int(dataset.count_rows())
            except (pa.ArrowException, OSError, ValueError) as exc:
                raise InvalidArgument(
                    f"{ufield}: {ref.uri!r} is not a readable parquet data set: {_short(exc)}",
                    field=ufield,
                ) from None
        size = self._size(files, filesystem)
        return OpenedDataset(ref, schema, features, num_rows, size, files, dataset, field)

    def _local_files(self, directory: str, ref: DatasetRef, field: str) -> list[str]:
        """Every data file under ``directory`` (hidden and ``_``-prefixed ones skipped, as
        pyarrow does), each checked to stay under a root after resolving symlinks."""
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(directory, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")))
            for d in dirnames:
                full = os.path.join(dirpath, d)
                if os.path.islink(full):
                    self.resolve_local(os.path.realpath(full), field=field)
            for name in sorted(filenames):
                if name.startswith((".", "_")):
                    continue
                full = os.path.join(dirpath, name)
                real = os.path.realpath(full)
                if not any(_is_under(real, root) for root in self._roots):
                    raise Forbidden(
                        f"{field}: {full!r} is a symlink out of the allowed data roots",
                        field=field,
                    )
                out.append(full)
        # Symlinked sub-directories are not walked (followlinks=False): refuse them above,
        # read only regular trees.
        if not out:
            raise InvalidArgument(
                f"{field}: the directory {ref.uri!r} holds no data files", field=field
            )
        return out

    def _remote(self, uri: str, scheme: str, field: str) -> tuple[Any, str]:
        import fsspec
        from pyarrow.fs import FSSpecHandler, PyFileSystem

        try:
            if scheme in ("http", "https"):
                import aiohttp

                fs = fsspec.filesystem(
                    scheme,
                    client_kwargs={
                        "timeout": aiohttp.ClientTimeout(
                            total=None, sock_connect=self._timeout, sock_read=self._timeout
                        )
                    },
                )
            else:
                fs = fsspec.filesystem(scheme)
        except (ImportError, ValueError) as exc:
            raise InvalidArgument(
                f"{field}: the {scheme}:// scheme needs its fsspec package installed "
                f"({_short(exc)})",
                field=field,
            ) from None
        path = uri if scheme in ("http", "https") else fs._strip_protocol(uri)
        try:
            info = fs.info(path)
        except FileNotFoundError as exc:
            cause = _network_cause(exc)
            if cause is not None:
                raise InvalidArgument(
                    f"{field}: could not reach {uri!r}: {_short(cause)}", field=field
                ) from None
            raise InvalidArgument(f"{field}: no such file: {uri!r}", field=field) from None
        except Exception as exc:  # network errors of any fsspec backend
            raise InvalidArgument(
                f"{field}: could not reach {uri!r}: {_short(exc) or type(exc).__name__}",
                field=field,
            ) from None
        if info.get("type") == "directory" and scheme in ("http", "https"):
            raise InvalidArgument(
                f"{field}: an http(s) reference must name one file, got {uri!r}", field=field
            )
        return PyFileSystem(FSSpecHandler(fs)), path

    @staticmethod
    def _file_format(ref: DatasetRef, column_types: dict[str, Any] | None = None) -> Any:
        import pyarrow.dataset as pads

        if ref.format == "parquet":
            # pre_buffer=False: the scanner otherwise buffers the file's row groups ahead
            # of the reader (measured: 627 MiB held by pyarrow for a 1,000,000 x 50 file,
            # 97 MiB without: one row group)
            options = pads.ParquetFragmentScanOptions(pre_buffer=False)
            return pads.ParquetFileFormat(default_fragment_scan_options=options)
        import pyarrow.csv as pacsv

        # Missing-value spellings as in the inline CSV parser (app.services.inputs).
        convert = pacsv.ConvertOptions(
            null_values=["", "NA", "na", "NaN", "nan", "null", "NULL", "None", "none", "?"],
            strings_can_be_null=True,
            column_types=column_types or {},
        )
        return pads.CsvFileFormat(
            convert_options=convert,
            read_options=pacsv.ReadOptions(block_size=4 << 20),
        )

    @staticmethod
    def _check_columns(ref: DatasetRef, schema: pa.Schema, field: str) -> list[str]:
        names = list(schema.names)
        if ref.label_column is not None and ref.label_column not in names:
            raise InvalidArgument(
                f"{field}.label_column: no column {ref.label_column!r} in the data set "
                f"(columns: {', '.join(names[:20])}{', ...' if len(names) > 20 else ''})",
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
            if not _is_numeric(t):
                raise InvalidArgument(
                    f"{field}.columns: column {name!r} holds {t}, expected numbers",
                    field=f"{field}.columns",
                )
        return features

    @staticmethod
    def _size(files: list[str], filesystem: Any) -> int | None:
        total = 0
        try:
            for f in files:
                if filesystem is None:
                    total += os.path.getsize(f)
                else:
                    total += int(filesystem.get_file_info(f).size or 0)
        except (OSError, ValueError):
            return None
        return total
