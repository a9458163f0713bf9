"""Quick-mode runs of bench.papers.yang and bench.papers.mease (CI smoke tests).

Generated data and data shipped with scikit-learn only (no ``../shared/datasets``); the
checks are about well-formed outputs and the generative models / loss formulas, not the
papers' conclusions.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np

from bench.papers import mease, yang
from tests.papers.quick_runs import read_csv, run_quick


def test_yang_generators_follow_section_5_1() -> None:
    rng = np.random.default_rng(0)
    X, y = yang.waveform(3000, rng)
    assert X.shape == (3000, 21) and set(np.unique(y)) == {0, 1, 2}
    # class 1 = u v1 + (1 - u) v2, E[u] = 1/2: at j = 11, (6 + v1(7)) / 2 = 4; the
    # same at j = 15 (v2 peaks there); 0 at j = 1
    m = X[y == 0].mean(axis=0)
    assert abs(m[10] - 4.0) < 0.3 and abs(m[14] - 4.0) < 0.3 and abs(m[0]) < 0.2
    X2, y2 = yang.wang_sim2(4000, rng)
    means = np.array([X2[y2 == k, :2].mean(axis=0) for k in range(4)])
    np.testing.assert_allclose(means, [[3, 0], [0, 3], [-3, -3], [0, 0]], atol=0.2)
    assert abs(X2[:, 2:].mean()) < 0.05


def test_yang_test_cost() -> None:
    C = yang.SIM_COSTS["sim1"]
    # truth 0 predicted 1 costs 2, truth 1 predicted 0 costs 1, one correct: (2 + 1 + 0) / 3
    assert math.isclose(yang.test_cost(np.array([0, 1, 2]), np.array([1, 0, 2]), C), 1.0)


def test_yang_quick(tmp_path: Path) -> None:
    out = tmp_path / "yang"
    doc = run_quick(yang, out, "yang")
    res = doc["results"]
    assert {"Simulation 1", "Simulation 1c", "Simulation 2", "Simulation 2c", "wine"} <= set(res)
    for exp, methods in res.items():
        wanted = yang.DATA_METHODS if exp == "wine" else yang.SIM_METHODS
        assert set(methods) == set(wanted)
        for v in methods.values():
            assert 0.0 <= v["mean"] <= 5.0 and 0.0 <= v["error_rate"] <= 1.0 and v["n"] == 2
    rows = read_csv(out / "yang.csv")
    assert len(rows) == 2 * (4 * 3) + 2 * 5
    md = (out / "yang.md").read_text()
    assert (
        "command:" in md
        and "| Simulation 2c | ours |" in md
        and "| | paper |" in md.replace("|  |", "| |")
    )


def test_mease_losses_and_ten_norm() -> None:
    half = np.full(4, 0.5)
    got = mease.losses(half, half, np.array([0, 1, 0, 1]))
    assert math.isclose(got["squared"], 0.0)
    assert math.isclose(got["log"], math.log(2.0))
    assert math.isclose(got["exponential"], 1.0)
    # clipping to [0.05, 0.95] for log / exp loss only
    clipped = mease.losses(np.array([1.0]), np.array([0.0]), np.array([1]))
    assert math.isclose(clipped["squared"], 1.0)
    assert math.isclose(clipped["log"], -math.log(0.05))
    assert math.isclose(clipped["exponential"], math.sqrt(0.95 / 0.05))
    X, y, p = mease.ten_norm(2000, 10.0, np.random.default_rng(1))
    assert X.shape == (2000, 10) and set(np.unique(y)) == {0, 1}
    bayes = np.mean((p > 0.5) != y)
    assert bayes < 0.08  # the paper: Bayes error 3% at gamma = 10


def test_mease_quick(tmp_path: Path) -> None:
    out = tmp_path / "mease"
    doc = run_quick(mease, out, "mease")
    keys = [r["key"] for r in doc["results"]]
    assert keys == ["tenorm_n120_g10", "tenorm_n120_g0.5", "breast_cancer"]
    for r in doc["results"]:
        assert set(r["final"]) == {
            "jous_over",
            "jous_under",
            "p_adaboost",
            "logitboost",
            "logitboost_tree",
        }
        for v in r["final"].values():
            assert 0.0 <= v["misclassification"] <= 1.0 and 0.0 <= v["squared"] <= 1.0
            assert 0.0 < v["log"] <= -math.log(0.05) + 1e-12
            assert 0.0 < v["exponential"] <= math.sqrt(19.0) + 1e-12
        for c in r["curves"].values():
            assert c["rounds"][-1] == doc["settings"]["n_rounds"]
            assert all(len(c[k]) == len(c["rounds"]) for k in mease.LOSSES)
        png = out / f"{r['key']}.png"
        if importlib.util.find_spec("matplotlib") is not None:  # the "papers" extra
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = read_csv(out / "mease.csv")
    assert len(rows) == 3 * 5 and {"squared", "log", "exponential", "paper_log"} <= set(rows[0])
    md = (out / "mease.md").read_text()
    assert "command:" in md and "## log loss" in md


def test_mease_resume_reuses_finished_problems(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "mease"
    args = ["--quick", "--no-gbm", "--datasets", "tenorm", "--out", str(out)]
    assert mease.main(args) == 0
    first = read_csv(out / "mease.csv")
    ckpts = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert ckpts == ["tenorm_n120_g0.5-seed0.json", "tenorm_n120_g10-seed0.json"]
    # a changed setting is not reused: the problem runs again
    calls: list[str] = []
    real = mease.run_problem

    def counting(prob, *a, **k):  # type: ignore[no-untyped-def]
        calls.append(prob.key)
        return real(prob, *a, **k)

    monkeypatch.setattr(mease, "run_problem", counting)
    # one checkpoint cut short by a kill: redone; the other reused
    (out / "checkpoints" / "tenorm_n120_g10-seed0.json").write_text('{"unit": {"key"')
    assert mease.main([*args, "--resume"]) == 0
    assert calls == ["tenorm_n120_g10"]

    def strip_seconds(rows: list[dict[str, str]]) -> list[dict[str, str]]:
        return [{k: v for k, v in r.items() if k != "fit_seconds"} for r in rows]

    assert strip_seconds(read_csv(out / "mease.csv")) == strip_seconds(first)
    calls.clear()
    assert mease.main([*args, "--resume", "--rounds", "10"]) == 0
    assert calls == ["tenorm_n120_g10", "tenorm_n120_g0.5"]
    calls.clear()
    assert mease.main([*args, "--resume", "--rounds", "10"]) == 0
    assert calls == []


def test_sklearn_gini_tree_learner_fits_scikit_learn_trees_within_the_block() -> None:
    from sklearn.tree import DecisionTreeClassifier

    import models.boosting.loop as binary_base
    import models.multiclass._base as multi_base
    from bench.papers import common
    from models.boosting.adaboost import AdaBoost
    from models.multiclass.samme import SAMME

    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0.2).astype(int)
    make, multi_make = binary_base.BaseBoosting._make_trainer, multi_base.multiclass_trainer
    with common.tree_learner("sklearn-gini"):
        ada = AdaBoost(n_estimators=3, weak_learner="tree", max_depth=2, random_state=0)
        ada.fit(X, y)
        y3 = np.digitize(X[:, 0], [-0.5, 0.5])
        samme = SAMME(n_estimators=4, weak_learner="tree", max_depth=2, random_state=0)
        samme.fit(X, y3)
    # the first round (uniform weights) is scikit-learn's Gini tree, node for node
    ref = DecisionTreeClassifier(max_depth=2).fit(X.astype(np.float32), np.where(y == 1, 1, -1))
    a = ada.ensemble_.arrays
    first = slice(int(a["tree_offsets"][0]), int(a["tree_offsets"][1]))
    leaf = ref.tree_.children_left == -1
    np.testing.assert_array_equal(a["node_feature"][first], np.where(leaf, -1, ref.tree_.feature))
    np.testing.assert_allclose(
        a["node_threshold"][first][~leaf], ref.tree_.threshold[~leaf], rtol=0, atol=0
    )
    assert np.mean(samme.predict(X) == y3) > 0.8
    # the block restores costwise's trainers
    assert binary_base.BaseBoosting._make_trainer is make
    assert multi_base.multiclass_trainer is multi_make
    with common.tree_learner("costwise"):
        assert binary_base.BaseBoosting._make_trainer is make


def test_yang_quick_names_the_tree_learner(tmp_path: Path) -> None:
    out = tmp_path / "yang"
    assert yang.main(["--quick", "--tree", "sklearn-gini", "--out", str(out)]) == 0
    doc = json.loads((out / "yang.json").read_text())
    assert doc["settings"]["tree"] == "sklearn-gini"
    assert "scikit-learn's Gini DecisionTreeClassifier" in (out / "yang.md").read_text()
    assert yang.main(["--quick", "--out", str(out)]) == 0
    assert "costwise's histogram tree" in (out / "yang.md").read_text()
