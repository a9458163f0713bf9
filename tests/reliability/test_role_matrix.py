"""Proof: every route x every role, as docs/authentication.md says; a reader changes nothing.

The table of ``docs/authentication.md`` (method, route template, minimum role) is parsed
from the page. It must list exactly the routes of the app -- every operation of its
OpenAPI document plus the routes outside it (``/docs``, ``/console``, ``HEAD`` of the
probes, ...) -- and agree with the declaration the service decides from
(:data:`app.api.access.permissions.PERMISSIONS`): a route missing from the page fails here.

Then, with authentication on, on SQLite and PostgreSQL:

* the whole matrix is walked: each route with no key, a reader, a predictor and an admin
  key; a caller below the minimum role gets exactly 401 (no key) or 403, any other
  caller is let through (neither 401 nor 403, and never a 5xx);
* on a seeded model (two versions, an alias, logged predictions with outcomes, a recorded
  prior estimate, a finished job), the reader makes every ``GET``/``HEAD`` it may (with
  several windows, costs and plot kinds, and a loop of 20 priors reads) and tries every
  other route (403). Every row of every table is then the same as before, and predict
  and /v2 infer (``"priors": "estimated"`` and explicit costs) give the same bits.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from sqlalchemy import MetaData, create_engine, select
from sqlalchemy.pool import NullPool

from app.api.access.auth import required_role
from app.api.access.permissions import PERMISSIONS
from app.api.main import create_app
from app.db import make_engine, make_session_factory
from app.services.access.keys import create_key
from app.settings import Settings
from tests.app.api.conftest import dataset, train_body
from tests.reliability.conftest import write_result

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "authentication.md"
CALLERS = (None, "reader", "predictor", "admin")
RANK = {None: -1, "reader": 0, "predictor": 1, "admin": 2}
ROW = re.compile(r"^\| `([A-Z]+)` \| `([^`]+)` \| (none \(open\)|`(\w+)`) \| (.+) \|$")
Table = dict[tuple[str, str], str | None]


def documented_table() -> Table:
    """``(method, route) -> minimum role (None: open)`` from docs/authentication.md."""
    text = PAGE.read_text()
    block = text[text.index("<!-- permissions:begin -->") : text.index("<!-- permissions:end -->")]
    table: Table = {}
    for line in block.splitlines()[3:]:  # the marker, the header and its rule
        m = ROW.match(line)
        assert m is not None, f"docs/authentication.md: unreadable row {line!r}"
        assert (m[1], m[2]) not in table, f"docs/authentication.md: {m[1]} {m[2]} twice"
        assert m[5].strip(), f"docs/authentication.md: {m[1]} {m[2]} says no reason"
        table[(m[1], m[2])] = m[4]
    return table


def app_routes(client: TestClient) -> set[tuple[str, str]]:
    """Every (method, path template) the app answers: its OpenAPI operations and the
    routes left out of the OpenAPI document."""
    spec = client.get("/openapi.json").json()
    found = {(m.upper(), p) for p, ops in spec["paths"].items() for m in ops}
    for route in iter_route_contexts(client.app.routes):  # type: ignore[attr-defined]
        for method in getattr(route, "methods", None) or ():
            found.add((method, route.path))
    return found


@pytest.fixture
def seeded(database_url: str) -> Iterator[dict[str, Any]]:
    """Auth on; keys per role (cached 300 s, so a key's ``last_used_at`` is written once);
    model ``m`` with versions 1-2, alias ``staging``, 200 logged predictions, 100
    outcomes, a recorded prior estimate and a finished training job."""
    sessions = make_session_factory(engine := make_engine(database_url))
    keys = {role: create_key(sessions, f"{role}-key", role)[1] for role in CALLERS[1:]}
    spare = create_key(sessions, "spare", "reader")[0].id
    engine.dispose()
    settings = Settings(database_url=database_url, auth="on", key_cache_seconds=300)
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        admin = _bearer(keys["admin"])
        r = c.post("/v1/models/m/versions", json=train_body(), headers=admin)
        assert r.status_code == 201, r.text
        r = c.post("/v1/models/m/versions?mode=job", json=train_body(), headers=admin)
        assert r.status_code == 202, r.text
        job_id = r.json()["id"]
        for _ in range(600):
            job = c.get(f"/v1/jobs/{job_id}", headers=admin).json()
            if job["status"] in ("succeeded", "failed", "cancelled"):
                break
            time.sleep(0.05)
        assert job["status"] == "succeeded", job
        assert c.put("/v1/models/m/aliases/staging", json={"version": 1}, headers=admin)
        X, y = dataset(200, seed=9)
        r = c.post(
            "/v1/models/m/predict",
            json={"instances": X.tolist()},
            headers=_bearer(keys["predictor"]),
        )
        assert r.status_code == 200, r.text
        ids = [p["id"] for p in r.json()["predictions"]]
        assert c.app.state.services.prediction_log.flush(10.0)  # type: ignore[attr-defined]
        outcomes = [{"id": i, "label": int(t)} for i, t in zip(ids[:100], y[:100], strict=True)]
        r = c.post("/v1/models/m/outcomes", json={"outcomes": outcomes}, headers=admin)
        assert r.status_code == 200 and r.json()["counts"]["recorded"] == 100, r.text
        r = c.post("/v1/models/m/priors", json={"version": 2}, headers=admin)
        assert r.status_code == 201, r.text
        yield {"client": c, "keys": keys, "spare": spare, "job_id": job_id, "url": database_url}


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def concrete(path: str, seeded: dict[str, Any]) -> str:
    """The template with the seeded names and ids in place of its parameters."""
    values = {
        "name": "m",
        "version": "1",
        "kind": "reliability",
        "alias": "staging",
        "job_id": seeded["job_id"],
        "key_id": str(seeded["spare"]),
        "webhook_id": "1",
        "asset": "console.js",
    }
    return re.sub(r"\{(\w+)\}", lambda m: values[m[1]], path)


def test_the_documented_table_is_the_declaration_and_covers_every_route(
    seeded: dict[str, Any],
) -> None:
    table = documented_table()
    declared = {(p.method, p.path): p.role for p in PERMISSIONS}
    assert table == declared, (
        "docs/authentication.md: run python scripts/permissions_table.py --write"
    )
    routes = app_routes(seeded["client"])
    assert routes - set(table) == set(), "routes missing from docs/authentication.md"
    assert set(table) - routes == set(), "rows of docs/authentication.md for no route"
    for (method, path), role in table.items():
        assert required_role(method, path) == role, (method, path)
        if method not in ("GET", "HEAD"):  # a write is never open nor a reader's
            assert role in ("predictor", "admin"), (method, path, role)


def test_every_route_by_every_role(seeded: dict[str, Any]) -> None:
    c, keys = seeded["client"], seeded["keys"]
    failures = []
    for (method, template), minimum in documented_table().items():
        path = concrete(template, seeded)
        body = {} if method in ("POST", "PUT", "PATCH") else None
        for caller in CALLERS:
            headers = {} if caller is None else _bearer(keys[caller])
            r = c.request(method, path, json=body, headers=headers)
            if minimum is not None and RANK[caller] < RANK[minimum]:
                ok = r.status_code == (401 if caller is None else 403)
            else:
                ok = r.status_code not in (401, 403) and r.status_code < 500
            if not ok:
                failures.append((method, path, caller, minimum, r.status_code, r.text[:160]))
    assert failures == []


def _snapshot(url: str) -> dict[str, list[str]]:
    """Every row of every table, as sorted text (a row written, changed or deleted shows)."""
    engine = create_engine(url, poolclass=NullPool)
    try:
        meta = MetaData()
        meta.reflect(engine)
        with engine.connect() as conn:
            return {
                name: sorted(repr(tuple(row)) for row in conn.execute(select(table)))
                for name, table in meta.tables.items()
            }
    finally:
        engine.dispose()


def _decisions(c: TestClient, key: str) -> str:
    """Predict and /v2 infer of fixed rows under estimated priors and explicit costs, as
    text (same text: same bits), without the per-request ids."""
    X, _ = dataset(50, seed=11)
    out = []
    estimated, costs = {"priors": "estimated"}, {"costs": {"c_fp": 1, "c_fn": 4}}
    for extra, version in ((estimated, None), (estimated, 2), (costs, None), (costs, 1)):
        body: dict[str, Any] = {"instances": X.tolist(), **extra}
        if version is not None:
            body["version"] = version
        r = c.post("/v1/models/m/predict", json=body, headers=_bearer(key))
        assert r.status_code == 200, r.text
        answer = r.json()
        for p in answer["predictions"]:
            p.pop("id")
        out.append(answer)
    tensor = {"name": "x", "shape": [50, 4], "datatype": "FP64", "data": X.ravel().tolist()}
    r = c.post(
        "/v2/models/m/infer",
        json={"inputs": [tensor], "parameters": {"priors": "estimated", "c_fp": 1, "c_fn": 4}},
        headers=_bearer(key),
    )
    assert r.status_code == 200, r.text
    answer = r.json()
    answer.pop("id", None)
    answer["outputs"] = [o for o in answer["outputs"] if o["name"] != "id"]
    out.append(answer)
    return json.dumps(out, sort_keys=True)


def _reader_requests(seeded: dict[str, Any], kinds: list[str]) -> list[tuple[str, str]]:
    """Every GET/HEAD a reader may make, with several windows, costs and kinds; then
    every other route (each must be refused)."""
    t = "2026-01-01T00:00:00Z"
    variants = {
        "/v1/models/{name}/priors": [
            "", "?version=1", "?version=2&since=2000-01-01T00:00:00Z", f"?until={t}",
            "?since=2000-01-01T00:00:00%2B14:00", "?until=9999-12-31T23:59:59-14:00",
        ],
        "/v1/models/{name}/monitoring": ["", "?bucket=hour", "?version=1", f"?until={t}"],
        "/v1/models/{name}/versions/{version}/whatif": [
            "?c_fp=1&c_fn=5", "?c_fp=1e308&c_fn=1e308", "?c_fp=5&c_fn=1&c_tn=0.5",
        ],
        "/v1/models/{name}/versions/{version}/whatif/matrix": [
            "?cost_matrix=[[0,1],[5,0]]", "?cost_matrix=[[0,1],[1e308,0]]",
        ],
        "/v1/models/{name}/versions/{version}/plots/{kind}": [
            "?format=svg", "?format=json", "?ratio_min=0.5&ratio_max=8",
        ],
        "/v1/jobs": ["", "?model=m", "?status=succeeded"],
        "/v1/models/{name}/compare": ["?a=1&b=2", "?a=staging&b=2&mode=unpaired", "?a=1&b=1"],
    }  # fmt: skip
    reads, refused = [], []
    for (method, template), minimum in documented_table().items():
        allowed = minimum is None or RANK["reader"] >= RANK[minimum]
        if allowed and method in ("GET", "HEAD"):
            templates = [template]
            if "{kind}" in template:
                templates = [template.replace("{kind}", k) for k in kinds]
            for tpl in templates:
                for query in variants.get(template, [""]):
                    reads.append((method, concrete(tpl, seeded) + query))
            if "{version}" in template:  # the other version too
                reads.append((method, concrete(template, seeded).replace("/1", "/2", 1)))
        elif not allowed:
            refused.append((method, concrete(template, seeded)))
    reads += [("GET", "/v1/models/m/priors")] * 20  # a loop of reads
    return reads + refused


def test_a_readers_requests_write_nothing_and_change_no_decision(
    seeded: dict[str, Any],
) -> None:
    c, keys = seeded["client"], seeded["keys"]
    reader = _bearer(keys["reader"])
    kinds = [
        p["kind"] for p in c.get("/v1/models/m/versions/1/plots", headers=reader).json()["plots"]
    ]
    before = _decisions(c, keys["predictor"])
    log = c.app.state.services.prediction_log  # type: ignore[attr-defined]
    assert log.flush(10.0)
    rows_before = _snapshot(seeded["url"])
    assert len(rows_before["prior_estimates"]) == 1 and len(rows_before["logged_predictions"]) > 200
    answered: dict[int, int] = {}
    requests = _reader_requests(seeded, kinds)
    for method, path in requests:
        r = c.request(method, path, headers=reader)
        answered[r.status_code] = answered.get(r.status_code, 0) + 1
        assert r.status_code < 500 and r.status_code != 401, (method, path, r.text[:300])
    assert answered.get(200, 0) >= 60 and answered.get(403, 0) >= 15, answered
    assert log.flush(10.0)
    rows_after = _snapshot(seeded["url"])
    kind = "postgres" if seeded["url"].startswith("postgresql") else "sqlite"
    write_result(
        f"role_matrix_reader_{kind}",
        {
            "requests": len(requests),
            "statuses": {str(k): v for k, v in sorted(answered.items())},
            "tables": len(rows_before),
            "rows": sum(len(v) for v in rows_before.values()),
        },
    )
    assert _decisions(c, keys["predictor"]) == before
    assert rows_after == rows_before
