"""Shared by the quick-mode paper tests: run a script's ``--quick`` mode, read its files."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import ModuleType
from typing import Any


def run_quick(script: ModuleType, out: Path, name: str, *args: str) -> dict[str, Any]:
    """Run ``script.main(["--quick", *args, "--out", out])`` and return ``name``.json,
    checking that it succeeded and that the run is described."""
    assert script.main(["--quick", *args, "--out", str(out)]) == 0
    doc: dict[str, Any] = json.loads((out / f"{name}.json").read_text())
    assert {"command", "date", "machine", "duration_s"} <= set(doc["run"])
    return doc


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))
