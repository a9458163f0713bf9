"""Slow monitoring reports do not take the database away from everyone (issue 25).

A real uvicorn server on PostgreSQL with a tiny ``COSTWISE_DB_TIMEOUT`` (0.25 s) and a
prediction log of 300,000 rows: eight concurrent ``GET /v1/models/{name}/monitoring``
reports are heavy enough that their statements hit the statement timeout. During them
predicts and ``/health/ready`` keep answering 200, and the database breaker
(:class:`app.db.DatabaseHealth`) never opens: with ``COSTWISE_REGISTRY_STALE_SECONDS=0``
an open breaker would turn predicts into 503s at once, and the server would log
"failing fast". Two defences, each shown on its own:

- ``cap``: at most ``COSTWISE_MONITORING_MAX_CONCURRENT`` (default 2) reports run at
  once per process; the others get 503 ``UNAVAILABLE`` with Retry-After at once;
- ``no cap`` (the cap raised to 8): every report reaches the database and some are
  cancelled by the statement timeout (503 naming COSTWISE_DB_TIMEOUT), but a timeout
  while other statements succeed is not an outage, so the breaker stays closed.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from app.db import make_engine
from tests.app.api.conftest import train_body
from tests.reliability.conftest import write_result

ROW = [0.1, 0.2, 0.3, 0.4]
LOG_ROWS = 300_000
SERVER_ENV = {
    "COSTWISE_DB_TIMEOUT": "0.25",
    "COSTWISE_DB_LOCK_TIMEOUT": "0.2",
    "COSTWISE_REGISTRY_STALE_SECONDS": "0",  # an open breaker = 503 predicts at once
}
REPORTS = 8


def _seed_log(database_url: str, rows: int) -> None:
    """``rows`` logged predictions of version 1 of 'fraud' over the last day, one in ten
    labelled (one INSERT ... SELECT: seconds, not the writer's minutes)."""
    engine = make_engine(database_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO logged_predictions (model_id, version_id, version, "
                    "prediction_id, created_at, raw_score, probabilities, decision, threshold, "
                    "expected_cost, cost_setting, costs, label) "
                    "SELECT v.model_id, v.id, 1, md5(g::text), "
                    "now() - (g % 86400) * interval '1 second', '0.5'::json, "
                    "'[0.7, 0.3]'::json, g % 2, 0.5, 0.3, 'zero_one', "
                    "'[[0.0, 1.0], [1.0, 0.0]]'::json, "
                    "CASE WHEN g % 10 = 0 THEN g % 2 END "
                    "FROM model_versions v, generate_series(1, :n) g WHERE v.version = 1"
                ),
                {"n": rows},
            )
            conn.exec_driver_sql("ANALYZE logged_predictions")
    finally:
        engine.dispose()


def _during_reports(base_url: str) -> dict[str, Any]:
    """Predicts and readiness probes in a loop while REPORTS reports run at once."""
    stop = threading.Event()
    seen: dict[str, list[Any]] = {"predicts": [], "ready": [], "reports": []}

    def loop(kind: str) -> None:
        with httpx.Client(base_url=base_url, timeout=30) as client:
            while not stop.is_set():
                if kind == "predicts":
                    r = client.post("/v1/models/fraud/predict", json={"instances": [ROW]})
                    stale = r.status_code == 200 and r.json()["resolution"] is not None
                    seen[kind].append((r.status_code, stale, r.text[:200]))
                else:
                    r = client.get("/health/ready")
                    seen[kind].append((r.status_code, r.json()["checks"]))
                time.sleep(0.02)

    def report() -> None:
        with httpx.Client(base_url=base_url, timeout=120) as client:
            started = time.monotonic()
            r = client.get("/v1/models/fraud/monitoring")
            body = r.json()
            seen["reports"].append(
                {
                    "status": r.status_code,
                    "code": body.get("code"),
                    "detail": body.get("detail"),
                    "retry_after": r.headers.get("Retry-After"),
                    "seconds": round(time.monotonic() - started, 2),
                }
            )

    probes = [threading.Thread(target=loop, args=(k,)) for k in ("predicts", "ready")]
    for t in probes:
        t.start()
    time.sleep(0.3)
    reports = [threading.Thread(target=report) for _ in range(REPORTS)]
    for t in reports:
        t.start()
    for t in reports:
        t.join()
    time.sleep(0.3)
    stop.set()
    for t in probes:
        t.join()
    return seen


@pytest.mark.postgres
@pytest.mark.parametrize("empty_database_url", ["postgres"], indirect=True)
def test_concurrent_slow_reports_do_not_open_the_breaker(
    database_url: str, server_factory: Any
) -> None:
    results: dict[str, Any] = {}
    for variant, cap in (("cap", None), ("no cap", str(REPORTS))):
        env = dict(SERVER_ENV)
        if cap is not None:
            env["COSTWISE_MONITORING_MAX_CONCURRENT"] = cap
        server = server_factory(database_url, env=env)
        if not results:  # the first server trains the model; its log is seeded directly
            with httpx.Client(base_url=server.base_url, timeout=60) as client:
                r = client.post("/v1/models/fraud/versions", json=train_body())
                assert r.status_code == 201, r.text
            started = time.monotonic()
            _seed_log(database_url, LOG_ROWS)
            results["seed_seconds"] = round(time.monotonic() - started, 1)
        seen = _during_reports(server.base_url)
        log = server.log_path.read_text(errors="replace")
        server.stop()
        results[variant] = seen
        reports = seen["reports"]

        # the breaker stayed closed: predicts and readiness answered throughout
        predicts, ready = seen["predicts"], seen["ready"]
        assert len(predicts) > 5 and len(ready) > 5, (len(predicts), len(ready))
        assert "failing fast" not in log, log[-3000:]
        assert all(status == 200 and not stale for status, stale, _ in predicts), [
            p for p in predicts if p[0] != 200 or p[1]
        ][:5]
        assert all(status == 200 for status, _ in ready), ready[:5]
        assert not any("database_down_since" in checks for _, checks in ready), ready[:5]

        assert len(reports) == REPORTS, reports
        for r in reports:  # an answer or a clear 503, never a 500
            assert r["status"] == 200 or (r["status"] == 503 and r["code"] == "UNAVAILABLE"), r
        refused = [r for r in reports if r["status"] == 503 and r["retry_after"] is not None]
        timed_out = [r for r in reports if r["status"] == 503 and r["retry_after"] is None]
        assert all("COSTWISE_DB_TIMEOUT" in r["detail"] for r in timed_out), timed_out
        if variant == "cap":  # 8 at once, 2 slots: refused at once, with Retry-After
            assert len(refused) >= REPORTS - 2, reports
            assert all("COSTWISE_MONITORING_MAX_CONCURRENT" in r["detail"] for r in refused)
            assert all(r["retry_after"] == "2" and r["seconds"] < 2.0 for r in refused), reports
        else:  # every report reached the database: the timeout rule is what is tested
            assert not refused, reports
            assert timed_out, f"no report hit the 0.25 s statement timeout: {reports}"

    write_result(
        "slow-reports",
        {
            variant: seen
            if variant == "seed_seconds"
            else {
                "reports": seen["reports"],
                "predicts": len(seen["predicts"]),
                "ready": len(seen["ready"]),
            }
            for variant, seen in results.items()
        },
    )
