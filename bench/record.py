"""Where a benchmark writes its result: one current file per benchmark, overwritten by each run.

A benchmark ``<group>.<name>`` (its name in ``python -m bench``) writes
``bench/results/<group>/<name>.json`` and, when it makes a table, ``<name>.md`` beside it;
a ``label`` (a named configuration of a run, such as the database it used) writes
``<name>-<label>.json`` instead. The date, the machine and the command are inside the file;
earlier runs are in git's history, not in the folder.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import platform
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bench.machine import machine

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS = BENCH_DIR / "results"


def benchmark_name(module_file: str | Path) -> str:
    """``"training.core"`` for ``bench/training/core.py``."""
    return ".".join(Path(module_file).resolve().relative_to(BENCH_DIR).with_suffix("").parts)


def result_path(
    module_file: str | Path, label: str = "", suffix: str = ".json", results: Path = RESULTS
) -> Path:
    """``<results>/<group>/<name>[-<label>]<suffix>`` of the benchmark in ``module_file``."""
    group, name = benchmark_name(module_file).split(".", 1)
    return results / group / f"{name}{'-' + label if label else ''}{suffix}"


def command(module_file: str | Path, argv: list[str] | None = None) -> str:
    """The command that reruns this run: ``python -m bench <name> <arguments>``."""
    args = sys.argv[1:] if argv is None else argv
    return " ".join(["python -m bench", benchmark_name(module_file), *args])


def run_header(module_file: str | Path, argv: list[str] | None = None) -> dict[str, Any]:
    """What every result file records first: the benchmark, date (UTC), machine, command."""
    return {
        "benchmark": benchmark_name(module_file),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "command": command(module_file, argv),
    }


def versions(*packages: str) -> dict[str, str]:
    """Python's version and each named package's: ``versions("numpy", "sklearn")``."""
    out = {"python": platform.python_version()}
    for name in packages:
        out[name] = str(importlib.import_module(name).__version__)
    return out


def heading(title: str, result: dict[str, Any]) -> list[str]:
    """A result table's first lines: the title and date, the machine (with the library
    ``versions`` the result records) and the command."""
    libs = "".join(
        f", {name} {v}" for name, v in result.get("versions", {}).items() if name != "python"
    )  # the machine names Python
    return [
        f"# {title} ({result['date']})",
        "",
        f"Machine: {result['machine']}{libs}.",
        f"Command: `{result['command']}`.",
    ]


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A markdown table's lines: the first column left-aligned, the others right-aligned."""
    return [
        "| " + " | ".join(columns) + " |",
        "|---|" + "---:|" * (len(columns) - 1),
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]


def write_result(
    module_file: str | Path,
    payload: dict[str, Any],
    markdown: str | None = None,
    *,
    label: str = "",
    argv: list[str] | None = None,
    results: Path = RESULTS,
    indent: int = 2,
) -> Path:
    """Write the benchmark's current result (JSON, and the table when given); return the
    JSON path. The run header comes first; a key the payload sets itself wins."""
    path = result_path(module_file, label, ".json", results)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {**run_header(module_file, argv), **payload}
    path.write_text(json.dumps(record, indent=indent, default=str) + "\n")
    if markdown is not None:
        path.with_suffix(".md").write_text(markdown if markdown.endswith("\n") else markdown + "\n")
    print(f"wrote {path}" + (" and .md" if markdown is not None else ""), file=sys.stderr)
    return path
