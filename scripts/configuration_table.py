"""Write the settings table of docs/configuration.md from ``app.settings.Settings``.

python scripts/configuration_table.py            # print the table
python scripts/configuration_table.py --check    # exit 1 if docs/configuration.md is out of date
python scripts/configuration_table.py --write    # rewrite the table in docs/configuration.md

Each row is one field: its environment variable, default, accepted values (from the
field's type and bounds) and its description, so the page says what the code does.
"""

from __future__ import annotations

import typing
from typing import Any

import doc_tables  # scripts/doc_tables.py (run as python scripts/...)
from pydantic.fields import FieldInfo

from app.settings import Settings


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
    return doc_tables.main("configuration.md", "settings", table(), "configuration_table.py")


if __name__ == "__main__":
    raise SystemExit(main())
