"""Proof 8: hostile callers (issue 17): label floods, smaller holes, through the real app.

- 10,000 anonymous requests naming 10,000 different models leave ``/metrics`` the same
  size (a real uvicorn server; its RSS is recorded and bounded), and callers without a
  key see no model names when authentication is on.
- Authentication before any body; HEAD on the health probes; ``Allow`` on 405; moving an
  alias onto a corrupted artifact is a 409; a production bootstrap key needs entropy;
  the synchronous-training cap answers 503 with Retry-After.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Iterator
from typing import Any

import httpx
import psutil
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.api.main import create_app
from app.errors import Misconfigured
from app.settings import Settings
from tests.app.api.conftest import dataset, train_body
from tests.reliability.conftest import connection, flip_artifact_byte, write_result

ADMIN = "admin-" + secrets.token_urlsafe(32)
FLOOD = 10_000


@pytest.fixture
def auth_client(database_url: str) -> Iterator[TestClient]:
    settings = Settings(database_url=database_url, auth="on", bootstrap_admin_key=ADMIN)
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        r = c.post("/v1/models/fraud/versions", json=train_body(), headers={"X-API-Key": ADMIN})
        assert r.status_code == 201, r.text
        yield c


def test_metrics_hide_model_names_from_callers_without_a_key(auth_client: TestClient) -> None:
    c = auth_client
    assert c.post("/v1/models/fraud/predict", json={"instances": [[0, 0, 0, 0]]}).status_code == 401
    c.post(
        "/v1/models/fraud/predict", json={"instances": [[0, 0, 0, 0]]}, headers={"X-API-Key": ADMIN}
    )
    c.get("/v1/models/no-such-model", headers={"X-API-Key": ADMIN})
    anonymous = c.get("/metrics").text
    assert 'model="fraud"' not in anonymous and 'model="_hidden"' in anonymous
    full = c.get("/metrics", headers={"X-API-Key": ADMIN}).text
    assert 'model="fraud"' in full and 'model="_other"' in full
    assert "no-such-model" not in full

    # the totals agree: anonymous sums are the sums of the full series
    def total(body: str, name: str) -> float:
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in body.splitlines()
            if line.startswith(name + "{")
        )

    for name in ("costwise_http_requests_total", "costwise_predicted_rows_total"):
        assert total(anonymous, name) == pytest.approx(total(full, name) - 0, abs=2)


def test_authentication_comes_before_the_body(auth_client: TestClient) -> None:
    """Without a key, a malformed or huge body is a 401, never a 400/413/422 (not read)."""
    for method, path in (("POST", "/v1/keys"), ("PUT", "/v1/models/fraud/aliases/p")):
        r = auth_client.request(method, path, content=b"{not json" * 100_000)
        assert r.status_code == 401, r.text
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
    r = auth_client.post("/v2/models/fraud/infer", content=b"{not json")
    assert r.status_code == 401 and set(r.json()) == {"error"}


def test_head_on_health_routes_and_allow_on_405(auth_client: TestClient) -> None:
    for path in ("/health/live", "/health/ready", "/v2/health/live", "/v2/health/ready"):
        r = auth_client.head(path)
        assert r.status_code == 200, (path, r.status_code)
        assert r.content == b""
    r = auth_client.delete("/health/live")
    assert r.status_code == 405 and r.json()["code"] == "METHOD_NOT_ALLOWED"
    assert "GET" in r.headers["Allow"].replace(" ", "").split(",")
    r = auth_client.put("/v1/models", headers={"X-API-Key": ADMIN})
    assert r.status_code == 405 and "GET" in r.headers["Allow"]


def test_alias_refuses_a_corrupted_artifact(auth_client: TestClient, database_url: str) -> None:
    headers = {"X-API-Key": ADMIN}
    r = auth_client.post("/v1/models/fraud/versions", json=train_body(seed=1), headers=headers)
    assert r.status_code == 201
    with connection(database_url, write=True) as conn:  # replace version 2's artifact
        conn.execute(
            text(
                "UPDATE artifacts SET data = :d WHERE version_id = "
                "(SELECT v.id FROM model_versions v JOIN registered_models m "
                "ON v.model_id = m.id WHERE m.name = 'fraud' AND v.version = 2)"
            ),
            {"d": b"corrupted"},
        )
    r = auth_client.put("/v1/models/fraud/aliases/production", json={"version": 2}, headers=headers)
    assert r.status_code == 409, r.text
    assert r.json()["field"] == "version" and "checksum" in r.json()["detail"]
    ok = auth_client.put(
        "/v1/models/fraud/aliases/production", json={"version": 1}, headers=headers
    )
    assert ok.status_code == 200
    predict = auth_client.post(
        "/v1/models/fraud/predict", json={"instances": [[0, 0, 0, 0]]}, headers=headers
    )
    assert predict.status_code == 200 and predict.json()["version"] == 1


def test_alias_refuses_a_recalibrated_version_whose_base_is_corrupted(
    auth_client: TestClient, database_url: str
) -> None:
    """Version 2 recalibrates version 1 and shares its booster (version 1's artifact is
    its base). With one byte of version 1's artifact changed, version 2's own artifact
    still passes its checksum, but it cannot load: the alias move is a 409 naming version
    1 and is not applied, and predicts on version 2 (also the default: it is the latest)
    are 409 ARTIFACT_CORRUPTED naming version 1, never a 500."""
    headers = {"X-API-Key": ADMIN}
    X, y = dataset(400, seed=3)
    r = auth_client.post(
        "/v1/models/fraud/versions/1/recalibrate",
        json={"instances": X.tolist(), "labels": y.tolist()},
        headers=headers,
    )
    assert r.status_code == 201 and r.json()["parent_version"] == 1, r.text
    flip_artifact_byte(database_url, "fraud", 1)

    for version in (2, 1):
        r = auth_client.put(
            "/v1/models/fraud/aliases/production", json={"version": version}, headers=headers
        )
        assert r.status_code == 409, r.text
        body = r.json()
        assert body["code"] == "CONFLICT" and body["field"] == "version", body
        assert "version 1 fails its sha256 checksum" in body["detail"], body
        assert "'production' was not moved" in body["detail"], body
    model = auth_client.get("/v1/models/fraud", headers=headers).json()
    assert model["aliases"] == {}, model

    for request in ({"version": 2}, {}, {"version": 1}):
        r = auth_client.post(
            "/v1/models/fraud/predict",
            json={"instances": [[0, 0, 0, 0]], **request},
            headers=headers,
        )
        assert r.status_code == 409, (request, r.text)
        assert r.json()["code"] == "ARTIFACT_CORRUPTED", r.text
        assert "version 1 fails its sha256 checksum" in r.json()["detail"], r.text
    tensor = {"name": "x", "shape": [1, 4], "datatype": "FP64", "data": [0, 0, 0, 0]}
    r = auth_client.post("/v2/models/fraud/infer", json={"inputs": [tensor]}, headers=headers)
    assert r.status_code == 409 and "version 1" in r.json()["error"], r.text


@pytest.mark.parametrize(
    ("key", "refusal"),
    [
        ("a" * 40, "only 1 of its 40 characters"),
        ("ab" * 20, "only 2 of its 40 characters"),
        ("0123456789" * 4, "only 10 of its 40 characters"),
        ("correcthorsebatterystaplecorrecthorse", "only 25 of its 37 characters"),
        ("correcthorsebatterystaple" * 2, "only 25 of its 50 characters"),
        ("Tr0ub4dor&3" * 3, "only 11 of its 33 characters"),
        ("abcd" * 4 + "efgh" * 4 + "ijkl" * 4, "only 12 of its 48 characters"),
        # no run of 6 repeated (a de Bruijn sequence), but two letters: ~1 bit each
        ("aaaaaabaaaabbaaababaaabbbaabaababbaabbabaabbbbab", "about 47 bits"),
        (secrets.token_urlsafe(32), None),
        ("admin-" + secrets.token_urlsafe(32), None),
        (secrets.token_hex(16), None),
        ("0f3a9c2e7b1d4f6a8c0e2b4d6f8a1c3e", None),  # hex with no run repeated
    ],
    ids=[
        "forty a", "ab x 20", "digits x 4", "repeated passphrase", "passphrase x 2",
        "Tr0ub4dor&3 x 3", "three units x 4", "two letters", "token_urlsafe(32)",
        "admin-token_urlsafe(32)", "token_hex(16)", "fixed hex",
    ],
)  # fmt: skip
def test_production_bootstrap_key_needs_entropy(
    database_url: str, key: str, refusal: str | None
) -> None:
    """Refused keys name the setting and what is expected (never the key itself)."""
    settings = Settings(database_url=database_url, env="prod", auth="on", bootstrap_admin_key=key)
    if refusal is None:
        create_app(settings).state.services.engine.dispose()
        return
    with pytest.raises(Misconfigured) as caught:
        create_app(settings)
    message = str(caught.value)
    assert message.startswith("COSTWISE_BOOTSTRAP_ADMIN_KEY is not random enough"), message
    assert refusal in message and "secrets.token_urlsafe(32)" in message, message
    assert key not in message and key[:12] not in message, message
    assert caught.value.field == "COSTWISE_BOOTSTRAP_ADMIN_KEY"


def test_synchronous_trainings_are_capped(database_url: str) -> None:
    """With COSTWISE_MAX_SYNC_TRAININGS=1, a training sent while one runs is 503 + Retry-After."""
    settings = Settings(database_url=database_url, max_sync_trainings=1)
    app = create_app(settings)
    slow = train_body(n=3000, n_estimators=400, weak_learner="tree", max_depth=4)

    async def run() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            first = asyncio.create_task(c.post("/v1/models/a/versions?mode=sync", json=slow))
            while app.state.services.trainer.slots.used == 0 and not first.done():
                await asyncio.sleep(0.01)
            second = await c.post("/v1/models/b/versions?mode=sync", json=train_body())
            return [await first, second]

    with TestClient(app):  # runs the lifespan
        first, second = asyncio.run(run())
    assert first.status_code == 201, first.text
    assert second.status_code == 503, second.text
    assert second.headers["Retry-After"] == "1" and second.json()["code"] == "UNAVAILABLE"


def _rss_mib(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


@pytest.mark.parametrize(("auth", "count"), [("on", FLOOD), ("off", 3_000)])
def test_anonymous_unique_names_do_not_grow_metrics(
    server_factory: Any, database_url: str, auth: str, count: int
) -> None:
    """10,000 anonymous requests (401) naming 10,000 different models, and 3,000 with
    authentication off (404: each one a database look-up, slower): /metrics keeps the
    same series and RSS stays flat; on SQLite and PostgreSQL."""
    env = {"COSTWISE_AUTH": auth, "COSTWISE_BOOTSTRAP_ADMIN_KEY": ADMIN}
    server = server_factory(database_url, env=env, serve=True)
    kind = database_url.split(":", 1)[0].split("+", 1)[0]
    admin = {"X-API-Key": ADMIN}

    async def flood(start: int, count: int) -> list[int]:
        statuses: list[int] = []
        async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as c:
            sem = asyncio.Semaphore(16)

            async def one(i: int) -> None:
                async with sem:
                    kind = i % 3
                    name = f"m{i}-{secrets.token_hex(4)}"
                    if kind == 0:
                        r = await c.get(f"/v1/models/{name}")
                    elif kind == 1:
                        r = await c.post(f"/v1/models/{name}/predict", json={"instances": [[1]]})
                    else:
                        r = await c.get(f"/v1/models/{name}/versions")
                    statuses.append(r.status_code)

            await asyncio.gather(*(one(i) for i in range(start, start + count)))
        return statuses

    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        assert (
            c.post("/v1/models/real/versions", json=train_body(), headers=admin).status_code == 201
        )
        asyncio.run(flood(0, 300))  # warm-up: every route and status seen once
        c.get("/metrics", headers=admin)  # the scrape's own series exist from now on
        before = c.get("/metrics", headers=admin).text
        rss_before = _rss_mib(server.pid)
        started = time.monotonic()
        statuses = asyncio.run(flood(1_000, count))
        elapsed = time.monotonic() - started
        after = c.get("/metrics", headers=admin).text
        rss_after = _rss_mib(server.pid)
        anonymous = c.get("/metrics").text
    expected = {401} if auth == "on" else {404}
    assert set(statuses) == expected, set(statuses)
    lines_before = sorted(line.rsplit(" ", 1)[0] for line in before.splitlines())
    lines_after = sorted(line.rsplit(" ", 1)[0] for line in after.splitlines())
    write_result(
        f"metrics_flood_{kind}_auth_{auth}",
        {
            "requests": count,
            "seconds": round(elapsed, 1),
            "statuses": sorted(set(statuses)),
            "metrics_bytes_before_after": [len(before), len(after)],
            "metrics_series_before_after": [len(lines_before), len(lines_after)],
            "rss_mib_before_after": [round(rss_before, 1), round(rss_after, 1)],
        },
    )
    assert lines_after == lines_before  # the same series: only the counts moved
    assert abs(len(after) - len(before)) < 200  # digits of the counters only
    assert rss_after - rss_before < 20, (rss_before, rss_after)
    assert 'model="real"' in after
    if auth == "on":
        assert 'model="real"' not in anonymous
