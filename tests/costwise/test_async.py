"""The async client gives exactly what the sync client gives, on the real service."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from costwise import AsyncClient, Client, NotFound
from tests.costwise.conftest import ADMIN_KEY, FAST_RETRY, Service


def _ids(n: int) -> list[str]:
    return [f"async{i}" for i in range(n)]


def _calls(X: Any, y: Any) -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    """(method, args, kwargs) of a tour of the read and decide methods."""
    return [
        ("live", (), {}),
        ("get_model", ("fraud",), {}),
        ("list_models", (), {"limit": 5}),
        ("list_versions", ("fraud",), {}),
        ("get_version", ("fraud", 1), {}),
        ("list_algorithms", (), {}),
        # the same ids both times: the answers (with the rows' ids) are then equal
        ("predict", ("fraud", X), {"costs": {"c_fp": 1, "c_fn": 4}, "ids": _ids(len(X))}),
        ("evaluate", ("fraud", y, X), {"cost_matrix": [[0, 1], [4, 0]]}),
    ]


def test_async_answers_equal_sync_answers(
    server: Service, client: Client, fraud: dict[str, Any]
) -> None:
    calls = _calls(fraud["X"][:20], fraud["y"][:20])

    async def run() -> list[Any]:
        async with AsyncClient(server.url, api_key=ADMIN_KEY, retry=FAST_RETRY) as c:
            return [await getattr(c, name)(*args, **kwargs) for name, args, kwargs in calls]

    expected = [getattr(client, name)(*args, **kwargs) for name, args, kwargs in calls]
    assert asyncio.run(run()) == expected


def test_async_requests_run_concurrently_and_raise_the_same_errors(
    server: Service, client: Client, fraud: dict[str, Any]
) -> None:
    rows = [fraud["X"][i : i + 1] for i in range(8)]

    async def run() -> tuple[list[Any], NotFound]:
        async with AsyncClient(server.url, api_key=ADMIN_KEY, retry=FAST_RETRY) as c:
            answers = await asyncio.gather(
                *(c.predict("fraud", r, ids=[f"conc{i}"]) for i, r in enumerate(rows))
            )
            with pytest.raises(NotFound) as err:
                await c.get_model("no-such-model")
            return list(answers), err.value

    answers, error = asyncio.run(run())
    assert answers == [client.predict("fraud", r, ids=[f"conc{i}"]) for i, r in enumerate(rows)]
    assert (error.status, error.code) == (404, "NOT_FOUND")
