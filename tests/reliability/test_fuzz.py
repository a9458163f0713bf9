"""Proof 1: schemathesis fuzzes every operation of the service's own OpenAPI document.

The app is the real factory on a SQLite registry seeded with model ``fraud`` (two
versions, alias ``production``), run in-process over ASGI. Each generated case is sent
twice: as generated, and with its path parameters pointed at the seeded model (``name``
-> ``fraud``, ``version`` -> 1, ``alias`` -> ``production``) so that predict, evaluate,
versions and aliases hit real code paths, not only 404s. Checks: no 5xx, documented
status codes, documented content types, bodies that conform to their response schemas.

Bounded for CI: ``COSTWISE_FUZZ_EXAMPLES`` examples per operation (default 25) and a
total budget of ``COSTWISE_FUZZ_BUDGET_S`` seconds (default 75) after which remaining
examples are not sent. The number of requests sent is written to
``bench/reliability/out/fuzz.json``.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis import checks as st_checks

from app.api.main import create_app
from app.db import upgrade_to_head
from app.settings import Settings
from tests.reliability.conftest import train_body, write_result

MAX_EXAMPLES = int(os.environ.get("COSTWISE_FUZZ_EXAMPLES", "25"))
BUDGET_S = float(os.environ.get("COSTWISE_FUZZ_BUDGET_S", "75"))
CHECKS = [
    st_checks.not_a_server_error,
    st_checks.status_code_conformance,
    st_checks.content_type_conformance,
    st_checks.response_schema_conformance,
]
SEEDED = {"name": "fraud", "version": 1, "alias": "production"}

STATS: dict[str, Any] = {
    "cases": 0,
    "requests": 0,
    "status": Counter(),
    "operations": set(),
    "no_negative_cases": set(),
}
START: list[float] = []
FAILURES: dict[str, list[str]] = {}


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    """The real app on a seeded SQLite registry (small limits keep training cheap)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'registry.db'}"
    upgrade_to_head(url)
    app = create_app(
        Settings(
            database_url=url,
            max_predict_rows=500,
            max_train_rows=400,
            max_rounds=30,
            max_features=20,
            max_body_bytes=1_000_000,
        )
    )
    with TestClient(app) as client:
        for seed in (0, 1):
            r = client.post("/v1/models/fraud/versions", json=train_body(seed=seed))
            assert r.status_code == 201, r.text
        r = client.put("/v1/models/fraud/aliases/production", json={"version": 1})
        assert r.status_code == 200, r.text
        yield app
    started = START[0] if START else time.monotonic()
    write_result(
        "fuzz",
        {
            "cases": STATS["cases"],
            "requests": STATS["requests"],
            "operations": sorted(STATS["operations"]),
            "operations_without_invalid_inputs": sorted(STATS["no_negative_cases"]),
            "status_counts": dict(sorted(STATS["status"].items())),
            "max_examples_per_operation": MAX_EXAMPLES,
            "budget_s": BUDGET_S,
            "failures": {k: v[:3] for k, v in FAILURES.items()},
            "seconds": round(time.monotonic() - started, 1),
        },
    )


def _validate(case: Any) -> None:
    """Send ``case`` and run the checks; a failure is recorded (first 3 per kind) and the
    run goes on, so one run lists every distinct problem."""
    STATS["requests"] += 1
    try:
        response = case.call_and_validate(checks=CHECKS)
    except (Exception, BaseExceptionGroup) as error:  # every failure is collected, reported
        failures = error.exceptions if isinstance(error, BaseExceptionGroup) else [error]
        for failure in failures:
            key = f"{case.method} {case.path}: {type(failure).__name__}: {str(failure)[:300]}"
            FAILURES.setdefault(key.split("\n")[0], []).append(case.as_curl_command()[:600])
        STATS["status"]["failed"] += 1
        return
    STATS["status"][str(response.status_code)] += 1


def _send(case: Any) -> None:
    """Send ``case`` as generated, then again aimed at the seeded model."""
    if time.monotonic() - START[0] > BUDGET_S:
        return  # total budget spent: later examples are generated but not sent
    STATS["cases"] += 1
    STATS["operations"].add(f"{case.method} {case.path}")
    _validate(case)
    params = case.path_parameters or {}
    seeded = {k: SEEDED[k] for k in params if k in SEEDED}
    if seeded:
        case.path_parameters = {**params, **seeded}
        _validate(case)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_fuzz_every_operation(fuzz_app: FastAPI, mode: GenerationMode) -> None:
    """Generated requests (valid, then invalid) never get a 5xx; every response matches the
    document (status code, content type, body schema)."""
    if not START:
        START.append(time.monotonic())
    schema = schemathesis.openapi.from_asgi("/openapi.json", fuzz_app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10, [op.label for op in operations]
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case: Any) -> None:
            _send(case)

        try:
            fuzz()
        except Unsatisfiable:  # no invalid input exists for this operation (e.g. no params)
            STATS["no_negative_cases"].add(operation.label)
    assert not FAILURES, "\n".join(f"{k}\n    {v[0]}" for k, v in FAILURES.items())
