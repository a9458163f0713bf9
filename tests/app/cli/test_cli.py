"""The costwise command line, in-process, against a real registry."""

from __future__ import annotations

import csv
import inspect
from pathlib import Path

import pytest

from app.cli import main
from tests.app.cli.conftest import FRAUD


def test_train_list_predict(
    registry: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "upgrade"]) == 0
    assert (
        main(
            [
                "train",
                str(FRAUD),
                "--model",
                "fraud",
                "--label-column",
                "fraud",
                "--n-estimators",
                "20",
            ]
        )
        == 0
    )
    assert '"version": 1' in capsys.readouterr().out
    assert main(["models"]) == 0
    assert capsys.readouterr().out.startswith("fraud\tlatest=v1")
    rows = tmp_path / "rows.csv"
    lines = FRAUD.read_text().splitlines()[:51]
    rows.write_text("\n".join(lines) + "\n")
    out_cheap, out_dear = tmp_path / "cheap.csv", tmp_path / "dear.csv"
    for c_fn, out in (("1", out_cheap), ("100", out_dear)):
        predict = ["predict", str(rows), "--model", "fraud", "--ignore", "fraud"]
        assert main([*predict, "--c-fp", "1", "--c-fn", c_fn, "-o", str(out)]) == 0
    cheap = list(csv.DictReader(out_cheap.read_text().splitlines()))
    dear = list(csv.DictReader(out_dear.read_text().splitlines()))
    assert len(cheap) == len(dear) == 50
    assert list(cheap[0]) == ["row", "id", "decision", "p_0", "p_1", "threshold", "expected_cost"]
    assert len({r["id"] for r in cheap}) == 50 and all(r["id"] for r in cheap)  # logged
    assert float(dear[0]["threshold"]) == pytest.approx(1 / 101, rel=1e-4)
    assert sum(r["decision"] == "1" for r in dear) >= sum(r["decision"] == "1" for r in cheap)


def test_errors_exit_2_with_a_message(
    registry: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("amount\n1\n")
    assert main(["predict", str(rows), "--model", "nope", "--c-fp", "1", "--c-fn", "2"]) == 2
    assert "error [NOT_FOUND]: model 'nope' not found" in capsys.readouterr().err
    assert main(["train", str(rows), "--model", "m", "--label-column", "y"]) == 2
    assert "no label column 'y'" in capsys.readouterr().err


def test_help_is_friendly(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for command in ("serve", "db", "train", "predict", "models"):
        assert command in out


def test_serve_gives_workers_time_to_start(registry: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With several workers, uvicorn's supervisor kills a child that does not answer its ping
    in time; its default (5 s) is shorter than a child's imports on a loaded machine, and the
    children were then replaced forever (seen in the compose services). serve asks for more."""
    import uvicorn

    from app.cli.main import WORKER_PING_SECONDS, main

    seen: dict[str, object] = {}
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: seen.update(kw))
    assert main(["serve", "--workers", "2"]) == 0
    assert seen["workers"] == 2
    assert seen["timeout_worker_healthcheck"] == WORKER_PING_SECONDS >= 30
    assert "timeout_worker_healthcheck" in inspect.signature(uvicorn.Config).parameters
