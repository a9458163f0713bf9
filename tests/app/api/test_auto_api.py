"""The default training: automatic capacity, recorded on the version and drawn as a plot."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.settings import Settings
from tests.app.api.conftest import train_body

SVG_ROOT = "{http://www.w3.org/2000/svg}svg"


def _default_body(**extra: Any) -> dict[str, Any]:
    body = train_body()
    del body["n_estimators"]  # nothing about capacity: the default algorithm decides
    body.update(extra)
    return body


def test_default_training_chooses_and_records_its_capacity(client: TestClient) -> None:
    r = client.post("/v1/models/auto/versions", json=_default_body())
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["algorithm"] == "auto"
    params = v["params"]
    assert params["n_estimators"] is None and params["weak_learner"] is None
    cap = params["fitted"]["capacity"]
    assert cap["weak_learner"] in ("stump", "tree") and cap["metric"] == "log_loss"
    assert 1 <= params["fitted"]["n_estimators"] <= cap["n_estimators"]
    assert cap["curves"] and all(len(c["rounds"]) == len(c["loss"]) for c in cap["curves"])
    assert v["calibration"]["split"] == "kfold" and v["calibration"]["capacity"] == "auto"

    listed = client.get("/v1/models/auto/versions/1/plots").json()
    assert [p["kind"] for p in listed["plots"]][-1] == "capacity"
    plot = client.get("/v1/models/auto/versions/1/plots/capacity").json()
    assert plot["kind"] == "capacity"
    assert plot["chosen"]["n_estimators"] == cap["n_estimators"]
    assert [c["loss"] for c in plot["curves"]] == [c["loss"] for c in cap["curves"]]
    svg = client.get("/v1/models/auto/versions/1/plots/capacity?format=svg")
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    assert ET.fromstring(svg.content).tag == SVG_ROOT

    # the served model decides at any request costs, like calibrated AdaMEC
    X = np.asarray(train_body()["features"][:5])
    pred = client.post(
        "/v1/models/auto/predict", json={"instances": X.tolist(), "costs": {"c_fp": 1, "c_fn": 5}}
    )
    assert pred.status_code == 200, pred.text


def test_auto_calibration_records_its_choice_and_the_losses_on_the_version(
    client: TestClient,
) -> None:
    r = client.post("/v1/models/auto/versions", json=_default_body(calibration="auto"))
    assert r.status_code == 201, r.text
    v = r.json()
    choice = v["params"]["fitted"]["capacity"]["calibration"]
    losses = choice["oof_log_loss"]
    assert set(losses) == {"platt", "isotonic", "beta"}
    assert choice["chosen"] == min(losses, key=losses.__getitem__)
    assert v["calibration"]["method"] == choice["chosen"]
    assert v["params"]["fitted"]["capacity"]["score_spread"]["factor"] >= 1.0
    # another algorithm names its map: "auto" is refused before training, naming the field
    other = client.post("/v1/models/x/versions", json=train_body(calibration="auto"))
    assert other.status_code == 422 and other.json()["field"] == "calibration"


def test_the_api_offers_the_calibrations_the_core_declares() -> None:
    from typing import get_args

    from app.api.schemas import TrainingParams
    from models.calibration.calibrators import TRAINING_CALIBRATIONS

    annotation = TrainingParams.model_fields["calibration"].annotation
    assert get_args(annotation) == TRAINING_CALIBRATIONS


def test_explicit_capacity_means_what_it_meant(client: TestClient) -> None:
    r = client.post("/v1/models/fixed/versions", json=train_body(weak_learner="stump"))
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["algorithm"] == "adaboost"  # naming n_estimators keeps the former default
    assert v["params"]["n_estimators"] == 30 and v["params"]["max_depth"] == 3
    assert "capacity" not in v["params"]["fitted"]
    missing = client.get("/v1/models/fixed/versions/1/plots/capacity")
    assert missing.status_code == 404 and "auto" in missing.json()["detail"]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"algorithm": "auto", "n_estimators": 50}, "n_estimators"),
        ({"max_depth": 4, "algorithm": "auto"}, "max_depth"),
        ({"calibration": "none"}, "calibration"),
        ({"calibration_split": "holdout"}, "calibration_split"),
    ],
)
def test_auto_refuses_settings_it_would_ignore(
    client: TestClient, extra: dict[str, Any], field: str
) -> None:
    body = _default_body(**extra)
    r = client.post("/v1/models/bad/versions", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field and "auto" in r.json()["detail"]


def test_more_than_two_classes_train_a_multiclass_default(client: TestClient) -> None:
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(300, 4)), 4)
    y = np.where(X[:, 0] > 0.4, "high", np.where(X[:, 1] > 0, "mid", "low"))
    r = client.post(
        "/v1/models/three/versions", json={"features": X.tolist(), "labels": y.tolist()}
    )
    assert r.status_code == 201, r.text  # before: 422 "needs exactly two classes"
    v = r.json()
    assert v["algorithm"] == "auto" and sorted(v["data"]["classes"]) == ["high", "low", "mid"]
    assert v["params"]["fitted"]["capacity"]["curves"]
    assert v["calibration"]["method"] == "multinomial"  # one softmax map of the 3 scores
    p = client.post("/v1/models/three/predict", json={"instances": X[:4].tolist()})
    assert p.status_code == 200, p.text
    # a cost matrix decides by least expected cost over the served probabilities
    C = [[0, 1, 1], [1, 0, 1], [20, 20, 0]]  # rows: truth in sorted label order
    d = client.post("/v1/models/three/predict", json={"instances": X[:20].tolist(),
                                                      "cost_matrix": C}).json()  # fmt: skip
    one = client.post("/v1/models/three/predict", json={"instances": X[:1].tolist(),
                                                        "cost_matrix": C}).json()  # fmt: skip
    first = {k: v for k, v in d["predictions"][0].items() if k != "id"}
    assert first == {k: v for k, v in one["predictions"][0].items() if k != "id"}  # batch-invariant
    assert d["classes"] == ["high", "low", "mid"]
    for row in d["predictions"]:  # the decision is the class of least expected cost
        expected = np.asarray(row["probabilities"]) @ np.asarray(C, dtype=float)
        assert row["decision"] == d["classes"][int(np.argmin(expected))]
    kinds = [k["kind"] for k in client.get("/v1/models/three/versions/1/plots").json()["plots"]]
    assert kinds == ["reliability", "roc", "capacity"]
    # out-of-fold metrics and plots of all 300 rows: nothing was held out
    assert v["metrics"]["evaluation"] == "out_of_fold" and v["metrics"]["n_evaluation"] == 300
    assert v["metrics"]["log_loss"] > 0 and 0 <= v["metrics"]["brier"] <= 2
    rel = client.get("/v1/models/three/versions/1/plots/reliability").json()
    assert sum(rel["after"]["count"]) == 300 and rel["evaluation"] == "out_of_fold"
    # served: the 5 fold boosters' mean vote fractions (no refit on all rows)
    assert v["calibration"]["served"] == "fold_ensemble"


def test_serve_refit_trains_one_booster_on_all_rows_and_bad_values_are_named(
    client: TestClient,
) -> None:
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(240, 3)), 4)
    y = np.where(X[:, 0] > 0.4, "a", np.where(X[:, 1] > 0, "b", "c")).tolist()
    body = {"features": X.tolist(), "labels": y}
    r = client.post("/v1/models/refit/versions", json={**body, "params": {"serve": "refit"}})
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["algorithm"] == "auto" and "served" not in v["calibration"]
    assert v["params"]["params"] == {"serve": "refit"}
    folds = client.post("/v1/models/refit/versions", json=body).json()
    assert folds["calibration"]["served"] == "fold_ensemble"
    bad = client.post("/v1/models/refit/versions", json={**body, "params": {"serve": "mean"}})
    assert bad.status_code == 422 and "params.serve" in bad.json()["detail"], bad.text
    versions = client.get("/v1/models/refit/versions").json()
    assert sorted(x["version"] for x in versions["versions"]) == [1, 2]  # nothing half-written


def test_the_catalog_lists_auto(client: TestClient) -> None:
    listed = client.get("/v1/algorithms").json()["algorithms"]
    auto = next(a for a in listed if a["name"] == "auto")
    assert auto["family"] == "any" and auto["trains_with_costs"] is False


def test_the_rounds_limit_caps_the_search_instead_of_refusing(settings: Settings) -> None:
    capped = settings.model_copy(update={"max_rounds": 20})
    with TestClient(create_app(capped), raise_server_exceptions=False) as client:
        r = client.post("/v1/models/capped/versions", json=_default_body())
        assert r.status_code == 201, r.text
        cap = r.json()["params"]["fitted"]["capacity"]
        assert cap["max_rounds"] == 20 and cap["n_estimators"] <= 20
        assert all(max(c["rounds"]) <= 20 for c in cap["curves"])
        # a given n_estimators over the limit is still refused, naming the setting
        over = client.post("/v1/models/capped/versions", json=train_body(n_estimators=30))
        assert over.status_code == 422 and "COSTWISE_MAX_ROUNDS" in over.json()["detail"]
        job = client.post("/v1/models/capped/versions?mode=job", json=_default_body())
        assert job.status_code == 202, job.text
        # the job's planned total is that of the capped grid (stumps, depth 3, depth 6,
        # oblique): 5 x (20 + 20 + 20 + 20) + 6 x 20
        assert job.json()["total"] == 520
