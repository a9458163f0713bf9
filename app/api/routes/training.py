"""Train and register a version, from inline JSON or a CSV upload."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import APIRouter, Query, Request, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from app.api.bodies import JSON, media_type
from app.api.deps import ModelName, ServicesDep
from app.api.errors import error_response, validation_errors
from app.api.guards import RETRY_AFTER_SECONDS, Slots
from app.api.parse_pool import BodyInvalid
from app.api.schemas import ErrorResponse, JobOut, TrainingParams, TrainingRequest, VersionOut
from app.errors import InvalidArgument
from app.services.inputs import (
    check_classes,
    check_limits,
    check_no_nul,
    feature_names_checked,
    features_matrix,
    labels_array,
    parse_csv,
)
from app.services.training import TrainingData, TrainingSpec, train_and_register
from app.settings import Settings

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
    body: bytes, s: Settings
) -> tuple[TrainingData, TrainingSpec, str | None, dict[str, str] | None]:
    req = TrainingRequest.model_validate_json(body)
    check_limits(
        len(req.features),
        len(req.features[0]) if req.features else 0,
        max_rows=s.max_train_rows,
        max_features=s.max_features,
        max_cells=s.max_cells,
        field="features",
    )
    X = features_matrix(req.features, field="features")
    y = labels_array(req.labels, len(X))
    check_classes(y, s.max_classes)
    names = feature_names_checked(req.feature_names, X.shape[1])
    return TrainingData(X, y, names), _spec(req), req.description, req.tags


def _csv_checked(
    content: bytes, label_column: str, s: Settings
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    X, y, names = parse_csv(content, label_column)
    check_limits(
        len(X),
        X.shape[1],
        max_rows=s.max_train_rows,
        max_features=s.max_features,
        max_cells=s.max_cells,
        field="file",
    )
    check_classes(y, s.max_classes, field=label_column)
    return X, y, names


async def _from_form(
    request: Request, s: Settings
) -> tuple[TrainingData, TrainingSpec, str | None, dict[str, str] | None]:
    form = await request.form()
    try:
        files = form.getlist("file")
        if len(files) > 1:
            raise InvalidArgument(
                f"file: expected one CSV file part named 'file', got {len(files)}", field="file"
            )
        upload = files[0] if files else None
        if not isinstance(upload, UploadFile):
            raise InvalidArgument("file: a CSV file part named 'file' is required", field="file")
        label_column = str(form.get("label_column") or "label")
        raw = form.get("params")
        try:
            params = TrainingParams.model_validate_json(str(raw)) if raw else TrainingParams()
        except ValidationError as exc:
            raise _Invalid(exc.errors(), prefix="params") from None
        description = form.get("description")
        for field, text in (("label_column", label_column), ("description", description)):
            if isinstance(text, str):
                check_no_nul(text, field)
        content = await upload.read()
        X, y, names = await run_in_threadpool(_csv_checked, content, label_column, s)
        return (
            TrainingData(X, y, names),
            _spec(params),
            (str(description) if description else None),
            None,
        )
    finally:
        await form.close()  # the uploaded file's spooled temporary file


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
        503: {"model": ErrorResponse, "description": "Busy (Retry-After) or unavailable."},
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
            if services.parsing.offloads(len(body)):  # a worker process (app.api.parse_pool)
                parsed = await services.parsing.run(_from_json, body, s)
            else:
                parsed = await run_in_threadpool(_from_json, body, s)
            data, spec, description, tags = parsed
        else:  # multipart/form-data (media_type refused anything else)
            data, spec, description, tags = await _from_form(request, s)
    except ValidationError as exc:
        return validation_errors(list(exc.errors()))
    except (_Invalid, BodyInvalid) as exc:
        return validation_errors(exc.errors)
    if spec.n_estimators is not None and spec.n_estimators > s.max_rounds:
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
    slots: Slots = request.app.state.training_slots
    if not slots.try_acquire():
        response = error_response(
            "UNAVAILABLE",
            f"{slots.limit} synchronous training(s) already running in this process (setting "
            "COSTWISE_MAX_SYNC_TRAININGS); retry shortly, or train as a job (mode=job)",
            field="mode",
        )
        response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    try:
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
                stop=services.stopping,  # SIGTERM: stop at the next round, register nothing
            )
        )
    finally:
        slots.release()
    request.app.state.known_models.add(name)
    return VersionOut(**vars(view))
