"""The shape every DELETE route shares: 204 No Content once the thing is gone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Response

from app.api.errors import error_responses

__all__ = ["deletes", "no_content"]

F = TypeVar("F", bound=Callable[..., Any])


def deletes(router: APIRouter, path: str, summary: str, *errors: int) -> Callable[[F], F]:
    """Register a DELETE route on ``router`` answering 204 with no body; ``errors`` are
    the statuses it documents besides the router's own."""
    return router.delete(
        path,
        status_code=204,
        response_class=Response,
        responses=error_responses(*errors) if errors else None,
        summary=summary,
    )


def no_content() -> Response:
    """The answer of a DELETE route: 204, no body."""
    return Response(status_code=204)
