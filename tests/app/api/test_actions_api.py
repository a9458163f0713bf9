"""Decisions among named actions through ``/v1`` predict and evaluate and ``/v2`` infer.

Every answer is checked against an independent computation from the probabilities the
response returns (plain loops: least expected cost, ties to the action listed first);
bad settings get a 422 ``INVALID_ARGUMENT`` naming the field.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests.app.api.conftest import dataset
from tests.app.conftest import refused

ACTIONS = ["approve", "review", "second_factor", "decline"]
# truth legitimate / fraud; review costs 4 whatever the truth
MATRIX = [[0.0, 4.0, 1.0, 10.0], [100.0, 4.0, 30.0, 0.0]]


def _least(p: list[float], c: list[list[float]]) -> tuple[int, float]:
    best, best_cost = -1, float("inf")
    for a in range(len(c[0])):
        e = sum(p[i] * c[i][a] for i in range(len(p)))
        if e < best_cost:
            best, best_cost = a, e
    return best, best_cost


def _rows(n: int = 60) -> list[list[float]]:
    X, _ = dataset(n, seed=5)
    return X.tolist()


def test_predict_takes_the_action_of_least_expected_cost(
    client: TestClient, trained: dict[str, Any]
) -> None:
    r = client.post(
        "/v1/models/fraud/predict",
        json={"instances": _rows(), "actions": ACTIONS, "cost_matrix": MATRIX},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["applied_costs"]["actions"] == ACTIONS
    assert body["applied_costs"]["cost_matrix"] == MATRIX
    assert body["cost_setting"] == "cost_matrix"
    taken = set()
    for row in body["predictions"]:
        a, cost = _least(row["probabilities"], MATRIX)
        assert row["action"] == ACTIONS[a]
        assert row["decision"] is None and row["threshold"] is None
        assert row["expected_cost"] == pytest.approx(cost, rel=1e-12)
        taken.add(row["action"])
    assert len(taken) >= 2  # the rows do not all take one action


def test_c_review_adds_a_review_action(client: TestClient, trained: dict[str, Any]) -> None:
    costs = {"c_fp": 1.0, "c_fn": 5.0, "c_review": 0.6}
    r = client.post("/v1/models/fraud/predict", json={"instances": _rows(), "costs": costs})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["applied_costs"]["actions"] == ["negative", "positive", "review"]
    matrix = [[0.0, 1.0, 0.6], [5.0, 0.0, 0.6]]
    assert body["applied_costs"]["cost_matrix"] == matrix
    classes = body["classes"]
    seen = set()
    for row in body["predictions"]:
        a, cost = _least(row["probabilities"], matrix)
        assert row["action"] == ["negative", "positive", "review"][a]
        assert row["decision"] == (classes[a] if a < 2 else None)
        assert row["expected_cost"] == pytest.approx(cost, rel=1e-12)
        seen.add(row["action"])
    assert "review" in seen and len(seen) >= 2


def test_per_row_costs_with_review_and_per_row_action_matrices(
    client: TestClient, trained: dict[str, Any]
) -> None:
    rows = _rows(20)
    amounts = [float(a) for a in np.linspace(1, 200, 20)]
    per_row = [{"c_fp": 2.0, "c_fn": a, "c_review": 4.0} for a in amounts]
    r = client.post("/v1/models/fraud/predict", json={"instances": rows, "row_costs": per_row})
    assert r.status_code == 200, r.text
    for row, a in zip(r.json()["predictions"], amounts, strict=True):
        chosen, _ = _least(row["probabilities"], [[0.0, 2.0, 4.0], [a, 0.0, 4.0]])
        assert row["action"] == ["negative", "positive", "review"][chosen]
    # approve / review (4) / decline (the amount when the truth is legitimate)
    matrices = [[[0.0, 4.0, a], [a, 4.0, 0.0]] for a in amounts]
    actions = ["approve", "review", "decline"]
    r = client.post(
        "/v1/models/fraud/predict",
        json={"instances": rows, "actions": actions, "row_cost_matrices": matrices},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["cost_setting"] == "row_costs" and body["applied_costs"]["actions"] == actions
    for row, m in zip(body["predictions"], matrices, strict=True):
        chosen, cost = _least(row["probabilities"], m)
        assert row["action"] == actions[chosen]
        assert row["expected_cost"] == pytest.approx(cost, rel=1e-12)


def test_a_square_matrix_still_decides_a_class(client: TestClient, trained: dict[str, Any]) -> None:
    r = client.post(
        "/v1/models/fraud/predict",
        json={"instances": _rows(10), "cost_matrix": [[0.0, 1.0], [5.0, 0.0]]},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["applied_costs"]["actions"] is None
    for row in body["predictions"]:
        assert row["action"] is None
        assert row["decision"] == body["classes"][int(row["probabilities"][1] >= row["threshold"])]


def test_evaluate_counts_truth_by_action_and_the_realised_cost(
    client: TestClient, trained: dict[str, Any]
) -> None:
    X, y = dataset(80, seed=6)
    body = {"instances": X.tolist(), "labels": y.tolist(), "actions": ACTIONS,
            "cost_matrix": MATRIX}  # fmt: skip
    r = client.post("/v1/models/fraud/evaluate", json=body)
    assert r.status_code == 200, r.text
    e = r.json()
    p = client.post(
        "/v1/models/fraud/predict",
        json={"instances": X.tolist(), "actions": ACTIONS, "cost_matrix": MATRIX},
    ).json()
    taken = [ACTIONS.index(row["action"]) for row in p["predictions"]]
    counts = np.zeros((2, 4), dtype=int)
    for truth, a in zip(y.tolist(), taken, strict=True):
        counts[truth, a] += 1
    assert e["confusion_matrix"] == counts.tolist()
    total = sum(MATRIX[t][a] for t, a in zip(y.tolist(), taken, strict=True))
    assert e["total_cost"] == pytest.approx(total)
    assert e["mean_cost"] == pytest.approx(total / len(y))
    assert e["accuracy"] is None and e["q"] is None
    assert e["applied_costs"]["actions"] == ACTIONS


BAD: list[tuple[str, dict[str, Any], str, str]] = [
    ("rows not K", {"actions": ["a", "b", "c"], "cost_matrix": [[0, 1, 2]]},
     "cost_matrix", "expected shape (2, A)"),
    ("ragged row", {"actions": ["a", "b", "c"], "cost_matrix": [[0, 1, 2], [1, 0]]},
     "cost_matrix", "row 1 has 2 entries, expected 3"),
    ("names not unique", {"actions": ["a", "b", "a"], "cost_matrix": [[0, 1, 2], [1, 0, 2]]},
     "actions", "'a' is listed twice"),
    ("names not matching the columns", {"actions": ["a", "b"], "cost_matrix": [[0, 1, 2], [1, 0, 2]]},
     "actions", "2 action names for 3 cost columns"),
    ("an empty name", {"actions": ["a", ""], "cost_matrix": [[0, 1], [1, 0]]},
     "actions", "actions[1]"),
    ("a negative cost", {"actions": ["a", "b"], "cost_matrix": [[0, -1], [1, 0]]},
     "cost_matrix", "action 'b'"),
    ("actions without their matrix", {"actions": ["a", "b"], "costs": {"c_fp": 1, "c_fn": 2}},
     "actions", "actions need their costs"),
    ("K x A without names", {"cost_matrix": [[0, 1, 2], [1, 0, 2]]},
     "cost_matrix", "name one per column in `actions`"),
    ("c_review negative", {"costs": {"c_fp": 1, "c_fn": 2, "c_review": -1}},
     "costs.c_review", "finite and >= 0"),
    ("c_review on some rows only", {"row_costs": [{"c_fp": 1, "c_fn": 2, "c_review": 1}] * 3
     + [{"c_fp": 1, "c_fn": 2}] * 57}, "row_costs[3].c_review", "on every row or on none"),
    ("per-row matrices for too few rows", {"actions": ["a", "b", "c"],
     "row_cost_matrices": [[[0, 1, 2], [1, 0, 2]]] * 3}, "row_cost_matrices", "(60, 2, A)"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "members", "field", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_action_settings_name_the_field(
    client: TestClient,
    trained: dict[str, Any],
    case: str,
    members: dict[str, Any],
    field: str,
    message: str,
) -> None:
    r = client.post("/v1/models/fraud/predict", json={"instances": _rows(), **members})
    refused(r, 422, code="INVALID_ARGUMENT", field=field, detail=message)


def _three_classes(client: TestClient) -> list[list[float]]:
    from sklearn.datasets import make_classification

    X, y = make_classification(
        300, 5, n_informative=4, n_redundant=1, n_classes=3, n_clusters_per_class=1,
        random_state=4,
    )  # fmt: skip
    r = client.post(
        "/v1/models/tri/versions",
        json={"features": np.round(X, 4).tolist(), "labels": y.tolist(), "algorithm": "samme",
              "n_estimators": 10},
    )  # fmt: skip
    assert r.status_code == 201, r.text
    return np.round(X[:40], 4).tolist()


def test_three_classes_with_four_actions_and_c_review_refused(client: TestClient) -> None:
    rows = _three_classes(client)
    matrix = [[0.0, 2.0, 5.0, 3.0], [4.0, 0.0, 1.0, 3.0], [9.0, 6.0, 0.0, 3.0]]
    actions = ["low", "mid", "high", "ask"]
    r = client.post(
        "/v1/models/tri/predict",
        json={"instances": rows, "actions": actions, "cost_matrix": matrix},
    )
    assert r.status_code == 200, r.text
    for row in r.json()["predictions"]:
        a, cost = _least(row["probabilities"], matrix)
        assert row["action"] == actions[a]
        assert row["expected_cost"] == pytest.approx(cost, rel=1e-12)
    r = client.post(
        "/v1/models/tri/predict",
        json={"instances": rows, "costs": {"c_fp": 1, "c_fn": 2, "c_review": 1}},
    )
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "costs.c_review"
    assert "c_review is for two-class models, this model has 3 classes" in r.json()["detail"]
    r = client.post(
        "/v1/models/tri/predict",
        json={"instances": rows, "row_costs": [{"c_fp": 1, "c_fn": 2, "c_review": 1}] * 40},
    )
    assert r.status_code == 422 and r.json()["field"] == "row_costs.c_review", r.text


def test_v2_decides_among_actions(client: TestClient, trained: dict[str, Any]) -> None:
    rows = _rows(30)
    features = {"name": "x", "shape": [30, 4], "datatype": "FP64", "data": rows}
    r = client.post(
        "/v2/models/fraud/infer",
        json={"inputs": [features], "parameters": {"actions": ACTIONS, "cost_matrix": MATRIX}},
    )
    assert r.status_code == 200, r.text
    out = {o["name"]: o for o in r.json()["outputs"]}
    assert "decision" not in out
    assert out["action"]["datatype"] == "BYTES"
    proba = np.asarray(out["probabilities"]["data"]).reshape(30, 2)
    for p, action in zip(proba.tolist(), out["action"]["data"], strict=True):
        assert action == ACTIONS[_least(p, MATRIX)[0]]
    # per-row matrices as the costs tensor, and c_review as a parameter
    matrices = [[[0.0, 4.0, 7.0], [7.0, 4.0, 0.0]]] * 30
    costs = {"name": "costs", "shape": [30, 2, 3], "datatype": "FP64", "data": matrices}
    r = client.post(
        "/v2/models/fraud/infer",
        json={"inputs": [features, costs], "parameters": {"actions": '["a", "review", "d"]'}},
    )
    assert r.status_code == 200, r.text
    out = {o["name"]: o for o in r.json()["outputs"]}
    proba = np.asarray(out["probabilities"]["data"]).reshape(30, 2)
    for p, action in zip(proba.tolist(), out["action"]["data"], strict=True):
        assert action == ["a", "review", "d"][_least(p, matrices[0])[0]]
    r = client.post(
        "/v2/models/fraud/infer",
        json={"inputs": [features], "parameters": {"c_fp": 1.0, "c_fn": 5.0, "c_review": 0.6}},
    )
    assert r.status_code == 200, r.text
    out = {o["name"]: o for o in r.json()["outputs"]}
    assert set(out["action"]["data"]) <= {"negative", "positive", "review"}
    r = client.post(
        "/v2/models/fraud/infer",
        json={"inputs": [features], "parameters": {"actions": '["a", "a"]',
                                                   "cost_matrix": "[[0, 1], [1, 0]]"}},
    )  # fmt: skip
    assert r.status_code == 400, r.text
    assert "parameters.actions" in r.json()["error"]
