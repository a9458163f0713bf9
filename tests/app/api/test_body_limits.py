"""Every body through one path (app/api/bodies/limits.py): each POST/PUT/PATCH route of
the app declares its body, none lets FastAPI read one, and the declared limits hold."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from app.api.bodies.limits import RouteBody
from app.api.main import create_app
from app.errors import PayloadTooLarge
from app.services.common.inputs import CSV_BLOCK_ROWS, parse_csv
from app.settings import Settings

BODY_METHODS = {"POST", "PUT", "PATCH"}
ADMIN_KEY = "admin-" + secrets.token_urlsafe(32)


def api_routes(app: FastAPI) -> list[tuple[str, APIRoute]]:
    """(path, route) of every route of the app, included routers expanded."""
    try:
        from fastapi.routing import iter_route_contexts  # FastAPI >= 0.16x: lazy routers
    except ImportError:  # pragma: no cover - older FastAPI lists its routes flat
        return [(r.path, r) for r in app.routes if isinstance(r, APIRoute)]
    out = []
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, APIRoute):
            out.append((context.path or route.path, route))
    return out


def declared_bodies(route: APIRoute) -> list[RouteBody]:
    found: list[RouteBody] = []
    stack = list(route.dependant.dependencies)
    while stack:
        dep = stack.pop()
        if isinstance(dep.call, RouteBody):
            found.append(dep.call)
        stack.extend(dep.dependencies)
    return found


@pytest.mark.parametrize("auth", ["off", "on"])
def test_every_body_route_declares_its_body_once(tmp_path: Path, auth: str) -> None:
    """A route with a body parameter of FastAPI's own would read and decode it on the
    event loop, under no limit of its own: none may have one, and every POST/PUT/PATCH
    route declares exactly one RouteBody."""
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'r.db'}",
        auto_migrate=True,
        auth=auth,
        bootstrap_admin_key=ADMIN_KEY if auth == "on" else None,
    )
    app = create_app(settings)
    try:
        routes = [(p, r) for p, r in api_routes(app) if r.methods & BODY_METHODS]
        assert len(routes) >= 12, [p for p, _ in routes]
        for path, route in routes:
            assert route.body_field is None, f"{path}: FastAPI reads this body itself"
            assert len(declared_bodies(route)) == 1, f"{path}: declares no RouteBody"
    finally:
        app.state.services.engine.dispose()


@pytest.fixture
def small_offload(database_url: str) -> Iterator[TestClient]:
    """Bodies of 1 KiB or more go to the parse worker (one process)."""
    settings = Settings(database_url=database_url, parse_offload_bytes=1024)
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        yield c


def outcomes(n: int) -> dict[str, Any]:
    return {"outcomes": [{"id": f"p{i}", "label": 1} for i in range(n)]}


def test_outcomes_over_the_item_limit_are_413_small_or_large(
    client: TestClient, small_offload: TestClient
) -> None:
    # small, parsed on the event loop: the exact count
    r = client.post("/v1/models/m/outcomes", json=outcomes(10_001))
    assert r.status_code == 413, r.text
    assert r.json()["field"] == "outcomes" and r.json()["limit"] == 10_000
    assert "10001 items" in r.json()["detail"]
    # large, counted in the worker before decoding
    r = small_offload.post("/v1/models/m/outcomes", json=outcomes(10_001))
    assert r.status_code == 413, r.text
    assert "before decoding" in r.json()["detail"] and r.json()["field"] == "outcomes"


def test_outcomes_at_the_item_limit_are_decoded(small_offload: TestClient) -> None:
    """10,000 outcomes (parsed in the worker) reach the service: unknown ids, not a 413."""
    r = small_offload.post("/v1/models/m/outcomes", json=outcomes(10_000))
    assert r.status_code in (200, 404), r.text  # 404: no model m; the body was accepted
    assert r.json().get("code") != "PAYLOAD_TOO_LARGE"


@pytest.mark.parametrize(
    ("method", "path", "limit"),
    [
        ("POST", "/v1/models/m/outcomes", 10_000 * 1024 + 64 * 1024),
        ("POST", "/v1/keys", 64 * 1024),
        ("PUT", "/v1/models/m/aliases/production", 64 * 1024),
        ("PATCH", "/v1/models/m", 64 * 1024),
        ("POST", "/v1/models/m/batch", 4 * 1024 * 1024),
        ("POST", "/v1/jobs/j/cancel", 64 * 1024),
    ],
)
def test_a_body_over_the_route_limit_is_413_naming_it(
    database_url: str, method: str, path: str, limit: int
) -> None:
    settings = Settings(database_url=database_url, max_body_bytes=64 * 2**20)
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        body = b'{"x": "' + b"a" * limit + b'"}'
        r = c.request(method, path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413, r.text
    assert r.json() == {
        "detail": f"request body is larger than the limit of {limit} bytes "
        "(this route's items are bounded)",
        "code": "PAYLOAD_TOO_LARGE",
        "field": "body",
        "limit": limit,
    }


def test_json_bodies_keep_their_error_shapes(client: TestClient) -> None:
    r = client.post(
        "/v1/keys", content=b'{"name": "x", "role":', headers={"content-type": "application/json"}
    )
    assert r.status_code == 400 and r.json()["code"] == "MALFORMED_REQUEST", r.text
    r = client.post("/v1/keys", json={"name": "x", "role": "king"})
    assert r.status_code == 422 and r.json()["field"] == "role", r.text
    r = client.put("/v1/models/m/aliases/production", json={"version": 2**40})
    assert r.status_code == 422 and r.json()["field"] == "version", r.text
    r = client.post(
        "/v1/models/m/outcomes", content=b"id,label", headers={"content-type": "text/csv"}
    )
    assert r.status_code == 415 and r.json()["code"] == "UNSUPPORTED_MEDIA_TYPE", r.text


def test_csv_limits_stop_the_parse_at_the_first_row_past_them() -> None:
    rows = b"x,y,label\n" + b"1,2,0\n" * 50
    with pytest.raises(PayloadTooLarge) as too_many_rows:
        parse_csv(rows, "label", max_rows=10)
    assert "11 rows" in too_many_rows.value.detail  # stopped there, not at 50
    with pytest.raises(PayloadTooLarge) as too_many_cells:
        parse_csv(rows, "label", max_rows=100, max_cells=30)
    assert "16 rows x 2 features" in too_many_cells.value.detail
    with pytest.raises(PayloadTooLarge):
        parse_csv(rows, "label", max_features=1)


def test_csv_rows_in_blocks_are_the_rows() -> None:
    n = CSV_BLOCK_ROWS * 2 + 7
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(n, 3)), 3)
    lines = "\n".join(f"{a},{b},{c},{i % 2}" for i, (a, b, c) in enumerate(X.tolist()))
    got, y, names = parse_csv(("a,b,c,label\n" + lines + "\n").encode(), "label")
    assert names == ["a", "b", "c"] and got.shape == (n, 3)
    np.testing.assert_array_equal(got, X)
    np.testing.assert_array_equal(y, np.arange(n) % 2)
