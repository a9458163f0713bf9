"""A typed Python client of the costwise API, synchronous and asynchronous.

>>> from costwise.client import Client
>>> with Client("http://127.0.0.1:8000", api_key="cw_...") as cw:  # doctest: +SKIP
...     answer = cw.predict("fraud", [[0.1, 2.0, 3.5, 1.0]], costs={"c_fp": 1, "c_fn": 20})
...     answer.predictions[0].decision

``base_url`` and ``api_key`` default to the environment variables ``COSTWISE_URL``
(else ``http://127.0.0.1:8000``) and ``COSTWISE_API_KEY``. Every method of
:class:`Client` exists on :class:`AsyncClient` with the same arguments, as a coroutine:
both are generated from one definition per operation (:mod:`costwise._operations`,
:mod:`costwise._decisions`), and differ only in how they send a request and sleep.
Errors raise :class:`costwise.errors.CostwiseError` subclasses; retries follow
:class:`Retry` (see :mod:`costwise._core`). This module imports httpx and the standard
library only (not the service), so it can be used from any Python process.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Generic, ParamSpec, Self, TypeVar, overload

import httpx

from costwise import _challenger as chal
from costwise import _decisions as dec
from costwise import _monitoring as mon
from costwise import _operations as ops
from costwise._core import Call, Done, Operation, Plan, Reply, Retry, Sleep, advance, plan

__all__ = ["DEFAULT_URL", "AsyncClient", "Client", "Retry"]

DEFAULT_URL = "http://127.0.0.1:8000"
USER_AGENT = "costwise-client/0.1"

P = ParamSpec("P")
T = TypeVar("T")
H = TypeVar("H", httpx.Client, httpx.AsyncClient)


class _Method(Generic[P, T]):
    """One operation as a method: it returns ``T`` on a Client, a coroutine on an AsyncClient."""

    def __init__(self, build: Callable[P, Operation[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__
        self.__wrapped__ = build

    @overload
    def __get__(self, client: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, client: Client, owner: type | None = None) -> Callable[P, T]: ...
    @overload
    def __get__(
        self, client: AsyncClient, owner: type | None = None
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, client: Any, owner: type | None = None) -> Any:
        if client is None:
            return self
        build = self._build

        @functools.wraps(build)
        def method(*args: P.args, **kwargs: P.kwargs) -> Any:
            return client._run(plan(build(*args, **kwargs), client.retry))

        return method


class _Base(Generic[H]):
    _http: H
    _http_class: type[H]

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = 60.0,
        retry: Retry | None = None,
        headers: dict[str, str] | None = None,
        transport: Any = None,
    ) -> None:
        self.base_url = (base_url or os.environ.get("COSTWISE_URL") or DEFAULT_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("COSTWISE_API_KEY")
        sent = {"User-Agent": USER_AGENT, **(headers or {})}
        if key:
            sent["Authorization"] = f"Bearer {key}"
        self.retry = retry or Retry()
        self._http = self._http_class(
            base_url=self.base_url, headers=sent, timeout=timeout, transport=transport
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r})"

    def _request(self, call: Call) -> httpx.Request:
        return self._http.build_request(
            call.method,
            call.path,
            params=call.params,
            json=call.json,
            files=call.files,
            data=call.data,
            headers=call.headers,
        )

    live = _Method(ops.live)
    ready = _Method(ops.ready)
    list_models = _Method(ops.list_models)
    get_model = _Method(ops.get_model)
    list_versions = _Method(ops.list_versions)
    get_version = _Method(ops.get_version)
    set_alias = _Method(ops.set_alias)
    delete_alias = _Method(ops.delete_alias)
    list_algorithms = _Method(ops.list_algorithms)
    train = _Method(ops.train)
    recalibrate = _Method(ops.recalibrate)
    estimate_priors = _Method(ops.estimate_priors)
    get_job = _Method(ops.get_job)
    list_jobs = _Method(ops.list_jobs)
    cancel_job = _Method(ops.cancel_job)
    wait_for_job = _Method(ops.wait_for_job)
    batch = _Method(ops.batch)
    create_key = _Method(ops.create_key)
    list_keys = _Method(ops.list_keys)
    revoke_key = _Method(ops.revoke_key)
    predict = _Method(dec.predict)
    evaluate = _Method(dec.evaluate)
    list_plots = _Method(dec.list_plots)
    get_plot = _Method(dec.get_plot)
    get_plot_svg = _Method(dec.get_plot_svg)
    whatif = _Method(dec.whatif)
    send_outcomes = _Method(mon.send_outcomes)
    monitoring = _Method(mon.monitoring)
    compare = _Method(mon.compare)
    promote = _Method(chal.promote)
    alias_history = _Method(chal.alias_history)
    set_shadow = _Method(chal.set_shadow)
    get_shadow = _Method(chal.get_shadow)
    clear_shadow = _Method(chal.clear_shadow)
    set_split = _Method(chal.set_split)
    get_split = _Method(chal.get_split)
    clear_split = _Method(chal.clear_split)
    set_prediction_log = _Method(mon.set_prediction_log)


class Client(_Base[httpx.Client]):
    """Synchronous client (a context manager; or call :meth:`close`)."""

    _http_class = httpx.Client

    def _run(self, steps: Plan[T]) -> T:
        reply: Reply = None
        while not isinstance(step := advance(steps, reply), Done):
            if isinstance(step, Sleep):
                time.sleep(step.seconds)
            reply = None if isinstance(step, Sleep) else self._send(step)
        return step.value

    def _send(self, call: Call) -> Reply:
        try:
            return self._http.send(self._request(call))
        except httpx.TransportError as exc:
            return exc

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class AsyncClient(_Base[httpx.AsyncClient]):
    """Asynchronous client: the same methods as :class:`Client`, to be awaited."""

    _http_class = httpx.AsyncClient

    async def _run(self, steps: Plan[T]) -> T:
        reply: Reply = None
        while not isinstance(step := advance(steps, reply), Done):
            if isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
            reply = None if isinstance(step, Sleep) else await self._send(step)
        return step.value

    async def _send(self, call: Call) -> Reply:
        try:
            return await self._http.send(self._request(call))
        except httpx.TransportError as exc:
            return exc

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
