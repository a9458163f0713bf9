"""Who may call what: the one declared table of route x minimum role.

Every route of the app (method and path template, as FastAPI matches it) has one row
here: its minimum role (``None``: open to anybody) and why. :func:`app.api.access.auth.required_role`
answers from this table only, the page ``docs/authentication.md`` shows it (written by
``python scripts/permissions_table.py --write``), and
``tests/reliability/test_role_matrix.py`` fails when a route of the app is missing from
it, when the page differs from it, or when a caller of some role gets other than what
it says. A route that is not in the table needs ``admin`` (closed by default).

The rule behind the rows: a ``GET``/``HEAD`` changes nothing (no row written, no decision
changed) and needs ``reader``; what makes decisions for a request, or reports the
outcomes of its own decisions, needs ``predictor``; whatever changes what the service
decides for everybody (which version serves, its calibration, the recorded prior
estimate that ``"priors": "estimated"`` applies, the prediction log), starts jobs or
manages keys needs ``admin``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["PERMISSIONS", "Permission", "Role", "minimum_role", "permission_table"]

Role = Literal["reader", "predictor", "admin"]

#: ``/metrics`` is open unless ``COSTWISE_METRICS_PUBLIC=false``; then it needs this role.
METRICS_PATH = "/metrics"
METRICS_PRIVATE_ROLE: Role = "reader"


@dataclass(frozen=True)
class Permission:
    """One route: ``method`` on the path template ``path`` needs ``role`` (None: open)."""

    method: str
    path: str
    role: Role | None
    reason: str


def _rows(
    methods: tuple[str, ...], paths: tuple[str, ...], role: Role | None, reason: str
) -> list[Permission]:
    return [Permission(m, p, role, reason) for p in paths for m in methods]


_PROBE = "a probe: orchestrators call it without a secret; it reports only up/ready"
_SHAPE = "the API's shape is not a secret (Swagger UI has an Authorize button)"
_CONSOLE = "a static page and its scripts; its data comes from /v1 with the user's key"
_METRICS = (
    "open so that Prometheus scrapes it without a secret; `reader` with "
    "COSTWISE_METRICS_PUBLIC=false; model names only for a valid key (see below)"
)
_READ_REGISTRY = "reads the registry; writes nothing"
_READ_STORED = "computed from the version's stored held-out rows; writes nothing"
_READ_LOG = "computed from the prediction log; writes nothing"
_READ_PRIORS = (
    "computes an estimate from the prediction log and records nothing: no decision changes"
)
_READ_JOBS = "job status; writes nothing"
_READ_V2 = "Open Inference Protocol metadata and readiness; writes nothing"
_DECIDE = "decides the request's own rows (and logs them); changes nothing for others"
_EVALUATE = "decides and scores the request's labelled rows; writes nothing"
_OUTCOMES = (
    "reports the true labels of logged predictions; changes no decision (only an "
    "admin's recalibration from outcomes uses them)"
)
_TRAIN = "registers a new version (and may start a job)"
_PATCH = "turns the model's prediction log on or off: what monitoring and EM see"
_ALIAS = "moves or removes an alias: which version serves everybody's requests"
_RECAL = "registers a recalibrated version"
_RECORD_PRIORS = (
    'records the estimate that `"priors": "estimated"` applies: changes decisions for everybody'
)
_BATCH = "reads and writes storage named in the request, runs a job"
_CANCEL = "stops somebody's training or batch job"
_COMPARE = "computed from the prediction log and its shadow decisions; writes nothing"
_HISTORY = "reads the audit trail of an alias's moves; writes nothing"
_PROMOTE = "moves an alias when the comparison's evidence holds: which version serves everybody"
_READ_SHADOW = "reads which version shadows the model, and counters; writes nothing"
_SHADOW = "names (or removes) the version that decides every predict of the model again"
_SPLIT = "sends a share of an alias's traffic to another version: which version serves people"
_READ_SPLIT = "reads an alias's traffic split; writes nothing"
_KEYS = "API keys: who may do what (listing shows names, roles and use)"
_WEBHOOKS = "where the service sends events (URLs, and what was sent to them)"

PERMISSIONS: tuple[Permission, ...] = tuple(
    [
        *_rows(("GET", "HEAD"), ("/health/live", "/health/ready"), None, _PROBE),
        *_rows(("GET", "HEAD"), ("/v2/health/live", "/v2/health/ready"), None, _PROBE),
        Permission("GET", METRICS_PATH, None, _METRICS),
        *_rows(
            ("GET", "HEAD"),
            ("/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"),
            None,
            _SHAPE,
        ),
        *_rows(("GET",), ("/console", "/console/static/{asset}"), None, _CONSOLE),
        *_rows(
            ("GET",),
            (
                "/v1/models",
                "/v1/models/{name}",
                "/v1/models/{name}/versions",
                "/v1/models/{name}/versions/{version}",
                "/v1/algorithms",
            ),
            "reader",
            _READ_REGISTRY,
        ),
        *_rows(
            ("GET",),
            (
                "/v1/models/{name}/versions/{version}/plots",
                "/v1/models/{name}/versions/{version}/plots/{kind}",
                "/v1/models/{name}/versions/{version}/whatif",
                "/v1/models/{name}/versions/{version}/whatif/matrix",
            ),
            "reader",
            _READ_STORED,
        ),
        Permission("GET", "/v1/models/{name}/monitoring", "reader", _READ_LOG),
        Permission("GET", "/v1/models/{name}/priors", "reader", _READ_PRIORS),
        Permission("GET", "/v1/models/{name}/compare", "reader", _COMPARE),
        Permission("GET", "/v1/models/{name}/shadow", "reader", _READ_SHADOW),
        Permission("GET", "/v1/models/{name}/aliases/{alias}/split", "reader", _READ_SPLIT),
        Permission("GET", "/v1/models/{name}/aliases/{alias}/history", "reader", _HISTORY),
        *_rows(("GET",), ("/v1/jobs", "/v1/jobs/{job_id}"), "reader", _READ_JOBS),
        *_rows(
            ("GET",),
            (
                "/v2",
                "/v2/models/{name}",
                "/v2/models/{name}/ready",
                "/v2/models/{name}/versions/{version}",
                "/v2/models/{name}/versions/{version}/ready",
            ),
            "reader",
            _READ_V2,
        ),
        *_rows(
            ("POST",),
            (
                "/v1/models/{name}/predict",
                "/v2/models/{name}/infer",
                "/v2/models/{name}/versions/{version}/infer",
            ),
            "predictor",
            _DECIDE,
        ),
        Permission("POST", "/v1/models/{name}/evaluate", "predictor", _EVALUATE),
        Permission("POST", "/v1/models/{name}/outcomes", "predictor", _OUTCOMES),
        Permission("POST", "/v1/models/{name}/versions", "admin", _TRAIN),
        Permission("PATCH", "/v1/models/{name}", "admin", _PATCH),
        *_rows(("PUT", "DELETE"), ("/v1/models/{name}/aliases/{alias}",), "admin", _ALIAS),
        Permission("POST", "/v1/models/{name}/aliases/{alias}/promote", "admin", _PROMOTE),
        *_rows(("PUT", "DELETE"), ("/v1/models/{name}/shadow",), "admin", _SHADOW),
        *_rows(("PUT", "DELETE"), ("/v1/models/{name}/aliases/{alias}/split",), "admin", _SPLIT),
        Permission("POST", "/v1/models/{name}/versions/{version}/recalibrate", "admin", _RECAL),
        Permission("POST", "/v1/models/{name}/priors", "admin", _RECORD_PRIORS),
        Permission("POST", "/v1/models/{name}/batch", "admin", _BATCH),
        Permission("POST", "/v1/jobs/{job_id}/cancel", "admin", _CANCEL),
        *_rows(("GET", "POST"), ("/v1/keys",), "admin", _KEYS),
        Permission("DELETE", "/v1/keys/{key_id}", "admin", _KEYS),
        *_rows(("GET", "POST"), ("/v1/webhooks",), "admin", _WEBHOOKS),
        Permission("DELETE", "/v1/webhooks/{webhook_id}", "admin", _WEBHOOKS),
        Permission("GET", "/v1/webhooks/{webhook_id}/deliveries", "admin", _WEBHOOKS),
    ]
)

_BY_ROUTE: dict[tuple[str, str], Permission] = {(p.method, p.path): p for p in PERMISSIONS}
if len(_BY_ROUTE) != len(PERMISSIONS):  # pragma: no cover - a mistake in the table above
    raise RuntimeError("app.api.access.permissions: a route is declared twice")


def minimum_role(method: str, path: str, *, metrics_public: bool = True) -> Role | None:
    """Minimum role for ``method`` on the route template ``path`` (None: open).

    A route missing from :data:`PERMISSIONS` needs ``admin``: a new route is closed
    until it is declared.
    """
    if path == METRICS_PATH and method in ("GET", "HEAD") and not metrics_public:
        return METRICS_PRIVATE_ROLE
    found = _BY_ROUTE.get((method, path))
    return "admin" if found is None else found.role


def permission_table() -> str:
    """The Markdown table of ``docs/authentication.md``: one row per route."""
    lines = ["| method | route | minimum role | why |", "|---|---|---|---|"]
    for p in PERMISSIONS:
        role = "none (open)" if p.role is None else f"`{p.role}`"
        lines.append(f"| `{p.method}` | `{p.path}` | {role} | {p.reason} |")
    return "\n".join(lines)
