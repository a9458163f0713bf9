"""``costwise train --distributed``: the API's ``distributed`` field on the command line.

Locally the command's process drives a real Dask cluster (a ``dask scheduler`` and two
``dask worker`` processes on 127.0.0.1) over a partitioned Parquet data set, as a
training job's process does; with ``--url`` the field is sent to the server."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.cli import main
from app.cli.main import _params, build_parser
from app.settings import get_settings
from tests.app.api.conftest import dataset
from tests.app.api.test_distributed_training import NAMES, write_parts
from tests.dask_cluster import free_port, running_cluster


def _write(root: Path, n: int = 900, parts: int = 3) -> np.ndarray:
    X, y = dataset(n, seed=5)
    write_parts(root / "train", X, y, parts)
    return X


def _settings(monkeypatch: pytest.MonkeyPatch, root: Path, scheduler: str | None) -> None:
    monkeypatch.setenv("COSTWISE_DATA_ROOTS", json.dumps([str(root)]))
    monkeypatch.setenv("COSTWISE_MAX_ROUNDS", "30")
    if scheduler is None:
        monkeypatch.delenv("COSTWISE_DASK_SCHEDULER", raising=False)
    else:
        monkeypatch.setenv("COSTWISE_DASK_SCHEDULER", scheduler)
    get_settings.cache_clear()


def test_the_option_is_the_api_field() -> None:
    parser = build_parser()
    base = ["train", "--model", "m", "--dataset", "file:///d", "--label-column", "y"]
    assert _params(parser.parse_args([*base, "--distributed"])) == {"distributed": True}
    assert "distributed" not in _params(parser.parse_args(base))
    args = parser.parse_args([*base, "--distributed", "--n-estimators", "50"])
    assert _params(args) == {"n_estimators": 50, "distributed": True}


@pytest.mark.slow
def test_a_local_distributed_training_drives_the_cluster(
    registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Without --n-estimators the rounds are chosen on the cluster (up to
    COSTWISE_MAX_ROUNDS) and the version is the model fit_calibrated_adaboost chooses."""
    from models.distributed import fit_calibrated_adaboost

    X = _write(tmp_path)
    with running_cluster(tmp_path) as cluster:
        _settings(monkeypatch, tmp_path, cluster.address)
        assert main(["db", "upgrade"]) == 0
        capsys.readouterr()
        argv = ["train", "--model", "d", "--dataset", f"file://{tmp_path}/train",
                "--format", "parquet", "--label-column", "y", "--distributed", "--no-progress"]  # fmt: skip
        assert main(argv) == 0, capsys.readouterr().err
        assert json.loads(capsys.readouterr().out)["version"] == 1
        direct = fit_calibrated_adaboost(cluster.address, str(tmp_path / "train"), NAMES, "y",
                                         max_rounds=30)  # fmt: skip
    with TestClient(create_app(get_settings())) as client:
        v = client.get("/v1/models/d/versions/1").json()
        assert v["algorithm"] == "auto" and v["params"]["distributed"] is True
        capacity = v["params"]["fitted"]["capacity"]
        assert capacity["max_rounds"] == 30
        assert capacity["n_estimators"] == direct.info["capacity"]["n_estimators"]
        rows = X[:100].tolist()
        p = client.post("/v1/models/d/predict", json={"instances": rows})
        assert p.status_code == 200, p.text
        proba = [r["probabilities"][1] for r in p.json()["predictions"]]
        np.testing.assert_allclose(proba, direct.model.predict_proba(X[:100])[:, 1], atol=1e-9)


def test_what_the_cluster_cannot_train_exits_2_naming_the_field(
    registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    _write(tmp_path, n=100)
    csv = tmp_path / "rows.csv"
    csv.write_text("a,b,c,d,y\n1,2,3,4,0\n2,3,4,5,1\n")
    ref = ["--dataset", f"file://{tmp_path}/train", "--format", "parquet", "--label-column", "y"]
    # an address nothing listens on: every refusal comes before any connection
    _settings(monkeypatch, tmp_path, f"tcp://127.0.0.1:{free_port()}")
    assert main(["db", "upgrade"]) == 0
    cases = [
        (["train", str(csv), "--model", "m", "--label-column", "y", "--distributed"],
         "name a dataset"),
        (["train", "--model", "m", *ref, "--distributed", "--weak-learner", "tree"],
         "weak_learner"),
    ]  # fmt: skip
    for argv, words in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "INVALID_ARGUMENT" in err and words in err, err
    _settings(monkeypatch, tmp_path, None)
    assert main(["train", "--model", "m", *ref, "--distributed"]) == 2
    assert "COSTWISE_DASK_SCHEDULER" in capsys.readouterr().err
