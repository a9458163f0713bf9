"""The README and docs/ stay accurate: the generated algorithm table matches the catalog,
the README states the two commands, every doc page is linked from the README, and every
relative link in them points at a file that exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize(
    "script",
    [
        "algorithms_table.py",  # docs/algorithms.md from the catalog
        "weak_learners_table.py",  # docs/algorithms.md from the weak-learner registry
        "configuration_table.py",  # docs/configuration.md from the settings
        "endpoints_table.py",  # docs/api.md from the OpenAPI document
        "errors_table.py",  # docs/api.md's error codes from costwise.errors.ERROR_CODES
    ],
)
def test_generated_doc_tables_match_their_source(script: str) -> None:
    out = subprocess.run(
        [sys.executable, f"scripts/{script}", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_readme_states_the_two_commands_and_ci_runs_the_test_one() -> None:
    text = (ROOT / "README.md").read_text()
    assert "make run" in text and "make test" in text
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_readme_is_short_and_links_every_doc_page() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 260
    linked = {m.split("#", 1)[0] for m in LINK.findall(text)}
    pages = {f"docs/{p.name}" for p in DOCS.glob("*.md")}
    assert sorted(pages - linked) == []


def test_relative_links_of_the_readme_and_the_doc_pages_resolve() -> None:
    broken = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for target in LINK.findall(page.read_text()):
            path = target.split("#", 1)[0]
            if not path or re.match(r"[a-z]+:", path):
                continue
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_readme_states_one_algorithm_count_the_catalogs() -> None:
    from models.catalog.algorithms import algorithms

    counts = set(re.findall(r"\b(\d+) algorithms\b", (ROOT / "README.md").read_text()))
    assert counts == {str(len(algorithms()))}


PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def test_doc_pages_name_no_commit() -> None:
    """A page states what is true now: history lives in git and CHANGELOG.md, so no page
    names a commit of this repository (a hex token that git resolves to one)."""
    tokens = {
        (page.relative_to(ROOT).as_posix(), tok)
        for page in PAGES
        for tok in re.findall(r"(?<![\w-])[0-9a-f]{7,40}(?![\w-])", page.read_text())
        if re.search(r"[a-f]", tok) and re.search(r"\d", tok)
    }
    if not tokens:
        return
    ordered = sorted(tokens)
    out = subprocess.run(
        ["git", "cat-file", "--batch-check"],
        cwd=ROOT,
        input="".join(f"{tok}^{{commit}}\n" for _, tok in ordered),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    named = [
        f"{page}: {tok}"
        for (page, tok), line in zip(ordered, out, strict=True)
        if "missing" not in line
    ]
    assert named == []


def test_doc_pages_name_only_source_files_that_exist() -> None:
    """Every source path a page names (``models/boosting/calibrated.py``, ``app/api/``...)
    exists: a page does not describe a layout the code has left. (Result files under
    ``bench/results`` are checked, braces and all, by tests/bench/test_result_links.py.)"""
    path = re.compile(
        r"(?<![\w./-])((?:models|app|costwise|bench|scripts|migrations)/[\w/.*-]*[\w*])"
    )
    missing = sorted(
        f"{page.relative_to(ROOT)}: {p}"
        for page in PAGES
        for p in set(path.findall(page.read_text()))
        if not p.startswith("bench/results")  # tests/bench/test_result_links.py
        and not (any(ROOT.glob(p)) if "*" in p else (ROOT / p).exists())
    )
    assert missing == []
