"""Pure-ASGI middleware: request-body limit and Prometheus metrics.

Both are plain ASGI callables (not ``BaseHTTPMiddleware``) so they add microseconds,
not a task and a queue, to every request.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import orjson
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.metrics_core import Metric
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HIDDEN = "_hidden"

LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)


class Metrics:
    """The service's Prometheus collectors, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "costwise_http_requests_total",
            "HTTP requests by route, method, status and model.",
            ["method", "route", "status", "model"],
            registry=self.registry,
        )
        self.errors = Counter(
            "costwise_http_errors_total",
            "HTTP responses with status >= 400.",
            ["method", "route", "status", "model"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "costwise_http_request_duration_seconds",
            "Request latency by route and model.",
            ["method", "route", "model"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.rows = Counter(
            "costwise_predicted_rows_total",
            "Rows scored by predict and evaluate.",
            ["model"],
            registry=self.registry,
        )
        self._rows_of: dict[str, Counter] = {}  # model name -> its child of ``rows``
        self.cached_models = Gauge(
            "costwise_cached_models", "Models held in the in-memory cache.", registry=self.registry
        )
        self.jobs = Gauge(
            "costwise_training_jobs",
            "Training jobs by status, read from the registry database at each scrape "
            "(all replicas and workers).",
            ["status"],
            registry=self.registry,
        )

    def count_rows(self, model: str, n: int) -> None:
        """Add ``n`` to ``rows`` for ``model``. Each model's labelled child is looked up
        once (``labels()`` checks its arguments and takes a lock: ~2 us a request)."""
        child = self._rows_of.get(model)
        if child is None:
            child = self._rows_of[model] = self.rows.labels(model)
        child.inc(n)


class WithoutModelNames:
    """A collector showing ``registry`` with the ``model`` label merged into one value.

    Counters and histogram buckets, sums and counts are summed over models (the totals
    stay right); ``_created`` timestamps keep the earliest. Served by ``/metrics`` to
    callers without a key when authentication is on (model names are not public).
    Per-model gauges (``costwise_monitoring_*``: ratios, which cannot be summed) are left out.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Metric]:
        for metric in self.registry.collect():
            if metric.name.startswith("costwise_monitoring_"):
                continue
            merged: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
            for sample in metric.samples:
                labels = tuple(
                    sorted((k, HIDDEN if k == "model" else v) for k, v in sample.labels.items())
                )
                key = (sample.name, labels)
                if key not in merged:
                    merged[key] = sample.value
                elif sample.name.endswith("_created"):
                    merged[key] = min(merged[key], sample.value)
                else:
                    merged[key] += sample.value
            out = Metric(metric.name, metric.documentation, metric.type, metric.unit)
            for (name, labels), value in merged.items():
                out.add_sample(name, dict(labels), value)
            yield out


class MetricsMiddleware:
    """Counts requests, errors and latency per route template and model name.

    The model label is ``model_label(name)``: the name itself only for a model that
    exists (see :mod:`app.services.model_registry.known_models`), one fixed value otherwise, so that
    the number of series is bounded by the number of registered models.
    """

    def __init__(
        self, app: ASGIApp, metrics: Metrics, model_label: Callable[[str], str] = str
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.model_label = model_label

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        started = time.perf_counter()

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", None) or "unmatched"
            name = (scope.get("path_params") or {}).get("name", "") if route else ""
            model = self.model_label(name) if name else ""
            method = scope["method"]
            m = self.metrics
            m.requests.labels(method, path, str(status), model).inc()
            if status >= 400:
                m.errors.labels(method, path, str(status), model).inc()
            m.latency.labels(method, path, model).observe(time.perf_counter() - started)


class _TooLarge(Exception):
    pass


class WatchedSend:
    """``send`` that notes whether the response has started: until then a middleware
    that stops the request may still answer it (with its own status), after it may not."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self.send(message)


class BodyLimitMiddleware:
    """Answers 413 PAYLOAD_TOO_LARGE for bodies over ``max_bytes`` (declared or streamed)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def _reject(self, scope: Scope, send: Send) -> None:
        detail = (
            f"request body is larger than the limit of {self.max_bytes} bytes "
            "(setting COSTWISE_MAX_BODY_BYTES)"
        )
        if scope.get("path", "").startswith("/v2/"):  # the Open Inference Protocol's body
            body = orjson.dumps({"error": detail})
        else:
            body = orjson.dumps(
                {
                    "detail": detail,
                    "code": "PAYLOAD_TOO_LARGE",
                    "field": "body",
                    "limit": self.max_bytes,
                }  # fmt: skip
            )
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", []):
            if key == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    await self._reject(scope, send)
                    return
        received = 0
        watched = WatchedSend(send)

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, limited_receive, watched)
        except _TooLarge:
            if not watched.started:
                await self._reject(scope, send)
