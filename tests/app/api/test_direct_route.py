"""The direct predict route answers exactly as the documented FastAPI route would.

:class:`app.api.routes.predict.DirectRoute` serves ``POST /v1/models/{name}/predict``
without FastAPI's routing and dependency solving. The same requests go to an app with
it and to the same app with it removed (the documented route then answers): status,
body (prediction ids aside: fresh per request), content type, and the metrics' route
label must agree, for successes and for every kind of refusal.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.api.routes.predict import DirectRoute
from app.settings import Settings
from tests.app.api.conftest import dataset, train_body

ROW = dataset(1)[0][0].tolist()
IDS = re.compile(r'"[0-9a-f]{32}-\d+"')

CASES: list[tuple[str, str, Any, dict[str, str]]] = [
    ("one row", "/v1/models/fraud/predict", {"instances": [ROW], "costs": {"c_fp": 1, "c_fn": 5}}, {}),
    ("client ids", "/v1/models/fraud/predict", {"instances": [ROW, ROW], "ids": ["a", "b"]}, {}),
    ("records", "/v1/models/fraud/predict", {"records": [dict(zip("abcd", ROW, strict=True))]}, {}),
    ("bad JSON", "/v1/models/fraud/predict", b"{not json", {"content-type": "application/json"}),
    ("media type", "/v1/models/fraud/predict", b"{}", {"content-type": "text/plain"}),
    ("unknown field", "/v1/models/fraud/predict", {"instances": [ROW], "bogus": 1}, {}),
    ("no such model", "/v1/models/nope/predict", {"instances": [ROW]}, {}),
    ("invalid name", "/v1/models/-x/predict", {"instances": [ROW]}, {}),
    ("feature count", "/v1/models/fraud/predict", {"instances": [ROW[:3]]}, {}),
    ("negative cost", "/v1/models/fraud/predict", {"instances": [ROW], "costs": {"c_fp": -1, "c_fn": 2}}, {}),
    ("zero costs", "/v1/models/fraud/predict", {"instances": [ROW], "costs": {"c_fp": 0, "c_fn": 0}}, {}),
    ("negative zero", "/v1/models/fraud/predict", {"instances": [ROW], "costs": {"c_fp": -0.0, "c_fn": 2}}, {}),
    ("no such version", "/v1/models/fraud/predict", {"instances": [ROW], "version": 9}, {}),
    ("too large", "/v1/models/fraud/predict", b"[" + b" " * 2_000_001 + b"]", {"content-type": "application/json"}),
    ("no content type", "/v1/models/fraud/predict", json.dumps({"instances": [ROW]}).encode(), {}),
    ("media type spelled", "/v1/models/fraud/predict", json.dumps({"instances": [ROW]}).encode(),
     {"content-type": "Application/JSON; charset=utf-8"}),
    ("chunked", "/v1/models/fraud/predict", (b'{"instances": [', json.dumps(ROW).encode(), b"]}"),
     {"content-type": "application/json"}),
    ("chunked, too large", "/v1/models/fraud/predict", (b"[", b" " * 1_500_000, b" " * 1_500_000, b"]"),
     {"content-type": "application/json"}),
]  # fmt: skip


# the body's reading (media type, declared and streamed length) in each form
EXPECTED = {"no content type": 200, "media type spelled": 200, "chunked": 200,
            "chunked, too large": 413, "media type": 415, "too large": 413}  # fmt: skip


def _chunks(parts: tuple[bytes, ...]) -> Any:
    yield from parts  # an iterator: sent chunked, without Content-Length


def _send(client: TestClient, path: str, body: Any, headers: dict[str, str]) -> Any:
    if isinstance(body, bytes):
        return client.post(path, content=body, headers=headers)
    if isinstance(body, tuple):
        return client.post(path, content=_chunks(body), headers=headers)
    return client.post(path, json=body)


@pytest.fixture
def pair(settings: Settings) -> Any:
    direct = create_app(settings)
    documented = create_app(settings)
    documented.router.routes[:] = [
        r for r in documented.router.routes if not isinstance(r, DirectRoute)
    ]
    assert any(isinstance(r, DirectRoute) for r in direct.router.routes)
    with TestClient(direct) as a, TestClient(documented) as b:
        r = a.post("/v1/models/fraud/versions", json=train_body())
        assert r.status_code == 201, r.text
        yield a, b


def test_same_answers(pair: tuple[TestClient, TestClient]) -> None:
    direct, documented = pair
    statuses = set()
    for name, path, body, headers in CASES:
        a, b = _send(direct, path, body, headers), _send(documented, path, body, headers)
        statuses.add(a.status_code)
        assert a.status_code == b.status_code, name
        assert a.status_code == EXPECTED.get(name, a.status_code), name
        assert IDS.sub("ID", a.text) == IDS.sub("ID", b.text), name
        assert a.headers["content-type"] == b.headers["content-type"], name
    assert statuses >= {200, 400, 404, 413, 415, 422}
    for method in ("GET", "PUT"):  # other methods: the documented route's 405
        a = direct.request(method, "/v1/models/fraud/predict")
        assert (
            a.status_code
            == 405
            == documented.request(method, "/v1/models/fraud/predict").status_code
        )


def test_metrics_label_the_route_template(pair: tuple[TestClient, TestClient]) -> None:
    direct, _ = pair
    direct.post("/v1/models/fraud/predict", json={"instances": [ROW]})
    direct.post(
        "/v1/models/fraud/predict", content=b"{", headers={"content-type": "application/json"}
    )
    lines = [
        ln
        for ln in direct.get("/metrics").text.splitlines()
        if ln.startswith("costwise_http_requests_total")
    ]
    label = 'method="POST",model="fraud",route="/v1/models/{name}/predict"'
    assert any(label in ln and 'status="200"' in ln for ln in lines), lines
    assert any(label in ln and 'status="400"' in ln for ln in lines), lines
    rows = [
        ln
        for ln in direct.get("/metrics").text.splitlines()
        if ln.startswith("costwise_predicted_rows_total{")
    ]
    assert rows and float(rows[0].rsplit(" ", 1)[1]) >= 1


def test_the_openapi_keeps_the_documented_route(pair: tuple[TestClient, TestClient]) -> None:
    direct, documented = pair
    spec = direct.get("/openapi.json").json()
    assert spec["paths"]["/v1/models/{name}/predict"] == json.loads(
        json.dumps(documented.get("/openapi.json").json()["paths"]["/v1/models/{name}/predict"])
    )


AUTH_KEY = "bootstrap-" + "k" * 40


@pytest.fixture
def auth_pair(database_url: str) -> Any:
    settings = Settings(database_url=database_url, auth="on", bootstrap_admin_key=AUTH_KEY)
    direct = create_app(settings)
    documented = create_app(settings)
    documented.router.routes[:] = [
        r for r in documented.router.routes if not isinstance(r, DirectRoute)
    ]
    admin = {"Authorization": f"Bearer {AUTH_KEY}"}
    with TestClient(direct) as a, TestClient(documented) as b:
        r = a.post("/v1/models/fraud/versions", json=train_body(), headers=admin)
        assert r.status_code == 201, r.text
        keys = {}
        for role in ("reader", "predictor"):
            r = a.post("/v1/keys", json={"name": role, "role": role}, headers=admin)
            assert r.status_code == 201, r.text
            keys[role] = r.json()["key"]
        yield a, b, keys


def test_roles_are_checked_alike(auth_pair: Any) -> None:
    direct, documented, keys = auth_pair
    body = {"instances": [ROW]}
    for headers, status in (
        ({}, 401),
        ({"Authorization": "Bearer cw_unknown"}, 401),
        ({"Authorization": f"Bearer {keys['reader']}"}, 403),
        ({"X-API-Key": keys["predictor"]}, 200),
    ):
        a = direct.post("/v1/models/fraud/predict", json=body, headers=headers)
        b = documented.post("/v1/models/fraud/predict", json=body, headers=headers)
        assert a.status_code == status == b.status_code, (headers, a.text)
        assert IDS.sub("ID", a.text) == IDS.sub("ID", b.text)
        assert a.headers.get("www-authenticate") == b.headers.get("www-authenticate")
