"""API fixtures: the real app factory on a fresh registry (SQLite, and PostgreSQL when set)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import make_classification

from app.settings import Settings

FEATURES = ["a", "b", "c", "d"]


def dataset(
    n: int = 300, d: int = 4, seed: int = 0, weights: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Informative-ish features (rounded to 4 decimals), binary labels, fixed seed."""
    X, y = make_classification(
        n_samples=n,
        n_features=d,
        n_informative=3,
        n_redundant=1,
        weights=weights,
        random_state=seed,
    )
    return np.round(X, 4), y


def train_body(n: int = 300, seed: int = 0, **params: Any) -> dict[str, Any]:
    """A JSON training body on :func:`dataset` (30 rounds, the four named features)."""
    X, y = dataset(n, seed=seed)
    body: dict[str, Any] = {
        "features": X.tolist(),
        "labels": y.tolist(),
        "feature_names": list(FEATURES),
        "n_estimators": 30,
    }
    body.update(params)
    return body


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        max_predict_rows=1000,
        max_train_rows=5000,
        max_body_bytes=2_000_000,
        max_rounds=500,
        max_features=50,
    )


@pytest.fixture
def trained(client: TestClient) -> dict[str, Any]:
    """A model 'fraud' with one version trained on the standard dataset, 20% held out
    (an explicit ``evaluation_fraction``: a true hold-out that tests can score again)."""
    r = client.post("/v1/models/fraud/versions", json=train_body(evaluation_fraction=0.2))
    assert r.status_code == 201, r.text
    return r.json()
