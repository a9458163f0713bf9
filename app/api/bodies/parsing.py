"""Request bodies that routes parse themselves: one media-type check, one JSON parser.

Routes that read the raw body (predict and evaluate, training, KServe V2 infer) call
these, so an unsupported content type gets the same 415 everywhere (``{"detail", "code":
"UNSUPPORTED_MEDIA_TYPE", "field": "content-type"}``; on /v2 the V2 error body with the
same message), and JSON is validated in one pass by pydantic-core. Predict and evaluate
bodies become the predictor's one request value,
:class:`~app.services.prediction.request.DecisionRequest`, here (:func:`predict_input`), on the event loop when
small and in a parse worker when large (:mod:`app.api.bodies.parse_pool`).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, TypeVar

import numpy as np
from fastapi import Request
from pydantic import BaseModel

from app.api.bodies.scan import Limits, refuse_oversized, rows_field
from app.api.schemas import RowsRequest
from app.errors import InvalidArgument, ServiceError
from app.services.common.inputs import check_limits, features_matrix
from app.services.prediction.request import CostRequest, DecisionRequest, Rows

JSON = "application/json"
M = TypeVar("M", bound=BaseModel)


class UnsupportedMediaType(ServiceError):
    code = "UNSUPPORTED_MEDIA_TYPE"

    def __init__(self, ctype: str, accepted: tuple[str, ...]) -> None:
        super().__init__(
            f"content type {ctype or '(none)'!r} is not supported; send " + " or ".join(accepted),
            field="content-type",
        )


def media_type(request: Request, accepted: tuple[str, ...] = (JSON,), default: str = JSON) -> str:
    """The request's media type (lower case, parameters dropped), one of ``accepted``;
    ``default`` when there is no Content-Type header. Raises UnsupportedMediaType."""
    return media_type_of(request.headers.get("content-type"), accepted, default)


def media_type_of(
    header: str | None, accepted: tuple[str, ...] = (JSON,), default: str = JSON
) -> str:
    """:func:`media_type` of a Content-Type header's value (None: no such header)."""
    ctype = (default if header is None else header).split(";")[0].strip().lower()
    if ctype not in accepted:
        raise UnsupportedMediaType(ctype, accepted)
    return ctype


async def json_body(request: Request, model: type[M]) -> M:
    """The body as ``model``, from bytes in one pass; pydantic's ValidationError
    propagates (the caller turns it into its own error shape)."""
    media_type(request)
    return model.model_validate_json(await request.body())


# ------------------------------------------------- predict and evaluate bodies
def _row_costs_array(row_costs: list[Any]) -> np.ndarray | list[Any]:
    """Per-row named costs as an (n, 4) array, (n, 5) with c_review on every row; the
    list itself when only some rows give c_review (the service names the first without)."""
    reviews = sum("c_review" in r for r in row_costs)
    if reviews and reviews != len(row_costs):
        return row_costs
    cells: list[tuple[Any, ...]] = [
        (r["c_fp"], r["c_fn"], r.get("c_tp", 0.0), r.get("c_tn", 0.0)) for r in row_costs
    ]
    if reviews:
        cells = [(*c, r["c_review"]) for c, r in zip(cells, row_costs, strict=True)]
    return np.array(cells, dtype=np.float64).reshape(-1, 5 if reviews else 4)


def _row_cost_matrices(matrices: list[Any]) -> np.ndarray:
    """``row_cost_matrices`` as an (n, K, A) array; ragged nesting named (400)."""
    try:
        return np.array(matrices, dtype=np.float64)
    except ValueError:
        shape = (len(matrices[0]), len(matrices[0][0]) if matrices[0] else 0)
        for r, m in enumerate(matrices):
            widths = {len(row) for row in m}
            if len(m) != shape[0] or widths != {shape[1]}:
                raise InvalidArgument(
                    f"row_cost_matrices[{r}]: expected a {shape[0]} x {shape[1]} matrix like "
                    f"row 0's, got {len(m)} rows of {sorted(widths)} entries",
                    field="row_cost_matrices",
                ) from None
        raise


def _records_matrix(records: list[dict[str, Any]]) -> Rows:
    """Records as a matrix in the first record's key order, and the first record whose
    keys differ (then the request is refused: the matrix is left empty)."""
    columns = tuple(records[0])
    first = records[0].keys()
    for i, rec in enumerate(records):
        if rec.keys() != first:
            empty = np.empty((0, len(columns)))
            return Rows(matrix=empty, columns=columns, mismatch=(i, tuple(rec)), field="records")
    getter = itemgetter(*columns)
    values = [getter(rec) for rec in records]
    X = np.array(values, dtype=np.float64).reshape(len(records), len(columns))
    return Rows(matrix=X, columns=columns, field="records")


def predict_input(
    body: bytes, model: type[RowsRequest], limits: Limits, decode: bool = False
) -> DecisionRequest:
    """Parse and check a predict/evaluate body (pydantic's errors propagate).

    ``decode`` (large bodies, in a parse worker: :mod:`app.api.bodies.parse_pool`): first
    refuse a body that provably holds too much (:mod:`app.api.bodies.scan`), then hand
    back the rows and per-row costs as numpy arrays, cheap to send between processes.
    """
    if decode:
        per_row = 2 if b'"row_costs"' in body else 1
        refuse_oversized(body, limits, field=rows_field(body), row_objects_per_row=per_row)
    req = model.model_validate_json(body)
    listed: list[Any] = req.instances if req.instances is not None else req.records or []
    field = "instances" if req.instances is not None else "records"
    if listed:
        check_limits(
            len(listed),
            len(listed[0]),
            max_rows=limits.max_rows,
            max_features=limits.max_features,
            max_cells=limits.max_cells,
            field=field,
        )
    row_costs: Any = req.row_costs  # TypedDicts: already plain dicts
    if not decode or not listed:
        rows = Rows(req.instances, req.records)
    elif req.instances is not None:
        rows = Rows(matrix=features_matrix(req.instances, field=field), field=field)
    else:
        rows = _records_matrix(listed)
    if decode and row_costs is not None:
        row_costs = _row_costs_array(row_costs)
    matrices = req.row_cost_matrices
    costs = CostRequest(
        costs=None if req.costs is None else req.costs.model_dump(exclude_none=True),
        cost_matrix=req.cost_matrix,
        row_costs=row_costs,
        cost_array=None if matrices is None else _row_cost_matrices(matrices),
        cost_field=None if matrices is None else "row_cost_matrices",
        priors=req.priors,
        actions=req.actions,
    )
    # the fields of one model only, read from the validated values: a missing attribute
    # of a pydantic model raises (and catches) an AttributeError, ~2 us each
    values = req.__dict__
    return DecisionRequest(
        rows,
        costs,
        version=req.version,
        alias=req.alias,
        ids=values.get("ids"),  # predict only
        labels=values.get("labels"),  # evaluate only
        shadow=values.get("shadow", False),  # predict only
        routing_key=req.routing_key,
        explain=values.get("explain", False),  # predict only
        interval=values.get("interval", False),  # predict only
    )
