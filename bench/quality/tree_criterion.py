"""Does the Gini criterion help the histogram tree? Calibrated AdaBoost, error vs Gini splits.

Usage (from the repository root)::

    .venv/bin/python -m bench quality.tree_criterion

For each two-class data set of ../shared/datasets listed below (at most 8,000 rows,
sampled), 3-fold stratified cross-validation of
``CalibratedAdaMEC(AdaBoost(100, weak_learner="tree", max_depth=d,
stump_criterion=c))`` for d in (3, 6) and c in ("error", "gini"): mean test log loss and
error at the 1/2 threshold; plus a synthetic three-class XOR task for SAMME (accuracy),
where no single split lowers the error. Writes bench/results/quality/tree_criterion.md.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold

from bench.datasets import DATA_DIR
from bench.record import run_header, write_result
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedAdaMEC
from models.multiclass.samme import SAMME

ROOT = Path(__file__).resolve().parents[2]

DATA = DATA_DIR
SETS = ("magic", "spambase", "chess", "german", "pima", "ionosphere")
CONFIGS = [(c, d) for c in ("error", "gini") for d in (3, 6)]


def main() -> None:
    header = run_header(__file__)
    lines = [
        f"# Histogram tree: error vs Gini splits ({header['date']})",
        "",
        "Command: `.venv/bin/python -m bench quality.tree_criterion`. Calibrated AdaBoost "
        "(Platt, the CalibratedAdaMEC default), 100 rounds, 3-fold stratified CV; mean test "
        "log loss / error. Lower is better.",
        "",
        "| data | " + " | ".join(f"{c} d{d}" for c, d in CONFIGS) + " |",
        "|---|" + "---|" * len(CONFIGS),
    ]
    for name in SETS:
        path = DATA / f"{name}.csv"
        if not path.exists():
            continue
        df = pd.read_csv(path)
        X, y = df.iloc[:, :-1].to_numpy(float), df.iloc[:, -1].to_numpy()
        if len(y) > 8000:
            idx = np.random.default_rng(0).choice(len(y), 8000, replace=False)
            X, y = X[idx], y[idx]
        cells = []
        for crit, depth in CONFIGS:
            ll, er = [], []
            for tr, te in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
                booster = AdaBoost(100, weak_learner="tree", max_depth=depth, stump_criterion=crit)
                m = CalibratedAdaMEC(booster, random_state=0).fit(X[tr], y[tr])
                p = m.predict_proba(X[te])[:, 1]
                ll.append(log_loss(y[te], p))
                er.append(np.mean((p > 0.5) != y[te]))
            cells.append(f"{np.mean(ll):.4f} / {np.mean(er):.4f}")
        lines.append(f"| {name} ({len(y)} x {X.shape[1]}) | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(3000, 4))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int) + (X[:, 2] > 0.5)
    Xt = rng.uniform(-1, 1, size=(3000, 4))
    yt = ((Xt[:, 0] > 0) ^ (Xt[:, 1] > 0)).astype(int) + (Xt[:, 2] > 0.5)
    acc = []
    for crit, depth in CONFIGS:
        m = SAMME(40, weak_learner="tree", max_depth=depth, stump_criterion=crit).fit(X, y)
        acc.append(f"{np.mean(m.predict(Xt) == yt):.3f}")
    lines += [
        "| synthetic 3-class XOR, SAMME 40 rounds, test accuracy (higher is better) | "
        + " | ".join(acc)
        + " |",
        "",
        f"Machine: {header['machine']}, shared; load average {os.getloadavg()[0]:.1f} at the end.",
        "",
    ]
    print(lines[-3])
    write_result(__file__, {**header, "table": lines[6:-3]}, "\n".join(lines))


if __name__ == "__main__":
    main()
