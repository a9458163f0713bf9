"""Reading an opened reference in bounded memory.

:meth:`OpenedDataset.batches` yields ``pyarrow.RecordBatch`` objects of at most
``batch_size`` rows with a small read-ahead (the largest unit pyarrow decodes at once is
one Parquet row group or one CSV block); :meth:`OpenedDataset.feature_blocks` turns them
into ``(X, y)`` blocks, ``X`` a C-contiguous float32 array (missing values as NaN). A
progress callback receives the number of rows read so far after every batch.
:func:`file_format` holds the pyarrow format options both readers rely on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

from app.errors import InvalidArgument
from app.services.datasets.columns import batch_to_float32, label_array
from app.services.datasets.read_errors import failure_reason
from app.services.datasets.references import DatasetRef

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    import pyarrow.dataset as pads

__all__ = ["DEFAULT_BATCH_ROWS", "OpenedDataset", "ProgressCallback", "file_format"]

DEFAULT_BATCH_ROWS = 65_536
ProgressCallback = Callable[[int], None]


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
    remote: bool = False
    """Read from elsewhere than a local file: errors then never quote the data."""
    _kept: Any = None  # a fetched copy (app.services.datasets.fetching.Fetched), kept alive

    def partition_keys(self) -> list[dict[str, Any]]:
        """Per file of :attr:`files`, the Hive partition keys its folders add as columns
        (``day=3/`` -> ``{"day": 3}``; ``{}`` outside such folders), as the reader types
        them."""
        import pyarrow.dataset as pads

        keys = {
            f.path: pads.get_partition_keys(f.partition_expression)
            for f in self._dataset.get_fragments()
            if hasattr(f, "path")
        }
        return [dict(keys.get(path, {})) for path in self.files]

    def column_label(self, name: str) -> str:
        """How an error names column ``name``: quoted, unless it is a header name of a
        remote file the caller did not name (then its position in the file)."""
        named = self.ref.columns or ()
        if not self.remote or name in named or name == self.ref.label_column:
            return repr(name)
        return f"#{self.schema.get_field_index(name) + 1} (by position in the file)"

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
                raise self._read_failed(f"failed after {rows} rows", exc) from None
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

    def file_parts(self) -> list[tuple[str, int | None]]:
        """Each file of the data set, in order, as a URI that opens it again and its row
        count when its Parquet footer tells (None for CSV): ``file://`` URIs for local
        files, ``<scheme>://bucket/key`` for the objects of a remote directory (``s3://``).

        Reading the footers of remote objects is one small ranged read each; a failure is
        an :class:`~app.errors.InvalidArgument` naming ``<field>.uri``.
        """
        import pyarrow as pa

        scheme = urlsplit(self.ref.uri).scheme.lower()
        out: list[tuple[str, int | None]] = []
        try:
            for fragment in self._dataset.get_fragments():
                path = str(fragment.path)
                uri = Path(path).as_uri() if scheme in ("", "file") else f"{scheme}://{path}"
                rows = fragment.metadata.num_rows if self.ref.format == "parquet" else None
                out.append((uri, rows))
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise self._read_failed("failed reading its Parquet footers", exc) from None
        return out

    def _read_failed(self, what: str, exc: BaseException) -> InvalidArgument:
        field = f"{self._field_prefix}.uri"
        reason = failure_reason(exc, self.ref.format, remote=self.remote)
        return InvalidArgument(f"{field}: reading {self.ref.uri!r} {what}: {reason}", field=field)

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
            X = batch_to_float32(
                batch, self.feature_columns, field=self._field_prefix, label=self.column_label
            )
            y = None
            if self.ref.label_column is not None:
                y = label_array(
                    batch.column(self.ref.label_column),
                    field=f"{self._field_prefix}.label_column",
                    first_row=start,
                )
            start += batch.num_rows
            yield X, y


def file_format(ref: DatasetRef, column_types: dict[str, Any] | None = None) -> Any:
    """The pyarrow file format of ``ref`` (CSV: with ``column_types`` forced)."""
    import pyarrow.dataset as pads

    if ref.format == "parquet":
        # pre_buffer=False: the scanner otherwise buffers the file's row groups ahead
        # of the reader (measured: 627 MiB held by pyarrow for a 1,000,000 x 50 file,
        # 97 MiB without: one row group)
        options = pads.ParquetFragmentScanOptions(pre_buffer=False)
        return pads.ParquetFileFormat(default_fragment_scan_options=options)
    import pyarrow.csv as pacsv

    # Missing-value spellings as in the inline CSV parser (app.services.common.inputs).
    convert = pacsv.ConvertOptions(
        null_values=["", "NA", "na", "NaN", "nan", "null", "NULL", "None", "none", "?"],
        strings_can_be_null=True,
        column_types=column_types or {},
    )
    return pads.CsvFileFormat(
        convert_options=convert,
        read_options=pacsv.ReadOptions(block_size=4 << 20),
    )
