"""V2 tensors <-> the predictor's rows and costs (request decoding, output encoding).

Values are rounded to the declared datatype (FP32 data is read as float32, as a V2
server holding a float32 tensor would) and then served as float64. Every error names the
tensor (``inputs[i] ('name')``) or parameter and what was expected.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.api.v2.schemas import InferenceRequest, RequestInput
from app.errors import InvalidArgument
from app.services.prediction.predictor import Prediction
from app.services.prediction.request import CostRequest, DecisionRequest, Rows

NUMERIC: dict[str, Any] = {
    "BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
    "UINT64": np.uint64, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32,
    "INT64": np.int64, "FP16": np.float16, "FP32": np.float32, "FP64": np.float64,
}  # fmt: skip
DATATYPES = (*NUMERIC, "BYTES")
OUTPUTS = ("probabilities", "decision", "action", "expected_cost", "threshold", "id")
#: with ``parameters.explain: true`` (app.services.prediction.explanations): each row's
#: bias, contributions ([N, n_features], the feature names in the tensor's parameters),
#: raw score and expected-cost margin
EXPLAIN_OUTPUTS = (
    "explanation_bias",
    "contributions",
    "explanation_score",
    "expected_cost_margin",
)
#: with ``parameters.interval: true`` (app.services.prediction.intervals): each row's
#: interval of probabilities[1] and whether the decision is the same at both ends (BOOL)
INTERVAL_OUTPUTS = ("p_low", "p_high", "stable")
COSTS_INPUT = "costs"
IDS_INPUT = "ids"  # the client's id of each row (BYTES, shape [N]): see the prediction log
NAMED_COSTS = ("c_fp", "c_fn", "c_tp", "c_tn", "c_review")


@dataclass(frozen=True)
class Decoded:
    request: DecisionRequest  # the version comes from the path: set by the route
    outputs: tuple[str, ...] | None  # None: all


def _bad(field: str, message: str) -> InvalidArgument:
    return InvalidArgument(f"{field}: {message}", field=field)


def tensor_array(t: RequestInput, where: str) -> np.ndarray:
    """The tensor's data as float64 in its declared shape, rounded to its datatype."""
    dtype = NUMERIC.get(t.datatype)
    if dtype is None:
        if t.datatype == "BYTES":
            raise _bad(where, "datatype BYTES is not supported; send numbers (e.g. FP64)")
        raise _bad(f"{where}.datatype", f"unknown datatype {t.datatype!r}; expected one of "
                   f"{list(DATATYPES)}")  # fmt: skip
    if any(d < 0 for d in t.shape):
        raise _bad(f"{where}.shape", f"dimensions must be >= 0, got {t.shape}")
    try:
        a = np.asarray(t.data)
        if a.dtype.kind == "O":  # nulls (missing values) or ragged nesting
            a = np.asarray(t.data, dtype=np.float64)
    except (TypeError, ValueError):
        raise _bad(
            where, "data must be numbers in nested lists of equal length (or flat)"
        ) from None
    if a.dtype.kind in "USO" or (a.dtype.kind == "b") != (t.datatype == "BOOL"):
        want = "true/false" if t.datatype == "BOOL" else "numbers"
        raise _bad(where, f"datatype {t.datatype} expects {want} in data, got {a.dtype.kind!r} "
                   f"values such as {a.ravel()[:1].tolist()}")  # fmt: skip
    size = math.prod(t.shape)
    if a.ndim == 1 and len(t.shape) != 1:
        if a.size != size:
            raise _bad(where, f"shape {t.shape} needs {size} values, data has {a.size}")
        a = a.reshape(t.shape)
    elif list(a.shape) != t.shape:
        raise _bad(where, f"data has shape {list(a.shape)}, but the tensor's shape is {t.shape}")
    x = a.astype(np.float64)
    if t.datatype in ("FP16", "FP32"):
        with np.errstate(over="ignore"):
            rounded = x.astype(dtype).astype(np.float64)
        if (np.isinf(rounded) & np.isfinite(x)).any():
            raise _bad(where, f"a value is outside the {t.datatype} range")
        return rounded
    if t.datatype not in ("FP64", "BOOL"):
        info = np.iinfo(dtype)
        if not (np.isfinite(x).all() and (x == np.floor(x)).all()):
            raise _bad(where, f"datatype {t.datatype} expects integers (no null or fractions)")
        if x.min(initial=0) < info.min or x.max(initial=0) > info.max:
            raise _bad(where, f"a value is outside the {t.datatype} range")
    return x


# JSON text parameters and how deep their arrays may nest (a matrix: 2, a vector: 1)
JSON_PARAM_DEPTH = {"cost_matrix": 2, "priors": 1, "actions": 1}
_BRACKETS = re.compile(r"[\[\]{}]")


def _nested_deeper_than(text: str, limit: int) -> bool:
    """Whether brackets in ``text`` nest deeper than ``limit`` (stops at the first excess,
    so a hostile 10^6-level text costs ``limit`` steps, never a recursion)."""
    depth = 0
    for match in _BRACKETS.finditer(text):
        if match.group() in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _json_param(params: dict[str, Any], key: str) -> Any:
    value = params[key]
    if isinstance(value, str):  # V2 parameters are scalars: a matrix may come as JSON text
        limit = JSON_PARAM_DEPTH[key]
        shape = "a JSON array of arrays of numbers" if limit == 2 else "a JSON array of numbers"
        if _nested_deeper_than(value, limit):
            raise _bad(
                f"parameters.{key}", f"expected {shape} (as text): arrays nest at most "
                f"{limit} level(s) deep"
            )  # fmt: skip
        try:  # the stdlib reads NaN/Infinity literals too (refused later with a clear message)
            return json.loads(value)
        except ValueError:
            raise _bad(f"parameters.{key}", f"expected {shape} (as text)") from None
    return value


def _numbers(value: Any, key: str) -> list[float]:
    if not isinstance(value, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    ):
        raise _bad(f"parameters.{key}", f"expected a list of numbers, got {value!r:.80}")
    return [float(v) for v in value]


def _priors(params: dict[str, Any]) -> list[float] | str | None:
    """``priors``: a list of numbers (or the same as JSON text), or ``"estimated"``: the
    latest prior estimate of the serving version (GET /v1/models/{name}/priors)."""
    if "priors" not in params:
        return None
    if params["priors"] == "estimated":
        return "estimated"
    value = params["priors"]
    if isinstance(value, str) and not value.lstrip().startswith("["):
        raise _bad(
            "parameters.priors",
            f'expected a list of class priors (or as JSON text) or "estimated", got {value!r:.40}',
        )
    return _numbers(_json_param(params, "priors"), "priors")


def _actions(params: dict[str, Any]) -> list[str] | None:
    """``actions``: the names of the cost matrix's columns (a list, or as JSON text)."""
    if "actions" not in params:
        return None
    value = params["actions"]
    if isinstance(value, str) and value.lstrip().startswith("["):
        value = _json_param(params, "actions")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad("parameters.actions", f"expected a list of action names (or as JSON text), "
                   f"got {value!r:.80}")  # fmt: skip
    return value


def _named_costs(params: dict[str, Any]) -> dict[str, float] | None:
    given = {k: v for k, v in params.items() if k.startswith("c_")}
    for k, v in given.items():
        if k not in NAMED_COSTS:
            raise _bad(f"parameters.{k}", f"unknown cost; expected one of {list(NAMED_COSTS)}")
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise _bad(f"parameters.{k}", f"expected a number, got {v!r}")
    if not given:
        return None
    missing = [k for k in ("c_fp", "c_fn") if k not in given]
    if missing:
        raise _bad("parameters", f"named costs need c_fp and c_fn; missing {missing}")
    return {k: float(v) for k, v in given.items()}


def decode(req: InferenceRequest) -> Decoded:
    """The request's feature rows, cost setting, alias and ids, and the outputs asked for."""
    params = req.parameters or {}
    features = [(i, t) for i, t in enumerate(req.inputs) if t.name not in (COSTS_INPUT, IDS_INPUT)]
    ids = _ids([(i, t) for i, t in enumerate(req.inputs) if t.name == IDS_INPUT])
    cost_inputs = [(i, t) for i, t in enumerate(req.inputs) if t.name == COSTS_INPUT]
    if len(features) != 1 or len(cost_inputs) > 1:
        raise _bad("inputs", "expected one features tensor (shape [N, n_features]) and "
                   f"at most one 'costs' tensor, got {[t.name for t in req.inputs]}")  # fmt: skip
    i, t = features[0]
    where = f"inputs[{i}] ({t.name!r})"
    X = tensor_array(t, where)
    if X.ndim != 2 or X.shape[0] == 0:
        raise _bad(where, f"expected shape [N, n_features] with N >= 1, got {t.shape}")
    named = _named_costs(params)
    matrix = _json_param(params, "cost_matrix") if "cost_matrix" in params else None
    priors = _priors(params)
    cost_array = layout = None
    cost_field = "parameters.cost_matrix" if matrix is not None else "parameters"
    if cost_inputs:
        j, c = cost_inputs[0]
        cost_field = f"inputs[{j}] ('costs')"
        cost_array = tensor_array(c, cost_field)
        layout = (c.parameters or {}).get("layout")
        if layout not in (None, "matrix", "rows"):
            raise _bad(f"{cost_field}.parameters.layout", f"expected 'matrix' or 'rows', got {layout!r}")  # fmt: skip
    given = [n for n, v in (("c_fp/c_fn", named), ("cost_matrix", matrix),
                            ("'costs' tensor", cost_array)) if v is not None]  # fmt: skip
    if len(given) > 1:
        raise _bad("parameters", f"give one cost setting, got {given}")
    alias = params.get("alias")
    if alias is not None and not isinstance(alias, str):
        raise _bad("parameters.alias", f"expected a string, got {alias!r}")
    explain = params.get("explain", False)
    if not isinstance(explain, bool):
        raise _bad("parameters.explain", f"expected true or false, got {explain!r:.40}")
    interval = params.get("interval", False)
    if not isinstance(interval, bool):
        raise _bad("parameters.interval", f"expected true or false, got {interval!r:.40}")
    routing_key = params.get("routing_key")
    if routing_key is not None and (
        not isinstance(routing_key, str) or not 1 <= len(routing_key) <= 256
    ):
        raise _bad("parameters.routing_key", f"expected a string of 1-256 characters, got {routing_key!r}")  # fmt: skip
    wanted = None
    if req.outputs is not None:
        wanted = tuple(o.name for o in req.outputs)
        known = OUTPUTS + EXPLAIN_OUTPUTS + INTERVAL_OUTPUTS
        for k, name in enumerate(wanted):
            if name not in known:
                raise _bad(f"outputs[{k}].name", f"unknown output {name!r}; expected one of {list(known)}")  # fmt: skip
            if name in EXPLAIN_OUTPUTS and not explain:
                raise _bad(f"outputs[{k}].name", f"{name!r} needs parameters.explain: true")
            if name in INTERVAL_OUTPUTS and not interval:
                raise _bad(f"outputs[{k}].name", f"{name!r} needs parameters.interval: true")
    costs = CostRequest(
        costs=named,
        cost_matrix=matrix,
        cost_array=cost_array,
        cost_layout=layout,
        priors=priors,
        cost_field=cost_field,
        priors_field="parameters.priors",
        actions=_actions(params),
        actions_field="parameters.actions",
    )
    request = DecisionRequest(
        Rows(matrix=X, field=where), costs, alias=alias, ids=ids, ids_field="inputs ('ids')",
        routing_key=routing_key, explain=explain, interval=interval,
    )  # fmt: skip
    return Decoded(request, wanted)


def _ids(inputs: list[tuple[int, RequestInput]]) -> list[str] | None:
    """The ``ids`` tensor (BYTES, shape [N]) as strings; checked against the rows later."""
    if not inputs:
        return None
    if len(inputs) > 1:
        raise _bad("inputs", "expected at most one 'ids' tensor")
    i, t = inputs[0]
    where = f"inputs[{i}] ('ids')"
    if t.datatype != "BYTES" or len(t.shape) != 1:
        raise _bad(where, f"expected datatype BYTES and shape [N], got {t.datatype} {t.shape}")
    if len(t.data) != t.shape[0] or not all(isinstance(v, str) for v in t.data):
        raise _bad(where, f"expected {t.shape[0]} strings (one id per row)")
    return list(t.data)


def _tensor(name: str, datatype: str, shape: list[int], data: Any) -> dict[str, Any]:
    return {"name": name, "shape": shape, "datatype": datatype, "data": data}


def label_datatype(classes: tuple[Any, ...]) -> str:
    if all(isinstance(c, bool) for c in classes):
        return "BOOL"
    return "BYTES" if any(isinstance(c, str) for c in classes) else "INT64"


def encode(p: Prediction, wanted: tuple[str, ...] | None) -> list[dict[str, Any]]:
    """The output tensors (numpy arrays as data: orjson writes them directly)."""
    d, n, k = p.decisions, len(p.decisions.labels_index), len(p.classes)
    kind = label_datatype(p.classes)
    out: dict[str, dict[str, Any]] = {}
    if d.action_index is not None:  # among actions: the action's name (no class decision)
        names = p.provenance.actions or []
        out["action"] = _tensor("action", "BYTES", [n], [names[a] for a in d.action_index.tolist()])
    elif kind == "BYTES":
        labels: Any = [p.classes[j] for j in d.labels_index.tolist()]
        out["decision"] = _tensor("decision", kind, [n], labels)
    else:
        labels = np.asarray(p.classes, dtype=bool if kind == "BOOL" else np.int64)[d.labels_index]
        out["decision"] = _tensor("decision", kind, [n], labels)
    if p.proba is not None:
        out["probabilities"] = _tensor("probabilities", "FP64", [n, k], p.proba.ravel())
        out["expected_cost"] = _tensor("expected_cost", "FP64", [n], d.expected_cost)
    if d.threshold is not None:
        out["threshold"] = _tensor("threshold", "FP64", [n], d.threshold)
    if p.ids is not None:
        out["id"] = _tensor("id", "BYTES", [n], p.ids)
    e = p.explanations
    if e is not None:
        out["explanation_bias"] = _tensor("explanation_bias", "FP64", [n], e.bias)
        contrib = _tensor("contributions", "FP64", [n, len(e.features)], e.contributions.ravel())
        out["contributions"] = {**contrib, "parameters": {"features": list(e.features)}}
        out["explanation_score"] = _tensor("explanation_score", "FP64", [n], e.score)
        out["expected_cost_margin"] = _tensor("expected_cost_margin", "FP64", [n], e.margin)
    iv = p.intervals
    if iv is not None:
        out["p_low"] = _tensor("p_low", "FP64", [n], iv.low)
        out["p_high"] = _tensor("p_high", "FP64", [n], iv.high)
        out["stable"] = _tensor("stable", "BOOL", [n], iv.stable)
    if wanted is None:
        every = OUTPUTS + EXPLAIN_OUTPUTS + INTERVAL_OUTPUTS
        return [out[name] for name in every if name in out]
    for j, name in enumerate(wanted):
        if name not in out:
            raise _bad(f"outputs[{j}].name", f"this model does not produce {name!r}; it "
                       f"produces {[o for o in OUTPUTS if o in out]}")  # fmt: skip
    return [out[name] for name in wanted]
