"""Automatic capacity against the former default, on real data sets (a quick check).

For each data set of ``../shared/datasets`` named on the command line: a stratified
70/30 split per seed; the former default (two classes: ``CalibratedBoosting(AdaBoost(100
stumps))``, Platt, 5-fold cross-fitting; more classes: ``CalibratedMulticlass(SAMME(100
stumps))`` likewise, since the former default refused them) and the new default
:class:`models.auto.AutoCalibrated` are fitted on the 70% and scored on the 30%: log
loss, Brier score, fit seconds, and what ``auto`` chose. This is not the quality
benchmark (``bench/quality/baselines.py``: baselines, costs); it checks that the new
default is better calibrated than the one it replaces. Nothing is tuned here.

Run::

    .venv/bin/python -m bench quality.auto_capacity pima german wdbc ionosphere sonar \\
        housevotes iris wine vehicle --seeds 0

Writes ``bench/results/quality/auto_capacity.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.model_selection import train_test_split

from bench.datasets import DATA_DIR
from bench.record import run_header, write_result
from models.auto import AutoCalibrated
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.samme import SAMME

ROOT = Path(__file__).resolve().parents[2]

DATA = DATA_DIR


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    raw = np.genfromtxt(DATA / f"{name}.csv", delimiter=",", skip_header=1)
    return raw[:, :-1], raw[:, -1].astype(int)


def losses(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    n = len(y)
    pt = np.clip(p[np.arange(n), y], 1e-15, 1.0)
    onehot = np.eye(p.shape[1])[y]
    brier = ((p - onehot) ** 2).sum(axis=1)
    if p.shape[1] == 2:
        brier = brier / 2
    return {"log_loss": round(float(-np.log(pt).mean()), 5), "brier": round(float(brier.mean()), 5)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = ap.parse_args()
    out: dict[str, Any] = {
        **run_header(__file__),
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_before": os.getloadavg(),
        "results": [],
    }
    for name in args.datasets:
        X, y = load(name)
        k = len(np.unique(y))
        for seed in args.seeds:
            Xtr, Xte, ytr, yte = train_test_split(
                X, y, test_size=0.3, stratify=y, random_state=seed
            )
            former: Any = (
                CalibratedBoosting(AdaBoost(100), split="kfold", random_state=seed)
                if k == 2
                else CalibratedMulticlass(SAMME(100), calibration_split="kfold", random_state=seed)
            )
            row: dict[str, Any] = {"dataset": name, "classes": k, "rows": len(y), "seed": seed}
            for label, model in (("former", former), ("auto", AutoCalibrated(random_state=seed))):
                t0 = time.perf_counter()
                model.fit(Xtr, ytr)
                seconds = time.perf_counter() - t0
                row[label] = {**losses(yte, model.predict_proba(Xte)), "seconds": round(seconds, 1)}
            cap = row_cap = model.capacity_
            row["auto"]["chosen"] = (
                f"{cap['weak_learner']} d{cap['max_depth']} x{cap['n_estimators']} ({cap['stopped']})"
            )
            row["auto"]["curves"] = [
                (c["weak_learner"], c["max_depth"], c["best_rounds"], c["best_loss"])
                for c in row_cap["curves"]
            ]
            row["log_loss_ratio"] = round(row["auto"]["log_loss"] / row["former"]["log_loss"], 3)
            out["results"].append(row)
            print(json.dumps(row), flush=True)
    out["load_average_after"] = os.getloadavg()
    ratios = [r["log_loss_ratio"] for r in out["results"]]
    out["geometric_mean_log_loss_ratio"] = round(float(np.exp(np.mean(np.log(ratios)))), 3)
    lines = [
        f"# Automatic capacity vs the former default ({out['date']})",
        "",
        f"{out['machine']}, {out['cpus']} CPUs, load average {out['load_average_before']} "
        "(shared machine; seconds are noisy). Stratified 70/30 split; test-set scores. "
        "Former default: 100 stumps, Platt, 5-fold cross-fitting (SAMME for > 2 classes).",
        "",
        "| data | K | seed | log loss former | log loss auto | ratio | Brier former | "
        "Brier auto | s former | s auto | auto chose |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in out["results"]:
        f, a = r["former"], r["auto"]
        lines.append(
            f"| {r['dataset']} | {r['classes']} | {r['seed']} | {f['log_loss']:.4f} | "
            f"{a['log_loss']:.4f} | {r['log_loss_ratio']:.3f} | {f['brier']:.4f} | "
            f"{a['brier']:.4f} | {f['seconds']:.1f} | {a['seconds']:.1f} | {a['chosen']} |"
        )
    lines += [
        "",
        f"Geometric mean of log loss auto / former: {out['geometric_mean_log_loss_ratio']}.",
        "",
        f"Command: `{out['command']}`",
    ]
    write_result(__file__, out, "\n".join(lines))


if __name__ == "__main__":
    main()
