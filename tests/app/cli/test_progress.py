"""`costwise train`: a progress bar on stderr (TTY or --progress), and the time limit."""

from __future__ import annotations

import io

import pytest
from sqlalchemy import text

from app.cli import main
from app.cli.progress import progress_bar
from app.db import make_engine
from app.settings import get_settings
from models.boosting.progress import report
from tests.app.cli.conftest import FRAUD

TRAIN = ["train", str(FRAUD), "--model", "fraud", "--label-column", "fraud"]


def test_progress_flag_draws_phase_and_rounds_on_stderr(
    registry: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*TRAIN, "--n-estimators", "30", "--progress"]) == 0
    captured = capsys.readouterr()
    assert '"version": 1' in captured.out and "round" not in captured.out
    # default kfold calibration: 5 fold fits + the final fit = 6 x 30 rounds
    assert "boosting" in captured.err and "round 0/180" in captured.err
    assert captured.err.rstrip().endswith("done")


def test_no_bar_when_stderr_is_not_a_terminal(
    registry: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*TRAIN, "--n-estimators", "10"]) == 0
    assert "round" not in capsys.readouterr().err


def test_bar_redraws_at_most_every_interval_but_on_each_phase() -> None:
    out = io.StringIO()
    with progress_bar(True, out):
        for t in range(1000):
            report(t, 1000)
        report(0, 0, "evaluating")
    drawn = out.getvalue()
    assert drawn.count("\r") < 50 and "evaluating" in drawn and "round 0/1000" in drawn


def test_cli_training_honours_the_time_limit(
    registry: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COSTWISE_MAX_TRAINING_SECONDS", "0.001")
    get_settings.cache_clear()
    assert main([*TRAIN, "--n-estimators", "3000"]) == 2
    err = capsys.readouterr().err
    assert "TRAINING_TIME_LIMIT" in err and "COSTWISE_MAX_TRAINING_SECONDS" in err
    engine = make_engine(registry)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM model_versions")).scalar_one() == 0
    engine.dispose()
