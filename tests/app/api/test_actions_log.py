"""Decisions among named actions in the prediction log, monitoring and the comparison of
versions (SQLite and PostgreSQL): each logged row keeps the action taken, the names and
the costs it was decided under; realised cost (in total and per action) equals an
independent computation from the responses and the reported outcomes."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.registry.orm import LoggedPrediction
from tests.app.api.conftest import dataset, train_body

ACTIONS = ["approve", "review", "second_factor", "decline"]
MATRIX = [[0.0, 4.0, 1.0, 10.0], [100.0, 4.0, 30.0, 0.0]]


def _flush(client: TestClient) -> None:
    assert client.app.state.services.prediction_log.flush(10.0)  # type: ignore[attr-defined]


def _logged(client: TestClient) -> dict[str, LoggedPrediction]:
    sessions = client.app.state.services.sessions  # type: ignore[attr-defined]
    with sessions() as s:
        return {r.prediction_id: r for r in s.scalars(select(LoggedPrediction))}


def _predict(client: TestClient, ids: list[str], X: np.ndarray, **costs: Any) -> list[Any]:
    r = client.post("/v1/models/fraud/predict", json={"instances": X.tolist(), "ids": ids, **costs})
    assert r.status_code == 200, r.text
    return list(r.json()["predictions"])


def _traffic(client: TestClient) -> tuple[dict[str, Any], dict[str, list[list[float]]]]:
    """Three requests: per-row c_review (review, negative, positive), four named actions,
    and plain named costs (class decisions). Returns each id's prediction and matrix."""
    X, _ = dataset(300)
    rng = np.random.default_rng(11)
    preds: dict[str, Any] = {}
    matrices: dict[str, list[list[float]]] = {}
    ids = [f"r{i}" for i in range(40)]
    row_costs = [
        {
            "c_fp": float(rng.uniform(1, 3)),
            "c_fn": float(rng.uniform(5, 20)),
            "c_review": float(rng.uniform(0.3, 1.5)),
        }
        for _ in ids
    ]
    for pid, p, c in zip(
        ids, _predict(client, ids, X[:40], row_costs=row_costs), row_costs, strict=True
    ):
        preds[pid] = p
        matrices[pid] = [[0.0, c["c_fp"], c["c_review"]], [c["c_fn"], 0.0, c["c_review"]]]
    ids = [f"a{i}" for i in range(40)]
    out = _predict(client, ids, X[40:80], actions=ACTIONS, cost_matrix=MATRIX)
    for pid, p in zip(ids, out, strict=True):
        preds[pid], matrices[pid] = p, MATRIX
    ids = [f"c{i}" for i in range(20)]
    out = _predict(client, ids, X[80:100], costs={"c_fp": 1.0, "c_fn": 5.0})
    for pid, p in zip(ids, out, strict=True):
        preds[pid], matrices[pid] = p, [[0.0, 1.0], [5.0, 0.0]]
    return preds, matrices


def _column(pid: str, p: dict[str, Any], classes: list[Any]) -> int:
    """The column of its matrix a response row took, from the response alone."""
    if p["action"] is None:
        return classes.index(p["decision"])
    names = ["negative", "positive", "review"] if pid.startswith("r") else ACTIONS
    return names.index(p["action"])


def test_actions_are_logged_and_priced_by_monitoring(
    client: TestClient, trained: dict[str, Any]
) -> None:
    preds, matrices = _traffic(client)
    classes = [0, 1]  # the labels of the dataset
    _flush(client)
    rows = _logged(client)
    assert set(rows) == set(preds)
    for pid, p in preds.items():
        r = rows[pid]
        assert r.costs == matrices[pid]  # the exact floats
        assert r.expected_cost == pytest.approx(p["expected_cost"], rel=1e-12)
        if p["action"] is None:  # a class decision: as before
            assert (r.action, r.actions) == (None, None)
            assert classes[r.decision] == p["decision"]
            continue
        assert r.actions[r.action] == p["action"]
        assert r.decision is None if p["decision"] is None else classes[r.decision] == p["decision"]
    assert any(rows[p].decision is None for p in rows)  # some rows went to review

    X, y = dataset(300)
    truth = {pid: int(y[int(pid[1:]) + {"r": 0, "a": 40, "c": 80}[pid[0]]]) for pid in preds}
    labelled = [pid for i, pid in enumerate(sorted(preds)) if i % 3 != 0]
    reported = {pid: 2.5 for pid in labelled[:4]}  # a cost reported with the outcome wins
    items = [
        {
            "id": pid,
            "label": classes[truth[pid]],
            **({"cost": reported[pid]} if pid in reported else {}),
        }
        for pid in labelled
    ]
    r = client.post("/v1/models/fraud/outcomes", json={"outcomes": items})
    assert r.status_code == 200 and r.json()["counts"]["recorded"] == len(labelled), r.text

    # independently, from the responses: C[truth][column taken], or the reported cost
    realised, expected = 0.0, 0.0
    per_action: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0, 0.0])
    for p in preds.values():
        if p["action"] is not None:
            per_action[p["action"]][0] += 1
    for pid in labelled:
        p = preds[pid]
        cost = reported.get(pid, matrices[pid][truth[pid]][_column(pid, p, classes)])
        realised += cost
        expected += p["expected_cost"]
        if p["action"] is not None:
            figures = per_action[p["action"]]
            figures[1] += 1
            figures[2] += cost
            figures[3] += p["expected_cost"]
    m = client.get("/v1/models/fraud/monitoring")
    assert m.status_code == 200, m.text
    total = m.json()["versions"][0]["total"]
    n = len(preds)
    assert total["predictions"] == n and total["labelled"] == len(labelled)
    assert total["realised_cost"] == pytest.approx(realised, rel=1e-12)
    assert total["expected_cost"] == pytest.approx(expected, rel=1e-12)
    decided = [classes.index(p["decision"]) for p in preds.values() if p["decision"] is not None]
    shares = np.bincount(decided, minlength=2) / n
    assert total["predicted_shares"] == pytest.approx(shares.tolist(), rel=1e-12)
    got = {a["action"]: a for a in total["actions"]}
    assert set(got) == set(per_action)
    for name, (taken, m_a, cost, exp) in per_action.items():
        a = got[name]
        assert (a["taken"], a["labelled"]) == (taken, m_a), name
        assert a["share"] == pytest.approx(taken / n, rel=1e-12)
        if m_a:
            assert a["realised_cost"] == pytest.approx(cost, rel=1e-12), name
            assert a["mean_realised_cost"] == pytest.approx(cost / m_a, rel=1e-12)
            assert a["expected_cost"] == pytest.approx(exp, rel=1e-12)
        else:
            assert a["realised_cost"] is None
    assert sum(a["taken"] for a in total["actions"]) == 80  # the 20 class decisions: none


def test_monitoring_without_actions_reports_none(
    client: TestClient, trained: dict[str, Any]
) -> None:
    X, _ = dataset(300)
    _predict(client, ["x1", "x2"], X[:2], costs={"c_fp": 1.0, "c_fn": 5.0})
    _flush(client)
    total = client.get("/v1/models/fraud/monitoring").json()["versions"][0]["total"]
    assert total["actions"] is None


def test_comparison_prices_decisions_among_actions(
    client: TestClient, trained: dict[str, Any]
) -> None:
    r = client.post("/v1/models/fraud/versions", json=train_body(seed=1, evaluation_fraction=0.2))
    assert r.status_code == 201, r.text
    X, y = dataset(300)
    classes = [0, 1]  # the labels of the dataset
    costs = {"costs": {"c_fp": 1.0, "c_fn": 5.0, "c_review": 0.8}}
    sides = {}
    for v, start in ((1, 0), (2, 100)):
        ids = [f"v{v}-{i}" for i in range(60)]
        r = client.post(
            "/v1/models/fraud/predict",
            json={"instances": X[start : start + 60].tolist(), "ids": ids, "version": v, **costs},
        )
        assert r.status_code == 200, r.text
        preds = r.json()["predictions"]
        matrix = [[0.0, 1.0, 0.8], [5.0, 0.0, 0.8]]
        names = ["negative", "positive", "review"]
        cost = [matrix[int(y[start + i])][names.index(p["action"])] for i, p in enumerate(preds)]
        sides[v] = sum(cost)
        _flush(client)
        items = [{"id": pid, "label": classes[int(y[start + i])]} for i, pid in enumerate(ids)]
        r = client.post("/v1/models/fraud/outcomes", json={"outcomes": items})
        assert r.status_code == 200, r.text
    r = client.get("/v1/models/fraud/compare", params={"a": "1", "b": "2", "mode": "unpaired"})
    assert r.status_code == 200, r.text
    versions = r.json()["versions"]
    assert versions["a"]["labelled"] == 60 and versions["b"]["labelled"] == 60
    assert versions["a"]["realised_cost"] == pytest.approx(sides[1], rel=1e-12)
    assert versions["b"]["realised_cost"] == pytest.approx(sides[2], rel=1e-12)
