"""Service fixtures: ``client``, the real app factory on the ``settings`` of the test
package (each package's conftest, or a test module, declares its ``settings``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.settings import Settings


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """A test client of ``create_app(settings)`` (server errors answered, not raised)."""
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        yield c
