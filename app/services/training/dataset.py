"""Training data read from a dataset reference, in bounded memory.

:func:`read_training_data` reads an opened reference (:mod:`app.services.datasets`) in
two passes of float32 blocks (``BATCH_ROWS`` rows each):

1. every block is offered to a uniform reservoir sample of ``SAMPLE_ROWS`` rows
   (:class:`models.features.binning.ReservoirSample`), its labels kept, its missing values
   counted and its bytes hashed (the version's data fingerprint);
2. the default algorithm (``auto``) on two classes: the bin edges are found on the
   sample (:meth:`models.features.binning.BinEdges.from_sample`) and every block is binned into a
   uint8 matrix (:class:`models.features.binning.BinnedRows`, one byte per cell) that the
   boosters train on without any float copy (:mod:`models.boosting.prebinned`). Other algorithms
   and multiclass labels: the float matrix is collected instead, under the limits of an
   inline training (COSTWISE_MAX_TRAIN_ROWS, COSTWISE_MAX_CELLS), which already bound
   the first pass (:class:`RowLimit`: reading stops once they are passed).

Memory therefore holds the codes (rows x features bytes), the labels, the sample and a
few blocks, whatever the file's size. Progress is reported as phase ``reading`` (rows
read over twice the row count, when the format tells it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.errors import InvalidArgument, PayloadTooLarge
from app.services.common.inputs import check_classes, check_limits
from app.services.datasets import OpenedDataset
from app.services.training.spec import AUTO, TrainingData, TrainingSpec
from app.settings import Settings
from models.boosting.progress import report
from models.features.binning import BinEdges, BinnedRows, ReservoirSample

__all__ = ["BATCH_ROWS", "SAMPLE_ROWS", "DatasetSummary", "RowLimit", "read_training_data"]

BATCH_ROWS = 65_536
TRIM_ROWS = 1_000_000
"""Every this many rows read, the heap memory freed by the reader is given back to the
system (:func:`release_freed_memory`)."""
SAMPLE_ROWS = 200_000
"""Rows of the reservoir sample the bin edges are found on (at most 255 quantile cut
points per feature: 200,000 rows put about 780 sampled rows between two cuts)."""


@dataclass(frozen=True)
class DatasetSummary:
    """Facts about the rows read, recorded on the version (``data``)."""

    uri: str
    format: str
    n_rows: int
    missing_values: int
    fingerprint: str
    binned: bool


def read_training_data(
    opened: OpenedDataset,
    spec: TrainingSpec,
    settings: Settings,
    *,
    batch_rows: int = BATCH_ROWS,
    sample_rows: int = SAMPLE_ROWS,
) -> TrainingData:
    """Read ``opened`` into :class:`TrainingData` (binned or float, see the module doc).

    Raises PayloadTooLarge over COSTWISE_MAX_DATASET_ROWS / COSTWISE_MAX_FEATURES (or,
    unbinned, the inline limits) and InvalidArgument for bad values (an infinite value,
    a missing label, a file that changed between the two passes).
    """
    names = list(opened.feature_columns)
    d = len(names)
    field = "dataset"
    if d > settings.max_features:
        raise PayloadTooLarge(
            f"{field}.columns: {d} features is over the limit of {settings.max_features} "
            "(setting COSTWISE_MAX_FEATURES)",
            field=f"{field}.columns",
            limit=settings.max_features,
        )
    limit = RowLimit(settings, d, spec.algorithm_name)
    known = opened.num_rows
    if known is not None:
        limit.check(known)
    total = 0 if known is None else 2 * known
    seed = 0 if spec.random_state is None else int(spec.random_state)
    sample = ReservoirSample(sample_rows, d, random_state=seed)
    labels: list[np.ndarray] = []
    missing = 0
    digest = hashlib.sha256()
    rows = 0
    report(0, total, "reading")
    for X, y in opened.feature_blocks(batch_size=batch_rows):
        _check_finite(X, names, rows, opened)
        rows += len(X)
        assert y is not None  # a training reference has a label column
        limit.saw_labels(y)
        limit.check(rows)  # before the block is kept: reading stops at the limit
        sample.add(X)
        # a copy: a zero-copy view would keep pyarrow's buffer alive, and those small
        # buffers, kept between the freed blocks, stop the heap from shrinking
        labels.append(np.array(y, copy=True))
        missing += int(np.isnan(X).sum())
        digest.update(X.tobytes())
        report(rows, total, "reading")
        if rows // TRIM_ROWS != (rows - len(X)) // TRIM_ROWS:
            release_freed_memory()
    if rows == 0:
        raise InvalidArgument(f"{field}.uri: the data set has no rows", field=f"{field}.uri")
    y_all = np.concatenate(labels)
    del labels
    digest.update(np.ascontiguousarray(y_all).tobytes())
    check_classes(y_all, settings.max_classes, field=f"{field}.label_column")
    n_classes = len(np.unique(y_all))
    binned = spec.algorithm == AUTO and n_classes == 2
    total = 2 * rows
    summary = DatasetSummary(
        opened.ref.uri, opened.ref.format, rows, missing, digest.hexdigest(), binned
    )
    if binned:
        edges = BinEdges.from_sample(sample.rows)
        del sample
        release_freed_memory()  # the first pass's blocks, before the codes are allocated
        codes = BinnedRows.empty(rows, d)
        start = 0
        for X, _ in opened.feature_blocks(batch_size=batch_rows):
            stop = start + len(X)
            if stop > rows:
                break
            codes[start:stop] = edges.encode(X)
            start = stop
            report(rows + start, total, "reading")
            if start // TRIM_ROWS != (start - len(X)) // TRIM_ROWS:
                release_freed_memory()
        _same_rows(start, rows, opened)
        release_freed_memory()
        return TrainingData(codes, y_all, names, edges=edges, source=summary)
    check_limits(
        rows,
        d,
        max_rows=settings.max_train_rows,
        max_features=settings.max_features,
        max_cells=settings.max_cells,
        field=f"{field} (algorithm {spec.algorithm_name!r}, {n_classes} classes: read into "
        "memory; only the default algorithm 'auto' on two classes trains binned)",
    )
    del sample
    X_all = np.empty((rows, d), dtype=np.float64)
    start = 0
    for X, _ in opened.feature_blocks(batch_size=batch_rows):
        stop = start + len(X)
        if stop > rows:
            break
        X_all[start:stop] = X
        start = stop
        report(rows + start, total, "reading")
    _same_rows(start, rows, opened)
    return TrainingData(X_all, y_all, names, source=summary)


def release_freed_memory() -> None:
    """Give the heap memory freed by the reading back to the system (glibc
    ``malloc_trim``; nothing elsewhere).

    pyarrow decodes each row group on reader threads with malloc (the system pool); the
    buffers are freed when a block has been binned, but glibc keeps freed chunks in its
    per-thread arenas: measured after reading 1,000,000 x 50 rows, the process held
    706 MiB, 431 MiB after the trim (codes 48 MiB). Boosting, which follows, allocates
    from the main thread and its fold threads and would not reuse all of it.
    """
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


class RowLimit:
    """The most rows the first pass may read, known before the data set is read through.

    The default algorithm (``auto``) on two classes trains binned, one byte per cell, so
    it reads up to COSTWISE_MAX_DATASET_ROWS rows. Any other algorithm, and ``auto`` once
    a third label is seen, collects the float matrix: then the inline limits apply
    (COSTWISE_MAX_TRAIN_ROWS, and COSTWISE_MAX_CELLS over the features), and reading
    stops as soon as they are passed, instead of reading every row of the reference
    first and refusing afterwards (the labels of 100,000,000 rows alone are 800 MB).
    """

    def __init__(self, settings: Settings, n_features: int, algorithm: str) -> None:
        self._settings = settings
        self._d = max(1, n_features)
        self._binnable = algorithm == AUTO
        self._algorithm = algorithm
        self._labels: set[Any] = set()

    def saw_labels(self, y: np.ndarray) -> None:
        """Note the distinct labels of a block; a third one makes ``auto`` read unbinned."""
        if self._binnable:
            self._labels.update(np.unique(y).tolist())
            if len(self._labels) > 2:
                self._binnable = False

    def check(self, rows: int) -> None:
        """PayloadTooLarge naming the limit (and its setting) once ``rows`` passes it."""
        s = self._settings
        if rows > s.max_dataset_rows:
            raise PayloadTooLarge(
                f"dataset: more than {s.max_dataset_rows} rows (setting "
                "COSTWISE_MAX_DATASET_ROWS); reading stopped there",
                field="dataset",
                limit=s.max_dataset_rows,
            )
        if self._binnable:
            return
        by_cells = s.max_cells // self._d
        if rows > min(s.max_train_rows, by_cells):
            why = (
                f"algorithm {self._algorithm!r}"
                if self._algorithm != AUTO
                else "more than two classes"
            )
            if s.max_train_rows <= by_cells:
                what = f"{s.max_train_rows} rows (setting COSTWISE_MAX_TRAIN_ROWS)"
                limit = s.max_train_rows
            else:
                what = (
                    f"{by_cells} rows of {self._d} features ({s.max_cells} cells, "
                    "setting COSTWISE_MAX_CELLS)"
                )
                limit = s.max_cells
            raise PayloadTooLarge(
                f"dataset: more than {what}; reading stopped there. With {why} the rows "
                "are read into memory under the inline limits; only the default algorithm "
                "'auto' on two classes trains binned up to COSTWISE_MAX_DATASET_ROWS",
                field="dataset",
                limit=limit,
            )


def _check_finite(X: np.ndarray, names: list[str], first_row: int, opened: OpenedDataset) -> None:
    bad = np.isinf(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InvalidArgument(
            f"dataset.columns: column {opened.column_label(names[c])} holds an infinite "
            f"value in row "
            f"{first_row + int(r)}; expected finite numbers or missing values",
            field="dataset.columns",
        )


def _same_rows(read: int, expected: int, opened: OpenedDataset) -> None:
    if read != expected:
        raise InvalidArgument(
            f"dataset.uri: {opened.ref.uri!r} changed while it was read ({expected} rows, "
            f"then {read} or more)",
            field="dataset.uri",
        )


def summary_info(summary: Any) -> dict[str, Any]:
    """The ``data`` facts of a version trained from a reference."""
    return {
        "dataset": {"uri": summary.uri, "format": summary.format, "binned": summary.binned},
        "fingerprint": summary.fingerprint,
        "missing_values": summary.missing_values,
    }
