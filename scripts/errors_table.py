"""Write the error-code table of docs/api.md from ``costwise.errors.ERROR_CODES``.

python scripts/errors_table.py            # print the table
python scripts/errors_table.py --check    # exit 1 if docs/api.md is out of date
python scripts/errors_table.py --write    # rewrite the table in docs/api.md

One row per error code of the one list that the service's ``/v1`` and ``/v2`` error
translation and the Python client's exceptions derive from.
"""

from __future__ import annotations

import doc_tables  # scripts/doc_tables.py (run as python scripts/...)

from costwise.errors import ERROR_CODES


def error_table() -> str:
    lines = [
        "| code | status | on `/v2` | client exception | when |",
        "|---|---|---|---|---|",
    ]
    for e in ERROR_CODES:
        v2 = e.v2_status if e.v2_status is not None else e.status
        lines.append(f"| `{e.code}` | {e.status} | {v2} | `{e.exception.__name__}` | {e.meaning} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(doc_tables.main("api.md", "errors", error_table(), "errors_table.py"))
