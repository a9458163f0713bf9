"""Train and register a version, from inline JSON, a CSV upload or a dataset reference."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import ValidationError
from starlette.datastructures import UploadFile

from app.api.bodies.limits import Body, RouteBody, parse_body
from app.api.bodies.parse_pool import BodyInvalid, ParsePool
from app.api.bodies.parsing import JSON, media_type
from app.api.bodies.scan import Limits, refuse_oversized
from app.api.deps import ModelName, ServicesDep
from app.api.errors import error_responses, validation_errors
from app.api.schemas import (
    DatasetTrainingRequest,
    JobOut,
    TrainingParams,
    TrainingRequest,
    VersionOut,
)
from app.errors import InvalidArgument
from app.services.common.inputs import check_no_nul
from app.services.datasets import DatasetRef
from app.services.model_registry.service import VersionView
from app.services.training import Mode, TrainingData, TrainingSpec
from app.services.training.trainer import csv_data, rows_data
from app.settings import Settings

router = APIRouter(prefix="/v1", tags=["training"])

_SPEC_FIELDS = tuple(TrainingParams.model_fields)

_OPENAPI = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "oneOf": [
                        {"$ref": "#/components/schemas/TrainingRequest"},
                        {"$ref": "#/components/schemas/DatasetTrainingRequest"},
                    ]
                }
            },
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


Parsed = tuple[TrainingData | DatasetRef, TrainingSpec, str | None, dict[str, str] | None]


_REFERENCE_BYTES = 64 * 1024  # a body naming a dataset is small
FORM = "multipart/form-data"
# rows are bounded by COSTWISE_MAX_TRAIN_ROWS and COSTWISE_MAX_CELLS, whose largest
# bodies need COSTWISE_MAX_BODY_BYTES: no smaller byte limit (app.api.bodies.limits); a CSV
# upload is parsed as it streams in (spooled to disk), counted by the body-limit middleware
TRAINING_BODY = RouteBody(media_types=(JSON, FORM), default="", streamed=(FORM,))


def _from_json(body: bytes, settings: Settings, large: bool = False) -> Parsed:
    """Parse and check a JSON training body (in a parse worker process when ``large``,
    after a count of its rows and values: :mod:`app.api.bodies.scan`)."""
    if large:
        limits = Limits.training(settings)
        refuse_oversized(body, limits, field="features", values_per_row=1)  # 1: its label
    if len(body) <= _REFERENCE_BYTES and _names_dataset(body):
        ref_req = DatasetTrainingRequest.model_validate_json(body)
        ref = DatasetRef.from_mapping(
            ref_req.dataset.model_dump(exclude_none=True), need_label=True
        )
        return ref, _spec(ref_req), ref_req.description, ref_req.tags
    req = TrainingRequest.model_validate_json(body)
    data = rows_data(settings, req.features, req.labels, req.feature_names)
    return data, _spec(req), req.description, req.tags


async def _from_form(request: Request, parsing: ParsePool, settings: Settings) -> Parsed:
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
        # CSV is parsed in Python, holding the GIL: a large file in the parse worker
        # process, a small one in a thread; checked against the limits row by row
        data = await parse_body(
            parsing, _csv, Body([content]), settings, label_column, small_in_thread=True
        )
        return data, _spec(params), (str(description) if description else None), None
    finally:
        await form.close()  # the uploaded file's spooled temporary file


def _csv(content: bytes, settings: Settings, label_column: str, large: bool) -> TrainingData:
    return csv_data(settings, content, label_column)


def _names_dataset(body: bytes) -> bool:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return False  # the request model reports the syntax error
    return isinstance(value, dict) and "dataset" in value


class _Invalid(Exception):
    def __init__(self, errors: list[Any], prefix: str | None = None) -> None:
        self.errors = [
            dict(e, loc=((prefix,) if prefix else ()) + tuple(e.get("loc", ()))) for e in errors
        ]


ModeQuery = Annotated[
    Mode,
    Query(
        description="`sync`: train now, answer 201 with the version. `job`: answer 202 with "
        "a training job (`Location: /v1/jobs/{id}`). `auto`: a job from "
        "COSTWISE_JOB_MIN_ROWS rows on (a dataset: also from COSTWISE_DATASET_JOB_BYTES "
        "bytes on), else sync."
    ),
]


@router.post(
    "/models/{name}/versions",
    status_code=201,
    response_model=VersionOut,
    summary="Train a calibrated model and register it as the next version",
    description="Send JSON (`features`, `labels`, optional `feature_names` and training "
    "parameters), JSON naming a `dataset` the service reads itself (`uri`, `format`, "
    "`label_column`, `columns`; see docs/data.md) or `multipart/form-data` with a CSV "
    "`file`, its `label_column` and `params` (JSON). Creates the model if it does not exist. Returns the new version with "
    "its metrics (201): by default (cross-fitted calibration) the out-of-fold calibrated "
    "probabilities of every training row; a held-out split only with `evaluation_fraction` "
    "or `calibration_split: holdout`. For a training run as a job "
    "(see `mode`), 202 with the job; input errors are answered at once in both cases.",
    openapi_extra=_OPENAPI,
    responses={
        202: {"model": JobOut, "description": "Training job created (poll `Location`)."},
        **error_responses(
            400, 413, 415, 422, described={503: "Busy (Retry-After) or unavailable."}
        ),
    },
)
async def create_version(
    name: ModelName,
    request: Request,
    body: Annotated[Body, Depends(TRAINING_BODY)],
    services: ServicesDep,
    mode: ModeQuery = "auto",
) -> Any:
    trainer = services.trainer
    ctype = media_type(request, accepted=TRAINING_BODY.media_types, default="")
    try:
        if ctype == JSON:
            # a large body in a worker process (app.api.bodies.parse_pool), a small one in a thread
            data, spec, description, tags = await parse_body(
                services.parsing, _from_json, body, services.settings, small_in_thread=True
            )
        else:  # multipart/form-data (media_type refused anything else)
            data, spec, description, tags = await _from_form(
                request, services.parsing, services.settings
            )
    except ValidationError as exc:
        return validation_errors(list(exc.errors()))
    except (_Invalid, BodyInvalid) as exc:
        return validation_errors(exc.errors)
    out = await trainer.train(name, data, spec, description=description, tags=tags, mode=mode)
    if isinstance(out, VersionView):
        return VersionOut(**vars(out))
    headers = {"Location": f"/v1/jobs/{out.id}"}
    job = JobOut.from_view(out).model_dump_json()
    return Response(job, status_code=202, headers=headers, media_type="application/json")
