"""CI smoke test of bench.papers.kfold_shift (k-fold calibration's score shift, issue 16)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.papers import common as H
from bench.papers import kfold_shift
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.evaluation.metrics import brier_score
from tests.papers.quick_runs import run_quick


def test_quick_run_writes_the_tables(tmp_path: Path) -> None:
    out = tmp_path / "kfold"
    doc = run_quick(kfold_shift, out, "kfold_shift")
    assert len(doc["rows"]) == 2 * 2  # 2 tasks x 1 seed x 2 scores
    for kind in ("vote", "logistic"):
        s = doc["summary"][kind]
        assert s["shift_refit_vs_folds"]["median"] > 0
        assert set(s["brier"]) >= set(kfold_shift.RULES)
    md = (out / "kfold_shift.md").read_text()
    assert "Ideal Platt slopes" in md and "ensemble (sklearn)" in md


@pytest.mark.parametrize("kind", ["vote", "logistic"])
def test_refit_rule_is_what_calibrated_boosting_serves(kind: str) -> None:
    """The "refit" rule of the script is the service's k-fold calibration, bit for bit."""
    task = H.binary_tasks(H.load_dataset("breast_cancer", "builtin"))[0]
    seed = 7
    res = kfold_shift.run_task(task.X, task.y01, seed, kind, rounds=10, n_folds=5)
    Xtr, Xte, ytr, yte = H.stratified_split(task.X, task.y01, 0.25, seed)
    model = CalibratedBoosting(
        AdaBoost(n_estimators=10, score_kind=kind, random_state=seed),
        split="kfold",
        n_folds=5,
        random_state=seed,
        n_jobs=1,
    ).fit(Xtr, ytr)
    assert res["brier_refit"] == pytest.approx(brier_score(yte, model.predict_proba(Xte)[:, 1]))
    assert res["A_oof"] == pytest.approx(model.calibrator_.A_)
    assert np.isfinite([res["A_refit"], res["A_fold"]]).all()
