"""``costwise recalibrate`` in-process against a real registry (local), and with --url."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import main
from app.settings import get_settings

ROOT = Path(__file__).resolve().parents[2]
FRAUD = ROOT / "examples" / "fraud.csv"


@pytest.fixture
def registry(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("COSTWISE_DATABASE_URL", database_url)
    get_settings.cache_clear()
    yield database_url
    get_settings.cache_clear()


def _halves(tmp_path: Path) -> tuple[Path, Path]:
    lines = FRAUD.read_text().splitlines()
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("\n".join(lines[:1501]) + "\n")
    second.write_text("\n".join([lines[0], *lines[1501:]]) + "\n")
    return first, second


def test_recalibrate_a_local_version_from_a_csv(
    registry: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = _halves(tmp_path)
    train = ["train", str(first), "--model", "fraud", "--label-column", "fraud"]
    assert main([*train, "--n-estimators", "20"]) == 0
    capsys.readouterr()
    args = ["recalibrate", "fraud", "1", str(second), "--label-column", "fraud"]
    assert main([*args, "--method", "isotonic"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert (out["model"], out["version"], out["parent_version"]) == ("fraud", 2, 1)
    assert out["calibration"]["method"] == "isotonic"
    n_second = len(second.read_text().splitlines()) - 1
    assert out["data"]["source"] == "rows" and out["data"]["n_rows"] == n_second
    assert set(out["before"]) == set(out["after"]) == {"brier", "log_loss", "ece"}
    assert "recalibrated from v1" in captured.err


def test_recalibrate_errors_exit_2(
    registry: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = _halves(tmp_path)
    train = ["train", str(first), "--model", "fraud", "--label-column", "fraud"]
    assert main([*train, "--n-estimators", "20"]) == 0
    capsys.readouterr()
    assert main(["recalibrate", "fraud", "1"]) == 2
    assert "a CSV of labelled rows or --from-outcomes" in capsys.readouterr().err
    assert main(["recalibrate", "fraud", "1", str(second), "--since", "2020-01-01"]) == 2
    assert "--since and --until go with --from-outcomes" in capsys.readouterr().err
    assert main(["recalibrate", "fraud", "1", str(second)]) == 2  # label column is "fraud"
    assert "no label column 'label'" in capsys.readouterr().err
    assert main(["recalibrate", "fraud", "9", str(second), "--label-column", "fraud"]) == 2
    assert "[NOT_FOUND]" in capsys.readouterr().err
    assert main(["recalibrate", "fraud", "1", "--from-outcomes"]) == 2
    assert "no logged predictions" in capsys.readouterr().err


def test_priors_of_a_version_never_logged(
    registry: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, _ = _halves(tmp_path)
    train = ["train", str(first), "--model", "fraud", "--label-column", "fraud"]
    assert main([*train, "--n-estimators", "20"]) == 0
    capsys.readouterr()
    assert main(["priors", "fraud"]) == 2
    assert "[NOT_FOUND]" in capsys.readouterr().err
