"""Pictures of a version (JSON data or SVG) and the what-if of a cost setting."""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal

import orjson
from fastapi import APIRouter, Path, Query, Request, Response

from app.api.deps import ModelName, ServicesDep
from app.api.errors import error_responses
from app.api.schemas import (
    MAX_INT,
    PlotInfoOut,
    PlotListResponse,
    WhatIfCosts,
    WhatIfMatrixResponse,
    WhatIfResponse,
)
from app.errors import InvalidArgument

router = APIRouter(prefix="/v1", tags=["plots"], responses=error_responses(404, 422, 503))

Version = Annotated[int, Path(ge=1, le=MAX_INT, description="Version number.")]
Kind = Annotated[str, Path(max_length=64, description="brier_curve, reliability, roc, cost_curve.")]
Ratio = Annotated[
    float | None, Query(gt=0, description="Cost ratio c_fn / c_fp (cost_curve only).")
]
SVG = "image/svg+xml"
# Versions never change once registered: a plot's bytes never change either.
CACHE = "private, max-age=31536000, immutable"


@router.get(
    "/models/{name}/versions/{version}/plots",
    response_model=PlotListResponse,
    summary="List the plots of a version",
)
def list_plots(name: ModelName, version: Version, services: ServicesDep) -> PlotListResponse:
    base = f"/v1/models/{name}/versions/{version}/plots"
    return PlotListResponse(
        model=name,
        version=version,
        plots=[
            PlotInfoOut(
                kind=p.kind,
                title=p.title,
                json_url=f"{base}/{p.kind}?format=json",
                svg_url=f"{base}/{p.kind}?format=svg",
            )
            for p in services.plots.list_plots(name, version)
        ],
    )


def _wants_svg(fmt: str | None, accept: str) -> bool:
    if fmt is not None:
        return fmt == "svg"
    return SVG in accept and "application/json" not in accept


@router.get(
    "/models/{name}/versions/{version}/plots/{kind}",
    summary="One plot of a version, as JSON data or an SVG picture",
    description="Computed at registration on the version's evaluation rows: by default every "
    "training row with its out-of-fold calibrated probability (cross-fitted models), or "
    "held-out rows when the training set `evaluation_fraction`. `format=svg` (or "
    "`Accept: image/svg+xml`) gives the picture. `cost_curve` takes `ratio_min` and "
    "`ratio_max` (c_fn / c_fp, default 0.01 to 100) and is then recomputed from the stored "
    "evaluation predictions.",
    responses={
        200: {"content": {"application/json": {}, SVG: {}}},
        304: {"description": "Not modified"},
    },
)
def get_plot(
    name: ModelName,
    version: Version,
    kind: Kind,
    request: Request,
    services: ServicesDep,
    format: Literal["json", "svg"] | None = None,  # noqa: A002 - the query parameter's name
    ratio_min: Ratio = None,
    ratio_max: Ratio = None,
) -> Response:
    svg = _wants_svg(format, request.headers.get("accept", ""))
    view = services.plots.get_plot(
        name, version, kind, svg=svg, ratio_min=ratio_min, ratio_max=ratio_max
    )
    if svg and view.svg is not None:
        body, media = view.svg.encode(), SVG
    else:
        head = {
            "model": view.model,
            "version": view.version,
            "kind": view.kind,
            "title": view.title,
        }
        body, media = orjson.dumps({**head, **view.data}), "application/json"
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {"ETag": etag, "Cache-Control": CACHE, "Vary": "Accept"}
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=media, headers=headers)


@router.get(
    "/models/{name}/versions/{version}/whatif",
    response_model=WhatIfResponse,
    summary="What a binary cost setting would decide and cost on the evaluation rows",
    description="Decides the version's stored evaluation rows (at most 10,000, stratified; "
    "out-of-fold probabilities by default, held-out rows with `evaluation_fraction`) as "
    "predict would under `c_fp`, `c_fn` (and `c_tp`, `c_tn`, default 0), and reports the "
    "threshold, the confusion matrix [[tn, fp], [fn, tp]] and the cost. With `c_review`, "
    "`review` also decides them among negative, positive and review as predict's "
    "`costs.c_review` does: the band of probabilities sent to review, counts and cost. "
    "Two-class models only.",
)
def whatif(
    name: ModelName,
    version: Version,
    services: ServicesDep,
    c_fp: Annotated[float, Query(description="Cost of a false positive.")],
    c_fn: Annotated[float, Query(description="Cost of a false negative.")],
    c_tp: Annotated[float, Query(description="Cost of a true positive.")] = 0.0,
    c_tn: Annotated[float, Query(description="Cost of a true negative.")] = 0.0,
    c_review: Annotated[
        float | None,
        Query(description="Cost of sending a row to review, whatever the truth (optional)."),
    ] = None,
) -> WhatIfResponse:
    out = services.plots.whatif(name, version, c_fp, c_fn, c_tp, c_tn, c_review)
    costs = WhatIfCosts(**out.pop("costs"))
    return WhatIfResponse(model=name, version=version, costs=costs, **out)


@router.get(
    "/models/{name}/versions/{version}/whatif/matrix",
    response_model=WhatIfMatrixResponse,
    summary="What a K x K cost matrix would decide and cost on the evaluation rows",
    description="Decides the version's stored evaluation rows (at most 10,000, stratified) "
    "by least expected cost under `cost_matrix` (JSON, e.g. `[[0,1,1],[1,0,1],[5,5,0]]`; "
    "rows = truth, columns = decision, in the order of the version's classes), as "
    "predict would, and reports the K x K confusion matrix and the cost. Any number of "
    "classes. Versions registered before multiclass what-ifs existed have no stored "
    "probabilities of every class: 404 saying so.",
)
def whatif_matrix(
    name: ModelName,
    version: Version,
    services: ServicesDep,
    cost_matrix: Annotated[
        str,
        Query(
            max_length=20_000,
            description="K x K cost matrix as JSON: C[i][j] = cost of deciding class j "
            "when the truth is class i.",
        ),
    ],
) -> WhatIfMatrixResponse:
    try:
        matrix = orjson.loads(cost_matrix)
    except orjson.JSONDecodeError:
        raise InvalidArgument(
            "cost_matrix: not valid JSON; expected a K x K array of numbers such as [[0,1],[5,0]]",
            field="cost_matrix",
        ) from None
    if not isinstance(matrix, list) or not all(
        isinstance(row, list)
        and all(isinstance(c, int | float) and not isinstance(c, bool) for c in row)
        for row in matrix
    ):
        raise InvalidArgument(
            "cost_matrix: expected a K x K array of numbers such as [[0,1],[5,0]]",
            field="cost_matrix",
        )
    out = services.plots.whatif_matrix(name, version, matrix)
    return WhatIfMatrixResponse(model=name, version=version, **out)
