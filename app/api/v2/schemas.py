"""Open Inference Protocol (KServe V2) request and response bodies."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

Parameters = dict[str, Any]


class RequestInput(BaseModel):
    """One input tensor: data flat (row-major) or nested, with its full batch shape."""

    name: str = Field(description="`features` (any name), or `costs` for a cost tensor.")
    shape: list[int] = Field(description="e.g. [N, n_features]; each dimension >= 0.")
    datatype: str = Field(description="FP64, FP32, FP16, INT8..INT64, UINT8..UINT64 or BOOL.")
    parameters: Parameters | None = None
    data: list[Any] = Field(description="Row-major values, flat or nested as `shape`.")


class RequestOutput(BaseModel):
    name: str = Field(
        description="probabilities, decision, expected_cost, threshold or id (logged rows)."
    )
    parameters: Parameters | None = None


class InferenceRequest(BaseModel):
    """An inference request. Costs go in `parameters` (`c_fp`, `c_fn`, `c_tp`, `c_tn`;
    `cost_matrix`; `priors`, a list or `"estimated"` for the version's latest prior
    estimate; and `alias` to choose the version) or in an input tensor named `costs`."""

    id: str | None = None
    parameters: Parameters | None = None
    inputs: list[RequestInput] = Field(min_length=1)
    outputs: list[RequestOutput] | None = None


class TensorMetadata(BaseModel):
    name: str
    datatype: str
    shape: list[int]


class ServerMetadataResponse(BaseModel):
    name: str
    version: str
    extensions: list[str]


class ModelMetadataResponse(BaseModel):
    name: str
    versions: list[str]
    platform: str
    inputs: list[TensorMetadata]
    outputs: list[TensorMetadata]


class ServerLiveResponse(BaseModel):
    live: bool


class ServerReadyResponse(BaseModel):
    ready: bool


class ModelReadyResponse(BaseModel):
    name: str
    ready: bool


class ResponseOutput(BaseModel):
    name: str
    shape: list[int]
    datatype: str
    data: list[Any]


class InferenceResponse(BaseModel):
    model_name: str
    model_version: str
    id: str
    parameters: Parameters = Field(
        description="Provenance: alias, calibration_method, calibration_split, "
        "decision_rule, cost_setting, cost_matrix or row_costs, priors, priors_estimate "
        '(the estimate `"priors": "estimated"` applied), training_costs, '
        "resolution_stale_since (only when served from memory during a registry outage), "
        "classes (the column order of `probabilities`)."
    )
    outputs: list[ResponseOutput]


class V2ErrorResponse(BaseModel):
    error: str = Field(
        description="What is wrong (which tensor, field or row) and what was expected."
    )
