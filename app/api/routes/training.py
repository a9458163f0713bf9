"""Train and register a version, from inline JSON or a CSV upload."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile

from app.api.bodies import JSON, media_type
from app.api.deps import ModelName, ServicesDep
from app.api.errors import validation_errors
from app.api.schemas import ErrorResponse, JobOut, TrainingParams, TrainingRequest, VersionOut
from app.errors import InvalidArgument
from app.services.inputs import (
    check_limits,
    feature_names_checked,
    features_matrix,
    labels_array,
    parse_csv,
)
from app.services.training import TrainingData, TrainingSpec, train_and_register

router = APIRouter(prefix="/v1", tags=["training"])

_SPEC_FIELDS = tuple(TrainingParams.model_fields)

_OPENAPI = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/TrainingRequest"}},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {
                            "type": "string",
                            "format": "binary",
                            "description": "CSV with a header row; empty cell = missing.",
                        },
                        "label_column": {"type": "string", "default": "label"},
                        "params": {
                            "type": "string",
                            "description": "JSON object of "
                            "TrainingParams (algorithm, n_estimators, calibration, ...).",
                        },
                        "description": {"type": "string"},
                    },
                }
            },
        },
    }
}


def _spec(params: TrainingParams) -> TrainingSpec:
    return TrainingSpec(**{k: getattr(params, k) for k in _SPEC_FIELDS})


def _from_json(
    body: bytes, max_rows: int, max_features: int
) -> tuple[TrainingData, TrainingSpec, str | None, dict[str, str] | None]:
    req = TrainingRequest.model_validate_json(body)
    check_limits(
        len(req.features),
        len(req.features[0]) if req.features else 0,
        max_rows=max_rows,
        max_features=max_features,
        field="features",
    )
    X = features_matrix(req.features, field="features")
    y = labels_array(req.labels, len(X))
    names = feature_names_checked(req.feature_names, X.shape[1])
    return TrainingData(X, y, names), _spec(req), req.description, req.tags


async def _from_form(
    request: Request, max_rows: int, max_features: int
) -> tuple[TrainingData, TrainingSpec, str | None, dict[str, str] | None]:
    form = await request.form()
    try:
        return await _parse_form(form, max_rows, max_features)
    finally:
        await form.close()  # uploads are spooled to temporary files: close them


async def _parse_form(
    form: FormData, max_rows: int, max_features: int
) -> tuple[TrainingData, TrainingSpec, str | None, dict[str, str] | None]:
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise InvalidArgument("file: a CSV file part named 'file' is required", field="file")
    label_column = str(form.get("label_column") or "label")
    raw = form.get("params")
    try:
        params = TrainingParams.model_validate_json(str(raw)) if raw else TrainingParams()
    except ValidationError as exc:
        raise _Invalid(exc.errors(), prefix="params") from None
    content = await upload.read()
    X, y, names = await run_in_threadpool(parse_csv, content, label_column)
    check_limits(len(X), X.shape[1], max_rows=max_rows, max_features=max_features, field="file")
    description = form.get("description")
    return (
        TrainingData(X, y, names),
        _spec(params),
        (str(description) if description else None),
        None,
    )


class _Invalid(Exception):
    def __init__(self, errors: list[Any], prefix: str | None = None) -> None:
        self.errors = [
            dict(e, loc=((prefix,) if prefix else ()) + tuple(e.get("loc", ()))) for e in errors
        ]


Mode = Annotated[
    Literal["auto", "job", "sync"],
    Query(
        description="`sync`: train now, answer 201 with the version. `job`: answer 202 with "
        "a training job (`Location: /v1/jobs/{id}`). `auto`: a job from "
        "COSTWISE_JOB_MIN_ROWS rows on, else sync."
    ),
]


@router.post(
    "/models/{name}/versions",
    status_code=201,
    response_model=VersionOut,
    summary="Train a calibrated model and register it as the next version",
    description="Send JSON (`features`, `labels`, optional `feature_names` and training "
    "parameters) or `multipart/form-data` with a CSV `file`, its `label_column` and "
    "`params` (JSON). Creates the model if it does not exist. Returns the new version with "
    "its metrics on a held-out evaluation split (201), or, for a training run as a job "
    "(see `mode`), 202 with the job; input errors are answered at once in both cases.",
    openapi_extra=_OPENAPI,
    responses={
        202: {"model": JobOut, "description": "Training job created (poll `Location`)."},
        400: {"model": ErrorResponse},
        413: {"model": ErrorResponse},
        415: {"model": ErrorResponse},
        422: {"model": ErrorResponse},
    },
)
async def create_version(
    name: ModelName, request: Request, services: ServicesDep, mode: Mode = "auto"
) -> Any:
    s = services.settings
    ctype = media_type(request, accepted=(JSON, "multipart/form-data"), default="")
    try:
        if ctype == JSON:
            body = await request.body()
            data, spec, description, tags = await run_in_threadpool(
                _from_json, body, s.max_train_rows, s.max_features
            )
        else:
            data, spec, description, tags = await _from_form(
                request, s.max_train_rows, s.max_features
            )
    except ValidationError as exc:
        return validation_errors(list(exc.errors()))
    except _Invalid as exc:
        return validation_errors(exc.errors)
    if spec.n_estimators > s.max_rounds:
        raise InvalidArgument(
            f"n_estimators: {spec.n_estimators} is over the limit of "
            f"{s.max_rounds} (setting COSTWISE_MAX_ROUNDS)",
            field="n_estimators",
        )
    if mode == "job" or (mode == "auto" and len(data.y) >= s.job_min_rows):
        job = await services.jobs.submit(name, data, spec, description=description, tags=tags)
        out = JobOut.from_view(job).model_dump_json()
        headers = {"Location": f"/v1/jobs/{job.id}"}
        return Response(out, status_code=202, headers=headers, media_type="application/json")
    view = await run_in_threadpool(
        partial(
            train_and_register,
            services.sessions,
            name,
            data,
            spec,
            description=description,
            tags=tags,
            max_seconds=s.max_training_seconds,
        )
    )
    return VersionOut(**vars(view))
