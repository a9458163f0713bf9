"""``python -m bench``: every benchmark listed once, run by name; one current result file each."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import record
from bench.__main__ import BENCH_DIR, benchmarks, find, groups, listing, main

ROOT = Path(__file__).resolve().parents[2]


def runs_as_program(path: Path) -> bool:
    return 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")


def test_groups_are_the_packages_of_bench() -> None:
    assert groups() == ["papers", "quality", "reliability", "serving", "training"]


def test_no_benchmark_left_at_the_top_of_bench() -> None:
    top = [p.name for p in BENCH_DIR.glob("*.py") if runs_as_program(p)]
    assert top == ["__main__.py"]


def test_every_program_in_a_group_is_listed_once_with_a_description() -> None:
    known = benchmarks()
    names = [b.name for b in known]
    assert len(names) == len(set(names))
    programs = sorted(
        f"{p.parent.name}.{p.stem}"
        for group in groups()
        for p in (BENCH_DIR / group).glob("*.py")
        if runs_as_program(p)
    )
    assert sorted(names) == programs
    for b in known:
        doc = ast.get_docstring(ast.parse(b.path.read_text(encoding="utf-8"))) or ""
        assert b.description and doc.startswith(b.description.split()[0]), b.name
        assert "\n" not in b.description
    # helpers that do not run as programs are not benchmarks
    assert "serving.baseline_app" not in names and "reliability.server" not in names


def test_listing_has_one_line_per_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    for b in benchmarks():
        assert any(line.startswith(b.name + " ") for line in out.splitlines()), b.name
    assert listing(benchmarks(), "serving").splitlines()[0].startswith("serving.")


def test_find_by_full_or_unique_short_name() -> None:
    known = benchmarks()
    assert find("serving.service", known).module == "bench.serving.service"
    assert find("service", known).name == "serving.service"
    with pytest.raises(SystemExit, match="did you mean serving.service"):
        find("servce", known)
    with pytest.raises(SystemExit, match="no benchmark"):
        find("multiclass_grid", known)  # neither a name nor close enough to be unique


def test_runs_a_benchmark_with_its_own_arguments() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "training.multiclass_grid_time", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "--datasets" in proc.stdout


def test_result_file_is_one_per_benchmark_and_label(tmp_path: Path) -> None:
    module = BENCH_DIR / "serving" / "v2.py"
    assert record.benchmark_name(module) == "serving.v2"
    assert record.result_path(module) == record.RESULTS / "serving" / "v2.json"
    assert record.result_path(module, "quick", ".md", tmp_path) == tmp_path / "serving/v2-quick.md"
    for run in (1, 2):
        path = record.write_result(
            module, {"run": run}, "# table", argv=["--quick"], results=tmp_path
        )
    assert sorted(p.name for p in (tmp_path / "serving").iterdir()) == ["v2.json", "v2.md"]
    saved = json.loads(path.read_text())
    assert saved["run"] == 2  # overwritten, not a second dated file
    assert saved["benchmark"] == "serving.v2"
    assert saved["command"] == "python -m bench serving.v2 --quick"
    assert saved["date"] and saved["machine"]
    assert (tmp_path / "serving" / "v2.md").read_text() == "# table\n"


def test_results_folder_holds_group_folders_only() -> None:
    loose = [p.name for p in record.RESULTS.iterdir() if p.is_file()]
    assert loose == []
    assert {p.name for p in record.RESULTS.iterdir()} <= set(groups())
