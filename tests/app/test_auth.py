"""Authentication and roles over HTTP, on SQLite and PostgreSQL.

The central table lists, for every operation of the API, a request that succeeds for a
caller with enough rights, and the minimum role. With auth on, each operation is called
without a key, with a reader, a predictor and an admin key: no key -> 401 (except the
open routes), a role below the minimum -> 403, otherwise the success status.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy.orm import Session, sessionmaker

from app.api.access.auth import required_role
from app.api.main import create_app
from app.db import make_engine, make_session_factory
from app.errors import Misconfigured, Unavailable
from app.services.access.auth import Authenticator
from app.services.access.keys import create_key, revoke_key
from app.settings import Settings
from tests.app.api.conftest import dataset, train_body

ROLES = ("reader", "predictor", "admin")
RANK = {None: -1, "reader": 0, "predictor": 1, "admin": 2}
ROW = [[0.1, 0.2, 0.3, 0.4]]
RECAL_X, RECAL_Y = (a.tolist() for a in dataset(120, seed=3))

# (method, path template, concrete path, json body, minimum role (None = open), success)
TABLE: list[tuple[str, str, str, Any, str | None, int]] = [
    ("GET", "/health/live", "/health/live", None, None, 200),
    ("GET", "/health/ready", "/health/ready", None, None, 200),
    ("GET", "/metrics", "/metrics", None, None, 200),
    ("GET", "/v1/algorithms", "/v1/algorithms", None, "reader", 200),
    ("GET", "/v1/jobs", "/v1/jobs", None, "reader", 200),
    ("GET", "/v1/jobs/{job_id}", "/v1/jobs/nope", None, "reader", 404),
    ("POST", "/v1/jobs/{job_id}/cancel", "/v1/jobs/nope/cancel", None, "admin", 404),
    ("GET", "/v1/models", "/v1/models", None, "reader", 200),
    ("GET", "/v1/models/{name}", "/v1/models/m", None, "reader", 200),
    ("GET", "/v1/models/{name}/versions", "/v1/models/m/versions", None, "reader", 200),
    (
        "GET",
        "/v1/models/{name}/versions/{version}",
        "/v1/models/m/versions/1",
        None,
        "reader",
        200,
    ),
    (
        "GET",
        "/v1/models/{name}/versions/{version}/plots",
        "/v1/models/m/versions/1/plots",
        None,
        "reader",
        200,
    ),
    (
        "GET",
        "/v1/models/{name}/versions/{version}/plots/{kind}",
        "/v1/models/m/versions/1/plots/roc",
        None,
        "reader",
        200,
    ),
    (
        "GET",
        "/v1/models/{name}/versions/{version}/whatif",
        "/v1/models/m/versions/1/whatif?c_fp=1&c_fn=5",
        None,
        "reader",
        200,
    ),
    (
        "GET",
        "/v1/models/{name}/versions/{version}/whatif/matrix",
        "/v1/models/m/versions/1/whatif/matrix?cost_matrix=%5B%5B0%2C1%5D%2C%5B5%2C0%5D%5D",
        None,
        "reader",
        200,
    ),
    (
        "POST",
        "/v1/models/{name}/predict",
        "/v1/models/m/predict",
        {"instances": ROW, "costs": {"c_fp": 1, "c_fn": 5}},
        "predictor",
        200,
    ),
    (
        "POST",
        "/v1/models/{name}/batch",
        "/v1/models/m/batch",  # an input of unknown format: 422 once the role is allowed
        {"input": {"uri": "file:///x"}, "output": {"uri": "file:///o"}},
        "admin",
        422,
    ),
    (
        "POST",
        "/v1/models/{name}/evaluate",
        "/v1/models/m/evaluate",
        {"instances": ROW * 2, "labels": [0, 1]},
        "predictor",
        200,
    ),
    (
        "POST",
        "/v1/models/{name}/outcomes",
        "/v1/models/m/outcomes",
        {"outcomes": [{"id": "never-logged", "label": 1}]},
        "predictor",
        200,
    ),
    (
        "GET",
        "/v1/models/{name}/monitoring",
        "/v1/models/m/monitoring",
        None,
        "reader",
        200,
    ),
    ("PATCH", "/v1/models/{name}", "/v1/models/m", {"prediction_log": True}, "admin", 200),
    (
        "POST",
        "/v1/models/{name}/versions/{version}/recalibrate",
        "/v1/models/m/versions/1/recalibrate",
        {"instances": RECAL_X, "labels": RECAL_Y},
        "admin",
        201,
    ),
    (  # reached by readers: nothing logged in that window, a 404 from the service
        "GET",
        "/v1/models/{name}/priors",
        "/v1/models/m/priors?since=2999-01-01T00:00:00Z",
        None,
        "reader",
        404,
    ),
    (  # records an estimate (changes "estimated" decisions): admin; nothing logged: 404
        "POST",
        "/v1/models/{name}/priors",
        "/v1/models/m/priors",
        {"since": "2999-01-01T00:00:00Z"},
        "admin",
        404,
    ),
    (
        "PUT",
        "/v1/models/{name}/aliases/{alias}",
        "/v1/models/m/aliases/production",
        {"version": 1},
        "admin",
        200,
    ),
    (
        "DELETE",
        "/v1/models/{name}/aliases/{alias}",
        "/v1/models/m/aliases/staging",
        None,
        "admin",
        204,
    ),
    (
        "POST",
        "/v1/models/{name}/versions",
        "/v1/models/m/versions",
        train_body(n=120, n_estimators=5),
        "admin",
        201,
    ),
    (  # one version only: comparing it with itself is a 422 once the role is allowed
        "GET",
        "/v1/models/{name}/compare",
        "/v1/models/m/compare?a=1&b=1",
        None,
        "reader",
        422,
    ),
    (
        "GET",
        "/v1/models/{name}/aliases/{alias}/history",
        "/v1/models/m/aliases/staging/history",
        None,
        "reader",
        200,
    ),
    (  # the candidate is the alias's own version: 422 once the role is allowed
        "POST",
        "/v1/models/{name}/aliases/{alias}/promote",
        "/v1/models/m/aliases/production/promote",
        {"candidate": 1},
        "admin",
        422,
    ),
    ("GET", "/v1/models/{name}/shadow", "/v1/models/m/shadow", None, "reader", 200),
    ("PUT", "/v1/models/{name}/shadow", "/v1/models/m/shadow", {"version": 1}, "admin", 200),
    ("DELETE", "/v1/models/{name}/shadow", "/v1/models/m/shadow", None, "admin", 204),
    (
        "GET",
        "/v1/models/{name}/aliases/{alias}/split",
        "/v1/models/m/aliases/production/split",
        None,
        "reader",
        404,
    ),
    (
        "PUT",
        "/v1/models/{name}/aliases/{alias}/split",
        "/v1/models/m/aliases/production/split",
        {"version": 1, "weight": 2},
        "admin",
        422,
    ),
    (
        "DELETE",
        "/v1/models/{name}/aliases/{alias}/split",
        "/v1/models/m/aliases/production/split",
        None,
        "admin",
        404,
    ),
    ("GET", "/v1/keys", "/v1/keys", None, "admin", 200),
    ("GET", "/v1/webhooks", "/v1/webhooks", None, "admin", 200),
    (
        "POST",
        "/v1/webhooks",
        "/v1/webhooks",
        {"url": "ftp://hooks.example/x", "events": ["alias.moved"]},
        "admin",
        422,
    ),
    ("DELETE", "/v1/webhooks/{webhook_id}", "/v1/webhooks/999", None, "admin", 404),
    (
        "GET",
        "/v1/webhooks/{webhook_id}/deliveries",
        "/v1/webhooks/999/deliveries",
        None,
        "admin",
        404,
    ),
    ("GET", "/v2/health/live", "/v2/health/live", None, None, 200),
    ("GET", "/v2/health/ready", "/v2/health/ready", None, None, 200),
    ("GET", "/v2", "/v2", None, "reader", 200),
    ("GET", "/v2/models/{name}", "/v2/models/m", None, "reader", 200),
    ("GET", "/v2/models/{name}/ready", "/v2/models/m/ready", None, "reader", 200),
    (
        "GET",
        "/v2/models/{name}/versions/{version}",
        "/v2/models/m/versions/1",
        None,
        "reader",
        200,
    ),
    (
        "GET",
        "/v2/models/{name}/versions/{version}/ready",
        "/v2/models/m/versions/1/ready",
        None,
        "reader",
        200,
    ),
    (
        "POST",
        "/v2/models/{name}/infer",
        "/v2/models/m/infer",
        {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP64", "data": ROW}]},
        "predictor",
        200,
    ),
    (
        "POST",
        "/v2/models/{name}/versions/{version}/infer",
        "/v2/models/m/versions/1/infer",
        {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP64", "data": ROW}]},
        "predictor",
        200,
    ),
    ("POST", "/v1/keys", "/v1/keys", {"name": "new", "role": "reader"}, "admin", 201),
    ("DELETE", "/v1/keys/{key_id}", "/v1/keys/{spare}", None, "admin", 204),
]


@pytest.fixture
def sessions(database_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(database_url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture
def keys(sessions: sessionmaker[Session]) -> dict[str, str]:
    """One plaintext key per role, plus a spare reader key to revoke."""
    out = {role: create_key(sessions, f"{role}-key", role)[1] for role in ROLES}
    out["spare"] = str(create_key(sessions, "spare", "reader")[0].id)
    return out


def auth_client(database_url: str, **extra: Any) -> TestClient:
    settings = Settings(database_url=database_url, auth="on", max_rounds=500, **extra)
    return TestClient(create_app(settings), raise_server_exceptions=False)


@pytest.fixture
def client(database_url: str, keys: dict[str, str]) -> Iterator[TestClient]:
    with auth_client(database_url) as c:
        yield c


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_table_covers_every_operation(client: TestClient) -> None:
    """Every operation in the OpenAPI is in TABLE, with the role the policy gives it."""
    spec = client.get("/openapi.json").json()
    operations = {(m.upper(), p) for p, ops in spec["paths"].items() for m in ops}
    assert operations == {(m, p) for m, p, *_ in TABLE}
    for method, path, _, _, role, _ in TABLE:
        assert required_role(method, path) == role, (method, path)


def test_every_route_by_role(client: TestClient, keys: dict[str, str]) -> None:
    admin = bearer(keys["admin"])
    assert client.post("/v1/models/m/versions", json=train_body(n_estimators=5), headers=admin)
    assert client.put("/v1/models/m/aliases/staging", json={"version": 1}, headers=admin)
    failures = []
    for method, _, path, body, minimum, ok in TABLE:
        path = path.format(spare=keys["spare"])
        for caller in (None, *ROLES):
            headers = {} if caller is None else bearer(keys[caller])
            r = client.request(method, path, json=body, headers=headers)
            if minimum is None or RANK[caller] >= RANK[minimum]:
                expected = ok
            else:
                expected = 401 if caller is None else 403
            if r.status_code != expected:
                failures.append((method, path, caller, expected, r.status_code, r.text[:200]))
            if r.status_code in (401, 403) and path.startswith("/v2"):
                message = r.json()["error"]  # the Open Inference Protocol's error body
                assert set(r.json()) == {"error"}
                assert ("API key" in message) if r.status_code == 401 else ("role" in message)
            elif r.status_code in (401, 403):
                body_json = r.json()
                assert set(body_json) == {"detail", "code", "field"}
                assert body_json["code"] == (
                    "UNAUTHORIZED" if r.status_code == 401 else "FORBIDDEN"
                )
            if r.status_code == 401:
                assert r.headers["www-authenticate"].startswith("Bearer")
    assert failures == []


def test_x_api_key_header_and_bad_keys(client: TestClient, keys: dict[str, str]) -> None:
    assert client.get("/v1/models", headers={"X-API-Key": keys["reader"]}).status_code == 200
    for headers in (
        {"Authorization": "Bearer cw_not-a-real-key"},
        {"Authorization": f"Basic {keys['admin']}"},  # wrong scheme: no key given
        {"X-API-Key": "x" * 10_000},
        {"Authorization": "Bearer "},
    ):
        r = client.get("/v1/models", headers=headers)
        assert r.status_code == 401, headers
        assert r.json()["code"] == "UNAUTHORIZED"


def test_health_stays_open_even_with_a_bad_key(client: TestClient) -> None:
    assert client.get("/health/live", headers=bearer("cw_wrong")).status_code == 200
    assert client.get("/docs").status_code == 200
    assert client.get("/openapi.json").status_code == 200


def test_openapi_declares_the_security_schemes(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    schemes = spec["components"]["securitySchemes"]
    assert schemes["bearer"]["scheme"] == "bearer"
    assert schemes["apiKey"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": schemes["apiKey"]["description"],
    }
    assert spec["paths"]["/v1/models"]["get"]["security"] == [{"bearer": []}, {"apiKey": []}]
    assert "security" not in spec["paths"]["/health/live"]["get"]
    assert {"401", "403"} <= set(spec["paths"]["/v1/models/{name}/predict"]["post"]["responses"])


def test_metrics_can_require_a_key(database_url: str, keys: dict[str, str]) -> None:
    with auth_client(database_url, metrics_public=False) as c:
        assert c.get("/metrics").status_code == 401
        assert c.get("/metrics", headers=bearer(keys["reader"])).status_code == 200
        assert c.get("/health/ready").status_code == 200


def test_revocation_takes_effect_within_the_cache_ttl(
    database_url: str, sessions: sessionmaker[Session], keys: dict[str, str]
) -> None:
    """Revoked elsewhere (CLI, another replica): refused once the cached entry expires."""
    with auth_client(database_url, key_cache_seconds=0) as c:
        key_id = c.get("/v1/keys", headers=bearer(keys["admin"])).json()["keys"][1]["id"]
        assert c.get("/v1/models", headers=bearer(keys["predictor"])).status_code == 200
        revoke_key(sessions, key_id)
        r = c.get("/v1/models", headers=bearer(keys["predictor"]))
        assert r.status_code == 401 and r.json()["code"] == "UNAUTHORIZED"


def test_revocation_over_the_api_is_immediate(client: TestClient, keys: dict[str, str]) -> None:
    admin = bearer(keys["admin"])
    listed = client.get("/v1/keys", headers=admin).json()["keys"]
    reader_id = next(k["id"] for k in listed if k["name"] == "reader-key")
    assert client.get("/v1/models", headers=bearer(keys["reader"])).status_code == 200  # cached
    assert client.delete(f"/v1/keys/{reader_id}", headers=admin).status_code == 204
    assert client.get("/v1/models", headers=bearer(keys["reader"])).status_code == 401
    assert client.delete(f"/v1/keys/{reader_id}", headers=admin).status_code == 204  # idempotent
    assert client.delete("/v1/keys/999999", headers=admin).json()["code"] == "NOT_FOUND"
    listed = {k["id"]: k for k in client.get("/v1/keys", headers=admin).json()["keys"]}
    assert listed[reader_id]["active"] is False and listed[reader_id]["revoked_at"]


def test_created_key_is_shown_once_and_works(client: TestClient, keys: dict[str, str]) -> None:
    admin = bearer(keys["admin"])
    r = client.post("/v1/keys", json={"name": "svc", "role": "predictor"}, headers=admin)
    assert r.status_code == 201 and r.headers["cache-control"] == "no-store"
    created = r.json()
    assert created["key"].startswith("cw_") and created["prefix"] == created["key"][:8]
    listing = client.get("/v1/keys", headers=admin).text
    assert created["key"] not in listing and "key_hash" not in listing
    assert client.get("/v1/models", headers=bearer(created["key"])).status_code == 200
    bad = client.post("/v1/keys", json={"name": "x", "role": "root"}, headers=admin)
    assert bad.status_code == 422 and bad.json()["field"] == "role"
    bad = client.post("/v1/keys", json={"name": "a/b", "role": "reader"}, headers=admin)
    assert bad.status_code == 422 and bad.json()["field"] == "name"


def test_last_admin_key_cannot_be_revoked_over_the_api(
    client: TestClient, keys: dict[str, str]
) -> None:
    admin = bearer(keys["admin"])
    admin_id = next(
        k["id"]
        for k in client.get("/v1/keys", headers=admin).json()["keys"]
        if k["role"] == "admin"
    )
    r = client.delete(f"/v1/keys/{admin_id}", headers=admin)
    assert r.status_code == 409 and r.json()["code"] == "CONFLICT"


def test_keys_never_reach_logs_or_error_bodies(
    database_url: str, keys: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    bootstrap = "bootstrap-" + "k" * 40
    wrong = "cw_this-is-a-wrong-key-0123456789abcdefghijkl"
    caplog.set_level(logging.DEBUG)
    with auth_client(database_url, bootstrap_admin_key=bootstrap) as c:
        r = c.get("/v1/models", headers=bearer(wrong))
        assert r.status_code == 401 and wrong not in r.text
        r = c.post("/v1/keys", json={"name": "x"}, headers=bearer(keys["reader"]))
        assert r.status_code == 403 and keys["reader"] not in r.text
        assert c.get("/v1/keys", headers=bearer(bootstrap)).status_code == 200
        c.get("/v1/models", headers={"X-API-Key": keys["predictor"]})
    for secret in (wrong, bootstrap, *(keys[r] for r in ROLES)):
        assert secret not in caplog.text
    assert bootstrap not in repr(Settings(bootstrap_admin_key=bootstrap))


def test_auth_off_is_the_default_and_needs_no_key(database_url: str) -> None:
    assert Settings().auth == "off" and Settings().env == "dev"
    with TestClient(create_app(Settings(database_url=database_url))) as c:
        assert c.get("/v1/models").status_code == 200
        assert c.get("/v1/keys").status_code == 200


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"env": "prod"}, "COSTWISE_ENV=prod requires COSTWISE_AUTH=on"),
        ({"env": "prod", "auth": "on"}, "needs an active admin API key"),
        ({"auth": "on", "bootstrap_admin_key": "short"}, "COSTWISE_BOOTSTRAP_ADMIN_KEY is too"),
    ],
)
def test_unsafe_configurations_refuse_to_start(
    database_url: str, extra: dict[str, Any], message: str
) -> None:
    with pytest.raises(Misconfigured, match=message) as caught:
        create_app(Settings(database_url=database_url, **extra))
    assert (caught.value.field or "").startswith("COSTWISE_")  # names the setting


def test_prod_starts_with_an_admin_key_or_a_bootstrap_key(
    database_url: str, sessions: sessionmaker[Session]
) -> None:
    prod = Settings(database_url=database_url, env="prod", auth="on")
    app = create_app(
        prod.model_copy(
            update={"bootstrap_admin_key": SecretStr("bootstrap-Qw7mZ2xK9pL4vT8rN3sB6yC1dF5hJ0gA")}
        )
    )
    app.state.services.engine.dispose()
    create_key(sessions, "ops", "admin")
    create_app(prod).state.services.engine.dispose()


def test_database_down_cached_keys_work_others_get_503(
    sessions: sessionmaker[Session], keys: dict[str, str]
) -> None:
    auth = Authenticator(sessions, enabled=True, ttl_seconds=60)
    assert asyncio.run(auth.authenticate(keys["reader"])).role == "reader"
    down = make_engine("postgresql+psycopg://postgres@127.0.0.1:1/none?connect_timeout=2")
    auth.sessions = make_session_factory(down)
    try:
        assert asyncio.run(auth.authenticate(keys["reader"])).role == "reader"  # cached
        with pytest.raises(Unavailable):
            asyncio.run(auth.authenticate(keys["admin"]))
    finally:
        down.dispose()
