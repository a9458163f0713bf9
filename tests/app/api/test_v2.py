"""Open Inference Protocol (KServe V2) endpoints, with requests shaped as the spec shows.

Request and response shapes follow the protocol's REST specification, "Inference Request
Examples" and "Tensor Data" (https://github.com/kserve/open-inference-protocol/blob/main/
specification/protocol/inference_rest.md, also https://kserve.github.io/website/docs/
concepts/architecture/data-plane/v2-protocol): ``{"id", "inputs": [{"name", "shape",
"datatype", "data"}], "outputs": [{"name"}]}``, data flat (row-major) or nested, errors
``{"error": "..."}``. Every V2 answer is checked against the /v1 answer to the same
question. Runs on SQLite and (when configured) PostgreSQL.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests.app.api.conftest import dataset, train_body

ROWS = dataset(6)[0].tolist()[:3]


def tensor(data: Any, shape: list[int], datatype: str = "FP64", name: str = "input-0") -> Any:
    return {"name": name, "shape": shape, "datatype": datatype, "data": data}


def infer(client: TestClient, body: dict[str, Any], path: str = "fraud") -> Any:
    r = client.post(f"/v2/models/{path}/infer", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def outputs(resp: dict[str, Any]) -> dict[str, Any]:
    return {o["name"]: o for o in resp["outputs"]}


def v1(client: TestClient, body: dict[str, Any], name: str = "fraud") -> Any:
    r = client.post(f"/v1/models/{name}/predict", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def same_as_v1(resp: dict[str, Any], ref: dict[str, Any]) -> None:
    out, preds = outputs(resp), ref["predictions"]
    n, k = len(preds), len(ref["classes"])
    assert out["probabilities"]["shape"] == [n, k]
    assert np.allclose(
        np.reshape(out["probabilities"]["data"], (n, k)), [p["probabilities"] for p in preds]
    )
    assert out["decision"]["data"] == [p["decision"] for p in preds]
    assert np.allclose(out["expected_cost"]["data"], [p["expected_cost"] for p in preds])
    if k == 2:
        assert np.allclose(out["threshold"]["data"], [p["threshold"] for p in preds])


def without_ids(resp: dict[str, Any]) -> list[dict[str, Any]]:
    """The output tensors but the rows' ids (new for every logged request)."""
    return [o for o in resp["outputs"] if o["name"] != "id"]


def test_server_health_and_metadata(client: TestClient, trained: dict[str, Any]) -> None:
    assert client.get("/v2/health/live").json() == {"live": True}
    assert client.get("/v2/health/ready").json() == {"ready": True}
    meta = client.get("/v2").json()
    assert meta["name"] == "costwise" and meta["extensions"] == [] and meta["version"]
    client.post("/v1/models/fraud/versions", json=train_body(n=200))
    m = client.get("/v2/models/fraud").json()
    assert m == {
        "name": "fraud",
        "versions": ["2", "1"],
        "platform": "costwise_adaboost",
        "inputs": [{"name": "features", "datatype": "FP64", "shape": [-1, 4]}],
        "outputs": [
            {"name": "probabilities", "datatype": "FP64", "shape": [-1, 2]},
            {"name": "decision", "datatype": "INT64", "shape": [-1]},
            {"name": "expected_cost", "datatype": "FP64", "shape": [-1]},
            {"name": "threshold", "datatype": "FP64", "shape": [-1]},
        ],
    }
    assert client.get("/v2/models/fraud/versions/1").json() == m
    assert client.get("/v2/models/fraud/ready").json() == {"name": "fraud", "ready": True}
    r = client.get("/v2/models/fraud/versions/2/ready")
    assert r.status_code == 200 and r.json() == {"name": "fraud", "ready": True}


def test_infer_spec_example_with_costs_in_parameters(
    client: TestClient, trained: dict[str, Any]
) -> None:
    """The spec's example request (id "42", one tensor), with costs in ``parameters``."""
    body = {
        "id": "42",
        "parameters": {"c_fp": 1, "c_fn": 5},
        "inputs": [tensor(ROWS, [3, 4])],
    }
    resp = infer(client, body)
    assert resp["id"] == "42" and resp["model_name"] == "fraud" and resp["model_version"] == "1"
    assert [o["name"] for o in resp["outputs"]] == [
        "probabilities",
        "decision",
        "expected_cost",
        "threshold",
        "id",  # the rows' ids in the prediction log
    ]
    assert outputs(resp)["decision"]["datatype"] == "INT64"
    same_as_v1(resp, v1(client, {"instances": ROWS, "costs": {"c_fp": 1, "c_fn": 5}}))
    assert resp["parameters"] == {
        "calibration_method": "platt",
        "calibration_split": "kfold",
        "calibration_score": "vote",
        "decision_rule": "threshold",
        "cost_setting": "costs",
        "cost_matrix": [[0.0, 1.0], [5.0, 0.0]],
        "classes": [0, 1],
    }
    assert np.allclose(outputs(resp)["threshold"]["data"], 1 / 6)
    # no id in the request: the response still has one; no costs: 0-1 loss
    plain = infer(client, {"inputs": [tensor(ROWS, [3, 4])]})
    assert plain["id"] and plain["parameters"]["cost_setting"] == "zero_one"
    same_as_v1(plain, v1(client, {"instances": ROWS}))


def test_costs_as_a_second_tensor(client: TestClient, trained: dict[str, Any]) -> None:
    per_row = [[1.0, 2.0], [1.0, 420.0], [3.0, 1.0]]
    resp = infer(client, {"inputs": [tensor(ROWS, [3, 4]), tensor(per_row, [3, 2], name="costs")]})
    rows = [{"c_fp": a, "c_fn": b} for a, b in per_row]
    same_as_v1(resp, v1(client, {"instances": ROWS, "row_costs": rows}))
    assert resp["parameters"]["cost_setting"] == "row_costs"
    assert resp["parameters"]["row_costs"] == {
        "n_rows": 3,
        "min": [[0.0, 1.0], [1.0, 0.0]],
        "max": [[0.0, 3.0], [420.0, 0.0]],
    }
    # [N, 4] = (c_fp, c_fn, c_tp, c_tn) per row; flat INT32 data
    four = infer(
        client,
        {"inputs": [tensor(ROWS, [3, 4]), tensor([1, 5, 0, 0] * 3, [3, 4], "INT32", "costs")]},
    )
    same_as_v1(four, v1(client, {"instances": ROWS, "costs": {"c_fp": 1, "c_fn": 5}}))
    # one matrix for every row; and (2, 2) with two rows, told apart by "layout"
    matrix = [[0, 1], [20, 0]]
    one = infer(client, {"inputs": [tensor(ROWS, [3, 4]), tensor(matrix, [2, 2], name="costs")]})
    same_as_v1(one, v1(client, {"instances": ROWS, "cost_matrix": matrix}))
    assert one["parameters"]["cost_setting"] == "cost_matrix"
    two = {"name": "costs", "shape": [2, 2], "datatype": "FP64", "data": matrix}
    for layout, ref in (
        ("matrix", {"cost_matrix": matrix}),
        ("rows", {"row_costs": [{"c_fp": 0, "c_fn": 1}, {"c_fp": 20, "c_fn": 0}]}),
    ):
        resp = infer(
            client,
            {"inputs": [tensor(ROWS[:2], [2, 4]), {**two, "parameters": {"layout": layout}}]},
        )
        same_as_v1(resp, v1(client, {"instances": ROWS[:2], **ref}))


def test_fp32_is_read_as_float32_and_nested_equals_flat(
    client: TestClient, trained: dict[str, Any]
) -> None:
    flat = [v for row in ROWS for v in row]
    nested = infer(client, {"inputs": [tensor(ROWS, [3, 4], "FP32")]})
    flat_out = infer(client, {"inputs": [tensor(flat, [3, 4], "FP32")]})
    assert without_ids(flat_out) == without_ids(nested)
    rounded = np.asarray(ROWS, np.float32).astype(np.float64).tolist()
    same_as_v1(nested, v1(client, {"instances": rounded}))
    same_as_v1(
        infer(client, {"inputs": [tensor(flat, [3, 4], "FP64")]}), v1(client, {"instances": ROWS})
    )
    # FP64 holds 1e39, FP32 does not
    big = [[1e39, 0.0, 0.0, 0.0]]
    assert client.post("/v2/models/fraud/infer", json={"inputs": [tensor(big, [1, 4])]}).is_success
    r = client.post("/v2/models/fraud/infer", json={"inputs": [tensor(big, [1, 4], "FP32")]})
    assert r.status_code == 400 and "outside the FP32 range" in r.json()["error"]


def test_outputs_filter(client: TestClient, trained: dict[str, Any]) -> None:
    body = {
        "inputs": [tensor(ROWS, [3, 4])],
        "outputs": [{"name": "threshold"}, {"name": "decision"}],
    }
    resp = infer(client, body)
    assert [o["name"] for o in resp["outputs"]] == ["threshold", "decision"]
    assert [o["shape"] for o in resp["outputs"]] == [[3], [3]]


def test_versions_and_alias_via_parameters(client: TestClient, trained: dict[str, Any]) -> None:
    client.post("/v1/models/fraud/versions", json=train_body(n=200))
    client.put("/v1/models/fraud/aliases/staging", json={"version": 1})
    body = {"inputs": [tensor(ROWS, [3, 4])], "parameters": {"c_fp": 1, "c_fn": 3}}
    latest = infer(client, body)
    assert latest["model_version"] == "2" and "alias" not in latest["parameters"]
    for version in (1, 2):
        r = client.post(f"/v2/models/fraud/versions/{version}/infer", json=body)
        assert r.json()["model_version"] == str(version)
        ref = v1(client, {"instances": ROWS, "costs": {"c_fp": 1, "c_fn": 3}, "version": version})
        same_as_v1(r.json(), ref)
    staged = infer(client, {**body, "parameters": {**body["parameters"], "alias": "staging"}})
    assert staged["model_version"] == "1" and staged["parameters"]["alias"] == "staging"


def test_multiclass_with_a_cost_matrix(client: TestClient) -> None:
    from sklearn.datasets import make_classification

    X, y = make_classification(
        300, 5, n_informative=4, n_redundant=1, n_classes=3, n_clusters_per_class=1,
        random_state=4,
    )  # fmt: skip
    labels = np.array(["low", "mid", "high"])[y].tolist()
    r = client.post(
        "/v1/models/tri/versions",
        json={"features": np.round(X, 4).tolist(), "labels": labels, "algorithm": "samme",
              "n_estimators": 10},
    )  # fmt: skip
    assert r.status_code == 201, r.text
    meta = client.get("/v2/models/tri").json()
    assert meta["inputs"][0]["shape"] == [-1, 5]
    assert {o["name"]: o["datatype"] for o in meta["outputs"]} == {
        "probabilities": "FP64",
        "decision": "BYTES",
        "expected_cost": "FP64",
    }
    rows = np.round(X[:4], 4).tolist()
    matrix = [[0, 1, 9], [4, 0, 1], [2, 2, 0]]
    by_param = infer(client, {"parameters": {"cost_matrix": matrix},
                              "inputs": [tensor(rows, [4, 5])]}, "tri")  # fmt: skip
    by_tensor = infer(
        client, {"inputs": [tensor(rows, [4, 5]), tensor(matrix, [3, 3], "INT64", "costs")]}, "tri"
    )
    ref = v1(client, {"instances": rows, "cost_matrix": matrix}, "tri")
    same_as_v1(by_param, ref)
    assert without_ids(by_tensor) == without_ids(by_param)
    assert outputs(by_param)["decision"]["datatype"] == "BYTES"
    assert by_param["parameters"]["classes"] == ref["classes"]
    # one K x K matrix per row, [N, K, K]
    stack = [matrix, matrix, [[0, 1, 1], [1, 0, 1], [1, 1, 0]], matrix]
    per_row = infer(
        client, {"inputs": [tensor(rows, [4, 5]), tensor(stack, [4, 3, 3], name="costs")]}, "tri"
    )
    zero_one = v1(client, {"instances": rows[2:3]}, "tri")["predictions"][0]["decision"]
    assert outputs(per_row)["decision"]["data"][2] == zero_one
    assert outputs(per_row)["decision"]["data"][:2] == outputs(by_param)["decision"]["data"][:2]
    r = client.post("/v2/models/tri/infer", json={"inputs": [tensor(rows, [4, 5])],
                                                  "outputs": [{"name": "threshold"}]})  # fmt: skip
    assert r.status_code == 400 and "does not produce 'threshold'" in r.json()["error"]


ONE = [tensor([ROWS[0]], [1, 4])]
# (case, path, body, status, fragment of the "error" message)
BAD: list[tuple[str, str, Any, int, str]] = [
    ("shape vs data length", "fraud", {"inputs": [tensor(ROWS[0], [2, 4])]}, 400,
     "inputs[0] ('input-0'): shape [2, 4] needs 8 values, data has 4"),
    ("nested data vs shape", "fraud", {"inputs": [tensor(ROWS, [4, 3])]}, 400,
     "data has shape [3, 4], but the tensor's shape is [4, 3]"),
    ("ragged nesting", "fraud", {"inputs": [tensor([[1, 2, 3, 4], [1, 2]], [2, 4])]}, 400,
     "nested lists of equal length"),
    ("unknown datatype", "fraud", {"inputs": [tensor([ROWS[0]], [1, 4], "FLOAT")]}, 400,
     "inputs[0] ('input-0').datatype: unknown datatype 'FLOAT'; expected one of ['BOOL'"),
    ("BYTES features", "fraud", {"inputs": [tensor([["a"] * 4], [1, 4], "BYTES")]}, 400,
     "datatype BYTES is not supported"),
    ("strings in FP64", "fraud", {"inputs": [tensor([["a"] * 4], [1, 4])]}, 400,
     "datatype FP64 expects numbers"),
    ("fraction in INT64", "fraud", {"inputs": [tensor([[1, 2, 3, 4.5]], [1, 4], "INT64")]}, 400,
     "datatype INT64 expects integers"),
    ("wrong feature count", "fraud", {"inputs": [tensor([[1, 2, 3]], [1, 3])]}, 400,
     "inputs[0] ('input-0'): expected 4 features per row (shape [N, 4]), got shape [1, 3]"),
    ("1-D features", "fraud", {"inputs": [tensor([1, 2, 3, 4], [4])]}, 400,
     "expected shape [N, n_features] with N >= 1, got [4]"),
    ("missing input", "fraud", {"inputs": []}, 400, "inputs: List should have at least 1 item"),
    ("no data", "fraud", {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP64"}]}, 400,
     "inputs[0].data: Field required"),
    ("two feature tensors", "fraud", {"inputs": ONE * 2}, 400,
     "expected one features tensor (shape [N, n_features]) and at most one 'costs' tensor"),
    ("negative named cost", "fraud", {"inputs": ONE, "parameters": {"c_fp": -1, "c_fn": 5}},
     400, "c_fp: cost must be finite and >= 0, got -1.0"),
    ("c_fn missing", "fraud", {"inputs": ONE, "parameters": {"c_fp": 1}}, 400,
     "parameters: named costs need c_fp and c_fn; missing ['c_fn']"),
    ("unknown cost name", "fraud", {"inputs": ONE, "parameters": {"c_fp": 1, "c_fnn": 2}}, 400,
     "parameters.c_fnn: unknown cost"),
    ("cost not a number", "fraud", {"inputs": ONE, "parameters": {"c_fp": "1", "c_fn": 2}},
     400, "parameters.c_fp: expected a number, got '1'"),
    ("bad cost matrix", "fraud",
     {"inputs": ONE, "parameters": {"cost_matrix": [[0, 1], [-5, 0]]}}, 400,
     "parameters.cost_matrix: cost matrix entry [1][0] 'c_fn'"),
    ("cost matrix as bad JSON text", "fraud",
     {"inputs": ONE, "parameters": {"cost_matrix": "[[0, 1]"}}, 400,
     "parameters.cost_matrix: expected a JSON array"),
    ("two cost settings", "fraud",
     {"inputs": [*ONE, tensor([[1, 5]], [1, 2], name="costs")],
      "parameters": {"c_fp": 1, "c_fn": 5}}, 400,
     "give one cost setting, got ['c_fp/c_fn', \"'costs' tensor\"]"),
    ("per-row costs, wrong rows", "fraud",
     {"inputs": [*ONE, tensor([[1, 5]] * 3, [3, 2], name="costs")]}, 400,
     "inputs[1] ('costs'): expected shape [2, 2] (one cost matrix) or [1, 2, 2]"),
    ("per-row cost negative", "fraud",
     {"inputs": [tensor(ROWS, [3, 4]), tensor([[1, 5], [1, -5], [1, 1]], [3, 2], name="costs")]},
     400, "inputs[1] ('costs'): row 1, column 'c_fn': cost must be finite and >= 0"),
    ("ambiguous 2x2 costs", "fraud",
     {"inputs": [tensor(ROWS[:2], [2, 4]), tensor([[0, 1], [5, 0]], [2, 2], name="costs")]},
     400, 'is ambiguous for 2 rows of a two-class model'),
    ("bad priors", "fraud", {"inputs": ONE, "parameters": {"priors": [0.5, "x"]}}, 400,
     "parameters.priors: expected a list of numbers"),
    ("priors of wrong length", "fraud", {"inputs": ONE, "parameters": {"priors": [1.0]}}, 400,
     "parameters.priors"),
    ("unknown output", "fraud", {"inputs": ONE, "outputs": [{"name": "score"}]}, 400,
     "outputs[0].name: unknown output 'score'; expected one of ['probabilities'"),
    ("alias and path version", "fraud/versions/1", {"inputs": ONE,
     "parameters": {"alias": "production"}}, 400, "give either a version or an alias"),
    ("unknown model", "nope", {"inputs": ONE}, 404, "model 'nope' not found"),
    ("unknown version", "fraud/versions/9", {"inputs": ONE}, 404, "has no version 9"),
    ("version not a number", "fraud/versions/v1", {"inputs": ONE}, 404, "no version 'v1'"),
    ("unknown alias", "fraud", {"inputs": ONE, "parameters": {"alias": "staging"}}, 404,
     "has no alias 'staging'"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "path", "body", "status", "fragment"), BAD, ids=[b[0] for b in BAD]
)
def test_bad_inputs(
    client: TestClient,
    trained: dict[str, Any],
    case: str,
    path: str,
    body: Any,
    status: int,
    fragment: str,
) -> None:
    r = client.post(f"/v2/models/{path}/infer", json=body)
    assert r.status_code == status, r.text
    assert set(r.json()) == {"error"}
    assert fragment in r.json()["error"], r.json()["error"]


def test_bad_bodies_and_metadata_errors(client: TestClient, trained: dict[str, Any]) -> None:
    r = client.post("/v2/models/fraud/infer", content=b"{not json")
    assert r.status_code == 400 and r.json()["error"].startswith("request body is not valid JSON")
    r = client.post("/v2/models/fraud/infer", content=b"x", headers={"content-type": "text/csv"})
    assert r.status_code == 415 and "send application/json" in r.json()["error"]
    for path, fragment in (
        ("/v2/models/nope", "model 'nope' not found"),
        ("/v2/models/fraud/versions/3", "has no version 3"),
        ("/v2/models/fraud/versions/99999999999/ready", "no version '99999999999'"),
        ("/v2/models/nope/ready", "model 'nope' not found"),
    ):
        r = client.get(path)
        assert r.status_code == 404 and fragment in r.json()["error"], (path, r.text)


def test_provenance_on_v1_predict_and_evaluate(client: TestClient) -> None:
    r = client.post(
        "/v1/models/iso/versions",
        json=train_body(calibration="isotonic", calibration_split="kfold", n_folds=3),
    )
    assert r.status_code == 201, r.text
    client.put("/v1/models/iso/aliases/production", json={"version": 1})
    body = {"instances": ROWS, "cost_matrix": [[0, 1], [4, 0]], "priors": [0.9, 0.1]}
    p = v1(client, body, "iso")
    assert p["alias"] == "production" and p["version"] == 1
    assert p["calibration"] == {"method": "isotonic", "split": "kfold", "score": "vote"}
    assert p["applied_costs"] == {
        "cost_matrix": [[0.0, 1.0], [4.0, 0.0]],
        "row_costs": None,
        "actions": None,
        "priors": [0.9, 0.1],
        "priors_estimate": None,
    }
    assert p["cost_setting"] == "cost_matrix" and p["decision_rule"] == "threshold"
    e = client.post(
        "/v1/models/iso/evaluate",
        json={"instances": ROWS, "labels": [0, 1, 1], "row_costs": [{"c_fp": 1, "c_fn": n}
                                                                    for n in (2, 3, 9)]},
    ).json()  # fmt: skip
    assert e["calibration"] == p["calibration"] and e["alias"] == "production"
    assert e["cost_setting"] == "row_costs" and e["applied_costs"]["row_costs"] == {
        "n_rows": 3,
        "min": [[0.0, 1.0], [2.0, 0.0]],
        "max": [[0.0, 1.0], [9.0, 0.0]],
    }
    assert e["training_costs"] is None and e["decision_rule"] == "threshold"


def test_uncalibrated_versions_say_which_rule_they_apply(client: TestClient) -> None:
    """calibration "none" thresholds the raw score: s(x) with score "vote" (AdaMEC as the
    paper defines it, Eq. 9/19), s'(x) with "logistic" (Eq. 25); the version's record and
    every prediction say which (issue 16)."""
    probs = {}
    for score, eq in (("vote", "Eq. 24"), ("logistic", "Eq. 25")):
        r = client.post(
            f"/v1/models/raw-{score}/versions",
            json=train_body(calibration="none", score=score, evaluation_fraction=0),
        )
        assert r.status_code == 201, r.text
        cal = r.json()["calibration"]
        assert cal["method"] == "none" and cal["score"] == score
        assert eq in cal["uncalibrated_rule"] and "AdaMEC" in cal["uncalibrated_rule"]
        p = v1(client, {"instances": ROWS}, f"raw-{score}")
        assert p["calibration"] == {"method": "none", "split": "none", "score": score}
        probs[score] = np.array([row["probabilities"][1] for row in p["predictions"]])
        v2 = client.post(
            f"/v2/models/raw-{score}/infer", json={"inputs": [tensor(ROWS, [3, 4])]}
        ).json()
        assert v2["parameters"]["calibration_score"] == score
    # the same booster, two different probabilities: s(x) is not 1/(1+exp(-2F))
    assert not np.allclose(probs["vote"], probs["logistic"])


def test_infer_costs_no_more_queries_than_v1_predict(
    client: TestClient, trained: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the model is cached, /v2 infer and /v1 predict each run one query (the
    version's resolution; SQLite's driver adds a BEGIN). Counted where every statement
    goes, the dialect's ``do_execute``: the predict path's version look-up runs its
    compiled statement there directly, without SQLAlchemy's execution events."""
    dialect = client.app.state.services.engine.dialect  # type: ignore[attr-defined]
    statements: list[str] = []
    execute = dialect.do_execute

    def record(cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        # the prediction log's writer thread inserts on the same engine whenever its
        # flush interval falls inside a call: those statements are not the request's
        if threading.current_thread().name != "costwise-prediction-log":
            statements.append(statement)
        execute(cursor, statement, parameters, context)

    monkeypatch.setattr(dialect, "do_execute", record)
    v1(client, {"instances": ROWS})  # warm the cache
    counts = []
    for call in (
        lambda: v1(client, {"instances": ROWS, "costs": {"c_fp": 1, "c_fn": 5}}),
        lambda: infer(
            client, {"inputs": [tensor(ROWS, [3, 4])], "parameters": {"c_fp": 1, "c_fn": 5}}
        ),
    ):
        statements.clear()
        call()
        counts.append(sum(not s.startswith("BEGIN") for s in statements))
    assert counts == [1, 1], statements
