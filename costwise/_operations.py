"""Every /v1 operation, written once: its request and how its answer is read.

Each function returns an :data:`~costwise._core.Operation`; :mod:`costwise.client`
turns it into a method of both :class:`~costwise.client.Client` and
:class:`~costwise.client.AsyncClient`, so the docstrings here are the methods' docs.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, Unpack
from urllib.parse import quote

import httpx

from costwise._core import Call, Operation, Sleep, decode, one, parsed
from costwise.errors import JobTimeout, UnexpectedResponse
from costwise.types import (
    Algorithm,
    Alias,
    ApiKey,
    CreatedKey,
    Health,
    Job,
    JobPage,
    Label,
    Model,
    ModelPage,
    PriorEstimate,
    TrainingParams,
    Version,
    from_json,
)

T = TypeVar("T")
TrainMode = Literal["auto", "job", "sync"]
Rows = Sequence[Sequence[float | None]] | Any  # also anything with .tolist() (numpy)
Records = Sequence[Mapping[str, float | None]]


def _seg(value: str | int) -> str:
    return quote(str(value), safe="")


def _model(name: str, *rest: str | int) -> str:
    return "/".join(["/v1/models", _seg(name), *(_seg(r) for r in rest)])


def _listed(cls: type[T], key: str) -> Callable[[httpx.Response], list[T]]:
    def parse(response: httpx.Response) -> list[T]:
        body = decode(response)
        items = body.get(key) if isinstance(body, dict) else None
        try:
            if not isinstance(items, list):
                raise TypeError(f"no list {key!r} in the answer")
            return [from_json(cls, item) for item in items]
        except (TypeError, ValueError) as exc:
            raise UnexpectedResponse(response.status_code, "BAD_RESPONSE", str(exc)) from exc

    return parse


def _as(cls: type[T], key: str | None = None) -> Callable[[httpx.Response], T]:
    return lambda response: parsed(cls, response, key)


def _nothing(_: httpx.Response) -> None:
    return None


def _plain(values: Any) -> Any:
    """JSON-ready rows: numpy arrays (anything with ``tolist``) become lists."""
    return values.tolist() if hasattr(values, "tolist") else values


def _page(**query: Any) -> dict[str, Any]:
    return {k: v for k, v in query.items() if v is not None}


# ---------------------------------------------------------------------- health
def live() -> Operation[Health]:
    """``GET /health/live``: the process is up."""
    return one(Call("GET", "/health/live"), _as(Health))


def ready() -> Operation[Health]:
    """``GET /health/ready``: database reachable and schema at head.

    Not ready is an answer, not an error: ``status == "unavailable"`` (no retries)."""
    return one(Call("GET", "/health/ready", answers=frozenset({503}), retry="connect"), _as(Health))


# -------------------------------------------------------------------- registry
def list_models(limit: int = 100, offset: int = 0) -> Operation[ModelPage]:
    """``GET /v1/models``: one page of registered models and the total count."""
    return one(Call("GET", "/v1/models", params=_page(limit=limit, offset=offset)), _as(ModelPage))


def get_model(name: str) -> Operation[Model]:
    """``GET /v1/models/{name}`` (NotFound if it does not exist)."""
    return one(Call("GET", _model(name)), _as(Model))


def list_versions(name: str, limit: int = 100, offset: int = 0) -> Operation[list[Version]]:
    """``GET /v1/models/{name}/versions``: the model's versions, newest first."""
    call = Call("GET", _model(name, "versions"), params=_page(limit=limit, offset=offset))
    return one(call, _listed(Version, "versions"))


def get_version(name: str, version: int) -> Operation[Version]:
    """``GET /v1/models/{name}/versions/{version}``."""
    return one(Call("GET", _model(name, "versions", version)), _as(Version))


def set_alias(name: str, alias: str, version: int, note: str = "") -> Operation[Alias]:
    """``PUT /v1/models/{name}/aliases/{alias}``: create or move the alias (admin);
    ``note`` says why (kept in the alias's history)."""
    body: dict[str, Any] = {"version": version}
    if note:
        body["note"] = note
    call = Call("PUT", _model(name, "aliases", alias), json=body)
    return one(call, _as(Alias))


def delete_alias(name: str, alias: str) -> Operation[None]:
    """``DELETE /v1/models/{name}/aliases/{alias}`` (admin)."""
    return one(Call("DELETE", _model(name, "aliases", alias)), _nothing)


def list_algorithms() -> Operation[list[Algorithm]]:
    """``GET /v1/algorithms``: what can be trained, with parameters and sources."""
    return one(Call("GET", "/v1/algorithms"), _listed(Algorithm, "algorithms"))


# -------------------------------------------------------------------- training
def _csv_call(
    path: str,
    query: dict[str, Any] | None,
    csv: str | os.PathLike[str] | bytes,
    label_column: str,
    description: str | None,
    params: TrainingParams,
) -> Call:
    if isinstance(csv, bytes):
        name, content = "data.csv", csv
    else:
        name, content = Path(csv).name, Path(csv).read_bytes()
    form = {"label_column": label_column, "params": json.dumps(params)}
    if description is not None:
        form["description"] = description
    files = {"file": (name, content, "text/csv")}
    return Call("POST", path, params=query, files=files, data=form, retry="connect")


def _trained(response: httpx.Response) -> Version | Job:
    if response.status_code == 202:
        return parsed(Job, response)
    return parsed(Version, response)


def train(
    name: str,
    features: Rows | None = None,
    labels: Sequence[Label] | Any | None = None,
    *,
    csv: str | os.PathLike[str] | bytes | None = None,
    label_column: str = "label",
    feature_names: Sequence[str] | None = None,
    description: str | None = None,
    tags: Mapping[str, str] | None = None,
    mode: TrainMode = "auto",
    dataset: str | None = None,
    dataset_format: Literal["parquet", "csv"] | None = None,
    columns: Sequence[str] | None = None,
    **params: Unpack[TrainingParams],
) -> Operation[Version | Job]:
    """``POST /v1/models/{name}/versions``: train and register the next version.

    Data: ``features`` (rows, e.g. a list of lists or a numpy array) and ``labels``;
    or ``csv``, a path or the bytes of a CSV file with a header row (``label_column``
    names the labels; ``tags`` and ``feature_names`` do not apply); or ``dataset``, the
    URI of a file the *server* reads (``file:///...`` under its COSTWISE_DATA_ROOTS, or
    ``https://...``; ``dataset_format`` when the suffix does not tell, ``label_column``,
    optional feature ``columns``; see docs/data.md). ``mode``: ``sync``
    trains within the request and returns the :class:`Version`; ``job`` returns a
    queued :class:`Job` at once (poll it with :meth:`wait_for_job`); ``auto`` lets the
    server choose by size. Never retried once the request may have been sent (a retry
    could register a second version); see :mod:`costwise._core`.
    """
    path = _model(name, "versions")
    query = None if mode == "auto" else {"mode": mode}
    if dataset is not None:
        if features is not None or labels is not None or csv is not None:
            raise ValueError("give either dataset, csv, or features and labels")
        ref: dict[str, Any] = {"uri": dataset, "label_column": label_column}
        if dataset_format is not None:
            ref["format"] = dataset_format
        if columns is not None:
            ref["columns"] = list(columns)
        body_ref: dict[str, Any] = {"dataset": ref, **params}
        if description is not None:
            body_ref["description"] = description
        if tags is not None:
            body_ref["tags"] = dict(tags)
        return one(Call("POST", path, params=query, json=body_ref, retry="connect"), _trained)
    if csv is not None:
        if features is not None or labels is not None:
            raise ValueError("give either csv or features and labels, not both")
        return one(_csv_call(path, query, csv, label_column, description, params), _trained)
    if features is None or labels is None:
        raise ValueError("give features and labels (or csv)")
    body: dict[str, Any] = {"features": _plain(features), "labels": _plain(labels), **params}
    if feature_names is not None:
        body["feature_names"] = list(feature_names)
    if description is not None:
        body["description"] = description
    if tags is not None:
        body["tags"] = dict(tags)
    return one(Call("POST", path, params=query, json=body, retry="connect"), _trained)


# ---------------------------------------------------------------------- jobs
def recalibrate(
    name: str,
    version: int,
    instances: Rows | None = None,
    labels: Sequence[Label] | Any | None = None,
    *,
    records: Records | None = None,
    since: str | None = None,
    until: str | None = None,
    from_outcomes: bool = False,
    method: Literal["platt", "isotonic"] = "platt",
    holdout_fraction: float | None = None,
    random_state: int | None = None,
) -> Operation[Version]:
    """``POST .../versions/{version}/recalibrate``: a new calibration map, no retraining.

    Labelled rows: ``instances`` (or ``records``) and ``labels``; or ``from_outcomes=True``
    with an optional ``since`` / ``until`` (ISO 8601): the version's logged predictions
    whose outcomes were reported. Returns the new :class:`Version` (its
    ``parent_version`` is ``version``; ``metrics["recalibration"]`` has the calibration
    before and after on held-out rows). Never retried once sent (see :meth:`train`).
    """
    body: dict[str, Any] = {"method": method}
    if from_outcomes or since is not None or until is not None:
        if instances is not None or records is not None or labels is not None:
            raise ValueError("give either labelled rows or from_outcomes/since/until, not both")
        body["from_outcomes"] = _page(since=since, until=until)
    else:
        if (instances is None) == (records is None) or labels is None:
            raise ValueError("give instances or records, and labels (or from_outcomes=True)")
        if instances is not None:
            body["instances"] = _plain(instances)
        else:
            body["records"] = [dict(r) for r in records or []]
        body["labels"] = _plain(labels)
    body.update(_page(holdout_fraction=holdout_fraction, random_state=random_state))
    call = Call(
        "POST", _model(name, "versions", version, "recalibrate"), json=body, retry="connect"
    )
    return one(call, _as(Version))


def estimate_priors(
    name: str,
    version: int | None = None,
    since: str | None = None,
    until: str | None = None,
    *,
    record: bool = False,
) -> Operation[PriorEstimate]:
    """The class priors of recent traffic, estimated by EM from the logged probabilities.

    ``GET /v1/models/{name}/priors`` (role reader): computed, recorded nothing
    (``id`` None, ``recorded`` False). With ``record=True``, ``POST`` (role admin): the
    estimate is recorded and ``priors="estimated"`` in :meth:`predict` applies it from
    then on (the latest recorded one of the version)."""
    if record:
        body = _page(version=version, since=since, until=until)
        call = Call("POST", _model(name, "priors"), json=body, retry="connect")
        return one(call, _as(PriorEstimate))
    query = _page(version=version, since=since, until=until)
    return one(Call("GET", _model(name, "priors"), params=query), _as(PriorEstimate))


def get_job(job_id: str) -> Operation[Job]:
    """``GET /v1/jobs/{id}``: status, phase, progress, timings, and the version or error."""
    return one(Call("GET", f"/v1/jobs/{_seg(job_id)}"), _as(Job))


def list_jobs(
    model: str | None = None, status: str | None = None, limit: int = 100, offset: int = 0
) -> Operation[JobPage]:
    """``GET /v1/jobs``: jobs, newest first, optionally of one model and/or status."""
    query = _page(model=model, status=status, limit=limit, offset=offset)
    return one(Call("GET", "/v1/jobs", params=query), _as(JobPage))


def cancel_job(job_id: str) -> Operation[Job]:
    """``POST /v1/jobs/{id}/cancel``: a queued job is cancelled at once, a running one at
    its next round (``cancel_requested``); a finished one raises Conflict."""
    return one(Call("POST", f"/v1/jobs/{_seg(job_id)}/cancel", retry="connect"), _as(Job))


def batch(
    name: str,
    input: str,
    output: str,
    *,
    format: Literal["parquet", "csv"] | None = None,
    columns: Sequence[str] | None = None,
    costs: Mapping[str, float | Mapping[str, str]] | None = None,
    cost_matrix: Sequence[Sequence[float]] | None = None,
    priors: Sequence[float] | None = None,
    version: int | None = None,
    alias: str | None = None,
    id_columns: Sequence[str] = (),
    shadow: bool = False,
    actions: Sequence[str] | None = None,
) -> Operation[Job]:
    """``POST /v1/models/{name}/batch``: decide every row of a data set, as a job.

    ``input``: a reference the server reads (``file:///...`` under its data roots, or an
    ``https://`` URL); ``output``: a ``file:///...`` directory under its data roots that
    does not exist yet (Parquet, one file per input partition, moved there once
    complete). ``costs``: named binary costs, each a number or ``{"column": name}`` for a
    per-row cost from the input (``{"c_fn": {"column": "amount"}, "c_fp": 5}``); or one
    ``cost_matrix``. ``actions`` names the columns of a K x A ``cost_matrix`` (each cell
    a number or ``{"column": name}``): the rows decide among them; ``c_review`` in
    ``costs`` adds a review action. Returns the queued :class:`Job` (``kind == "batch"``); wait with
    :meth:`wait_for_job`, then ``job.result`` holds the rows, decisions per class and
    total expected cost. ``shadow=True``: the model's shadow version decides the rows
    too (``shadow_*`` output columns, ``job.result["shadow"]``). Never retried once sent.
    """
    source: dict[str, Any] = {"uri": input}
    if format is not None:
        source["format"] = format
    if columns is not None:
        source["columns"] = list(columns)
    body: dict[str, Any] = {"input": source, "output": {"uri": output}}
    if costs is not None:
        body["costs"] = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in costs.items()}
    if cost_matrix is not None:
        body["cost_matrix"] = _plain(cost_matrix)
    if actions is not None:
        body["actions"] = list(actions)
    body.update(_page(priors=None if priors is None else list(priors), version=version))
    body.update(_page(alias=alias))
    if id_columns:
        body["id_columns"] = list(id_columns)
    if shadow:
        body["shadow"] = True
    return one(Call("POST", _model(name, "batch"), json=body, retry="connect"), _as(Job))


def wait_for_job(
    job_id: str,
    on_progress: Callable[[Job], None] | None = None,
    poll_interval: float = 0.5,
    timeout: float | None = None,
) -> Operation[Job]:
    """Poll the job until it finishes; returns it (check ``status``).

    ``on_progress(job)`` is called after every poll (a plain function, also with the
    async client). Raises :class:`JobTimeout` after ``timeout`` seconds (the job goes on).
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        job = yield from get_job(job_id)
        if on_progress is not None:
            on_progress(job)
        if job.finished:
            return job
        if deadline is not None and time.monotonic() + poll_interval > deadline:
            raise JobTimeout(
                None, "JOB_TIMEOUT", f"job {job_id} still {job.status} after {timeout} s"
            )
        yield Sleep(poll_interval)


# ---------------------------------------------------------------------- keys
def create_key(name: str, role: Literal["admin", "predictor", "reader"]) -> Operation[CreatedKey]:
    """``POST /v1/keys`` (admin): a new API key; ``.key`` is shown this once only."""
    call = Call("POST", "/v1/keys", json={"name": name, "role": role}, retry="connect")
    return one(call, _as(CreatedKey))


def list_keys() -> Operation[list[ApiKey]]:
    """``GET /v1/keys`` (admin): every key, without secrets."""
    return one(Call("GET", "/v1/keys"), _listed(ApiKey, "keys"))


def revoke_key(key_id: int) -> Operation[None]:
    """``DELETE /v1/keys/{id}`` (admin; idempotent). The last admin key cannot be revoked."""
    return one(Call("DELETE", f"/v1/keys/{key_id}"), _nothing)
