"""Write the route x role table of docs/authentication.md from ``app.api.permissions``.

python scripts/permissions_table.py            # print the table
python scripts/permissions_table.py --check    # exit 1 if docs/authentication.md is out of date
python scripts/permissions_table.py --write    # rewrite the table in docs/authentication.md

One row per route (method and path template) of the declared table
:data:`app.api.permissions.PERMISSIONS`: its minimum role and why.
tests/reliability/test_role_matrix.py parses the page's table and walks it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from app.api.permissions import permission_table

BEGIN = "<!-- permissions:begin -->"
END = "<!-- permissions:end -->"
PAGE = Path(__file__).resolve().parents[1] / "docs" / "authentication.md"


def main() -> int:
    block = f"{BEGIN}\n{permission_table()}\n{END}"
    text = PAGE.read_text()
    if "--check" in sys.argv:
        ok = BEGIN in text and text[text.index(BEGIN) : text.index(END) + len(END)] == block
        print(
            "docs/authentication.md: the permission table is up to date"
            if ok
            else "docs/authentication.md: the permission table is stale: run "
            "python scripts/permissions_table.py --write"
        )
        return 0 if ok else 1
    if "--write" in sys.argv:
        start, end = text.index(BEGIN), text.index(END) + len(END)
        PAGE.write_text(text[:start] + block + text[end:])
        return 0
    print(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
