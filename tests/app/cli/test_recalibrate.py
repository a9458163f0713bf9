"""``costwise recalibrate`` in-process against a real registry (local), and with --url."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from tests.app.cli.conftest import FRAUD


@pytest.fixture
def second_half(registry: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """Version 1 of "fraud", trained on the first half of fraud.csv; the second half."""
    lines = FRAUD.read_text().splitlines()
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("\n".join(lines[:1501]) + "\n")
    second.write_text("\n".join([lines[0], *lines[1501:]]) + "\n")
    train = ["train", str(first), "--model", "fraud", "--label-column", "fraud"]
    assert main([*train, "--n-estimators", "20"]) == 0
    capsys.readouterr()
    return second


def test_recalibrate_a_local_version_from_a_csv(
    second_half: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["recalibrate", "fraud", "1", str(second_half), "--label-column", "fraud"]
    assert main([*args, "--method", "isotonic"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert (out["model"], out["version"], out["parent_version"]) == ("fraud", 2, 1)
    assert out["calibration"]["method"] == "isotonic"
    n_second = len(second_half.read_text().splitlines()) - 1
    assert out["data"]["source"] == "rows" and out["data"]["n_rows"] == n_second
    assert set(out["before"]) == set(out["after"]) == {"brier", "log_loss", "ece"}
    assert "recalibrated from v1" in captured.err


def test_recalibrate_errors_exit_2(second_half: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recalibrate", "fraud", "1"]) == 2
    assert "a CSV of labelled rows or --from-outcomes" in capsys.readouterr().err
    assert main(["recalibrate", "fraud", "1", str(second_half), "--since", "2020-01-01"]) == 2
    assert "--since and --until go with --from-outcomes" in capsys.readouterr().err
    assert main(["recalibrate", "fraud", "1", str(second_half)]) == 2  # label column is "fraud"
    assert "no label column 'label'" in capsys.readouterr().err
    assert main(["recalibrate", "fraud", "9", str(second_half), "--label-column", "fraud"]) == 2
    assert "[NOT_FOUND]" in capsys.readouterr().err
    assert main(["recalibrate", "fraud", "1", "--from-outcomes"]) == 2
    assert "no logged predictions" in capsys.readouterr().err


def test_priors_of_a_version_never_logged(
    second_half: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["priors", "fraud"]) == 2
    assert "[NOT_FOUND]" in capsys.readouterr().err


def test_priors_records_only_with_record(registry: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``costwise priors`` computes and records nothing; ``--record`` records the estimate
    that "priors": "estimated" then applies. Times outside UTC exit 2 naming the option."""
    from fastapi.testclient import TestClient

    from app.api.main import create_app
    from app.settings import Settings
    from tests.app.api.conftest import dataset, train_body

    with TestClient(create_app(Settings(database_url=registry))) as c:
        assert c.post("/v1/models/fraud/versions", json=train_body()).status_code == 201
        X, _ = dataset(200, seed=5)
        assert c.post("/v1/models/fraud/predict", json={"instances": X.tolist()}).status_code == 200
        assert c.app.state.services.prediction_log.flush(10.0)  # type: ignore[attr-defined]
        capsys.readouterr()
        assert main(["priors", "fraud"]) == 0
        read = json.loads(capsys.readouterr().out)
        assert read["recorded"] is False and read["id"] is None and read["n_rows"] == 200
        # (no predict with "estimated" here: its miss would be cached for 5 s)
        assert main(["priors", "fraud", "--record"]) == 0
        recorded = json.loads(capsys.readouterr().out)
        assert recorded["recorded"] is True and recorded["priors"] == read["priors"]
        r = c.post(
            "/v1/models/fraud/predict", json={"instances": X[:2].tolist(), "priors": "estimated"}
        )
        assert r.status_code == 200, r.text
        assert r.json()["applied_costs"]["priors_estimate"]["id"] == recorded["id"]
    assert main(["priors", "fraud", "--until", "9999-12-31T23:59:59-14:00"]) == 2
    err = capsys.readouterr().err
    assert "[INVALID_ARGUMENT]" in err and "until: 9999-12-31T23:59:59-14:00 is out of range" in err
