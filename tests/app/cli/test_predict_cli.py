"""``costwise predict`` on the local registry: ids, the columns it leaves out, an output
written only on success; and what local commands print on stderr."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from app.cli import main
from app.registry.orm import LoggedPrediction
from tests.app.cli.conftest import FRAUD, ROOT

COSTS = ["--c-fp", "1", "--c-fn", "20"]


@pytest.fixture
def trained(registry: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Model ``fraud`` v1, trained on 600 rows of examples/fraud.csv."""
    train = tmp_path / "train.csv"
    train.write_text("\n".join(FRAUD.read_text().splitlines()[:601]) + "\n")
    assert main(["db", "upgrade"]) == 0
    args = ["--label-column", "fraud", "--n-estimators", "10"]
    assert main(["train", str(train), "--model", "fraud", *args]) == 0
    capsys.readouterr()
    return registry


def _logged_ids(database_url: str) -> set[str]:
    engine = create_engine(database_url)
    try:
        with engine.connect() as c:
            return set(c.scalars(select(LoggedPrediction.prediction_id)))
    finally:
        engine.dispose()


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_the_training_csv_predicts_as_is_with_an_id_per_logged_row(
    trained: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "rows.csv"  # the label column fraud included, no --ignore
    rows.write_text("\n".join(FRAUD.read_text().splitlines()[:41]) + "\n")
    out = tmp_path / "out.csv"
    assert main(["predict", str(rows), "--model", "fraud", *COSTS, "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "left out column(s) that are not features of fraud v1: fraud" in err
    decided = _rows(out)
    assert list(decided[0])[:3] == ["row", "id", "decision"] and len(decided) == 40
    ids = [d["id"] for d in decided]
    assert len(set(ids)) == 40 and set(ids) <= _logged_ids(trained)


def test_id_column_ids_are_written_and_logged(
    trained: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = FRAUD.read_text().splitlines()
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "\n".join([f"txn,{lines[0]}"] + [f"T{i},{line}" for i, line in enumerate(lines[1:21])])
        + "\n"
    )
    out = tmp_path / "out.csv"
    args = ["--id-column", "txn", "--chunk-size", "7", "-o", str(out)]
    assert main(["predict", str(rows), "--model", "fraud", *COSTS, *args]) == 0
    ids = [d["id"] for d in _rows(out)]
    assert ids == [f"T{i}" for i in range(20)]
    assert set(ids) <= _logged_ids(trained)
    assert main(["predict", str(rows), "--model", "fraud", *COSTS, "--id-column", "tx"]) == 2
    assert "--id-column 'tx': " in capsys.readouterr().err


def test_a_failed_run_leaves_no_partial_output(
    trained: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = FRAUD.read_text().splitlines()[:41]
    lines[30] = "x" + lines[30]  # row 29: not a number, after two chunks were written
    rows = tmp_path / "rows.csv"
    rows.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.csv"
    args = ["--chunk-size", "10", "-o", str(out)]
    assert main(["predict", str(rows), "--model", "fraud", *COSTS, *args]) == 2
    assert "CSV line 31, column 'amount'" in capsys.readouterr().err
    assert not out.exists()
    out.write_text("yesterday's decisions\n")
    assert main(["predict", str(rows), "--model", "fraud", *COSTS, *args]) == 2
    assert out.read_text() == "yesterday's decisions\n"  # kept as it was
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "rows.csv", "train.csv"]


def test_local_commands_print_no_alembic_lines(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COSTWISE_")}
    env["COSTWISE_DATABASE_URL"] = f"sqlite:///{tmp_path / 'fresh.db'}"  # migrated on first use
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "models"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr == "# 0 model(s)\n"  # no "INFO alembic.runtime.migration" lines


def test_c_review_adds_an_action_column_decided_by_least_expected_cost(
    trained: str, tmp_path: Path
) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("\n".join(FRAUD.read_text().splitlines()[:201]) + "\n")
    plain, review = tmp_path / "plain.csv", tmp_path / "review.csv"
    assert main(["predict", str(rows), "--model", "fraud", *COSTS, "-o", str(plain)]) == 0
    args = [*COSTS, "--c-review", "0.9", "-o", str(review)]
    assert main(["predict", str(rows), "--model", "fraud", *args]) == 0
    assert "action" not in _rows(plain)[0]  # without --c-review: the columns as before
    decided = _rows(review)
    assert list(decided[0])[:4] == ["row", "id", "decision", "action"]
    matrix = [[0.0, 1.0, 0.9], [20.0, 0.0, 0.9]]  # negative, positive, review
    names = ["negative", "positive", "review"]
    seen = set()
    for d in decided:
        p = [float(d["p_0"]), float(d["p_1"])]
        costs = [p[0] * matrix[0][a] + p[1] * matrix[1][a] for a in range(3)]
        best = min(range(3), key=costs.__getitem__)
        if sorted(costs)[1] - costs[best] > 1e-5:  # printed to 6 digits: skip near-ties
            assert d["action"] == names[best], d
        assert d["decision"] == ("" if d["action"] == "review" else str(names.index(d["action"])))
        seen.add(d["action"])
    assert "review" in seen and len(seen) >= 2
