"""Batch decisions of a data set by reference, run as a job."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response

from app.api.bodies.limits import JsonBody
from app.api.deps import ModelName, ServicesDep
from app.api.errors import error_responses
from app.api.schemas import BatchRequestIn, JobOut
from app.services.batch.scoring import BatchCosts
from app.services.batch.service import BatchRequest

router = APIRouter(prefix="/v1", tags=["batch"])


def batch_request(body: BatchRequestIn) -> BatchRequest:
    """The batch door's one request value (costs as the predictor's, per block of rows)."""
    dumped = body.model_dump(include={"costs", "cost_matrix"})  # {"column": name} as mappings
    return BatchRequest(
        input_uri=body.input.uri,
        output_uri=body.output.uri,
        input_format=body.input.format,
        columns=body.input.columns,
        id_columns=list(body.id_columns),
        costs=BatchCosts.of(dumped["costs"], dumped["cost_matrix"], body.priors, body.actions),
        version=body.version,
        alias=body.alias,
        interval=body.interval,
        shadow=body.shadow,
    )


BATCH_ERRORS = {
    403: "A path outside the allowed roots.",
    409: "The output exists already.",
    413: "A body over 4 MiB.",
}
# A reference, up to 10,000 column names and a cost matrix of up to 256 x 256 classes
# (COSTWISE_MAX_CLASSES' default): a few MB at most.
BATCH_BODY = JsonBody(BatchRequestIn, max_bytes=4 * 1024 * 1024)


@router.post(
    "/models/{name}/batch",
    status_code=202,
    response_model=JobOut,
    summary="Decide every row of a data set (a job writing Parquet)",
    description="Reads the input reference, decides each row as `/v1/models/{name}/predict` "
    "would (per-row costs may come from its columns), and writes the id columns, "
    "`proba_<class>`, `decision`, `threshold` and `expected_cost` as Parquet under the "
    "output directory, which appears only once complete. Answers 202 with the job "
    "(`Location: /v1/jobs/{id}`); its `result` holds the summary. Bad references, columns "
    "or costs are answered at once (4xx) and no job is created.",
    responses=error_responses(400, 404, 415, 422, 503, described=BATCH_ERRORS),
    openapi_extra=BATCH_BODY.openapi(),
)
async def create_batch(
    name: ModelName, body: Annotated[BatchRequestIn, Depends(BATCH_BODY)], services: ServicesDep
) -> Response:
    view = await services.batches.submit(name, batch_request(body))
    job = JobOut.from_view(view).model_dump_json()
    headers = {"Location": f"/v1/jobs/{view.id}"}
    return Response(job, status_code=202, headers=headers, media_type="application/json")
