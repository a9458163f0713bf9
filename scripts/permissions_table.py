"""Write the route x role table of docs/authentication.md from ``app.api.access.permissions``.

python scripts/permissions_table.py            # print the table
python scripts/permissions_table.py --check    # exit 1 if docs/authentication.md is out of date
python scripts/permissions_table.py --write    # rewrite the table in docs/authentication.md

One row per route (method and path template) of the declared table
:data:`app.api.access.permissions.PERMISSIONS`: its minimum role and why.
tests/reliability/test_role_matrix.py parses the page's table and walks it.
"""

from __future__ import annotations

import doc_tables  # scripts/doc_tables.py (run as python scripts/...)

from app.api.access.permissions import permission_table


def main() -> int:
    return doc_tables.main(
        "authentication.md", "permissions", permission_table(), "permissions_table.py"
    )


if __name__ == "__main__":
    raise SystemExit(main())
