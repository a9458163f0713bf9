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
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from pydantic import SecretStr
from schemathesis import GenerationMode
from schemathesis import checks as st_checks
from schemathesis.core.result import Err

from app.api.main import create_app
from app.db import upgrade_to_head
from app.settings import Settings
from tests.app.api.conftest import train_body
from tests.reliability.conftest import write_result

MAX_EXAMPLES = int(os.environ.get("COSTWISE_FUZZ_EXAMPLES", "20"))
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
    "by_variant": Counter(),
    "status_by_variant": Counter(),
}
START: list[float] = []
FAILURES: dict[str, list[str]] = {}
VARIANT = [""]  # the variant being fuzzed (failure keys start with it)


@dataclass
class Target:
    """The app under test and the keys of its callers (auth on only)."""

    app: FastAPI
    keys: dict[str, str]


@pytest.fixture(scope="module", params=["off", "on"])
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target]:
    """The real app on a seeded SQLite registry (small limits keep training cheap), with
    authentication off or on (then with an admin and a reader key)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'registry.db'}"
    upgrade_to_head(url)
    admin = "fuzz-bootstrap-admin-key-0123456789abcdef"
    app = create_app(
        Settings(
            database_url=url,
            max_predict_rows=500,
            max_train_rows=400,
            max_rounds=30,
            max_features=20,
            max_body_bytes=1_000_000,
            auth=request.param,
            bootstrap_admin_key=SecretStr(admin) if request.param == "on" else None,
        )
    )
    keys: dict[str, str] = {}
    with TestClient(app) as client:
        headers = {}
        if request.param == "on":
            keys["admin"] = admin
            headers = {"Authorization": f"Bearer {admin}"}
            r = client.post(
                "/v1/keys", json={"name": "fuzz-reader", "role": "reader"}, headers=headers
            )
            assert r.status_code == 201, r.text
            keys["reader"] = r.json()["key"]
        for seed in (0, 1):
            r = client.post(
                "/v1/models/fraud/versions", json=train_body(seed=seed), headers=headers
            )
            assert r.status_code == 201, r.text
        r = client.put("/v1/models/fraud/aliases/production", json={"version": 1}, headers=headers)
        assert r.status_code == 200, r.text
        yield Target(app, keys)


def _new_key(target: Target, role: str) -> str:
    """Create an API key of ``role`` with the admin key; returns the secret."""
    with TestClient(target.app) as client:
        r = client.post(
            "/v1/keys",
            json={"name": f"fuzz-{role}", "role": role},
            headers={"Authorization": f"Bearer {target.keys['admin']}"},
        )
    assert r.status_code == 201, r.text
    return str(r.json()["key"])


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    """Write the run's figures after the last fuzz test of the module."""
    yield
    started = START[0] if START else time.monotonic()
    write_result(
        "fuzz",
        {
            "cases": STATS["cases"],
            "requests": STATS["requests"],
            "by_variant": dict(sorted(STATS["by_variant"].items())),
            "operations": sorted(STATS["operations"]),
            "operations_without_invalid_inputs": sorted(STATS["no_negative_cases"]),
            "status_counts": dict(sorted(STATS["status"].items())),
            "status_by_variant": dict(sorted(STATS["status_by_variant"].items())),
            "max_examples_per_operation": MAX_EXAMPLES,
            "budget_s": BUDGET_S,
            "failures": {k: v[:3] for k, v in FAILURES.items()},
            "seconds": round(time.monotonic() - started, 1),
        },
    )


def _validate(case: Any, headers: dict[str, str]) -> None:
    """Send ``case`` and run the checks; a failure is recorded (first 3 per kind) and the
    run goes on, so one run lists every distinct problem."""
    STATS["requests"] += 1
    try:
        response = case.call_and_validate(headers=headers or None, checks=CHECKS)
    except (Exception, BaseExceptionGroup) as error:  # every failure is collected, reported
        failures = error.exceptions if isinstance(error, BaseExceptionGroup) else [error]
        for failure in failures:
            key = f"{VARIANT[0]} | {case.method} {case.path}: {type(failure).__name__}: {failure}"
            FAILURES.setdefault(key.split("\n")[0], []).append(case.as_curl_command()[:600])
        STATS["status"]["failed"] += 1
        STATS["status_by_variant"][f"{VARIANT[0]} failed"] += 1
        return
    STATS["status"][str(response.status_code)] += 1
    STATS["status_by_variant"][f"{VARIANT[0]} {response.status_code}"] += 1


def _send(case: Any, headers: dict[str, str], variant: str) -> None:
    """Send ``case`` as generated, then again aimed at the seeded model."""
    if time.monotonic() - START[0] > BUDGET_S:
        return  # total budget spent: later examples are generated but not sent
    STATS["cases"] += 1
    STATS["by_variant"][variant] += 1
    STATS["operations"].add(f"{case.method} {case.path}")
    _validate(case, headers)
    params = case.path_parameters or {}
    seeded = {k: SEEDED[k] for k in params if k in SEEDED}
    if seeded:
        case.path_parameters = {**params, **seeded}
        _validate(case, headers)


@pytest.mark.parametrize(
    ("caller", "mode"),
    [
        ("admin", GenerationMode.POSITIVE),
        ("admin", GenerationMode.NEGATIVE),
        ("none", GenerationMode.POSITIVE),
        ("reader", GenerationMode.POSITIVE),
    ],
)
def test_fuzz_every_operation(target: Target, caller: str, mode: GenerationMode) -> None:
    """Generated requests (valid, then invalid) never get a 5xx; every response matches the
    document (status code, content type, body schema). With auth off every caller is
    anonymous (and allowed): only the admin variants run there; with auth on, the caller
    sends the admin key, no key (401s) or a reader key (403 on writes)."""
    auth_on = bool(target.keys)
    if not auth_on and caller != "admin":
        pytest.skip("auth off: there is only the anonymous caller")
    if auth_on and caller == "reader":  # fresh: the admin variants may have revoked keys
        target.keys["reader"] = _new_key(target, "reader")
    headers = {"Authorization": f"Bearer {target.keys[caller]}"} if caller in target.keys else {}
    variant = f"auth={'on' if auth_on else 'off'} caller={caller if auth_on else 'anonymous'} {mode.value}"
    VARIANT[0] = variant
    if not START:
        START.append(time.monotonic())
    schema = schemathesis.openapi.from_asgi("/openapi.json", target.app)
    operations = []
    for result in schema.get_all_operations():
        if isinstance(result, Err):  # the document itself is broken for this operation
            pytest.fail(f"invalid operation in /openapi.json: {result.err()}")
        operations.append(result.ok())
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
            _send(case, headers, variant)

        try:
            fuzz()
        except Unsatisfiable:  # no invalid input exists for this operation (e.g. no params)
            STATS["no_negative_cases"].add(operation.label)
    mine = {k: v for k, v in FAILURES.items() if k.startswith(variant + " |")}
    assert not mine, "\n".join(f"{k}\n    {v[0]}" for k, v in mine.items())
