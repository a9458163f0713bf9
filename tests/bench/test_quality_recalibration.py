"""The recalibration benchmark's pieces on synthetic data (no shared datasets needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn import metrics as skm
from sklearn.datasets import make_classification

from bench.quality import recalibration as B


def test_shifted_rows_have_the_share_and_no_repeats() -> None:
    rng = np.random.default_rng(0)
    y = (rng.random(1000) < 0.4).astype(int)
    idx = np.arange(500, 1000)
    rows = B.shifted_rows(y, idx, 0.1, rng)
    assert len(set(rows.tolist())) == len(rows) and set(rows) <= set(idx)
    assert abs(y[rows].mean() - 0.1) < 0.005
    # as many rows as the scarcer side allows: all negatives here (one lost to rounding)
    assert (y[rows] == 0).sum() >= (y[idx] == 0).sum() - 1


def test_scores_match_scikit_learn_and_a_hand_cost() -> None:
    y = np.array([0, 0, 1, 1, 0])
    p = np.array([0.1, 0.3, 0.15, 0.9, 0.05])
    s = B.scores(y, p)
    assert s["brier"] == skm.brier_score_loss(y, p)
    assert abs(s["log_loss"] - skm.log_loss(y, p)) < 1e-12
    # threshold 1/6: decisions 0, 1, 0, 1, 0 -> one false positive (1), one miss (5)
    assert s["mean_cost"] == (1.0 + 5.0) / 5


def test_one_unit_runs_through_the_service(tmp_path: Path) -> None:
    X, y = make_classification(
        1600, 5, n_informative=3, weights=[0.6, 0.4], class_sep=2.0, random_state=0
    )
    unit = B.run_unit(X, y, seed=0, share=0.1, n_labelled=200, workdir=tmp_path)
    assert unit["n_labelled"] == 200 and abs(unit["deploy_share"] - 0.1) < 0.01
    assert unit["recal_platt_booster_identical"] and unit["recal_isotonic_booster_identical"]
    assert unit["from_outcomes_max_abs_diff"] == 0.0
    s = unit["scores"]
    assert s["recal_platt"]["ece"] < s["parent"]["ece"]
    assert abs(unit["em_prior"] - unit["deploy_share"]) < 0.03
    mon = unit["monitoring"]
    assert set(mon) == {"1", str(unit["recal_platt_version"])}
    assert all(m["labelled"] == unit["n_test"] for m in mon.values())
    assert mon["1"]["ece"] == pytest.approx(s["parent"]["ece"])
