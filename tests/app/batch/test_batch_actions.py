"""Batch decisions among actions: a cost matrix whose cells may come from input columns
(approve / review / decline, declining a legitimate customer costs the amount), and
named costs with ``c_review``; every row as ``/v1`` predict decides it, the output's
``action`` column and the job's ``actions_taken`` counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.app.batch.conftest import input_table, wait_job, write_partitioned
from tests.app.batch.test_batch_api import batch_body, predicted, read_output
from tests.app.conftest import refused

ACTIONS = ["approve", "review", "decline"]


def _run(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/v1/models/fraud/batch", json=body)
    assert r.status_code == 202, r.text
    job = wait_job(client, r.json()["id"])
    assert job["status"] == "succeeded", job
    return job


def _same_actions(output: Any, answers: list[dict[str, Any]], job: dict[str, Any]) -> None:
    rows = output.to_pylist()
    assert len(rows) == len(answers)
    for row, answer in zip(rows, answers, strict=True):
        assert row["action"] == answer["action"]
        assert row["decision"] == answer["decision"]
        assert row["expected_cost"] == answer["expected_cost"]
        assert [row["proba_0"], row["proba_1"]] == answer["probabilities"]
        assert row["threshold"] is None
    taken: dict[str, int] = {}
    for answer in answers:
        taken[answer["action"]] = taken.get(answer["action"], 0) + 1
    assert job["result"]["actions_taken"] == taken
    total = sum(a["expected_cost"] for a in answers)
    assert job["result"]["total_expected_cost"] == pytest.approx(total, rel=1e-12)


def test_cost_matrix_cells_from_columns_decide_as_predict_does(
    client: TestClient, trained: dict[str, Any], root: Path
) -> None:
    table = input_table()
    src = write_partitioned(table, root / "tx")
    amount = {"column": "amount"}
    matrix = [[0.0, 4.0, amount], [amount, 4.0, 0.0]]
    body = batch_body(src, root / "out", costs=None, cost_matrix=matrix, actions=ACTIONS)
    job = _run(client, body)
    per_row = [[[0.0, 4.0, a], [a, 4.0, 0.0]] for a in table.column("amount").to_pylist()]
    answers = predicted(client, table, row_cost_matrices=per_row, actions=ACTIONS)
    output = read_output(root / "out")
    _same_actions(output, answers, job)
    assert len(job["result"]["actions_taken"]) >= 2


def test_c_review_from_a_column(client: TestClient, trained: dict[str, Any], root: Path) -> None:
    table = input_table(120, seed=4)
    src = write_partitioned(table, root / "tx")
    costs = {"c_fp": 5, "c_fn": {"column": "amount"}, "c_review": 3}
    job = _run(client, batch_body(src, root / "out", costs=costs))
    row_costs = [
        {"c_fp": 5.0, "c_fn": a, "c_review": 3.0} for a in table.column("amount").to_pylist()
    ]
    answers = predicted(client, table, row_costs=row_costs)
    _same_actions(read_output(root / "out"), answers, job)
    assert set(job["result"]["actions_taken"]) <= {"negative", "positive", "review"}


@pytest.mark.parametrize(
    ("extra", "field", "message"),
    [
        ({"costs": None, "actions": ["a", "a"], "cost_matrix": [[0, 1], [1, 0]]},
         "actions", "listed twice"),
        ({"costs": None, "actions": ["a", "b"], "cost_matrix": [[0, 1, 2], [1, 0, 2]]},
         "actions", "2 action names for 3 cost columns"),
        ({"costs": None, "actions": ["a", "b", "c"], "cost_matrix": [[0, 1, 2]]},
         "cost_matrix", "expected shape (2, A)"),
        ({"actions": ["a", "b"]}, "actions", "actions need their costs"),
        ({"costs": None, "actions": ["a", "b"],
          "cost_matrix": [[0, {"column": "nope"}], [1, 0]]}, "cost_matrix[0][1]", "nope"),
        # rows of different lengths, with cells from columns (found by the fuzz test: a 500)
        ({"costs": None, "actions": ["a", "b"],
          "cost_matrix": [[0, {"column": "amount"}], [1, 0, 2]]}, "cost_matrix[1]",
         "expected 2 cells like row 0"),
    ],
)  # fmt: skip
def test_bad_action_settings_are_refused_at_once(
    client: TestClient,
    trained: dict[str, Any],
    root: Path,
    extra: dict[str, Any],
    field: str,
    message: str,
) -> None:
    src = write_partitioned(input_table(30), root / "tx")
    r = client.post("/v1/models/fraud/batch", json=batch_body(src, root / "out", **extra))
    refused(r, field=field, detail=message)
