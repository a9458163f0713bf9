"""CLI fixtures: the ``costwise`` command in-process against a fresh registry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.settings import get_settings

ROOT = Path(__file__).resolve().parents[3]
FRAUD = ROOT / "examples" / "fraud.csv"


@pytest.fixture
def registry(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The settings name a fresh registry (``database_url``) and no authentication."""
    monkeypatch.setenv("COSTWISE_DATABASE_URL", database_url)
    for name in ("COSTWISE_ENV", "COSTWISE_AUTH", "COSTWISE_BOOTSTRAP_ADMIN_KEY"):
        monkeypatch.delenv(name, raising=False)
    get_settings.cache_clear()
    yield database_url
    get_settings.cache_clear()
