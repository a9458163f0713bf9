"""Champion and challenger through the real app (SQLite and PostgreSQL): shadow scoring,
the comparison of realised cost, the promotion gate and the audit trail of alias moves.

The must-hold test: a challenger trained on 20x more rows (known better) and one trained
on the champion's own rows, parameters and seed (known equal) are shadowed on the same
labelled traffic; the paired interval excludes zero for the first and not for the
second, and the realised costs equal an independent numpy computation from the rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.registry.orm import LoggedPrediction, ShadowPrediction
from tests.app.api.conftest import FEATURES, dataset

# one population, split: training rows first, traffic after them
X_ALL, Y_ALL = dataset(8000, seed=11)
TRAFFIC = slice(4000, 6000)


def _train(client: TestClient, n: int, seed: int = 0, rounds: int = 30) -> int:
    body = {
        "features": X_ALL[:n].tolist(),
        "labels": Y_ALL[:n].tolist(),
        "feature_names": FEATURES,
        "algorithm": "adaboost",
        "n_estimators": rounds,
        "calibration": "platt",
        "random_state": seed,
    }
    r = client.post("/v1/models/fraud/versions", json=body)
    assert r.status_code == 201, r.text
    return int(r.json()["version"])


def _services(client: TestClient) -> Any:
    return client.app.state.services  # type: ignore[attr-defined]


def _flush(client: TestClient) -> None:
    assert _services(client).prediction_log.flush(10.0)
    assert _services(client).shadow.flush(30.0)
    assert _services(client).prediction_log.flush(10.0)


def _traffic(client: TestClient, rng: np.random.Generator, prefix: str) -> tuple[list[str], Any]:
    """Predict the traffic rows (per-row costs) in requests of 500; report every outcome."""
    X, y = X_ALL[TRAFFIC], Y_ALL[TRAFFIC]
    ids = [f"{prefix}{i}" for i in range(len(X))]
    costs = [{"c_fp": 1.0, "c_fn": float(c)} for c in rng.uniform(1, 12, len(X))]
    for start in range(0, len(X), 500):
        part = slice(start, start + 500)
        r = client.post(
            "/v1/models/fraud/predict",
            json={"instances": X[part].tolist(), "row_costs": costs[part], "ids": ids[part]},
        )
        assert r.status_code == 200, r.text
    _flush(client)
    outcomes = [{"id": i, "label": int(t)} for i, t in zip(ids, y, strict=True)]
    for start in range(0, len(ids), 1000):
        r = client.post(
            "/v1/models/fraud/outcomes", json={"outcomes": outcomes[start : start + 1000]}
        )
        assert r.status_code == 200 and r.json()["counts"]["recorded"] == 1000, r.text
    return ids, costs


def _pairs(
    client: TestClient, served: int, shadow: int
) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """Per labelled pair, from the tables: when it was logged, and the realised costs of the
    served and of the shadow decision."""
    with _services(client).sessions() as s:
        rows = s.execute(
            select(
                LoggedPrediction.created_at,
                LoggedPrediction.label,
                LoggedPrediction.costs,
                LoggedPrediction.decision,
                ShadowPrediction.decision,
            )
            .join(
                ShadowPrediction,
                (ShadowPrediction.model_id == LoggedPrediction.model_id)
                & (ShadowPrediction.prediction_id == LoggedPrediction.prediction_id),
            )
            .where(
                LoggedPrediction.version == served,
                ShadowPrediction.version == shadow,
                LoggedPrediction.label.is_not(None),
            )
        ).all()
    y = np.array([r[1] for r in rows])
    C = np.array([r[2] for r in rows], dtype=float)
    da = np.array([r[3] for r in rows])
    db = np.array([r[4] for r in rows])
    idx = np.arange(len(y))
    return [r[0] for r in rows], C[idx, y, da], C[idx, y, db]


def _independent(client: TestClient, served: int, shadow: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-row realised costs of the served and the shadow decisions, from the tables."""
    _, a, b = _pairs(client, served, shadow)
    return a, b


def test_a_better_challenger_is_found_and_an_equal_one_is_not(client: TestClient) -> None:
    champion = _train(client, 200, seed=0, rounds=10)
    better = _train(client, 4000, seed=0, rounds=60)
    # known equal: the champion's rows, parameters and seed (another seed is another model:
    # on 200 rows and 10 rounds it decided measurably differently, 2,000 pairs showed it)
    equal = _train(client, 200, seed=0, rounds=10)
    assert (
        client.put("/v1/models/fraud/aliases/production", json={"version": champion}).status_code
        == 200
    )
    rng = np.random.default_rng(5)

    r = client.put("/v1/models/fraud/shadow", json={"version": better})
    assert r.status_code == 200 and r.json()["resolved_version"] == better, r.text
    _traffic(client, rng, "a")
    r = client.put("/v1/models/fraud/shadow", json={"version": equal})
    assert r.status_code == 200, r.text
    _traffic(client, rng, "b")
    counts = client.get("/v1/models/fraud/shadow").json()["counts"]
    assert counts["written"] == 4000 and counts["dropped"] == 0 and counts["failed"] == 0

    r = client.get("/v1/models/fraud/compare", params={"a": "production", "b": str(better)})
    assert r.status_code == 200, r.text
    found = r.json()
    diff = found["cost_difference"]
    assert found["mode"] == "paired" and found["labelled_pairs"] == 2000
    assert diff["high"] < 0 and diff["excludes_zero"], diff
    assert found["verdict"] == "b decides more cheaply"
    assert "independent" in found["assumptions"] and "bootstrap" in found["assumptions"]
    cost_a, cost_b = _independent(client, champion, better)
    assert len(cost_a) == 2000
    side_a, side_b = found["versions"]["a"], found["versions"]["b"]
    assert side_a["realised_cost"] == pytest.approx(cost_a.sum(), rel=1e-12)
    assert side_b["realised_cost"] == pytest.approx(cost_b.sum(), rel=1e-12)
    d = cost_b - cost_a
    assert diff["mean_difference"] == pytest.approx(d.mean(), rel=1e-9)
    assert diff["sd"] == pytest.approx(d.std(ddof=1), rel=1e-9)
    needed = diff["needed_rows"]
    assert needed == int(np.ceil((1.959963984540054 * d.std(ddof=1) / d.mean()) ** 2))
    dis = found["disagreements"]
    differ = d != 0
    assert dis["n_differ"] >= differ.sum()
    assert dis["cost_b"] - dis["cost_a"] == pytest.approx(d.sum(), rel=1e-9, abs=1e-9)
    for side in (side_a, side_b):
        assert 0 <= side["ece"] <= 1 and side["brier"] > 0 and side["log_loss"] > 0
        assert side["cost_ratio"] == pytest.approx(side["realised_cost"] / side["expected_cost"])

    r = client.get("/v1/models/fraud/compare", params={"a": champion, "b": equal})
    assert r.status_code == 200, r.text
    same = r.json()
    diff = same["cost_difference"]
    assert same["labelled_pairs"] == 2000
    assert diff["low"] <= 0 <= diff["high"] and not diff["excludes_zero"], diff
    assert same["disagreements"]["n_differ"] == 0 and diff["needed_rows"] is None
    assert same["verdict"] == "no difference shown at this confidence"
    cost_a, cost_b = _independent(client, champion, equal)
    assert same["versions"]["b"]["realised_cost"] == pytest.approx(cost_b.sum(), rel=1e-12)

    # unpaired (as if the traffic had been split): Welch's interval over each version's
    # own served rows; the shadows served nothing, so each side needs served rows
    r = client.get(
        "/v1/models/fraud/compare", params={"a": champion, "b": better, "mode": "unpaired"}
    )
    assert r.status_code == 422 and r.json()["field"] == "b", r.text

    # the gate: refused without enough evidence, then promoted with it, both on record
    r = client.post(
        "/v1/models/fraud/aliases/production/promote",
        json={"candidate": equal, "rule": {"min_labelled_pairs": 500}},
    )
    assert r.status_code == 409 and r.json()["code"] == "PROMOTION_REFUSED", r.text
    failed = {c["check"] for c in r.json()["evidence"]["checks"] if not c["passed"]}
    assert failed == {"max_cost_difference"}
    r = client.post(
        "/v1/models/fraud/aliases/production/promote",
        json={"candidate": better, "rule": {"min_labelled_pairs": 5000}},
    )
    assert r.status_code == 409, r.text
    assert "min_labelled_pairs: observed 2000, required 5000" in r.json()["detail"]
    r = client.post(
        "/v1/models/fraud/aliases/production/promote",
        json={
            "candidate": better,
            "rule": {"min_labelled_pairs": 1000, "max_ece_increase": 0.05},
            "note": "cheaper on 2,000 labelled pairs",
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["from_version"] == champion and r.json()["to_version"] == better
    assert client.get("/v1/models/fraud").json()["aliases"]["production"] == better
    history = client.get("/v1/models/fraud/aliases/production/history").json()["moves"]
    assert [m["reason"] for m in history] == ["promoted", "manual"]
    assert history[0]["from_version"] == champion and history[0]["to_version"] == better
    assert history[0]["evidence"]["comparison"]["cost_difference"]["high"] < 0
    assert history[0]["note"] == "cheaper on 2,000 labelled pairs"
    assert history[1]["from_version"] is None and history[1]["to_version"] == champion


def test_alias_history_records_every_move(client: TestClient) -> None:
    v1, v2 = _train(client, 200), _train(client, 300)
    assert client.put("/v1/models/fraud/aliases/staging", json={"version": v1}).status_code == 200
    r = client.put("/v1/models/fraud/aliases/staging", json={"version": v2, "note": "retrained"})
    assert r.status_code == 200
    assert client.delete("/v1/models/fraud/aliases/staging").status_code == 204
    r = client.get("/v1/models/fraud/aliases/staging/history")
    assert r.status_code == 200, r.text
    moves = r.json()["moves"]
    assert [(m["from_version"], m["to_version"], m["reason"]) for m in moves] == [
        (v2, None, "removed"),
        (v1, v2, "manual"),
        (None, v1, "manual"),
    ]
    assert moves[1]["note"] == "retrained"
    assert all(
        m["actor"] == "anonymous (authentication off)" and m["actor_role"] == "admin" for m in moves
    )
    assert moves[0]["at"] >= moves[1]["at"] >= moves[2]["at"]
    r = client.get("/v1/models/fraud/aliases/never/history")
    assert r.status_code == 404 and r.json()["field"] == "alias", r.text


def test_bad_comparisons_are_clear_4xx(client: TestClient) -> None:
    v1, v2 = _train(client, 200), _train(client, 300)
    client.put("/v1/models/fraud/aliases/production", json={"version": v1})
    body = {"instances": X_ALL[:20].tolist(), "ids": [f"x{i}" for i in range(20)]}
    assert client.post("/v1/models/fraud/predict", json=body).status_code == 200
    _flush(client)
    r = client.post(
        "/v1/models/other/versions",
        json={"features": X_ALL[:200].tolist(), "labels": Y_ALL[:200].tolist(), "n_estimators": 5},
    )
    assert r.status_code == 201, r.text
    cases = [
        ({"a": v1, "b": v1}, 422, "b"),
        ({"a": "production", "b": v1}, 422, "b"),
        ({"a": v1, "b": "other:1"}, 422, "b"),
        ({"a": v1, "b": 9}, 404, "b"),
        ({"a": "nope", "b": v2}, 404, "a"),
        ({"a": "x y", "b": v2}, 422, "a"),
        ({"a": v1, "b": v2}, 422, "a"),  # served, but no label: no rows to compare
        ({"a": v1, "b": v2, "since": "2000-01-01T00:00:00Z"}, 422, "since"),
        (
            {"a": v1, "b": v2, "since": "2030-01-01T00:00:00Z", "until": "2020-01-01T00:00:00Z"},
            422,
            "since",
        ),
        ({"a": v1, "b": v2, "mode": "both"}, 422, "mode"),
        ({"a": v1, "b": v2, "confidence": 1.5}, 422, "confidence"),
        ({"a": v1}, 422, "b"),
    ]
    for params, status, field in cases:
        r = client.get("/v1/models/fraud/compare", params=params)
        assert r.status_code == status, (params, r.text)
        assert r.json()["field"] == field, (params, r.json())
    r = client.get("/v1/models/nope/compare", params={"a": 1, "b": 2})
    assert r.status_code == 404
    # promotion: the alias must exist, the candidate differ, the rule be sane
    r = client.post("/v1/models/fraud/aliases/nope/promote", json={"candidate": v2})
    assert r.status_code == 404 and r.json()["field"] == "alias", r.text
    r = client.post("/v1/models/fraud/aliases/production/promote", json={"candidate": v1})
    assert r.status_code == 422 and r.json()["field"] == "candidate", r.text
    r = client.post(
        "/v1/models/fraud/aliases/production/promote",
        json={"candidate": v2, "rule": {"min_labelled_pairs": 0}},
    )
    assert r.status_code == 422, r.text
    # no labelled rows: refused with the figures (not a 422), nothing moves
    r = client.post("/v1/models/fraud/aliases/production/promote", json={"candidate": v2})
    assert r.status_code == 409 and r.json()["code"] == "PROMOTION_REFUSED", r.text
    assert r.json()["evidence"]["checks"][0]["observed"] == 0
    assert client.get("/v1/models/fraud").json()["aliases"]["production"] == v1
    # shadow: one of version or alias, and they must exist
    for body, status in (
        ({}, 422),
        ({"version": 1, "alias": "production"}, 422),
        ({"version": 9}, 404),
        ({"alias": "nope"}, 404),
    ):
        r = client.put("/v1/models/fraud/shadow", json=body)
        assert r.status_code == status, (body, r.text)


def test_shadow_follows_an_alias_and_skips_its_own_rows(client: TestClient) -> None:
    v1, v2 = _train(client, 200), _train(client, 300)
    client.put("/v1/models/fraud/aliases/challenger", json={"version": v2})
    r = client.put("/v1/models/fraud/shadow", json={"alias": "challenger"})
    assert r.status_code == 200 and r.json()["resolved_version"] == v2, r.text
    body = {"instances": X_ALL[:30].tolist(), "costs": {"c_fp": 1, "c_fn": 4}}
    served = client.post("/v1/models/fraud/predict", params={}, json={**body, "version": v1}).json()
    own = client.post("/v1/models/fraud/predict", json={**body, "version": v2})
    assert own.status_code == 200, own.text
    _flush(client)
    counts = client.get("/v1/models/fraud/shadow").json()["counts"]
    assert counts["written"] == 30 and counts["skipped"] == 30
    with _services(client).sessions() as s:
        shadow = s.scalars(select(ShadowPrediction).order_by(ShadowPrediction.id)).all()
    assert [r.prediction_id for r in shadow] == [p["id"] for p in served["predictions"]]
    assert {r.version for r in shadow} == {v2}
    # the shadow decided as version v2 decides the same rows under the same costs
    direct = client.post("/v1/models/fraud/predict", json={**body, "version": v2}).json()
    assert [r.decision for r in shadow] == [p["decision"] for p in direct["predictions"]]
    np.testing.assert_allclose(
        [r.probabilities for r in shadow], [p["probabilities"] for p in direct["predictions"]]
    )
    assert client.delete("/v1/models/fraud/shadow").status_code == 204
    assert client.get("/v1/models/fraud/shadow").json()["alias"] is None


def test_a_full_shadow_queue_drops_and_counts(client: TestClient) -> None:
    v1, v2 = _train(client, 200), _train(client, 300)
    scorer = _services(client).shadow
    client.put("/v1/models/fraud/shadow", json={"version": v2})
    scorer.max_rows = 10  # smaller than one request: every request is dropped, counted
    body = {"instances": X_ALL[:30].tolist(), "version": v1}
    r = client.post("/v1/models/fraud/predict", json=body)
    assert r.status_code == 200, r.text
    _flush(client)
    counts = client.get("/v1/models/fraud/shadow").json()["counts"]
    assert counts["dropped"] == 30 and counts["written"] == 0
    metrics = client.get("/metrics").text
    assert 'costwise_shadow_rows_total{outcome="dropped"} 30.0' in metrics


def test_requests_gathered_in_one_pass_keep_their_own_costs(client: TestClient) -> None:
    """Requests queued together are scored in one pass (one-row streams would otherwise
    cost the served path a pass each): every row still gets its own request's costs,
    whichever form they came in, and the same decision version v2 makes directly."""
    v1, v2 = _train(client, 200), _train(client, 300)
    client.put("/v1/models/fraud/shadow", json={"version": v2})
    X = X_ALL[:12].tolist()
    bodies = [
        {"instances": X[0:3], "costs": {"c_fp": 1, "c_fn": 9}},
        {"instances": X[3:6], "cost_matrix": [[0, 7], [1, 0]]},
        {"instances": X[6:9], "row_costs": [{"c_fp": 1, "c_fn": c} for c in (2, 30, 0.5)]},
        {"instances": X[9:12]},  # 0-1 costs
        {"instances": X[0:3], "costs": {"c_fp": 1, "c_fn": 9}, "priors": [0.5, 0.5]},
    ]
    scorer = _services(client).shadow
    scorer.close()  # no thread: every request is queued before the first pass starts
    served = [
        client.post("/v1/models/fraud/predict", json={**b, "version": v1}).json() for b in bodies
    ]
    assert scorer.stats.queued == 15
    scorer.start()
    _flush(client)
    assert client.get("/v1/models/fraud/shadow").json()["counts"]["written"] == 15
    with _services(client).sessions() as s:
        shadow = {r.prediction_id: r for r in s.scalars(select(ShadowPrediction)).all()}
    for body, answer in zip(bodies, served, strict=True):
        direct = client.post("/v1/models/fraud/predict", json={**body, "version": v2}).json()
        mine = [shadow[p["id"]] for p in answer["predictions"]]
        assert [r.decision for r in mine] == [p["decision"] for p in direct["predictions"]]
        np.testing.assert_allclose(
            [r.probabilities for r in mine], [p["probabilities"] for p in direct["predictions"]]
        )
        np.testing.assert_allclose(
            [r.expected_cost for r in mine], [p["expected_cost"] for p in direct["predictions"]]
        )


def test_shadow_true_answers_the_shadows_decisions_and_records_them_once(
    client: TestClient,
) -> None:
    v1, v2 = _train(client, 200), _train(client, 300)
    body = {"instances": X_ALL[:20].tolist(), "row_costs": [{"c_fp": 1, "c_fn": c} for c in
            range(1, 21)], "version": v1, "shadow": True}  # fmt: skip
    # no shadow named: a 422 naming the field, and nothing logged
    r = client.post("/v1/models/fraud/predict", json=body)
    assert r.status_code == 422 and r.json()["field"] == "shadow", r.text
    _flush(client)
    with _services(client).sessions() as s:
        assert s.scalar(select(func.count()).select_from(LoggedPrediction)) == 0
    client.put("/v1/models/fraud/shadow", json={"version": v2})
    r = client.post("/v1/models/fraud/predict", json=body)
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["version"] == v1 and answer["shadow"]["version"] == v2
    direct = client.post("/v1/models/fraud/predict", json={**body, "version": v2, "shadow": False})
    mine = answer["shadow"]["predictions"]
    theirs = direct.json()["predictions"]
    assert [p["decision"] for p in mine] == [p["decision"] for p in theirs]
    np.testing.assert_allclose(
        [p["probabilities"] for p in mine], [p["probabilities"] for p in theirs]
    )
    np.testing.assert_allclose(
        [p["expected_cost"] for p in mine], [p["expected_cost"] for p in theirs]
    )
    assert "shadow" not in direct.json()  # asked for nothing: the answer has no shadow key
    _flush(client)
    counts = client.get("/v1/models/fraud/shadow").json()["counts"]
    assert counts["written"] == 20 and counts["duplicate"] == 0  # recorded once, not queued again
    with _services(client).sessions() as s:
        recorded = {r.prediction_id: r.decision for r in s.scalars(select(ShadowPrediction))}
    ids = [p["id"] for p in answer["predictions"]]
    assert [recorded[i] for i in ids] == [[0, 1].index(p["decision"]) for p in mine]
    # the shadow version itself asked to shadow: refused, named
    r = client.post("/v1/models/fraud/predict", json={**body, "version": v2})
    assert r.status_code == 422 and r.json()["field"] == "shadow", r.text
