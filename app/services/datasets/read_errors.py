"""How a failed read is told: the first line of the error, the network error behind it."""

from __future__ import annotations

__all__ = ["network_cause", "short_reason"]


def network_cause(exc: BaseException) -> BaseException | None:
    """The connection error behind fsspec's FileNotFoundError, if there is one (fsspec's
    http file system reports a refused connection as a missing file)."""
    seen = exc.__cause__ or exc.__context__
    while seen is not None:
        if isinstance(seen, ConnectionError | TimeoutError) or "Connect" in type(seen).__name__:
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def short_reason(exc: BaseException) -> str:
    """The first line of ``exc`` (at most 300 characters), or its type's name."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]
