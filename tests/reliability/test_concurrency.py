"""Proof 3: concurrent registrations and alias moves against a real server.

A uvicorn with two worker processes serves the real app on 127.0.0.1 (PostgreSQL, and
SQLite as well). Sixteen clients released together by a barrier register versions of one
model: they get exactly the versions 1..16, each once. Then an alias is flipped between
two versions whose decisions differ on every probe row while eight clients predict
through it: no request fails and every response's decisions are exactly those of the one
version it names (never a mix, never a stale model under a new version number).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import numpy as np

from tests.app.api.conftest import dataset, train_body
from tests.reliability.conftest import Server, write_result

N_CLIENTS = 16
RACE_SECONDS = 6.0
MIN_FLIPS = 10


def _register(server: Server, barrier: threading.Barrier, seed: int) -> tuple[int, int]:
    body = train_body(n=200, seed=seed, n_estimators=10)
    with httpx.Client(base_url=server.base_url, timeout=120) as client:
        barrier.wait()
        r = client.post("/v1/models/race/versions", json=body)
    return r.status_code, (r.json().get("version", -1) if r.status_code == 201 else -1)


def test_sixteen_clients_get_consecutive_versions(database_url: str, server_factory: Any) -> None:
    """16 simultaneous trainings of one model: 16 x 201 with versions exactly 1..16.

    The synchronous-training cap (COSTWISE_MAX_SYNC_TRAININGS, 503 beyond it) is raised to
    16 here: this test is about version allocation under concurrency, not the cap (which
    tests/reliability/test_hostile.py covers)."""
    server = server_factory(
        database_url, workers=2, env={"COSTWISE_MAX_SYNC_TRAININGS": str(N_CLIENTS)}
    )
    barrier = threading.Barrier(N_CLIENTS)
    with ThreadPoolExecutor(N_CLIENTS) as pool:
        results = list(pool.map(lambda s: _register(server, barrier, s), range(N_CLIENTS)))
    assert [status for status, _ in results] == [201] * N_CLIENTS, (results, server.log())
    assert sorted(v for _, v in results) == list(range(1, N_CLIENTS + 1))
    listed = httpx.get(f"{server.base_url}/v1/models/race/versions", timeout=30).json()
    assert sorted(v["version"] for v in listed["versions"]) == list(range(1, N_CLIENTS + 1))


def _decisions(answer: dict[str, Any]) -> list[Any]:
    """A predict answer's rows but their ids (each logged request's rows get new ones)."""
    return [{**p, "id": None} for p in answer["predictions"]]


def test_alias_moves_racing_predicts_never_mix(database_url: str, server_factory: Any) -> None:
    """Flip alias ``production`` between v1 (labels y) and v2 (labels 1 - y) while eight
    clients predict through it: every answer equals its named version's own answer."""
    server = server_factory(database_url, workers=2)
    X, y = dataset(n=300, seed=0)
    base = {"features": X.tolist(), "feature_names": ["a", "b", "c", "d"], "n_estimators": 20}
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        for labels in (y, 1 - y):  # v2 is v1 with the classes swapped
            r = client.post("/v1/models/flip/versions", json={**base, "labels": labels.tolist()})
            assert r.status_code == 201, r.text
        candidates = X[:80].tolist()
        decisions = {}
        for version in (1, 2):
            r = client.post(
                "/v1/models/flip/predict", json={"instances": candidates, "version": version}
            )
            assert r.status_code == 200, r.text
            decisions[version] = np.array([p["decision"] for p in r.json()["predictions"]])
        differ = np.flatnonzero(decisions[1] != decisions[2])
        assert len(differ) >= 20, "probe rows must tell the two versions apart"
        rows = [candidates[i] for i in differ[:32]]  # every probe row decides differently
        reference: dict[int, list[Any]] = {}
        for version in (1, 2):
            r = client.post("/v1/models/flip/predict", json={"instances": rows, "version": version})
            reference[version] = _decisions(r.json())
        r = client.put("/v1/models/flip/aliases/production", json={"version": 1})
        assert r.status_code == 200, r.text

    started = time.monotonic()
    stop = started + RACE_SECONDS
    errors: list[str] = []
    seen = {1: 0, 2: 0}
    flips = [0]
    lock = threading.Lock()

    done = threading.Event()  # the race lasts RACE_SECONDS and at least MIN_FLIPS moves

    def flipper() -> None:
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            version = 1
            deadline = stop + 10 * RACE_SECONDS  # a loaded machine: more time, same race
            while (time.monotonic() < stop or flips[0] < MIN_FLIPS) and (
                time.monotonic() < deadline
            ):
                version = 3 - version
                r = client.put("/v1/models/flip/aliases/production", json={"version": version})
                if r.status_code != 200:
                    errors.append(f"alias move: {r.status_code} {r.text}")
                flips[0] += 1
        done.set()

    def predictor() -> None:
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            while not done.is_set():
                r = client.post("/v1/models/flip/predict", json={"instances": rows})
                if r.status_code != 200:
                    errors.append(f"predict: {r.status_code} {r.text}")
                    continue
                body = r.json()
                version = body["version"]
                if body["alias"] != "production" or _decisions(body) != reference[version]:
                    errors.append(f"mixed answer naming version {version}")
                with lock:
                    seen[version] += 1

    threads = [threading.Thread(target=flipper)] + [
        threading.Thread(target=predictor) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    kind = database_url.split(":")[0].split("+")[0]
    write_result(
        f"alias-race-{kind}",
        {"predicts": seen[1] + seen[2], "by_version": seen, "alias_moves": flips[0],
         "errors": len(errors), "seconds": round(time.monotonic() - started, 1), "probe_rows": len(rows)},
    )  # fmt: skip
    assert not errors, errors[:5]
    assert flips[0] >= MIN_FLIPS, flips
    assert seen[1] > 0 and seen[2] > 0, seen
