"""CI smoke test of the paper-reproduction harness (``--quick`` on scikit-learn data).

Checks that the pipeline runs and that its outputs are well formed (files, columns,
finite numbers); it does not check the papers' scientific conclusions.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from bench.papers import common as H
from bench.papers import nikolaou, nikolaou_report


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nikolaou")
    assert nikolaou.main(["--quick", "--out", str(out)]) == 0
    return out


def test_quick_run_writes_well_formed_outputs(quick_run: Path) -> None:
    for name in ("raw.csv", "fig6.csv", "defaults.csv", "areas.csv", "run.json",
                 "summary.json", "report.md"):  # fmt: skip
        assert (quick_run / name).is_file(), name
    raw = _rows(quick_run / "raw.csv")
    assert set(nikolaou.RAW_COLUMNS) <= set(raw[0])
    assert {r["task"] for r in raw} == {"breast_cancer", "wine:0-vs-rest"}
    assert {r["repeat"] for r in raw} == {"0", "1"}
    assert {r["learner"] for r in raw} == {"logistic", "stump"}
    methods = {r["method"] for r in raw}
    for m in (*nikolaou.ADAMEC_UNCALIBRATED, "AdaMEC-Cal", *nikolaou.CS_METHODS.values()):
        assert m in methods and m + ("" if m.startswith("AdaMEC") else "-Cal") in methods
    for r in raw:
        if r["error"]:
            continue  # a recorded training failure
        q, z = float(r["Q"]), float(r["z"])
        assert 0.0 <= q <= 1.0 and 0.0 < z < 1.0
        assert math.isfinite(float(r["brier"])) and int(r["n_estimators"]) >= 1
    areas = _rows(quick_run / "areas.csv")
    assert areas and all(0.0 <= float(a["area"]) <= 0.5 for a in areas)
    run = json.loads((quick_run / "run.json").read_text())
    for key in ("command", "date", "machine", "git_commit", "duration_s"):
        assert key in run
    summary = json.loads((quick_run / "summary.json").read_text())
    assert len(summary["learners"]["logistic"]["fig6"]) == 3  # every other of 5 ratios
    labels = {c[0] for c in nikolaou.DEFAULT_CONFIGS.values()}
    assert {d["config"] for d in summary["defaults"]} == labels
    # both uncalibrated AdaMEC rules (issue 16), compared with calibrated AdaMEC
    rules = summary["learners"]["logistic"]["adamec_rules"]
    assert set(rules) == set(nikolaou.ADAMEC_UNCALIBRATED)
    assert all(0 <= r["wilcoxon_p_per_task"] <= 1 for r in rules.values())
    if importlib.util.find_spec("matplotlib") is not None:
        assert (quick_run / "fig7_logistic.png").stat().st_size > 1000


def test_a_killed_run_resumes_from_its_checkpoint(quick_run: Path, tmp_path: Path) -> None:
    """Every finished split is in units.jsonl; --resume runs only the missing ones and
    writes the same results as the uninterrupted run (a line cut by the kill is redone)."""
    lines = (quick_run / "units.jsonl").read_text().splitlines()
    assert len(lines) == 4  # 2 tasks x 2 splits
    out = tmp_path / "resumed"
    out.mkdir()
    (out / "units.jsonl").write_text(lines[0] + "\n" + lines[2] + "\n" + lines[1][:50])
    assert nikolaou.main(["--quick", "--out", str(out), "--resume"]) == 0
    for name in ("raw.csv", "fig6.csv", "defaults.csv"):
        assert _rows(out / name) == _rows(quick_run / name), name
    assert len((out / "units.jsonl").read_text().splitlines()) == 5  # 2 + 1 cut + 2 redone
    with pytest.raises(SystemExit):  # other settings never reuse these lines
        nikolaou.main(["--quick", "--out", str(out), "--resume", "--rounds", "x"])
    assert nikolaou.main(["--quick", "--out", str(out), "--resume", "--ratios", "2", "0.5"]) == 0
    assert {r["ratio"] for r in _rows(out / "raw.csv")} == {"2", "1/2"}


def _two_copies(quick_run: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Two folders (``first``, ``second``) holding the quick run's results."""
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        for name in ("raw.csv", "fig6.csv", "defaults.csv", "run.json"):
            (folder / name).write_bytes((quick_run / name).read_bytes())
    return first, second


def _write_rows(path: Path, rows: list[dict[str, str]], fieldnames: list[str]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fieldnames)
        writer.writeheader()
        writer.writerows(rows)


def test_report_merges_a_second_run(quick_run: Path, tmp_path: Path) -> None:
    """A later run's tasks replace the same tasks of the first run; others are kept."""
    first, second = _two_copies(quick_run, tmp_path)
    raw = _rows(second / "raw.csv")  # the second run: only wine, one split
    kept = [r for r in raw if r["task"] == "wine:0-vs-rest" and r["repeat"] == "0"]
    _write_rows(second / "raw.csv", kept, list(raw[0]))
    assert nikolaou_report.main(["--out", str(first), "--merge", str(second)]) == 0
    merged = _rows(first / "raw.csv")
    assert {(r["task"], r["repeat"]) for r in merged} == {
        ("breast_cancer", "0"),
        ("breast_cancer", "1"),
        ("wine:0-vs-rest", "0"),
    }
    assert len(merged) == len(raw) - sum(r["task"] == "wine:0-vs-rest" for r in raw) + len(kept)
    run = json.loads((first / "run.json").read_text())
    assert run["merged_runs"][0]["tasks_taken"] == ["wine:0-vs-rest"]
    report = (first / "report.md").read_text()
    assert "Merged run:" in report and "wine:0-vs-rest" in report
    # wine now has fewer splits than breast_cancer: excluded from the tables, and said so
    assert "'wine:0-vs-rest': 1" in report


def test_report_merges_a_run_by_method(quick_run: Path, tmp_path: Path) -> None:
    """--by-method: only the (task, method) pairs of the other run are replaced."""
    first, second = _two_copies(quick_run, tmp_path)
    raw = _rows(second / "raw.csv")
    new = [{**r, "Q": "0.25"} for r in raw if r["method"] == "AdaMEC-vote"]
    _write_rows(second / "raw.csv", new, list(raw[0]))
    args = ["--out", str(first), "--merge", str(second), "--by-method"]
    assert nikolaou_report.main(args) == 0
    merged = _rows(first / "raw.csv")
    assert len(merged) == len(raw)  # every other method's rows kept, none duplicated
    assert {r["Q"] for r in merged if r["method"] == "AdaMEC-vote"} == {"0.25"}
    old = [r for r in raw if r["method"] != "AdaMEC-vote"]
    assert sorted(map(str, old)) == sorted(
        map(str, (r for r in merged if r["method"] != "AdaMEC-vote"))
    )
    run = json.loads((first / "run.json").read_text())
    assert "AdaMEC-vote" in run["merged_runs"][0]["methods_taken"]


def test_harness_helpers() -> None:
    ds = H.load_dataset("iris", source="builtin")
    tasks = H.binary_tasks(ds)
    assert [t.name for t in tasks] == ["iris:0-vs-rest", "iris:1-vs-rest", "iris:2-vs-rest"]
    X, y = H.balance_undersample(tasks[0].X, tasks[0].y01, np.random.default_rng(0))
    assert y.sum() * 2 == len(y) == 100
    Xtr, Xte, ytr, yte = H.stratified_split(X, y, 0.25, seed=1)
    assert len(yte) == 25 and abs(yte.mean() - 0.5) < 0.05
    mean, half = H.mean_ci([1.0, 2.0, 3.0])
    assert mean == 2.0 and half == pytest.approx(2.484, abs=1e-3)
    fn = H.friedman_nemenyi(np.array([[1, 2, 3], [1, 3, 2], [1, 2, 3.0]]), alpha=0.05)
    assert fn["average_ranks"] == [1.0, pytest.approx(7 / 3), pytest.approx(8 / 3)]
    assert fn["cd"] == pytest.approx(2.343 * math.sqrt(12 / 18), abs=1e-2)  # Demsar Table 5
    with pytest.raises(H.DatasetMissing, match="builtin"):
        H.load_dataset("no-such-dataset", source="shared")
