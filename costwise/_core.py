"""The I/O-free core shared by :class:`Client` and :class:`AsyncClient`.

An API operation is written once, as a generator (an *operation*) that yields
:class:`Call` (send this request) and :class:`Sleep` steps and gets back the
:class:`httpx.Response` of each call. :func:`plan` wraps an operation with the
retry policy and the error mapping, and reduces it to two primitive steps that a
driver performs: send one request (its reply is the response or the transport
exception) and sleep. The sync and the async client are only two such drivers.

Retries
-------
A call is retried, with exponential backoff and jitter, when

* the connection could not be made (``httpx.ConnectError``, ``ConnectTimeout``,
  ``PoolTimeout``): the request never left this process, so this is safe for every
  call, training included;
* the service answered 503 (database unreachable, schema being migrated) or the
  answer was lost after the request was sent (read timeout, connection reset), but
  only for calls marked ``retry="safe"``: reads, ``PUT``/``DELETE`` (idempotent),
  and predict/evaluate (they change nothing on the server). A training ``POST`` or a
  key creation is *not* retried then: the server may have registered the version (or
  created the key) before the answer was lost, and repeating it would register a
  second one. A ``Retry-After`` header on a 503 is honoured (up to ``max_delay``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import httpx

from costwise.errors import Unavailable, UnexpectedResponse, error_from_response
from costwise.types import from_json

T = TypeVar("T")

NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class Call:
    """One HTTP request of an operation (``path`` relative to the client's base URL)."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    files: dict[str, tuple[str, bytes, str]] | None = None
    data: dict[str, str] | None = None
    headers: dict[str, str] | None = None
    retry: Literal["safe", "connect"] = "safe"
    answers: frozenset[int] = frozenset()  # error statuses returned, not raised


@dataclass(frozen=True)
class Sleep:
    seconds: float


Reply = httpx.Response | Exception | None
Operation = Generator[Call | Sleep, httpx.Response, T]
Plan = Generator[Call | Sleep, Reply, T]


@dataclass(frozen=True)
class Retry:
    """When and how long to wait before trying a call again.

    ``attempts`` counts every try (1 = no retry). Before try ``n + 1`` the client waits
    ``min(max_delay, backoff * 2**(n-1))`` scaled by a random factor in
    ``[1 - jitter, 1]`` (so that many clients do not retry in lock-step).
    """

    attempts: int = 4
    backoff: float = 0.25
    max_delay: float = 8.0
    jitter: float = 0.5
    statuses: frozenset[int] = frozenset({503})
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(self, tries: int, retry_after: float | None = None) -> float:
        """Seconds to wait after ``tries`` failed tries."""
        base = min(self.max_delay, self.backoff * 2 ** (tries - 1))
        wait = base * (1.0 - self.jitter * self.rng.random())
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_delay))
        return wait

    def should_retry(self, call: Call, reply: Reply, tries: int) -> bool:
        if tries >= self.attempts:
            return False
        if isinstance(reply, NOT_SENT):
            return True
        if call.retry != "safe":
            return False
        if isinstance(reply, httpx.TransportError):
            return True
        return isinstance(reply, httpx.Response) and reply.status_code in self.statuses


def _retry_after(reply: Reply) -> float | None:
    if not isinstance(reply, httpx.Response):
        return None
    try:
        return float(reply.headers["retry-after"])
    except (KeyError, ValueError):
        return None


def _settle(call: Call, reply: Reply) -> httpx.Response:
    if isinstance(reply, httpx.TimeoutException):
        raise Unavailable(None, "TIMEOUT", f"{call.method} {call.path}: {reply!r}") from reply
    if isinstance(reply, httpx.TransportError):
        raise Unavailable(None, "UNREACHABLE", f"{call.method} {call.path}: {reply!r}") from reply
    if isinstance(reply, Exception):
        raise reply
    if reply is None:  # pragma: no cover - a driver bug
        raise RuntimeError("no reply to a call")
    if reply.is_error and reply.status_code not in call.answers:
        raise error_from_response(reply)
    return reply


def exchange(call: Call, retry: Retry) -> Plan[httpx.Response]:
    """Send ``call`` until it succeeds or may not be retried; raise the mapped error."""
    tries = 0
    while True:
        reply = yield call
        tries += 1
        if not retry.should_retry(call, reply, tries):
            return _settle(call, reply)
        yield Sleep(retry.delay(tries, _retry_after(reply)))


def plan(operation: Operation[T], retry: Retry) -> Plan[T]:
    """The primitive steps (send, sleep) of ``operation`` under the ``retry`` policy."""
    response: Any = None
    while True:
        try:
            step = operation.send(response)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        if isinstance(step, Sleep):
            yield step
            response = None
        else:
            response = yield from exchange(step, retry)


@dataclass(frozen=True)
class Done(Generic[T]):
    value: T


def advance(steps: Plan[T], reply: Reply) -> Call | Sleep | Done[T]:
    """The next primitive step of ``steps`` after ``reply``, or its result."""
    try:
        return steps.send(reply)
    except StopIteration as stop:
        return Done(stop.value)


def decode(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise UnexpectedResponse(
            response.status_code, "BAD_RESPONSE", f"the answer is not JSON: {exc}"
        ) from exc


def parsed(cls: type[T], response: httpx.Response, key: str | None = None) -> T:
    """``cls`` from the JSON body (or from its member ``key``), or UnexpectedResponse."""
    body = decode(response)
    try:
        return from_json(cls, body[key] if key is not None else body)
    except (KeyError, TypeError, ValueError) as exc:
        raise UnexpectedResponse(
            response.status_code, "BAD_RESPONSE", f"{cls.__name__} expected: {exc}"
        ) from exc


def one(call: Call, parse: Callable[[httpx.Response], T]) -> Operation[T]:
    """The operation of a single call whose answer ``parse`` turns into the result."""
    response = yield call
    return parse(response)
