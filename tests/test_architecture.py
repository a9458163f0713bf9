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
        "import sys, json, models, models.boosting.adaboost, models.boosting.calibrated, models.inference.artifacts, "
        "models.evaluation.metrics, models.decisions.rule, models.calibration.calibrators, models.inference.model, models.evaluation.plots\n"
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


def flat_entries(directory: Path) -> list[str]:
    """What sits at the top of ``directory`` other than ``__init__.py`` and packages.

    A package is a folder with an ``__init__.py``; ``__pycache__`` is ignored. A module or
    a folder without ``__init__.py`` (a namespace package nobody declared) is returned.
    """
    return sorted(
        p.name
        for p in directory.iterdir()
        if p.name not in ("__init__.py", "__pycache__")
        and not (p.is_dir() and (p / "__init__.py").is_file())
    )


def test_services_are_rooms_only() -> None:
    """app/services holds packages only, one per concept (the architecture guide's "a room
    per concept"): a new use case goes into the room of its concept, or a new room with a
    docstring saying what lives there and what it may import (and its place in the
    [tool.importlinter] contract of the rooms), never flat beside them."""
    services = ROOT / "app" / "services"
    assert flat_entries(services) == [], "flat in app/services, put it in a room"
    undocumented = sorted(
        p.parent.name
        for p in services.glob("*/__init__.py")
        if not re.match(r'\s*"""\S', p.read_text())
    )
    assert undocumented == [], f"rooms without a docstring: {undocumented}"


def test_models_are_rooms_only() -> None:
    """models/ holds packages only, one per concept, beside the package's own __init__ and
    the exceptions every room shares: a new module goes into the room of its concept (its
    place among the rooms is the [tool.importlinter] contract "The rooms of models")."""
    core = ROOT / "models"
    assert flat_entries(core) == ["exceptions.py", "py.typed"], "flat in models/, use a room"
    undocumented = sorted(
        p.parent.name
        for p in core.glob("*/__init__.py")
        if not re.match(r'\s*"""\S', p.read_text())
    )
    assert undocumented == [], f"rooms without a docstring: {undocumented}"


def test_the_room_check_sees_what_it_must_refuse(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "room").mkdir()
    (tmp_path / "room" / "__init__.py").write_text('"""A room."""\n')
    (tmp_path / "__pycache__").mkdir()
    assert flat_entries(tmp_path) == []
    (tmp_path / "flat.py").write_text("")
    (tmp_path / "no_init").mkdir()
    assert flat_entries(tmp_path) == ["flat.py", "no_init"]
