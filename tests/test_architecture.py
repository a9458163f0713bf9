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
    routes = ROOT / "app" / "api" / "routes"
    hits = [
        p.name
        for p in routes.glob("*.py")
        if re.search(r"\b(select|session|Registry)\b", p.read_text())
    ]
    assert hits == [], f"routes must call services, not the database: {hits}"
