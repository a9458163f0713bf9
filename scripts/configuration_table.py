"""Write the settings table of docs/configuration.md from ``app.settings.Settings``.

python scripts/configuration_table.py            # print the table
python scripts/configuration_table.py --check    # exit 1 if docs/configuration.md is out of date
python scripts/configuration_table.py --write    # rewrite the table in docs/configuration.md

Each row is one field: its environment variable, default, accepted values (from the
field's type and bounds) and its description, so the page says what the code does.
"""

from __future__ import annotations

import sys
import typing
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo

from app.settings import Settings

BEGIN = "<!-- settings:begin -->"
END = "<!-- settings:end -->"
PAGE = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


def _default(field: FieldInfo) -> str:
    value = field.default
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _accepted(field: FieldInfo) -> str:
    choices = (
        typing.get_args(field.annotation)
        if typing.get_origin(field.annotation) is typing.Literal
        else ()
    )
    if choices:
        return ", ".join(f"`{c}`" for c in choices)
    bounds = []
    for meta in field.metadata:
        for attr, sign in (
            ("ge", ">="),
            ("gt", ">"),
            ("le", "<="),
            ("lt", "<"),
            ("min_length", "length >="),
        ):
            v: Any = getattr(meta, attr, None)
            if v is not None:
                bounds.append(f"{sign} {v}")
    return ", ".join(bounds)


def table() -> str:
    lines = ["| variable | default | accepted | meaning |", "|---|---|---|---|"]
    for name, field in Settings.model_fields.items():
        desc = " ".join((field.description or "").split()).replace("|", "\\|")
        lines.append(
            f"| `COSTWISE_{name.upper()}` | {_default(field)} | {_accepted(field)} | {desc} |"
        )
    return "\n".join(lines)


def main() -> int:
    block = f"{BEGIN}\n{table()}\n{END}"
    text = PAGE.read_text()
    if "--check" in sys.argv:
        ok = BEGIN in text and text[text.index(BEGIN) : text.index(END) + len(END)] == block
        print(
            "docs/configuration.md: the settings table is up to date"
            if ok
            else "docs/configuration.md: the settings table is stale: run "
            "python scripts/configuration_table.py --write"
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
