"""Every ``bench/results/...`` path that the README and docs/*.md name exists.

A benchmark overwrites its one current result file (``bench/results/<group>/<name>.json``),
so a page quoting figures points at a path that must stay; ``{a,b}`` is read as shell brace
expansion (``log_load-{sqlite,postgresql}.json`` names two files).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PATH = re.compile(r"bench/results(?:/[\w.{},-]*)*")


def expand(pattern: str) -> list[str]:
    """Shell brace expansion of ``pattern`` (no nesting): ``a{,-b}.{json,md}`` -> 4 names."""
    parts = re.split(r"\{([^{}]*)\}", pattern)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(c) for c in itertools.product(*choices)]


def named_paths(text: str) -> list[str]:
    return [m.group(0).rstrip(".,") for m in PATH.finditer(text)]


def test_expand() -> None:
    assert expand("a/x{,-b}.{json,md}") == ["a/x.json", "a/x.md", "a/x-b.json", "a/x-b.md"]
    assert named_paths("see `bench/results/serving/v2.md`, and bench/results/.") == [
        "bench/results/serving/v2.md",
        "bench/results/",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_result_paths_named_by_the_docs_exist(page: Path) -> None:
    missing = [
        path
        for named in named_paths(page.read_text(encoding="utf-8"))
        for path in expand(named)
        if not (ROOT / path).exists()
    ]
    assert not missing, f"{page.name} names result files that do not exist: {missing}"


def test_the_docs_name_result_files() -> None:
    # the test above must have something to check
    assert sum(len(named_paths(p.read_text(encoding="utf-8"))) for p in PAGES) > 20
