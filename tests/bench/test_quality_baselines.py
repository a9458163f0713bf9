"""The quality benchmark's core (bench/quality/baselines.py) on hand-computed values.

No shared datasets needed: the decision rules, cost totals, ratios and geometric means
are checked against values worked out by hand, and one (task, seed) unit runs end to
end against the real app (in-process) on tiny synthetic data.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import make_classification

from app.api.main import create_app
from app.settings import Settings
from bench.quality import baselines as Q


def test_bayes_binary_threshold_is_cfp_over_sum() -> None:
    # c_fp = 1, c_fn = 10: threshold 1/11 = 0.0909...; a p exactly at the threshold is positive
    p = np.array([0.05, 0.09, 1 / 11, 0.5, 0.95])
    assert Q.bayes_binary(p, 1.0, 10.0).tolist() == [0, 0, 1, 1, 1]
    # c_fp = 10, c_fn = 1: threshold 10/11 = 0.909...
    assert Q.bayes_binary(p, 10.0, 1.0).tolist() == [0, 0, 0, 0, 1]
    # per-row c_fn: thresholds 1/2, 1/101, 1/2, 1/2, 1/3
    c_fn = np.array([1.0, 100.0, 1.0, 1.0, 2.0])
    assert Q.bayes_binary(p, 1.0, c_fn).tolist() == [0, 1, 0, 1, 1]


def test_bayes_matrix_minimises_expected_cost() -> None:
    P = np.array([[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]])
    assert Q.bayes_matrix(P, Q.zero_one_matrix(3)).tolist() == [0, 2]
    # misses of class 2 cost 10: row 0 expected costs 0.3+2.0=2.3, 0.5+2.0=2.5, 0.5+0.3=0.8
    C = Q.miss10_matrix(3, 2)
    assert C.tolist() == [[0, 1, 1], [1, 0, 1], [10, 10, 0]]
    assert Q.bayes_matrix(P, C).tolist() == [2, 2]
    # misses of class 0 cost 10: row 1 costs 0.2+0.7=0.9, 1.0+0.7=1.7, 1.0+0.2=1.2 -> 0
    assert Q.bayes_matrix(P, Q.miss10_matrix(3, 0)).tolist() == [0, 0]


def test_costs_brier_and_savings_by_hand() -> None:
    y, d = np.array([1, 0, 1, 0]), np.array([0, 1, 1, 0])
    assert Q.binary_cost(y, d, 3.0, 7.0) == 10.0  # one FP (3) + one FN (7)
    assert Q.binary_cost(y, d, 3.0, np.array([100.0, 5.0, 6.0, 7.0])) == 103.0
    C = np.array([[0.0, 2.0], [5.0, 0.0]])
    assert Q.matrix_cost(y, d, C) == 7.0
    assert Q.brier(np.array([0.9, 0.2, 0.6, 0.0]), y) == pytest.approx(
        (0.01 + 0.04 + 0.16 + 0.0) / 4
    )
    P = np.array([[0.2, 0.8], [1.0, 0.0]])
    assert Q.brier(P, np.array([1, 1])) == pytest.approx((0.08 + 2.0) / 2)
    # all-negative costs 10 + 30 = 40, all-positive 2 x 5 = 10; cost 4 -> savings 0.6
    amount = np.array([10.0, 1.0, 1.0, 30.0])
    assert Q.savings(4.0, np.array([1, 0, 0, 1]), amount, 5.0) == pytest.approx(0.6)


def test_ratios_and_geometric_mean() -> None:
    assert Q.geomean([2.0, 0.5, 1.0]) == pytest.approx(1.0)
    assert Q.geomean([1.1, 1.21]) == pytest.approx(1.1**1.5)
    assert math.isnan(Q.geomean([]))
    assert Q.cost_ratio(3.0, 2.0, 1.0) == 1.5
    assert Q.cost_ratio(0.0, 0.0, 1.0) == 1.0  # both perfect
    assert Q.cost_ratio(6.0, 0.0, 3.0) == 3.0  # two cheapest mistakes lost: (6 + 3) / 3
    assert Q.cost_ratio(0.0, 4.0, 2.0) == pytest.approx(1 / 3)  # (0 + 2) / (4 + 2)
    assert Q.unit_cost("1:10") == 1.0
    assert Q.unit_cost("m", np.array([[0.0, 4.0], [2.5, 0.0]])) == 2.5
    R = Q.random_matrix(4, "wine", 1)
    assert np.all(np.diag(R) == 0) and R[~np.eye(4, dtype=bool)].min() >= 1.0
    assert np.array_equal(R, Q.random_matrix(4, "wine", 1))  # same in every run
    assert not np.array_equal(R, Q.random_matrix(4, "wine", 2))


def _row(task: str, setting: str, seed: int, method: str, cost: float) -> dict[str, Any]:
    return {
        "kind": "binary",
        "task": task,
        "setting": setting,
        "seed": seed,
        "method": method,
        "cost": cost,
        "unit_cost": 1.0,
    }


def _setting(task: str, setting: str, costs: dict[str, float]) -> list[dict[str, Any]]:
    """One row per method of one (task, cost setting), seed 0."""
    return [_row(task, setting, 0, method, cost) for method, cost in costs.items()]


def test_summary_arithmetic() -> None:
    rows = []
    # task a: ratios 2.0 (1:1) and 0.5 (3:1) -> task geomean 1.0
    rows += _setting("a", "1:1", {"costwise": 20, "logreg": 10, "ada+cal": 15})
    rows += _setting("a", "3:1", {"costwise": 5, "logreg": 10, "ada+cal": 40})
    # task b: ratios 1.6 (1:1, best is ada+cal 10) and 4.0 (3:1, best cost 0, unit 1) -> 2.53
    rows += _setting("b", "1:1", {"costwise": 16, "logreg": 12, "ada+cal": 10})
    rows += _setting("b", "3:1", {"costwise": 3, "logreg": 0, "ada+cal": 2})
    s = Q.summarise(rows, "binary")
    assert s["n"] == 4 and s["n_tasks"] == 2
    assert s["geomean"] == pytest.approx((2.0 * 0.5 * 1.6 * 4.0) ** 0.25)
    assert s["per_task"]["a"] == pytest.approx(1.0)
    assert s["per_task"]["b"] == pytest.approx(math.sqrt(6.4))
    assert s["within_5pct"] == 1 and s["above_1_3"] == ["b"] and s["above_goal"] == ["b"]
    assert s["worst_task"][0] == "b" and s["worst_setting"][0] == "1:1"
    assert s["per_setting"]["3:1"] == pytest.approx(math.sqrt(0.5 * 4.0))
    assert s["zero_best"] == 1 and s["zero"] == 1
    # without the zero-cost triple (b, 3:1): ratios 2.0, 0.5, 1.6
    assert s["n_nonzero"] == 3
    assert s["geomean_nonzero"] == pytest.approx((2.0 * 0.5 * 1.6) ** (1 / 3))
    assert s["median"] == pytest.approx((1.6 + 2.0) / 2)  # of 0.5, 1.6, 2.0, 4.0
    assert s["worst_single"]["ratio"] == pytest.approx(4.0)
    assert s["best_baseline_counts"] == {"logreg": 3, "ada+cal": 1}
    # against logreg alone: 2.0, 0.5, 16/12, 4.0
    assert s["vs_each_baseline"]["logreg"] == pytest.approx((2.0 * 0.5 * 16 / 12 * 4.0) ** 0.25)
    assert not s["goal_geomean_met"] and not s["goal_worst_met"]


def test_summary_zero_costs_excluded_and_goals() -> None:
    """A set costwise decides perfectly lifts the plain geometric mean; the figure
    without zero-cost triples (costwise's or the best's) and the median do not move."""
    rows = []
    # task p: costwise perfect (0) where the best baseline makes 3 mistakes: (0+1)/(3+1)
    rows += [_row("p", "1:1", 0, "costwise", 0), _row("p", "1:1", 0, "logreg", 3)]
    # task q: ratios 1.2 and 0.9; r: 1.0 exactly; s: both perfect -> 1.0, excluded too
    rows += [_row("q", "1:1", 0, "costwise", 12), _row("q", "1:1", 0, "logreg", 10)]
    rows += [_row("q", "3:1", 0, "costwise", 9), _row("q", "3:1", 0, "logreg", 10)]
    rows += [_row("r", "1:1", 0, "costwise", 5), _row("r", "1:1", 0, "logreg", 5)]
    rows += [_row("s", "1:1", 0, "costwise", 0), _row("s", "1:1", 0, "logreg", 0)]
    s = Q.summarise(rows, "binary")
    assert s["n"] == 5 and s["zero"] == 2 and s["zero_best"] == 1 and s["n_nonzero"] == 3
    assert s["geomean"] == pytest.approx((0.25 * 1.2 * 0.9 * 1.0 * 1.0) ** 0.2)
    assert s["geomean"] < 0.8  # the perfect set carries the plain figure ...
    assert s["geomean_nonzero"] == pytest.approx((1.2 * 0.9 * 1.0) ** (1 / 3))  # ... not these
    assert s["median"] == 1.0  # of 0.25, 0.9, 1.0, 1.0, 1.2
    # the goal is judged on the figure without zero-cost triples: 1.026 > 1.00
    assert s["geomean_nonzero"] > Q.GOAL_GEOMEAN and not s["goal_geomean_met"]
    # task q at sqrt(1.08) = 1.039: above none of 1.05 / 1.25
    assert s["above_1_05"] == [] and s["goal_worst_met"]
    rows += [_row("t", "1:1", 0, "costwise", 13), _row("t", "1:1", 0, "logreg", 10)]
    s = Q.summarise(rows, "binary")
    assert s["above_1_05"] == ["t"] and s["above_goal"] == ["t"] and not s["goal_worst_met"]
    assert s["per_task_best"]["t"] == "logreg"


def test_summary_ties_count_for_every_tied_baseline() -> None:
    rows = _setting("a", "1:1", {"costwise": 4, "catboost": 2, "logreg": 2, "ada+cal": 3})
    rows += _setting("a", "3:1", {"costwise": 4, "catboost": 1, "logreg": 2, "ada+cal": 3})
    s = Q.summarise(rows, "binary")
    assert s["best_baseline_counts"] == {"catboost": 2, "logreg": 1}
    assert s["per_task_best"] == {"a": "catboost"}
    assert s["geomean"] == pytest.approx(math.sqrt(2.0 * 4.0))
    # logistic regression's rank among the baselines: second (catboost cheaper overall)
    assert Q._logreg_rank(Q.ratio_rows(rows, "binary")) == "2 of 3"


def test_rowcost_savings_gap_to_the_best_baseline() -> None:
    def r(method: str, seed: int, sv: float) -> dict[str, Any]:
        return {"kind": "rowcost", "method": method, "seed": seed, "savings": sv}

    rows = [r("costwise", 0, 0.60), r("costwise", 1, 0.62), r("lgbm+cal", 0, 0.63)]
    rows += [r("lgbm+cal", 1, 0.63), r("catboost", 0, 0.64), r("catboost", 1, 0.622)]
    s = Q.summarise_rowcost(rows)
    assert s["n"] == 2 and s["best"] == "catboost"
    assert s["savings"]["costwise"] == pytest.approx(0.61)
    assert s["gap"] == pytest.approx(0.631 - 0.61) and not s["goal_gap_met"]
    rows = [x for x in rows if x["method"] != "catboost"] + [r("costwise", 2, 0.66)]
    s = Q.summarise_rowcost(rows)  # costwise 0.6267 vs 0.63: within 0.005
    assert s["gap"] == pytest.approx(0.63 - (0.60 + 0.62 + 0.66) / 3)
    assert s["goal_gap_met"]
    assert Q.summarise_rowcost([r("logreg", 0, 0.5)]) == {"n": 0}


@pytest.mark.parametrize("name", ["catboost", "xgb+cal"])
def test_catboost_and_xgboost_baselines_on_labels_not_0_to_k(name: str) -> None:
    """Labels 1 and 3 of 0..3 (XGBoost refuses them as they are): the probabilities come
    back under the original codes, the absent classes 0 and 2 at 0; three classes use
    the multiclass objective (rows sum to 1 over three columns)."""
    X, y = make_classification(n_samples=150, n_features=4, random_state=0)
    P, fit_s = Q.fit_baseline(name, 0, X[:100], np.where(y[:100] == 1, 3, 1), X[100:])
    assert P.shape == (50, 4) and fit_s > 0
    assert np.all(P[:, [0, 2]] == 0) and np.allclose(P.sum(axis=1), 1.0)
    # better than chance on held-out rows: class 3 is y == 1
    assert np.mean((P[:, 3] >= 0.5) == (y[100:] == 1)) > 0.7
    X3, y3 = make_classification(
        n_samples=180, n_features=6, n_informative=4, n_classes=3, random_state=1
    )
    P3, _ = Q.fit_baseline(name, 1, X3[:120], y3[:120] + 2, X3[120:])
    assert P3.shape == (60, 5) and np.allclose(P3[:, 2:].sum(axis=1), 1.0)
    assert np.mean(np.argmax(P3, axis=1) == y3[120:] + 2) > 0.5


@pytest.fixture
def cw_client(tmp_path: Path) -> Iterator[Q.CostwiseClient]:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'r.db'}", auto_migrate=True)
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        yield Q.CostwiseClient(c)


def test_one_unit_end_to_end_through_the_api(cw_client: Q.CostwiseClient) -> None:
    X, y = make_classification(n_samples=240, n_features=5, random_state=3, weights=[0.7])
    unit = Q.Unit("binary", "tiny", "tiny", seed=1)
    res = Q.run_unit(unit, X, y, cw_client, {"n_estimators": 20}, baselines=("logreg",))
    rows = res["rows"]
    assert res["costwise"]["config"] == '{"n_estimators": 20}'
    assert {(r["method"], r["setting"]) for r in rows} == {
        (m, Q.ratio_label(a, b)) for m in ("costwise", "logreg") for a, b in Q.RATIOS
    }
    assert all(r["n_test"] == 72 and r["n_train"] == 168 for r in rows)
    # costwise's decisions (from the service) are the Bayes rule on its own probabilities
    idx = np.arange(len(y))
    _, ite, _, yte = Q.stratified_split(idx, y, Q.TEST_SIZE, unit.seed)
    resp = cw_client.predict(Q._model_name(unit.key), X[ite], costs={"c_fp": 1, "c_fn": 3})
    _, P = Q._decisions(resp)
    expect = Q.binary_cost(yte, Q.bayes_binary(P[:, 1], 1.0, 3.0), 1.0, 3.0)
    got = next(r for r in rows if r["method"] == "costwise" and r["setting"] == "1:3")
    assert got["cost"] == expect
    assert got["brier"] == pytest.approx(Q.brier(P[:, 1], yte))
    assert got["fit_s"] > 0


def test_multiclass_default_refusal_is_recorded_then_ovr(cw_client: Q.CostwiseClient) -> None:
    X, y = make_classification(
        n_samples=240, n_features=6, n_informative=4, n_classes=3, random_state=4
    )
    unit = Q.Unit("multiclass", "tiny3", "tiny3", seed=0)
    res = Q.run_unit(unit, X, y, cw_client, {"n_estimators": 10}, baselines=("logreg",))
    settings = {r["setting"] for r in res["rows"] if r["method"] == "costwise"}
    assert settings == set(Q.MATRICES)
    info = res["costwise"]
    if info["refusal"] is not None:  # today's default: 'adaboost' needs two classes
        assert "422" in info["refusal"] and "ovr_adaboost" in info["config"]
    for r in res["rows"]:
        assert r["cost"] >= 0 and 0 <= r["brier"] <= 2


def test_docs_section_replaced_in_place_other_text_kept(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n## Speed\n\nsomeone else's section\n")
    Q.update_docs(doc, "default", "first")
    Q.update_docs(doc, "tree", "other label")
    Q.update_docs(doc, "default", "second")
    text = doc.read_text()
    assert "someone else's section" in text and "other label" in text
    assert "second" in text and "first" not in text
    assert text.count("bench_quality:default:begin") == 1
