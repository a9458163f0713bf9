"""Turning request data (JSON rows, records, CSV) into validated numpy arrays.

Every error names the field and the row (or CSV line) that is wrong and what was
expected. Limits raise ``PAYLOAD_TOO_LARGE`` and name the limit.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from app.errors import InvalidArgument, PayloadTooLarge

_MISSING = {"", "na", "nan", "null", "none", "?"}


def check_limits(
    n_rows: int,
    n_features: int,
    *,
    max_rows: int,
    max_features: int,
    field: str,
    max_cells: int | None = None,
) -> None:
    """Raise PayloadTooLarge when a request is over the row, feature or cell limit."""
    if n_rows > max_rows:
        raise PayloadTooLarge(
            f"{field}: {n_rows} rows is over the limit of {max_rows} rows per request "
            "(setting COSTWISE_MAX_PREDICT_ROWS / COSTWISE_MAX_TRAIN_ROWS)",
            field=field,
            limit=max_rows,
        )
    if n_features > max_features:
        raise PayloadTooLarge(
            f"{field}: {n_features} features per row is over the limit of {max_features} "
            "(setting COSTWISE_MAX_FEATURES)",
            field=field,
            limit=max_features,
        )
    if max_cells is not None and n_rows * n_features > max_cells:
        raise PayloadTooLarge(
            f"{field}: {n_rows} rows x {n_features} features = {n_rows * n_features} cells "
            f"is over the limit of {max_cells} cells per request (setting COSTWISE_MAX_CELLS)",
            field=field,
            limit=max_cells,
        )


def check_classes(y: np.ndarray, max_classes: int, *, field: str = "labels") -> None:
    """Raise InvalidArgument when the labels have more distinct values than ``max_classes``."""
    n = len(np.unique(y))
    if n > max_classes:
        raise InvalidArgument(
            f"{field}: {n} distinct labels (classes) is over the limit of {max_classes} "
            "(setting COSTWISE_MAX_CLASSES)",
            field=field,
            limit=max_classes,
        )


def check_no_nul(text: str, field: str) -> None:
    """Refuse text holding a NUL character (PostgreSQL cannot store it; SQLite could)."""
    if "\x00" in text:
        where = ""
        if "\n" in text:
            where = f" (line {text.count(chr(10), 0, text.index(chr(0))) + 1})"
        raise InvalidArgument(
            f"{field}: text must not contain NUL characters (\\u0000){where}", field=field
        )


def is_text(value: str) -> bool:
    """Whether ``value`` can be stored and written: no NUL (PostgreSQL refuses it) and no
    lone surrogate (``"\\ud800"``: a JSON escape a parser may accept, but not Unicode
    text, so no UTF-8 database, file format or column name can hold it)."""
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(value: str, field: str) -> None:
    """InvalidArgument naming ``field`` unless :func:`is_text`."""
    if not is_text(value):
        raise InvalidArgument(
            f"{field}: expected text without NUL characters or lone surrogates (\\ud800 to "
            f"\\udfff are not Unicode characters), got {value!r:.60}",
            field=field,
        )


def features_matrix(
    rows: Sequence[Sequence[float | None]],
    *,
    field: str = "features",
    n_features: int | None = None,
) -> np.ndarray:
    """Rows of numbers (``None`` = missing) as a float64 matrix, validated.

    Raises InvalidArgument for no rows, empty or ragged rows, a wrong number of
    features, or infinite values; the message names the first offending row.
    """
    if len(rows) == 0:
        raise InvalidArgument(f"{field}: at least one row is required", field=field)
    width = len(rows[0]) if n_features is None else n_features
    if width == 0:
        raise InvalidArgument(f"{field}[0]: a row needs at least one feature", field=field)
    try:
        X = np.array(rows, dtype=np.float64)
    except (ValueError, TypeError):
        X = None
    if X is None or X.ndim != 2 or X.shape[1] != width:
        for i, row in enumerate(rows):
            if len(row) != width:
                raise InvalidArgument(
                    f"{field}[{i}]: expected {width} features, got {len(row)}",
                    field=f"{field}[{i}]",
                )
        raise InvalidArgument(f"{field}: rows must be lists of numbers or null", field=field)
    return _finite(X, field)


def _finite(X: np.ndarray, field: str) -> np.ndarray:
    """``X`` unless it holds an infinite value (NaN is a missing value)."""
    if not np.isfinite(X).all():
        inf = np.isinf(X)
        if inf.any():
            i, j = (int(v) for v in np.argwhere(inf)[0])
            raise InvalidArgument(
                f"{field}[{i}][{j}]: infinite values are not allowed (use null for missing)",
                field=f"{field}[{i}][{j}]",
            )
    return X


def _record_keys(i: int, keys: Sequence[str], names: list[str], field: str) -> None:
    """Raise InvalidArgument naming record ``i`` unless its keys are the model's features."""
    present = set(keys)
    missing = [n for n in names if n not in present]
    if missing:
        raise InvalidArgument(
            f"{field}[{i}]: missing feature(s) {missing[:5]} (the model expects {names[:20]})",
            field=f"{field}[{i}]",
        )
    if len(present) != len(names):
        extra = sorted(present - set(names))
        raise InvalidArgument(
            f"{field}[{i}]: unknown feature(s) {extra[:5]} (the model expects {names[:20]})",
            field=f"{field}[{i}]",
        )


def _feature_names(feature_names: Sequence[str] | None, field: str) -> list[str]:
    """The model's feature names, which rows sent as records (``field``) need."""
    if feature_names is None:
        raise InvalidArgument(
            f"{field}: this model was trained without feature names; send `instances`",
            field=field,
        )
    return list(feature_names)


def records_matrix(
    records: Sequence[Mapping[str, float | None]],
    feature_names: Sequence[str] | None,
    *,
    field: str = "records",
) -> np.ndarray:
    """Rows given as objects keyed by feature name, ordered as the model's features."""
    names = _feature_names(feature_names, field)
    if len(records) == 0:
        raise InvalidArgument(f"{field}: at least one row is required", field=field)
    rows: list[list[float | None]] = []
    for i, rec in enumerate(records):
        try:
            rows.append([rec[n] for n in names])
        except KeyError:
            _record_keys(i, list(rec), names, field)
        if len(rec) != len(names):
            _record_keys(i, list(rec), names, field)
    return features_matrix(rows, field=field, n_features=len(names))


def named_columns_matrix(
    X: np.ndarray,
    columns: Sequence[str],
    feature_names: Sequence[str] | None,
    *,
    mismatch: tuple[int, Sequence[str]] | None = None,
    field: str = "records",
) -> np.ndarray:
    """Records decoded into a matrix elsewhere (:mod:`app.api.bodies.parsing`), ordered as the
    model's features, with the errors :func:`records_matrix` gives: ``columns`` are the
    keys of every record, except record ``mismatch[0]`` whose keys are ``mismatch[1]``
    (the first record with other keys, if any)."""
    names = _feature_names(feature_names, field)
    _record_keys(0, columns, names, field)
    if mismatch is not None:
        _record_keys(mismatch[0], mismatch[1], names, field)
    index = {c: j for j, c in enumerate(columns)}
    return _finite(X[:, [index[n] for n in names]], field)


def labels_array(labels: Sequence[Any], n_rows: int, *, field: str = "labels") -> np.ndarray:
    """Labels as a numpy array; one per row, all of one JSON type."""
    if len(labels) != n_rows:
        raise InvalidArgument(
            f"{field}: expected one label per row ({n_rows}), got {len(labels)}", field=field
        )
    kinds = {type(v) for v in labels}
    if len(kinds) > 1:
        raise InvalidArgument(
            f"{field}: labels must all be of one type, got {sorted(k.__name__ for k in kinds)}",
            field=field,
        )
    if kinds == {float} and not all(math.isfinite(v) for v in labels):
        raise InvalidArgument(f"{field}: labels must be finite", field=field)
    return np.asarray(labels)


def feature_names_checked(names: Sequence[str] | None, n_features: int) -> list[str] | None:
    """Validate optional feature names: one per column, unique, non-empty."""
    if names is None:
        return None
    if len(names) != n_features:
        raise InvalidArgument(
            f"feature_names: expected {n_features} names (one per column), got {len(names)}",
            field="feature_names",
        )
    seen: set[str] = set()
    for i, n in enumerate(names):
        if not n.strip():
            raise InvalidArgument(
                f"feature_names[{i}]: names must not be empty", field=f"feature_names[{i}]"
            )
        if n in seen:
            raise InvalidArgument(
                f"feature_names[{i}]: duplicate name {n!r}", field=f"feature_names[{i}]"
            )
        seen.add(n)
    return list(names)


def _cell(value: str, line: int, column: str) -> float:
    v = value.strip()
    if v.lower() in _MISSING:
        return math.nan
    try:
        x = float(v)
    except ValueError:
        raise InvalidArgument(
            f"CSV line {line}, column {column!r}: expected a number or an empty cell, got {v[:40]!r}",
            field=column,
        ) from None
    if math.isinf(x):
        raise InvalidArgument(
            f"CSV line {line}, column {column!r}: infinite values are not allowed", field=column
        )
    return x


CSV_BLOCK_ROWS = 65_536  # rows parsed into Python floats before they become one float64 block


def parse_csv(
    content: bytes,
    label_column: str,
    *,
    max_rows: int | None = None,
    max_features: int | None = None,
    max_cells: int | None = None,
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """A CSV file with a header row: features (numbers, empty = missing) and a label column.

    With limits, a file over them is refused (PayloadTooLarge, as :func:`check_limits`) as
    soon as a row passes them, not after the whole file is parsed; rows become float64
    blocks of CSV_BLOCK_ROWS, so memory stays near 8 bytes per cell (a Python list of
    floats costs ~32).
    """
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidArgument("CSV: the file must be UTF-8 text", field="file") from None
    check_no_nul(text, "file")
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip() for h in next(reader)]
    except (StopIteration, csv.Error):
        raise InvalidArgument(
            "CSV: the file is empty; a header row is required", field="file"
        ) from None
    if label_column not in header:
        raise InvalidArgument(
            f"CSV: no label column {label_column!r} in the header {header[:20]}",
            field="label_column",
        )
    names = feature_names_checked([h for h in header if h != label_column], len(header) - 1)
    if header.count(label_column) > 1:
        raise InvalidArgument(f"CSV: label column {label_column!r} appears twice", field="file")
    li = header.index(label_column)
    width = len(header) - 1
    row_limit = sys.maxsize if max_rows is None else max_rows
    feature_limit = sys.maxsize if max_features is None else max_features

    def check(n_rows: int) -> None:
        check_limits(
            n_rows,
            width,
            max_rows=row_limit,
            max_features=feature_limit,
            max_cells=max_cells,
            field="file",
        )

    check(0)
    most_rows = row_limit if max_cells is None else min(row_limit, max_cells // max(width, 1))
    blocks: list[np.ndarray] = []
    rows: list[list[float]] = []
    labels: list[str] = []
    try:
        for line, rec in enumerate(reader, start=2):
            if not rec or all(not c.strip() for c in rec):
                continue
            if len(rec) != len(header):
                raise InvalidArgument(
                    f"CSV line {line}: expected {len(header)} fields, got {len(rec)}", field="file"
                )
            label = rec[li].strip()
            if not label:
                raise InvalidArgument(f"CSV line {line}: the label is empty", field=label_column)
            labels.append(label)
            if len(labels) > most_rows:
                check(len(labels))
            rows.append([_cell(c, line, header[j]) for j, c in enumerate(rec) if j != li])
            if len(rows) == CSV_BLOCK_ROWS:
                blocks.append(np.array(rows, dtype=np.float64).reshape(len(rows), width))
                rows = []
    except csv.Error as exc:
        raise InvalidArgument(f"CSV: malformed file: {exc}", field="file") from None
    if not labels:
        raise InvalidArgument("CSV: the file has a header but no data rows", field="file")
    blocks.append(np.array(rows, dtype=np.float64).reshape(len(rows), width))
    y: np.ndarray
    try:
        ints = [int(v) for v in labels]
        y = np.asarray(ints)
    except ValueError:
        y = np.asarray(labels)
    assert names is not None
    return np.concatenate(blocks) if len(blocks) > 1 else blocks[0], y, names


def fingerprint(X: np.ndarray, y: np.ndarray) -> str:
    """sha256 of the training data (features bytes + labels), to recognise reruns."""
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(X).tobytes())
    h.update(repr(y.tolist()).encode())
    return h.hexdigest()
