"""Opening a dataset reference: the policy checked, the file found, its columns checked.

:meth:`DatasetReader.open` checks everything that can be checked before reading a row:
the reference is allowed (:mod:`app.services.datasets.access`), the file exists, it is in
the named format, the label column and the named columns exist, and the feature columns
are numbers (:mod:`app.services.datasets.columns`). An ``http(s)`` reference is first
fetched into a temporary file (:mod:`app.services.datasets.fetching`), kept while the
opened data set lives; the errors about a remote file never quote what it holds. Each failure is an
:class:`~app.errors.InvalidArgument` (422) naming the field ``dataset.uri``,
``dataset.format``, ``dataset.label_column`` or ``dataset.columns``, or a
:class:`~app.errors.Forbidden` (403) for a reference outside the policy. The result, an
:class:`~app.services.datasets.reading.OpenedDataset`, reads in bounded memory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from app.errors import InvalidArgument
from app.services.datasets.access import DataAccess
from app.services.datasets.columns import check_columns
from app.services.datasets.fetching import Fetched, FetchPolicy
from app.services.datasets.read_errors import failure_reason
from app.services.datasets.reading import OpenedDataset, file_format
from app.services.datasets.references import DatasetRef

__all__ = ["DatasetReader"]


def _unreadable(
    ref: DatasetRef, field: str, exc: BaseException, *, remote: bool
) -> InvalidArgument:
    reason = failure_reason(exc, ref.format, remote=remote)
    return InvalidArgument(
        f"{field}: {ref.uri!r} is not a readable {ref.format} data set: {reason}", field=field
    )


def _local_suffix(ref: DatasetRef) -> str:
    """The suffix of a fetched copy: the URL's compression suffix is kept (pyarrow tells
    ``.csv.gz`` from it), else the format's."""
    path = urlsplit(ref.uri).path.lower()
    for suffix in (".csv.gz", ".csv.bz2"):
        if path.endswith(suffix):
            return suffix
    return f".{ref.format}"


class DatasetReader:
    """Opens dataset references under the operator's policy (roots, protocols, how URLs
    are fetched): the parameters are those of
    :class:`~app.services.datasets.access.DataAccess`."""

    def __init__(
        self,
        data_roots: Sequence[str],
        protocols: Sequence[str] = ("file",),
        *,
        fetch: FetchPolicy | None = None,
    ) -> None:
        self.access = DataAccess(data_roots, protocols, fetch=fetch or FetchPolicy())

    @classmethod
    def from_settings(cls, settings: Any) -> DatasetReader:
        """Build from :class:`app.settings.Settings`."""
        return cls(
            settings.data_roots,
            settings.data_protocols,
            fetch=FetchPolicy.from_settings(settings),
        )

    def resolve_local(self, uri: str, *, field: str = "dataset.uri") -> str:
        """The real path of a ``file://`` URI under a root (see
        :meth:`~app.services.datasets.access.DataAccess.resolve_local`)."""
        return self.access.resolve_local(uri, field=field)

    def open(self, ref: DatasetRef, *, field: str = "dataset") -> OpenedDataset:
        """Check and open ``ref``; see the module docstring for every refusal."""
        import pyarrow as pa
        import pyarrow.dataset as pads

        ufield = f"{field}.uri"
        scheme = self.access.scheme(ref.uri, ufield)
        remote = scheme != "file"
        fetched: Fetched | None = None
        if scheme == "file":
            path = self.access.resolve_local(ref.uri, field=ufield)
            filesystem = None
            if not os.path.exists(path):
                raise InvalidArgument(
                    f"{ufield}: no such file or directory: {ref.uri!r}", field=ufield
                )
            source: str | list[str] = path
            if os.path.isdir(path):
                source = self.access.local_files(path, ref.uri, ufield)
        elif scheme in ("http", "https"):
            fetched = self.access.fetch(ref.uri, ufield, _local_suffix(ref))
            filesystem, source = None, fetched.path
        else:
            filesystem, source = self.access.remote(ref.uri, scheme, ufield)
        fmt = file_format(ref)
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
            raise _unreadable(ref, ufield, exc, remote=remote) from None
        files = list(dataset.files) if hasattr(dataset, "files") else []
        features = check_columns(ref, schema, field, show_names=not remote)
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
                    source, format=file_format(ref, types), filesystem=filesystem
                )
                schema = dataset.schema
            except (pa.ArrowException, OSError, ValueError) as exc:
                raise _unreadable(ref, ufield, exc, remote=remote) from None
        num_rows: int | None = None
        if ref.format == "parquet":
            try:
                num_rows = int(dataset.count_rows())
            except (pa.ArrowException, OSError, ValueError) as exc:
                raise _unreadable(ref, ufield, exc, remote=remote) from None
        size: int | None = None
        if fetched is not None:  # the copy is read; the reference names the file
            files, size = [ref.uri], fetched.size
        else:
            size = self._size(files, filesystem)
        return OpenedDataset(
            ref, schema, features, num_rows, size, files, dataset, field, remote, fetched
        )

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
