"""Shared helpers of the reliability proofs: seeded registries and a real uvicorn server.

Everything listens on 127.0.0.1 only. Servers (:mod:`bench.reliability.server`) are child
processes configured through ``COSTWISE_*`` environment variables, always stopped by the
fixture that started them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import make_classification

from bench.reliability.server import Server, start_server

ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "bench" / "reliability" / "out"
FEATURES = ["a", "b", "c", "d"]


def dataset(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Four informative-ish features, binary labels, fixed seed."""
    X, y = make_classification(
        n_samples=n, n_features=4, n_informative=3, n_redundant=1, random_state=seed
    )
    return np.round(X, 4), y


def train_body(n: int = 300, seed: int = 0, **params: Any) -> dict[str, Any]:
    """A JSON training body on :func:`dataset` (30 stumps, Platt calibration)."""
    X, y = dataset(n, seed)
    body: dict[str, Any] = {
        "features": X.tolist(),
        "labels": y.tolist(),
        "feature_names": FEATURES,
        "n_estimators": 30,
    }
    body.update(params)
    return body


def write_result(name: str, payload: Mapping[str, Any]) -> Path:
    """Write ``payload`` as JSON to ``bench/reliability/out/<name>.json`` (not committed)."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
    return path


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
