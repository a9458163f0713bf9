"""Project rules that code review alone would not keep: the import direction, no pickle."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = (
    "fastapi",
    "starlette",
    "pydantic",
    "sqlalchemy",
    "alembic",
    "psycopg",
    "app",
    "uvicorn",
    "prometheus_client",
    "httpx",
    "orjson",
)


def test_models_imports_nothing_from_the_web_or_sql_stack() -> None:
    code = (
        "import sys, json, models, models.adaboost, models.calibrated, models.artifacts, "
        "models.metrics, models.decisions, models.calibration, models.inference, models.plots\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = json.loads(out.stdout)
    bad = sorted({m for m in loaded for f in FORBIDDEN if m == f or m.startswith(f + ".")})
    assert bad == [], f"models/ pulled in {bad}"


def test_no_pickle_in_our_source() -> None:
    pattern = re.compile(
        r"\bpickle\.loads?\(|joblib\.load\(|allow_pickle\s*=\s*True|^\s*import pickle", re.M
    )
    hits = [
        str(p.relative_to(ROOT))
        for d in ("app", "models", "costwise")
        for p in (ROOT / d).rglob("*.py")
        if pattern.search(p.read_text())
    ]
    assert hits == []


def test_routes_do_not_query_the_database() -> None:
    """Routes parse, call a service and shape the response: no SQL, sessions or engine.

    Case-insensitive for SQL and for the words session / engine (``SELECT 1`` counts);
    ``Registry`` (the repository class) case-sensitively, since the model-registry
    service is rightly called ``services.registry``. Imports of the database layers are
    refused too.
    """
    routes = ROOT / "app" / "api"
    sql = re.compile(r"\b(select|insert\s+into|delete\s+from|sessions?|engine)\b", re.I)
    layers = re.compile(r"^\s*(from|import)\s+(sqlalchemy|app\.db|app\.registry)\b", re.M)
    hits = [
        str(p.relative_to(ROOT))
        for p in sorted((routes / "routes").glob("*.py")) + sorted((routes / "v2").glob("*.py"))
        if sql.search(p.read_text())
        or re.search(r"\bRegistry\b", p.read_text())
        or layers.search(p.read_text())
    ]
    assert hits == [], f"routes must call services, not the database: {hits}"


def test_the_route_check_sees_what_it_must_refuse() -> None:
    sql = re.compile(r"\b(select|insert\s+into|delete\s+from|sessions?|engine)\b", re.I)
    for bad in (
        'conn.execute(text("SELECT 1"))',
        "services.engine.connect()",
        "Session()",
        "create_key(services.sessions, name, role)",
    ):
        assert sql.search(bad), bad


def test_services_know_nothing_of_http() -> None:
    """Below app.api nothing imports the web framework or spells an API path."""
    web = re.compile(r"^\s*(from|import)\s+(fastapi|starlette)\b", re.M)
    path = re.compile(r"[\"']/v[12]/")
    hits = [
        str(p.relative_to(ROOT))
        for d in ("app/services", "app/registry")
        for p in sorted((ROOT / d).rglob("*.py"))
        if web.search(p.read_text()) or path.search(p.read_text())
    ] + [
        str(p.relative_to(ROOT))
        for p in (ROOT / "app" / "db.py", ROOT / "app" / "errors.py", ROOT / "app" / "settings.py")
        if web.search(p.read_text())
    ]
    assert hits == [], f"HTTP concerns below the API layer: {hits}"


def test_services_leave_database_errors_to_the_repositories() -> None:
    """Database errors are translated once, in app/registry (the repositories and their
    ``reading`` / ``writing`` units): services see service errors only. The readiness
    probe, whose job is to ask the database whether it answers, is the one exception."""
    db_errors = re.compile(r"\bdatabase_errors\b|\bsqlalchemy\.exc\b|\bIntegrityError\b")
    hits = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "app" / "services").rglob("*.py"))
        if p.name != "readiness.py" and db_errors.search(p.read_text())
    ]
    assert hits == [], f"database errors translated in services: {hits}"
