"""Quick-mode runs of bench.papers.landesa and bench.papers.masnadi (CI smoke tests).

They run on generated data and data shipped with scikit-learn only (no
``../shared/datasets``) and check that the outputs are well-formed, not the papers'
conclusions.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np

from bench.papers import landesa, masnadi
from tests.papers.quick_runs import read_csv, run_quick


def test_landesa_quick(tmp_path: Path) -> None:
    out = tmp_path / "landesa"
    doc = run_quick(landesa, out, "landesa")
    assert [r["dataset"] for r in doc["results"]] == ["cloud", "breast_cancer"]
    for res in doc["results"]:
        assert [r["gamma"] for r in res["rows"]] == ["1/2", "3/5", "2/3", "7/8"]
        assert res["positive"]
        for r in res["rows"]:
            g = float(Fraction(r["gamma"]))
            ours = r["ours"]
            assert all(0.0 <= ours[m] <= 100.0 for m in ("FN", "FP", "ClErr", "AsErr"))
            assert math.isclose(ours["AsErr"], g * ours["FN"] + (1 - g) * ours["FP"], abs_tol=1e-9)
    rows = read_csv(out / "landesa.csv")
    assert len(rows) == 8 and rows[0]["FN_paper"] == "31.6"  # the cloud's Table 2 values
    md = (out / "landesa.md").read_text()
    assert "Positive class:" in md and "command:" in md and "| gamma |" in md


def test_landesa_loo_and_rates() -> None:
    y = np.array([1, 1, 0, 0, 0])
    r = landesa.rates(y, np.array([1, 0, 0, 1, 0]), 0.5)
    assert math.isclose(r["FN"], 50.0) and math.isclose(r["FP"], 100 / 3)
    assert math.isclose(r["ClErr"], 40.0)
    p = landesa.Problem("x", "x", "x", np.zeros((5, 1)), y)
    protocol, folds = landesa.splits(p, loo_max=10, repeats=1, seed=0)
    assert protocol == "leave-one-out" and len(list(folds)) == 5


def test_masnadi_boundary_of_a_threshold_rule() -> None:
    for t in (-0.8047, -1.4979):
        b, excess = masnadi.boundary_and_excess(
            np.greater_equal(masnadi.GRID, t), c1=math.exp(-2 * t)
        )
        assert abs(b - t) <= 2e-3 and abs(excess) < 1e-4


def test_masnadi_quick(tmp_path: Path) -> None:
    out = tmp_path / "masnadi"
    doc = run_quick(masnadi, out, "masnadi")
    syn = doc["synthetic"]
    assert {r["method"] for r in syn} == {*masnadi.CS_METHODS, "adaboost_shift"}
    assert all(math.isfinite(r["boundary"]) and r["excess_cost"] >= -1e-9 for r in syn)
    rep = doc["uci"]["breast_cancer"][0]
    for name, s in rep["scores"].items():
        assert set(s["per_f"]) == {"2.0", "5.0", "10.0"}, name
        assert s["avg_min"] <= s["avg_selected"] + 1e-9 and s["avg_min"] >= 0.0
    assert read_csv(out / "masnadi_uci.csv") and read_csv(out / "masnadi_synthetic.csv")
    md = (out / "masnadi.md").read_text()
    assert "Bayes x*" in md and "min eps" in md and "Positive class" in md
    # the paper's own learners run beside the stumps, and the asymmetry test is reported
    assert {"cs_realboost_hist", "cs_logitboost_linear"} <= set(masnadi.CS_METHODS)
    trace = doc["asymmetry"]["breast_cancer"]
    assert {r["method"] for r in trace} == set(masnadi.CS_METHODS)
    assert all(
        0.0 <= r["pos_share_c10"] <= 1.0 and 0.0 <= r["train_error_c1"] <= 1.0 for r in trace
    )
    assert "(c) Does the cost asymmetry survive" in md


def test_landesa_rounds_sweep_quick(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    assert landesa.main(["--quick", "--rounds-sweep", "2,5", "--out", str(out)]) == 0
    rows = read_csv(out / "landesa_rounds.csv")
    assert len(rows) == 2 * 4 * 2  # datasets x gammas x T values
    assert {r["rounds"] for r in rows} == {"2", "5"}
    assert "T = 5" in (out / "landesa_rounds.md").read_text()
