"""Print the weak-learner table of docs/algorithms.md from the registry (models.weak).

python scripts/weak_learners_table.py            # print the table
python scripts/weak_learners_table.py --check    # exit 1 if docs/algorithms.md is out of date
python scripts/weak_learners_table.py --write    # rewrite the table in docs/algorithms.md
"""

from __future__ import annotations

import doc_tables  # scripts/doc_tables.py (run as python scripts/...)

from models.inference.layouts import ENSEMBLE_LAYOUTS
from models.weak import WEAK_LEARNERS


def _classes(binary: bool, multiclass: bool) -> str:
    if not binary:
        return "its algorithms' own (two)"
    return "two or more" if multiclass else "two"


def table() -> str:
    lines = [
        "| `weak_learner` | what it is | classes | reads | ensemble layout | in `auto`'s grid (depth, rounds) |",
        "|---|---|---|---|---|---|",
    ]
    for spec in WEAK_LEARNERS.values():
        place = spec.grid
        grid = "-"
        if place is not None:
            two = ", ".join(f"({d}, {m})" for d, m in place.binary)
            more = ", ".join(f"({d}, {m})" for d, m in place.multiclass)
            grid = two if two == more else f"{two}; more classes {more}"
            if place.small_data_only:
                grid += "; small data only"
        reads = ", ".join(f"`{p}`" for p in spec.params) or "-"
        classes = _classes(spec.binary is not None, spec.multiclass is not None)
        lines.append(
            f"| `{spec.name}` | {spec.description} | {classes} | {reads} | `{spec.layout}` "
            f"| {grid} |"
        )
    lines += ["", "| ensemble layout | a learner |", "|---|---|"]
    lines += [f"| `{name}` | {lay.description} |" for name, lay in ENSEMBLE_LAYOUTS.items()]
    return "\n".join(lines)


def main() -> int:
    return doc_tables.main("algorithms.md", "weak_learners", table(), "weak_learners_table.py")


if __name__ == "__main__":
    raise SystemExit(main())
