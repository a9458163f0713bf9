"""The console's HTTP side: the page and its assets are served, open, and ship in the wheel."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.api.access.auth import required_role
from app.api.main import create_app
from app.console import assets, page
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
STATIC = ROOT / "app" / "console" / "static"


@pytest.fixture(params=["off", "on"])
def client(request: pytest.FixtureRequest, database_url: str) -> Iterator[TestClient]:
    settings = Settings(database_url=database_url, auth=request.param)
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        yield c


def test_page_is_served_without_a_key_with_a_strict_policy(client: TestClient) -> None:
    r = client.get("/console")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/html")
    assert "<title>costwise console</title>" in r.text
    policy = r.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    assert r.headers["x-content-type-options"] == "nosniff"
    # no inline script or style: everything the page runs comes from /console/static
    assert not re.search(r"<script(?![^>]*\bsrc=)", r.text)
    assert "style=" not in r.text and "<style" not in r.text


def test_every_asset_the_page_references_is_served(client: TestClient) -> None:
    html = client.get("/console").text
    referenced = re.findall(r'(?:src|href)="console/static/([^"]+)"', html)
    assert set(referenced) == {"console.css", "console.js"}
    imported = {
        name
        for path in STATIC.glob("*.js")
        for name in re.findall(r'from "\./([^"]+)"', path.read_text())
    }
    assert imported == {"api.js", "chart.js", "compare.js", "dom.js", "monitor.js", "whatif.js"}
    for name in set(referenced) | imported:
        r = client.get(f"/console/static/{name}")
        assert r.status_code == 200, name
        assert r.content == (STATIC / name).read_bytes()
        expected = "text/javascript" if name.endswith(".js") else "text/css"
        assert r.headers["content-type"].startswith(expected), name


@pytest.mark.parametrize(
    "path", ["/console/static/nope.js", "/console/static/..%2F__init__.py", "/console/static/"]
)
def test_unknown_assets_are_404_with_the_error_shape(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 404
    assert r.json()["code"] == "NOT_FOUND"


def test_console_is_open_in_the_policy_table_and_out_of_the_openapi(client: TestClient) -> None:
    assert required_role("GET", "/console") is None
    assert required_role("GET", "/console/static/{asset}") is None
    # an undeclared route is closed (admin); only the console itself is open
    assert required_role("GET", "/consoles") == "admin"
    assert not any(p.startswith("/console") for p in client.get("/openapi.json").json()["paths"])
    assert "/console" in client.get("/openapi.json").json()["info"]["description"]


def test_the_wheel_ships_the_console_files() -> None:
    """package-data covers every file under app/console (the loaders read only those)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["app"]
    shipped = [
        p.relative_to(ROOT / "app")
        for p in (ROOT / "app" / "console").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc")
    ]
    assert shipped, "no console files found"
    for f in shipped:
        assert any(f.match(pattern) for pattern in patterns), f"{f} is not in package-data"
    assert page().startswith(b"<!doctype html>")
    assert set(assets()) == {p.name for p in STATIC.iterdir()}
