"""The three doors (``/v1`` predict and evaluate, ``/v2`` infer, batch) build one request
value, :class:`app.services.prediction.request.DecisionRequest` (batch: its
:class:`~app.services.prediction.request.CostRequest` per block of rows), and agree.

- Every cost setting ``/v1`` accepts is accepted by ``/v2`` and batch in their own
  spelling, and gives the same cost matrices, action names and priors (one declared
  exception: batch takes priors as numbers only). Per-row settings come per row on /v1,
  as a costs tensor on /v2 and as input columns (named costs, or cost matrix cells) in
  batch.
- Every field of the request is mapped by every door, or named here as one that door
  does not have: a field added to the request but to no door, or forgotten by one, fails.

No database: each door's own parsing functions, called as its route calls them.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, Field, fields
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from app.api.bodies.parsing import Limits, predict_input
from app.api.routes.batch import batch_request
from app.api.schemas import BatchRequestIn, EvaluateRequest, PredictRequest
from app.api.v2.routes import infer_request, parse_and_decode
from app.services.prediction.request import CostRequest, DecisionRequest

LIMITS = Limits(max_rows=1000, max_features=100, max_cells=100_000, max_classes=256)
X = [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]
AMOUNTS = [2.0, 7.0, 11.0]
MATRIX = [[0.0, 1.0], [5.0, 0.0]]
ACTIONS = ["approve", "review", "decline"]
ACTION_MATRIX = [[0.0, 4.0, 9.0], [20.0, 4.0, 0.0]]
AMOUNT = {"column": "amount"}


def _tensor(name: str, data: Any, shape: list[int], **parameters: Any) -> dict[str, Any]:
    t = {"name": name, "shape": shape, "datatype": "FP64", "data": data}
    return {**t, "parameters": parameters} if parameters else t


# A cost setting as each door spells it: (/v1 body members, /v2 parameters and extra
# input tensors, batch body members and the per-row cost columns of its input).
FORMS: dict[str, tuple[dict[str, Any], dict[str, Any], list[Any], dict[str, Any]]] = {
    "none (0-1 costs)": ({}, {}, [], {}),
    "named costs": (
        {"costs": {"c_fp": 1.0, "c_fn": 5.0}},
        {"c_fp": 1.0, "c_fn": 5.0},
        [],
        {"costs": {"c_fp": 1.0, "c_fn": 5.0}},
    ),
    "named costs, all four": (
        {"costs": {"c_fp": 1.0, "c_fn": 5.0, "c_tp": 0.5, "c_tn": 0.25}},
        {"c_fp": 1.0, "c_fn": 5.0, "c_tp": 0.5, "c_tn": 0.25},
        [],
        {"costs": {"c_fp": 1.0, "c_fn": 5.0, "c_tp": 0.5, "c_tn": 0.25}},
    ),
    "cost matrix": (
        {"cost_matrix": MATRIX},
        {"cost_matrix": json.dumps(MATRIX)},
        [],
        {"cost_matrix": MATRIX},
    ),
    "per-row costs": (
        {"row_costs": [{"c_fp": 1.0, "c_fn": a} for a in AMOUNTS]},
        {},
        [_tensor("costs", [[1.0, a] for a in AMOUNTS], [3, 2], layout="rows")],
        {"costs": {"c_fp": 1.0, "c_fn": {"column": "amount"}}},
    ),
    "priors": (
        {"priors": [0.3, 0.7]},
        {"priors": "[0.3, 0.7]"},
        [],
        {"priors": [0.3, 0.7]},
    ),
    "priors with named costs": (
        {"costs": {"c_fp": 2.0, "c_fn": 3.0}, "priors": [0.6, 0.4]},
        {"c_fp": 2.0, "c_fn": 3.0, "priors": [0.6, 0.4]},
        [],
        {"costs": {"c_fp": 2.0, "c_fn": 3.0}, "priors": [0.6, 0.4]},
    ),
    "priors with a cost matrix": (
        {"cost_matrix": MATRIX, "priors": [0.2, 0.8]},
        {"cost_matrix": json.dumps(MATRIX), "priors": [0.2, 0.8]},
        [],
        {"cost_matrix": MATRIX, "priors": [0.2, 0.8]},
    ),
    "priors with per-row costs": (
        {
            "row_costs": [{"c_fp": 1.0, "c_fn": a, "c_tn": 0.5} for a in AMOUNTS],
            "priors": [0.9, 0.1],
        },
        {"priors": [0.9, 0.1]},
        [_tensor("costs", [[1.0, a, 0.0, 0.5] for a in AMOUNTS], [3, 4])],
        {"costs": {"c_fp": 1.0, "c_fn": {"column": "amount"}, "c_tn": 0.5}, "priors": [0.9, 0.1]},
    ),
    'priors "estimated"': ({"priors": "estimated"}, {"priors": "estimated"}, [], {}),
    "per-row cost matrices": (
        {"row_cost_matrices": [[[0.0, 1.0], [a, 0.0]] for a in AMOUNTS]},
        {},
        [_tensor("costs", [[[0.0, 1.0], [a, 0.0]] for a in AMOUNTS], [3, 2, 2])],
        {"cost_matrix": [[0.0, 1.0], [AMOUNT, 0.0]]},
    ),
    "actions with a cost matrix": (
        {"actions": ACTIONS, "cost_matrix": ACTION_MATRIX},
        {"actions": ACTIONS, "cost_matrix": json.dumps(ACTION_MATRIX)},
        [],
        {"actions": ACTIONS, "cost_matrix": ACTION_MATRIX},
    ),
    "actions with a costs tensor": (
        {"actions": ACTIONS, "cost_matrix": ACTION_MATRIX},
        {"actions": json.dumps(ACTIONS)},
        [_tensor("costs", ACTION_MATRIX, [2, 3])],
        {"actions": ACTIONS, "cost_matrix": ACTION_MATRIX},
    ),
    "actions with per-row cost matrices": (
        {
            "actions": ACTIONS,
            "row_cost_matrices": [[[0.0, 4.0, a], [a, 4.0, 0.0]] for a in AMOUNTS],
        },
        {"actions": ACTIONS},
        [_tensor("costs", [[[0.0, 4.0, a], [a, 4.0, 0.0]] for a in AMOUNTS], [3, 2, 3])],
        {"actions": ACTIONS, "cost_matrix": [[0.0, 4.0, AMOUNT], [AMOUNT, 4.0, 0.0]]},
    ),
    "named costs with c_review": (
        {"costs": {"c_fp": 1.0, "c_fn": 5.0, "c_review": 0.5}},
        {"c_fp": 1.0, "c_fn": 5.0, "c_review": 0.5},
        [],
        {"costs": {"c_fp": 1.0, "c_fn": 5.0, "c_review": 0.5}},
    ),
    "per-row costs with c_review": (
        {"row_costs": [{"c_fp": 1.0, "c_fn": a, "c_review": 0.5} for a in AMOUNTS]},
        {},
        [_tensor("costs", [[1.0, a, 0.0, 0.0, 0.5] for a in AMOUNTS], [3, 5])],
        {"costs": {"c_fp": 1.0, "c_fn": AMOUNT, "c_review": 0.5}},
    ),
}
# What a door does not take, and why (the test checks that it is indeed refused)
BATCH_REFUSES = {'priors "estimated"': "a batch job takes priors as numbers only"}


def v1(members: dict[str, Any], model: type[Any] = PredictRequest) -> DecisionRequest:
    body = json.dumps({"instances": X, **members}).encode()
    return predict_input(body, model, LIMITS)


def v2(parameters: dict[str, Any], tensors: list[Any], version: str | None = None) -> Any:
    body = {"inputs": [_tensor("features", X, [3, 2]), *tensors], "parameters": parameters}
    _, decoded = parse_and_decode(json.dumps(body).encode(), LIMITS, large=False)
    return infer_request("m", version, decoded)


def batch(members: dict[str, Any]) -> Any:
    body = {"input": {"uri": "file:///in.parquet"}, "output": {"uri": "file:///out"}}
    return batch_request(BatchRequestIn.model_validate({**body, **members}))


def batch_costs_of(b: Any) -> CostRequest:
    """The cost request of the batch's one block of rows (every per-row cost is the
    ``amount`` column)."""
    return b.costs.request(len(X), {key: np.array(AMOUNTS) for key in b.costs.columns})


def batch_costs(members: dict[str, Any]) -> CostRequest:
    return batch_costs_of(batch(members))


def _same_setting(a: CostRequest, b: CostRequest) -> None:
    np.testing.assert_array_equal(a.setting(len(X), 2).matrix, b.setting(len(X), 2).matrix)
    assert a.setting(len(X), 2).source == b.setting(len(X), 2).source
    assert a.setting(len(X), 2).actions == b.setting(len(X), 2).actions
    if isinstance(a.priors, str) or isinstance(b.priors, str):
        assert a.priors == b.priors
    else:
        assert (a.priors is None) == (b.priors is None)
        if a.priors is not None:
            np.testing.assert_array_equal(np.asarray(a.priors), np.asarray(b.priors))


@pytest.mark.parametrize("form", list(FORMS))
def test_the_three_doors_accept_the_same_cost_settings(form: str) -> None:
    on_v1, parameters, tensors, on_batch = FORMS[form]
    ref = v1(on_v1).costs
    _same_setting(ref, v2(parameters, tensors).costs)
    _same_setting(ref, v1({**on_v1, "labels": [0, 1, 0]}, EvaluateRequest).costs)
    if form in BATCH_REFUSES:
        with pytest.raises(ValidationError):
            batch({**on_v1})
        return
    _same_setting(ref, batch_costs(on_batch))


def _given(obj: Any, prefix: str = "") -> set[str]:
    """The dotted names of the fields of a request value that differ from their default."""
    out: set[str] = set()
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, CostRequest):
            out |= _given(value, f"{prefix}{f.name}.")
        elif not _is_default(f, value):
            out.add(prefix + f.name)
    return out


def _given_batch(b: Any) -> set[str]:
    """What a batch request maps: its fields named as the request's, and the cost request
    of a block of rows."""
    shared = {f.name for f in fields(DecisionRequest)} - {"costs"}
    given = {
        f.name for f in fields(b) if f.name in shared and not _is_default(f, getattr(b, f.name))
    }
    return given | _given(batch_costs_of(b), "costs.")


def _is_default(f: Field[Any], value: Any) -> bool:
    if f.default is MISSING:
        return False
    return type(value) is type(f.default) and value == f.default


def _all_fields() -> set[str]:
    costs = {f"costs.{f.name}" for f in fields(CostRequest)}
    return costs | {f.name for f in fields(DecisionRequest) if f.name != "costs"}


# Fields each door leaves at their default, and why: every other field must be mapped.
NOT_ON_V1 = {
    "ids_field": "the body's own name, ids, is the default",
    "costs.cost_layout": "the /v2 costs tensor",
    "costs.priors_field": "the body's own name, priors, is the default",
    "costs.priors_estimate": "set by the predictor when it applies an estimate",
    "costs.actions_field": "the body's own name, actions, is the default",
}
NOT_ON_V2 = {
    "labels": "/v2 has no evaluate",
    "shadow": "the shadow's decisions are answered on /v1 predict only",
    "costs.row_costs": "per-row costs come as the costs tensor (cost_array)",
    "costs.priors_estimate": "set by the predictor when it applies an estimate",
}
NOT_ON_BATCH = {
    "explain": "explanations are a /v1 predict option, not a batch output column",
    "rows": "the rows are the input data set's, read block by block",
    "ids": "id columns are copied to the output, not logged",
    "ids_field": "no ids",
    "labels": "batch has no evaluate",
    "routing_key": "a batch names its version or alias; traffic splits route requests",
    "costs.cost_layout": "the /v2 costs tensor",
    "costs.priors_field": "the body's own name, priors, is the default",
    "costs.actions_field": "the body's own name, actions, is the default",
    "costs.priors_estimate": 'no "estimated" priors in a batch',
}


def test_every_request_field_is_mapped_by_every_door() -> None:
    every = _all_fields()
    on_v1 = _given(v1({"version": 2, "explain": True, "interval": True}))
    for members, *_ in FORMS.values():
        on_v1 |= _given(
            v1({**members, "alias": "prod", "ids": ["a", "b", "c"], "shadow": True,
                "routing_key": "customer-1"})
        )  # fmt: skip
        on_v1 |= _given(v1({**members, "labels": [0, 1, 0]}, EvaluateRequest))
    on_v2 = _given(v2({"explain": True, "interval": True}, [], version="2"))
    ids = {"name": "ids", "shape": [3], "datatype": "BYTES", "data": ["a", "b", "c"]}
    for _, parameters, tensors, _ in FORMS.values():
        on_v2 |= _given(
            v2({**parameters, "alias": "prod", "routing_key": "customer-1"}, [*tensors, ids])
        )
    on_batch: set[str] = _given_batch(batch({"version": 2, "interval": True}))
    for form, (*_, members) in FORMS.items():
        if form not in BATCH_REFUSES:
            for choice in ({"version": 2}, {"alias": "prod", "shadow": True}):
                on_batch |= _given_batch(batch({**members, **choice}))
    for door, mapped, absent in (
        ("/v1", on_v1, NOT_ON_V1),
        ("/v2", on_v2, NOT_ON_V2),
        ("batch", on_batch, NOT_ON_BATCH),
    ):
        assert set(absent) <= every, f"{door}: unknown fields named {set(absent) - every}"
        assert not mapped & set(absent), f"{door} maps {mapped & set(absent)}: update the list"
        missing = every - mapped - set(absent)
        assert not missing, f"{door} does not map {sorted(missing)}"


@pytest.mark.parametrize("form", [f for f in FORMS if f not in ('priors "estimated"',)])
def test_large_bodies_decoded_in_a_parse_worker_give_the_same_setting(form: str) -> None:
    """``decode=True`` (large bodies: rows and per-row costs as arrays) changes nothing."""
    body = json.dumps({"instances": X, **FORMS[form][0]}).encode()
    plain = predict_input(body, PredictRequest, LIMITS)
    decoded = predict_input(body, PredictRequest, LIMITS, decode=True)
    _same_setting(plain.costs, decoded.costs)
