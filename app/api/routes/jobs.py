"""Training jobs: look one up, list them, cancel one (submitting is in training.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query
from starlette.concurrency import run_in_threadpool

from app.api.bodies.limits import NoBody
from app.api.deps import NAME_PATTERN, ServicesDep
from app.api.errors import error_responses
from app.api.schemas import MAX_INT, JobListResponse, JobOut, JobStatus

router = APIRouter(prefix="/v1", tags=["jobs"], responses=error_responses(404, 422, 503))

JobId = Annotated[str, Path(min_length=1, max_length=32, description="Job id.")]


@router.get("/jobs/{job_id}", response_model=JobOut, summary="A training job's status")
async def get_job(job_id: JobId, services: ServicesDep) -> JobOut:
    view = await run_in_threadpool(services.jobs.get, job_id)
    return JobOut.from_view(view)


@router.get("/jobs", response_model=JobListResponse, summary="List training jobs, newest first")
async def list_jobs(
    services: ServicesDep,
    model: Annotated[str | None, Query(pattern=NAME_PATTERN)] = None,
    status: JobStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="Page size.")] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_INT, description="Items to skip.")] = 0,
) -> JobListResponse:
    views, total = await run_in_threadpool(services.jobs.page, model, status, limit, offset)
    return JobListResponse(jobs=[JobOut.from_view(v) for v in views], total=total)


@router.post(
    "/jobs/{job_id}/cancel",
    status_code=202,
    response_model=JobOut,
    summary="Cancel a training job",
    description="A queued job is cancelled at once; a running one gets `cancel_requested` "
    "and stops at its next boosting round (nothing is registered). A finished job: 409.",
    responses=error_responses(409, 413),
    dependencies=[Depends(NoBody())],  # no body: one over 64 KiB is refused unread
)
async def cancel_job(job_id: JobId, services: ServicesDep) -> JobOut:
    view = await run_in_threadpool(services.jobs.cancel, job_id)
    return JobOut.from_view(view)
