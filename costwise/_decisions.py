"""The /v1 operations that decide and explain: predict, evaluate, plots, what-if."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, Unpack

import httpx

from costwise._core import Call, Operation, decode, one
from costwise._operations import Records, Rows, _as, _listed, _model, _page, _plain
from costwise.types import Costs, Evaluation, Label, Plot, PredictResponse, WhatIf


class DecisionOptions(TypedDict, total=False):
    """How to decide: the rows as ``records`` (instead of ``instances``), the costs (at
    most one of ``costs``, ``cost_matrix``, ``row_costs``, ``row_cost_matrices``; with
    ``actions`` the matrices are K x A), ``priors``, and which ``version`` or ``alias``
    to use."""

    records: Records
    costs: Costs | Mapping[str, float]
    cost_matrix: Sequence[Sequence[float]] | Any
    row_costs: Sequence[Costs | Mapping[str, float]]
    row_cost_matrices: Sequence[Sequence[Sequence[float]]] | Any
    actions: Sequence[str]
    priors: Sequence[float] | Any
    version: int
    alias: str
    ids: Sequence[str]
    shadow: bool
    routing_key: str
    explain: bool
    interval: bool


def _decision_body(instances: Rows | None, options: DecisionOptions) -> dict[str, Any]:
    records = options.get("records")
    if (instances is None) == (records is None):
        raise ValueError("give exactly one of instances or records")
    body: dict[str, Any] = {k: _plain(v) for k, v in options.items() if v is not None}
    if instances is not None:
        body["instances"] = _plain(instances)
    if "costs" in body:
        body["costs"] = dict(body["costs"])
    if "row_costs" in body:
        body["row_costs"] = [dict(c) for c in body["row_costs"]]
    if "records" in body:
        body["records"] = [dict(r) for r in body["records"]]
    if "ids" in body:
        body["ids"] = [str(i) for i in body["ids"]]
    if "actions" in body:
        body["actions"] = [str(a) for a in body["actions"]]
    return body


def predict(
    name: str, instances: Rows | None = None, **options: Unpack[DecisionOptions]
) -> Operation[PredictResponse]:
    """``POST /v1/models/{name}/predict``: least-expected-cost decisions for these rows.

    Rows: ``instances`` (feature order; lists or a numpy array) or ``records`` (dicts by
    feature name); ``None`` is a missing value. Costs: one of ``costs``
    (``{"c_fp": 1, "c_fn": 5}``), ``cost_matrix`` (``C[i][j]`` = cost of predicting j
    when the truth is i) or ``row_costs`` (one ``costs`` per row); none = 0-1 costs.
    ``actions`` (names of the columns of a K x A ``cost_matrix`` or ``row_cost_matrices``)
    or ``c_review`` in ``costs``: each row takes the action of least expected cost
    (``predictions[i].action``).
    ``priors``: deployment class priors, or ``"estimated"`` for the server's latest
    recorded estimate (:meth:`estimate_priors` with ``record=True``). ``version`` or
    ``alias`` pins the version (default: alias ``production``, else the latest). ``ids``: your id of each row (e.g.
    the transaction id) for :meth:`send_outcomes`; else each ``predictions[i].id`` is the
    service's. ``shadow=True``: also the model's shadow version's decisions of the rows,
    in ``shadow`` (``{"version", "alias", "predictions"}``). ``explain=True``: each
    prediction's ``explanation`` (two-class models: the contribution of each feature to
    the raw score, the probability and the expected-cost margin). ``interval=True``: each
    prediction's ``interval`` (``p_low``, ``p_high``, ``stable``; two-class fold ensembles,
    the default ``auto``). Retried on 503 (a retried
    row keeps its first logged record).
    """
    body = _decision_body(instances, options)
    return one(Call("POST", _model(name, "predict"), json=body), _as(PredictResponse))


def evaluate(
    name: str,
    labels: Sequence[Label] | Any,
    instances: Rows | None = None,
    **options: Unpack[DecisionOptions],
) -> Operation[Evaluation]:
    """``POST /v1/models/{name}/evaluate``: what deciding these labelled rows would cost
    (confusion matrix, total and mean cost, Q, Brier). Arguments as :meth:`predict`."""
    if "ids" in options or "shadow" in options:
        raise ValueError("ids and shadow are for predict: evaluate logs nothing")
    if "explain" in options or "interval" in options:
        raise ValueError("explain and interval are for predict: evaluate returns no rows")
    body = _decision_body(instances, options)
    body["labels"] = _plain(labels)
    return one(Call("POST", _model(name, "evaluate"), json=body), _as(Evaluation))


def list_plots(name: str, version: int) -> Operation[list[Plot]]:
    """``GET .../versions/{version}/plots``: the stored plots with their JSON and SVG URLs."""
    return one(Call("GET", _model(name, "versions", version, "plots")), _listed(Plot, "plots"))


def _plot_call(
    name: str, version: int, kind: str, fmt: str, ratio_min: float | None, ratio_max: float | None
) -> Call:
    query = _page(format=fmt, ratio_min=ratio_min, ratio_max=ratio_max)
    return Call("GET", _model(name, "versions", version, "plots", kind), params=query)


def get_plot(
    name: str,
    version: int,
    kind: str,
    *,
    ratio_min: float | None = None,
    ratio_max: float | None = None,
) -> Operation[dict[str, Any]]:
    """``GET .../plots/{kind}?format=json``: the plot's data (``brier_curve``,
    ``reliability``, ``roc``, ``cost_curve``, which takes a c_fn/c_fp ratio range, and
    ``capacity`` for versions of the default algorithm ``auto``)."""
    call = _plot_call(name, version, kind, "json", ratio_min, ratio_max)
    return one(call, lambda response: dict(decode(response)))


def _text(response: httpx.Response) -> str:
    return response.text


def get_plot_svg(
    name: str,
    version: int,
    kind: str,
    *,
    ratio_min: float | None = None,
    ratio_max: float | None = None,
) -> Operation[str]:
    """``GET .../plots/{kind}?format=svg``: the plot as an SVG document (text)."""
    return one(_plot_call(name, version, kind, "svg", ratio_min, ratio_max), _text)


def whatif(
    name: str,
    version: int,
    c_fp: float,
    c_fn: float,
    c_tp: float = 0.0,
    c_tn: float = 0.0,
    c_review: float | None = None,
) -> Operation[WhatIf]:
    """``GET .../versions/{version}/whatif``: threshold, confusion matrix and cost that
    these binary costs give on the version's held-out predictions; with ``c_review`` also
    ``review``: the band of probabilities sent to review at that cost, and what it costs."""
    query: dict[str, float] = {"c_fp": c_fp, "c_fn": c_fn, "c_tp": c_tp, "c_tn": c_tn}
    if c_review is not None:
        query["c_review"] = c_review
    return one(Call("GET", _model(name, "versions", version, "whatif"), params=query), _as(WhatIf))
