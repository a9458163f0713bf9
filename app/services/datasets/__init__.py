"""Datasets by reference: open a file or URL the caller names, check it, read it in batches.

A *dataset reference* names data the service reads itself instead of receiving it in
the request body: ``{"uri": ..., "format": "parquet"|"csv", "label_column": ...,
"columns": [...]}``. The package, by concept:

* :mod:`~app.services.datasets.references`: the reference's JSON form checked
  (:class:`DatasetRef`) and its format told from the suffix;
* :mod:`~app.services.datasets.access`: where it may read, the operator's
  ``COSTWISE_DATA_ROOTS`` (``file://``; ``..``, paths outside every root and symlinks out
  of a root are 403, never opened) and ``COSTWISE_DATA_PROTOCOLS`` (default ``file``;
  ``http``, ``https``, and ``s3``, ... through fsspec when its package is installed);
* :mod:`~app.services.datasets.fetching`, :mod:`~app.services.datasets.connections` and
  :mod:`~app.services.datasets.addresses`:
  an ``http(s)`` reference (only when ``COSTWISE_DATA_PROTOCOLS`` lists the scheme) is
  fetched into a temporary file, every address checked before connecting (loopback,
  private, link-local, this machine: 403 unless ``COSTWISE_DATA_ALLOW_HOSTS`` names it),
  redirects followed and checked here, bounded by a total deadline and a size;
* :mod:`~app.services.datasets.reader`: :class:`DatasetReader` opens a reference,
  checking everything that can be checked before a row is read (422 naming
  ``dataset.uri``, ``dataset.format``, ``dataset.label_column`` or ``dataset.columns``);
* :mod:`~app.services.datasets.columns`: the column checks and the conversion of a
  record batch to float32 features and labels;
* :mod:`~app.services.datasets.reading`: :class:`OpenedDataset` reads in bounded memory
  (record batches of at most ``batch_size`` rows, a small read-ahead, progress per batch);
* :mod:`~app.services.datasets.read_errors`: how a failed read is told.

pyarrow is imported lazily (importing it takes about a second), so a service that never
reads a reference never pays for it.
"""

from app.services.datasets.columns import batch_to_float32, label_array
from app.services.datasets.fetching import FetchPolicy
from app.services.datasets.reader import DatasetReader
from app.services.datasets.reading import DEFAULT_BATCH_ROWS, OpenedDataset
from app.services.datasets.references import FORMATS, DatasetRef, infer_format

__all__ = [
    "DatasetRef",
    "DatasetReader",
    "FetchPolicy",
    "OpenedDataset",
    "DEFAULT_BATCH_ROWS",
    "FORMATS",
    "batch_to_float32",
    "infer_format",
    "label_array",
]
