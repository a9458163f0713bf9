"""Count what a JSON body holds without decoding it: values and rows, outside strings.

A body of up to COSTWISE_MAX_BODY_BYTES (64 MiB) decodes into up to ~10^7 Python
objects (about 1 GB); the decoded limits (rows, rows x features) are only known after
that. :func:`scan` counts, with a few vectorised numpy passes over the bytes (0.2-0.3 s
for 60 MiB, temporary memory bounded by the slice size), the commas and the containers
at each depth that lie **outside strings**, for any layout (compact, spaced or
pretty-printed, flat or nested). For a JSON value made of arrays and objects, the commas
of an ``n x d`` table number ``n * d - 1`` whatever its layout (rows of ``instances``,
objects of ``records``, a flat or nested V2 ``data``), so

    cells of the rows  >=  commas + 1 - (commas of everything else)

and everything else in a request is bounded by the limits (a cost matrix of at most
``max_classes``^2 entries, per-row costs of at most 4 numbers per row, ...): a body whose
commas exceed that bound is refused before it is decoded, by :func:`refuse_oversized`.

Strings: an escaped backslash (``\\\\``) and an escaped quote (``\\"``) are removed
first (C speed, ``bytes.replace``), then every remaining quote opens or closes a string;
commas, brackets and braces between an opening and a closing quote are not counted.
Invalid JSON is counted as if it were valid; the parser refuses it afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.errors import PayloadTooLarge
from app.settings import Settings

SLICE = 4 * 1024 * 1024  # bytes scanned per step: bounds the temporary arrays (~40 MiB)
QUOTE, COMMA = ord('"'), ord(",")
OPEN = (ord("["), ord("{"))
CLOSE = (ord("]"), ord("}"))


@dataclass(frozen=True)
class BodyShape:
    """What a JSON body holds outside strings."""

    commas: int
    containers_at_depth: tuple[int, ...]  # arrays and objects opened at depth 1, 2, 3, 4

    def containers(self, depth: int) -> int:
        return self.containers_at_depth[depth - 1]


def scan(body: bytes, max_depth: int = 4) -> BodyShape:
    """Commas and containers (by depth, 1 = the top-level value) outside strings."""
    if b"\\" in body:  # inside strings only (outside them a backslash is invalid JSON)
        body = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    data = np.frombuffer(body, dtype=np.uint8)
    commas = 0
    by_depth = [0] * max_depth
    in_string = 0  # parity carried from slice to slice
    depth = 0
    for start in range(0, len(data), SLICE):
        b = data[start : start + SLICE]
        quotes = (b == QUOTE).view(np.uint8)
        inside = np.bitwise_xor.accumulate(quotes) ^ in_string  # 1 inside a string
        in_string = int(inside[-1])
        outside = inside == 0  # a closing quote is 0, an opening one 1: neither counted
        commas += int(np.count_nonzero((b == COMMA) & outside))
        opening = ((b == OPEN[0]) | (b == OPEN[1])) & outside
        closing = ((b == CLOSE[0]) | (b == CLOSE[1])) & outside
        where = np.flatnonzero(opening | closing)
        if where.size == 0:
            continue
        steps = np.where(opening[where], 1, -1).astype(np.int64)
        levels = depth + np.cumsum(steps)  # the depth after each bracket
        depth = int(levels[-1])
        opened = levels[steps > 0]  # the depth of each container opened here
        counts = np.bincount(opened[(opened >= 1) & (opened <= max_depth)], minlength=max_depth + 1)
        for d in range(1, max_depth + 1):
            by_depth[d - 1] += int(counts[d])
    return BodyShape(commas, tuple(by_depth))


@dataclass(frozen=True)
class Limits:
    """The limits a body of rows is checked against (picklable: sent to parse workers)."""

    max_rows: int
    max_features: int
    max_cells: int
    max_classes: int
    rows_setting: str = "COSTWISE_MAX_PREDICT_ROWS"  # how messages name max_rows

    @classmethod
    def of(cls, s: Settings) -> Limits:
        """Of rows to decide (predict, evaluate, /v2 infer)."""
        return cls(s.max_predict_rows, s.max_features, s.max_cells, s.max_classes)

    @classmethod
    def training(cls, s: Settings) -> Limits:
        """Of labelled rows to train or recalibrate on."""
        rows = "COSTWISE_MAX_TRAIN_ROWS"
        return cls(s.max_train_rows, s.max_features, s.max_cells, s.max_classes, rows)


def rows_field(body: bytes) -> str:
    """How a body holds its rows: ``records`` (objects) or ``instances`` (arrays)."""
    return "records" if b'"records"' in body else "instances"


def refuse_oversized(
    body: bytes,
    limits: Limits,
    *,
    field: str,
    rows_depth: int | None = 3,
    row_objects_per_row: int = 1,
    values_per_row: int = 6,
) -> None:
    """Raise PayloadTooLarge (naming ``field``) when the body provably holds more.

    Values: more commas than ``max_cells`` rows x features plus what every other field
    of a valid request may hold (a ``max_classes`` x ``max_classes`` cost matrix, four
    costs or one label per row for ``max_rows`` rows, a few scalars; ``values_per_row``:
    6 for predict's per-row costs and ids, 1 for a training's labels). Rows (when
    ``rows_depth`` is given): more containers at that depth than ``max_rows`` rows plus
    the rows of a cost matrix, with ``row_objects_per_row`` containers per row (2 when
    per-row costs travel beside the rows); ``limits.rows_setting`` names the row limit.
    """
    max_rows, max_cells, max_classes = limits.max_rows, limits.max_cells, limits.max_classes
    shape = scan(body)
    slack = max_classes * (max_classes + 2) + values_per_row * max_rows + 1024
    if shape.commas + 1 > max_cells + slack:
        raise PayloadTooLarge(
            f"{field}: the body holds at least {shape.commas + 1} JSON values, more than "
            f"the limit of {max_cells} cells (rows x features, setting COSTWISE_MAX_CELLS) "
            "plus the largest cost settings allow; refused before decoding",
            field=field,
            limit=max_cells,
        )
    if rows_depth is not None:
        rows = (shape.containers(rows_depth) - max_classes) // row_objects_per_row
        if rows > max_rows:
            raise PayloadTooLarge(
                f"{field}: the body holds at least {rows} rows, over the limit of "
                f"{max_rows} rows per request (setting {limits.rows_setting}); "
                "refused before decoding",
                field=field,
                limit=max_rows,
            )
