"""Shared helpers of the reliability proofs: seeded registries and a real uvicorn server.

Everything listens on 127.0.0.1 only. Servers (:mod:`bench.reliability.server`) are child
processes configured through ``COSTWISE_*`` environment variables, always stopped by the
fixture that started them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Connection, text

from app.db import make_engine
from bench.reliability.server import Server, start_server

ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "bench" / "reliability" / "out"


def write_result(name: str, payload: Mapping[str, Any]) -> Path:
    """Write ``payload`` as JSON to ``bench/reliability/out/<name>.json`` (not committed)."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
    return path


def post_json_bytes(url: str, body: bytes, timeout: float) -> httpx.Response:
    """POST ``body``, bytes already encoded as JSON, to ``url``."""
    return httpx.post(
        url, content=body, headers={"content-type": "application/json"}, timeout=timeout
    )


@contextmanager
def connection(database_url: str, *, write: bool = False) -> Iterator[Connection]:
    """A connection to the registry (in a transaction committed at the end when
    ``write``); its engine is disposed of afterwards."""
    engine = make_engine(database_url)
    try:
        with engine.begin() if write else engine.connect() as conn:
            yield conn
    finally:
        engine.dispose()


def flip_artifact_byte(database_url: str, model: str, version: int) -> None:
    """Change one byte in the middle of the stored artifact of ``model`` ``version``."""
    with connection(database_url, write=True) as conn:
        row = conn.execute(
            text(
                "SELECT a.id, a.data FROM artifacts a JOIN model_versions v "
                "ON v.id = a.version_id JOIN registered_models m ON m.id = v.model_id "
                "WHERE m.name = :m AND v.version = :v"
            ),
            {"m": model, "v": version},
        ).one()
        blob = bytearray(row.data)
        blob[len(blob) // 2] ^= 0x01
        conn.execute(
            text("UPDATE artifacts SET data = :d WHERE id = :i"),
            {"d": bytes(blob), "i": row.id},
        )


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Any]:
    """Start servers with :func:`start_server`; every one is stopped at teardown."""
    started: list[Server] = []

    def factory(database_url: str, **kwargs: Any) -> Server:
        server = start_server(database_url, tmp_path / f"server{len(started)}.log", **kwargs)
        started.append(server)
        return server

    yield factory
    for server in started:
        server.stop()
