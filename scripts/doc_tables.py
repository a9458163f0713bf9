"""A generated table kept in a docs page between two HTML comments, shared by the
``*_table.py`` scripts beside this file.

``main(page, name, table, script)`` prints the block, or with ``--check`` exits 1 when
the page's block differs from it, or with ``--write`` rewrites the block in the page.
The block is ``<!-- {name}:begin -->``, the table, ``<!-- {name}:end -->``.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def main(page: str, name: str, table: str, script: str) -> int:
    path = DOCS / page
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    block = f"{begin}\n{table}\n{end}"
    if "--check" in sys.argv or "--write" in sys.argv:
        text = path.read_text()
        if begin not in text or end not in text:
            print(f"docs/{page}: no {begin} ... {end} block")
            return 1
        start, stop = text.index(begin), text.index(end) + len(end)
        if "--write" in sys.argv:
            path.write_text(text[:start] + block + text[stop:])
            return 0
        ok = text[start:stop] == block
        what = name.rstrip("s") if name != "settings" else "settings"
        print(
            f"docs/{page}: the {what} table is up to date"
            if ok
            else f"docs/{page}: the {what} table is stale: run python scripts/{script} --write"
        )
        return 0 if ok else 1
    print(block)
    return 0
