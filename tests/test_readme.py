"""The README stays accurate: its algorithm table is generated from the catalog."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_algorithm_table_matches_the_catalog() -> None:
    out = subprocess.run(
        [sys.executable, "scripts/algorithms_table.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_readme_states_the_two_commands_and_ci_runs_the_test_one() -> None:
    text = (ROOT / "README.md").read_text()
    assert "make run" in text and "make test" in text
    assert "make test" in (ROOT / ".ci" / "run").read_text()
