"""``"distributed": true`` over the API: a training job on a real Dask cluster (a ``dask
scheduler`` and two ``dask worker`` processes on 127.0.0.1) over a partitioned Parquet data
set, registered as any version and serving the decisions of
:func:`models.distributed.fit_calibrated_adaboost` called directly; and what is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.settings import Settings
from models.decisions.rule import CostMatrix
from tests.app.api.conftest import dataset
from tests.app.batch.conftest import wait_job
from tests.dask_cluster import free_port, running_cluster

distributed = pytest.importorskip("distributed")  # the dask extra (part of dev)

NAMES = ["a", "b", "c", "d"]
ROUNDS, FOLDS = 20, 3


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_cluster(tmp_path_factory.mktemp("dask")) as cluster:
        yield cluster.address


def _write(root: Path, n: int = 1200, parts: int = 3, classes: int = 2) -> tuple[np.ndarray, Any]:
    X, y = dataset(n, seed=3)
    X[::41, 2] = np.nan
    if classes == 3:
        y = np.where(X[:, 0] > 1.0, 2, y)
    write_parts(root / "train", X, y, parts)
    return X, y


def write_parts(directory: Path, X: np.ndarray, y: Any, parts: int) -> None:
    """``X`` (columns NAMES) and label ``y`` as ``parts`` Parquet files of consecutive rows."""
    directory.mkdir()
    bounds = np.linspace(0, len(y), parts + 1).astype(int)
    for i in range(parts):
        a, b = bounds[i], bounds[i + 1]
        table = pa.table({**{f: X[a:b, j] for j, f in enumerate(NAMES)}, "y": y[a:b]})
        pq.write_table(table, directory / f"part-{i}.parquet")


def _body(root: Path, **params: Any) -> dict[str, Any]:
    body = {
        "dataset": {"uri": f"file://{root}/train", "format": "parquet", "label_column": "y"},
        "distributed": True,
        "algorithm": "adaboost",
        "n_estimators": ROUNDS,
        "n_folds": FOLDS,
    }
    return {**body, **params}


def _app(
    database_url: str, root: Path, scheduler: str | None, max_rounds: int = 200, **more: Any
) -> TestClient:
    settings = Settings(
        database_url=database_url,
        data_roots=[str(root)],
        dask_scheduler=scheduler,
        max_rounds=max_rounds,
        **more,
    )
    return TestClient(create_app(settings), raise_server_exceptions=False)


@pytest.mark.slow
def test_a_distributed_job_registers_the_model_fit_directly_gives(
    database_url: str, root: Path, scheduler: str
) -> None:
    from models.distributed import fit_calibrated_adaboost

    X, y = _write(root)
    with _app(database_url, root, scheduler) as client:
        r = client.post("/v1/models/d/versions", json=_body(root))
        assert r.status_code == 202, r.text
        job = wait_job(client, r.json()["id"], timeout=180)
        assert job["status"] == "succeeded", job
        assert job["done"] == job["total"] == ROUNDS
        v = client.get("/v1/models/d/versions/1").json()
        assert v["params"]["distributed"] is True
        info = v["params"]["fitted"]["distributed"]
        assert info["distributed"] is True and info["n_partitions"] == 3
        assert info["n_rows"] == v["data"]["n_rows"] == 1200 and info["n_workers"] == 2
        assert v["data"]["class_counts"] == {"0": int((y == 0).sum()), "1": int((y == 1).sum())}
        assert v["metrics"]["n_evaluation"] == 1200 and v["metrics"]["auc"] > 0.8
        assert v["calibration"]["method"] == "platt" and v["calibration"]["n_folds"] == FOLDS
        plots = client.get("/v1/models/d/versions/1/plots").json()["plots"]
        assert plots

        direct = fit_calibrated_adaboost(
            scheduler, str(root / "train"), NAMES, "y", n_estimators=ROUNDS, n_folds=FOLDS
        )
        rng = np.random.default_rng(7)
        X_new = X[rng.choice(len(X), 300, replace=False)]
        rows = np.where(np.isnan(X_new), None, X_new).tolist()
        for c_fp, c_fn in ((1.0, 1.0), (1.0, 4.0), (5.0, 1.0)):
            p = client.post(
                "/v1/models/d/predict",
                json={"instances": rows, "costs": {"c_fp": c_fp, "c_fn": c_fn}},
            )
            assert p.status_code == 200, p.text
            served = [row["decision"] for row in p.json()["predictions"]]
            costs = CostMatrix.from_binary(c_fp=c_fp, c_fn=c_fn)
            expected = np.asarray(direct.model.classes)[
                direct.model.decide(X_new, costs).labels_index
            ]
            assert served == expected.tolist()
            assert 0 < sum(served) < len(served)  # both decisions occur
            proba = [row["probabilities"][1] for row in p.json()["predictions"]]
            np.testing.assert_allclose(proba, direct.model.predict_proba(X_new)[:, 1], atol=1e-9)


@pytest.mark.slow
def test_from_the_row_threshold_a_reference_goes_to_the_cluster_that_fails_cleanly(
    database_url: str, root: Path
) -> None:
    """COSTWISE_DASK_TRAIN_MIN_ROWS: a training the cluster can train goes there without
    asking (here an unreachable scheduler: the job fails with UNAVAILABLE, nothing is
    registered); one it cannot (trees), or ``mode=sync``, stays here."""
    _write(root, n=300)
    scheduler = f"tcp://127.0.0.1:{free_port()}"
    with _app(database_url, root, scheduler, dask_train_min_rows=300) as client:
        body = {k: v for k, v in _body(root).items() if k != "distributed"}
        r = client.post("/v1/models/u/versions", json=body)
        assert r.status_code == 202, r.text
        job = wait_job(client, r.json()["id"], timeout=120)
        assert job["status"] == "failed", job
        assert job["error"]["code"] == "UNAVAILABLE"
        assert "COSTWISE_DASK_SCHEDULER" in job["error"]["detail"]
        assert client.get("/v1/models/u/versions").status_code == 404
        for params, mode in (({"weak_learner": "tree", "max_depth": 2}, "auto"), ({}, "sync")):
            local = {k: v for k, v in {**body, **params}.items() if v is not None}
            r = client.post(f"/v1/models/here/versions?mode={mode}", json=local)
            assert r.status_code == 201, r.text
            assert r.json()["params"]["distributed"] is False


@pytest.mark.slow
def test_the_default_algorithm_chooses_its_rounds_on_the_cluster(
    database_url: str, root: Path, scheduler: str
) -> None:
    """``auto`` (the default, no capacity given) with ``distributed``: the rounds of stumps
    chosen on the cluster up to COSTWISE_MAX_ROUNDS, recorded under ``fitted.capacity``
    with its plot, and the served model is the one fit_calibrated_adaboost chooses."""
    from models.distributed import fit_calibrated_adaboost

    X, _ = _write(root)
    body = {k: v for k, v in _body(root).items() if k not in ("algorithm", "n_estimators")}
    with _app(database_url, root, scheduler, max_rounds=40) as client:
        r = client.post("/v1/models/a/versions", json=body)
        assert r.status_code == 202, r.text
        job = wait_job(client, r.json()["id"], timeout=180)
        assert job["status"] == "succeeded", job
        assert job["total"] == 40  # the cap: every booster grows to it
        v = client.get("/v1/models/a/versions/1").json()
        assert v["algorithm"] == "auto" and v["params"]["distributed"] is True
        capacity = v["params"]["fitted"]["capacity"]
        assert capacity["weak_learner"] == "stump" and capacity["max_rounds"] == 40
        assert 1 <= capacity["n_estimators"] <= 40
        assert v["params"]["fitted"]["n_estimators"] == capacity["n_estimators"]
        assert capacity["curves"][0]["rounds"][-1] == 40
        kinds = [p["kind"] for p in client.get("/v1/models/a/versions/1/plots").json()["plots"]]
        assert "capacity" in kinds

        direct = fit_calibrated_adaboost(
            scheduler, str(root / "train"), NAMES, "y", max_rounds=40, n_folds=FOLDS
        )
        assert direct.info["capacity"]["n_estimators"] == capacity["n_estimators"]
        rows = np.where(np.isnan(X[:200]), None, X[:200]).tolist()
        p = client.post("/v1/models/a/predict", json={"instances": rows})
        assert p.status_code == 200, p.text
        proba = [row["probabilities"][1] for row in p.json()["predictions"]]
        np.testing.assert_allclose(proba, direct.model.predict_proba(X[:200])[:, 1], atol=1e-9)


@pytest.mark.slow
def test_three_classes_fail_the_job_naming_the_label_column(
    database_url: str, root: Path, scheduler: str
) -> None:
    _write(root, n=600, classes=3)
    with _app(database_url, root, scheduler) as client:
        r = client.post("/v1/models/m/versions", json=_body(root))
        assert r.status_code == 202, r.text
        job = wait_job(client, r.json()["id"], timeout=120)
        assert job["status"] == "failed", job
        assert job["error"]["code"] == "INVALID_ARGUMENT"
        assert job["error"]["field"] == "dataset.label_column"
        assert "two classes" in job["error"]["detail"]
        assert client.get("/v1/models/m/versions").status_code == 404


REFUSED = [
    ("no scheduler", {}, "distributed"),
    ("rows in the body", {"dataset": None}, "distributed"),
    ("csv", {"dataset": "train.csv"}, "dataset.format"),
    ("sync", {"mode": "sync"}, "mode"),
    (
        "auto, beta map",
        {"algorithm": "auto", "n_estimators": None, "calibration": "beta"},
        "calibration",
    ),  # fmt: skip
    ("samme", {"algorithm": "samme"}, "algorithm"),
    ("trees", {"weak_learner": "tree"}, "weak_learner"),
    ("beta", {"calibration": "beta"}, "calibration"),
    ("uncalibrated", {"calibration": "none"}, "calibration"),
    ("holdout", {"calibration_split": "holdout"}, "calibration_split"),
    ("logistic score", {"score": "logistic"}, "score"),
    ("evaluation split", {"evaluation_fraction": 0.2}, "evaluation_fraction"),
]


@pytest.mark.parametrize(("case", "change", "field"), REFUSED, ids=[c[0] for c in REFUSED])
def test_what_the_cluster_cannot_train_is_refused_at_once(
    database_url: str, root: Path, case: str, change: dict[str, Any], field: str
) -> None:
    _write(root, n=100)
    change = dict(change)
    (root / "train.csv").write_text("a,b,c,d,y\n1,2,3,4,0\n2,3,4,5,1\n")
    # an address nothing listens on: every refusal comes before any connection
    scheduler = None if case == "no scheduler" else f"tcp://127.0.0.1:{free_port()}"
    body = _body(root)
    mode = change.pop("mode", "auto")
    if change.get("dataset", "") is None:
        del body["dataset"], change["dataset"]
        body.update(features=[[1, 2, 3, 4], [2, 3, 4, 5]], labels=[0, 1])
    elif "dataset" in change:
        body["dataset"] = {"uri": f"file://{root}/{change.pop('dataset')}", "label_column": "y"}
    body.update(change)
    body = {k: v for k, v in body.items() if v is not None}
    with _app(database_url, root, scheduler) as client:
        r = client.post(f"/v1/models/x/versions?mode={mode}", json=body)
        assert r.status_code == 422, r.text
        assert r.json()["field"] == field, r.json()
        assert r.json()["code"] == "INVALID_ARGUMENT"
        if field not in ("distributed", "mode", "dataset.format"):
            assert "adaboost" in r.json()["detail"]  # says what is supported
        assert client.get("/v1/jobs").json()["jobs"] == []
        assert client.get("/v1/models/x/versions").status_code == 404
