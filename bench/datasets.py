"""Where the benchmarks find the shared data sets: one rule for every benchmark.

``$COSTWISE_DATASETS_DIR`` when it is set; else the first ``shared/datasets`` folder beside
the repository or beside one of its parents (a git worktree may live in a folder of
worktrees); else ``../shared/datasets`` (which a benchmark then reports as missing).
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """The folder of the shared data sets (see the module docstring)."""
    named = os.environ.get("COSTWISE_DATASETS_DIR")
    if named:
        return Path(named)
    for parent in REPO_ROOT.parents:
        found = parent / "shared" / "datasets"
        if found.is_dir():
            return found
    return REPO_ROOT.parent / "shared" / "datasets"


DATA_DIR = data_dir()
