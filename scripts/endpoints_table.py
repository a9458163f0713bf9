"""Write the endpoint table of docs/api.md from the app's OpenAPI document.

python scripts/endpoints_table.py            # print the table
python scripts/endpoints_table.py --check    # exit 1 if docs/api.md is out of date
python scripts/endpoints_table.py --write    # rewrite the table in docs/api.md

One row per operation of ``create_app(...).openapi()`` (method, path, summary) with its
minimum role from :data:`app.api.access.permissions.PERMISSIONS`, so that the page cannot
disagree with the routes the service answers. The app is built on a temporary SQLite
registry (migrated on start): no database server is needed. Routes left out of the
OpenAPI document (the web console's static files) are not listed here; the role table of
docs/authentication.md names them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import doc_tables  # scripts/doc_tables.py (run as python scripts/...)

from app.api.access.permissions import minimum_role
from app.api.main import create_app
from app.settings import Settings

_METHODS = ("get", "put", "post", "patch", "delete", "head", "options")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def endpoint_table() -> str:
    """The Markdown table: one row per (method, path) of the OpenAPI document, in its order."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'endpoints.db'}"
        spec = create_app(Settings(database_url=url, auto_migrate=True)).openapi()
    lines = ["| method | path | what it does | minimum role |", "|---|---|---|---|"]
    for path, operations in spec["paths"].items():
        for method in _METHODS:
            op = operations.get(method)
            if op is None:
                continue
            role = minimum_role(method.upper(), path)
            shown = "none (open)" if role is None else f"`{role}`"
            summary = _cell(op.get("summary") or op.get("operationId", ""))
            lines.append(f"| `{method.upper()}` | `{path}` | {summary} | {shown} |")
    return "\n".join(lines)


def main() -> int:
    return doc_tables.main("api.md", "endpoints", endpoint_table(), "endpoints_table.py")


if __name__ == "__main__":
    raise SystemExit(main())
