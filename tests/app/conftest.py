"""Service fixtures: ``client``, the real app factory on the ``settings`` of the test
package (each package's conftest, or a test module, declares its ``settings``); and
:func:`refused`, the checks of a refused request's error body."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from app.api.main import create_app
from app.settings import Settings


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """A test client of ``create_app(settings)`` (server errors answered, not raised)."""
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        yield c


def refused(
    r: Response,
    status: int | None = None,
    *,
    code: str | None = None,
    field: str | None = None,
    field_prefix: str | None = None,
    detail: str = "",
) -> dict[str, Any]:
    """Assert that ``r`` is a refusal as the project's rule wants it (a 4xx naming the field
    and what was expected, never a 500 or a traceback) and return its error body.

    ``status``: the exact status (None: any 4xx); ``code``: the error code; ``field``: the
    field named, exactly, or ``field_prefix``: a prefix of it; ``detail``: words of the
    detail."""
    if status is None:
        assert 400 <= r.status_code < 500, r.text
    else:
        assert r.status_code == status, r.text
    assert "Traceback" not in r.text
    out: dict[str, Any] = r.json()
    assert set(out) >= {"detail", "code"}, out
    if code is not None:
        assert out["code"] == code, out
    if field is not None:
        assert out.get("field") == field, out
    if field_prefix is not None:
        assert (out.get("field") or "").startswith(field_prefix), out
    assert detail in out["detail"], out
    return out
