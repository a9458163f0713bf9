"""Benchmark: one round of the univariate-logistic weak learner, grouped vs row by row.

``models.weak.logistic.LogisticTrainer`` sums over (feature, distinct value) groups. The
baseline, kept here, is the row-by-row computation it replaced (Newton on the dense
``n_features x n_samples`` matrix, at most 8 steps). For every task the same 30 random
weightings are given to both; reported: seconds per round (median of 30), the ratio,
and whether every round chose the same stump (feature, threshold to 1e-9, outputs).

Data: ``../shared/datasets`` when present (balanced by undersampling, as in the
Nikolaou protocol), else a synthetic stand-in. Results go to
``bench/results/training/logistic.json`` and ``.md``.

Usage::

    .venv/bin/python -m bench training.logistic
"""

from __future__ import annotations

import platform
import statistics
import time
from pathlib import Path

import numpy as np
from scipy.special import expit

from bench.datasets import DATA_DIR
from bench.record import run_header, write_result
from models.weak.logistic import LogisticTrainer

ROOT = Path(__file__).resolve().parents[2]

DATASETS = ("spambase", "chess", "mushroom", "splice", "satimage", "magic", "german", "sonar")


def rows_round(Xt: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[int, float, np.ndarray]:
    """The row-by-row baseline: dense Newton over all features, then the stump errors."""
    nan = np.isnan(Xt)
    present = (~nan).astype(float)
    count = present.sum(1)
    mu = np.where(nan, 0.0, Xt).sum(1) / np.maximum(count, 1.0)
    cen = np.where(nan, 0.0, Xt - mu[:, None])
    sd = np.sqrt((cen * cen).sum(1) / np.maximum(count, 1.0))
    sd = np.where(sd > 0, sd, 1.0)
    Z = np.where(nan, 0.0, (Xt - mu[:, None]) / sd[:, None])
    y01 = (y > 0).astype(float)
    wm = present * (w / w.sum())
    b0, b1 = np.zeros(len(Z)), np.zeros(len(Z))
    for _ in range(8):
        p = expit(b0[:, None] + b1[:, None] * Z)
        r, s = wm * (p - y01), wm * p * (1 - p)
        g0, g1 = r.sum(1), (r * Z).sum(1) + 1e-8 * b1
        h00, h01, h11 = s.sum(1) + 1e-8, (s * Z).sum(1), (s * Z * Z).sum(1) + 1e-8
        det = h00 * h11 - h01 * h01
        d0, d1 = (h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det
        b0, b1 = b0 - d0, b1 - d1
        if max(np.abs(d0).max(), np.abs(d1).max()) < 1e-6:
            break
    with np.errstate(divide="ignore", invalid="ignore"):
        thr = mu - b0 * sd / b1
    thr = np.where(np.isfinite(thr), thr, 0.0)
    vl = np.where(b1 > 0, -1.0, 1.0)
    h = np.where(Xt <= thr[:, None], vl[:, None], -vl[:, None])
    err = ((h != y) & ~nan) @ w
    j = int(np.argmin(err))
    return j, float(thr[j]), h[j]


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    path = DATA_DIR / f"{name}.csv"
    rng = np.random.default_rng(0)
    if not path.is_file():
        X = rng.normal(size=(2000, 20)).round(1)
        return X, np.where(X[:, 0] + rng.normal(size=2000) > 0, 1.0, -1.0)
    data = np.genfromtxt(path, delimiter=",", skip_header=1)
    X, lab = data[:, :-1], data[:, -1]
    y = lab == (1 if len(np.unique(lab)) == 2 else 0)
    pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
    k = min(len(pos), len(neg))
    idx = np.concatenate([rng.choice(pos, k, replace=False), rng.choice(neg, k, replace=False)])
    return X[idx], np.where(y[idx], 1.0, -1.0)


def main() -> int:
    rows, results = [], []
    for name in DATASETS:
        X, y = load(name)
        rng = np.random.default_rng(1)
        weights = [rng.random(len(y)) ** 3 for _ in range(30)]
        trainer = LogisticTrainer(X, y)
        Xt = np.ascontiguousarray(X.T)
        tg, tr, same = [], [], 0
        for w in weights:
            t0 = time.perf_counter()
            stump, h = trainer.fit_round(w)
            tg.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            j, thr, hr = rows_round(Xt, y, w)
            tr.append(time.perf_counter() - t0)
            same += stump.feature == j and abs(stump.threshold - thr) <= 1e-9 * (1 + abs(thr))
        g, r = statistics.median(tg), statistics.median(tr)
        res = {"task": name, "rows": len(y), "features": X.shape[1], "grouped_ms": g * 1e3,
               "rows_ms": r * 1e3, "speedup": r / g, "same_stump": f"{same}/30"}  # fmt: skip
        results.append(res)
        rows.append(f"| {name} | {len(y)} x {X.shape[1]} | {r * 1e3:.2f} | {g * 1e3:.2f} | "
                    f"{r / g:.1f}x | {same}/30 |")  # fmt: skip
        print(rows[-1], flush=True)
    info = {**run_header(__file__), "python": platform.python_version(), "numpy": np.__version__,
            "results": results}  # fmt: skip
    md = [f"# Logistic weak learner, one round: grouped vs row by row ({info['date']}, {info['machine']})",
          "", "`.venv/bin/python -m bench training.logistic`; median of 30 rounds, same weights.", "",
          "| task (balanced) | rows x features | row by row (ms) | grouped (ms) | speed-up | same stump |",
          "| --- | ---: | ---: | ---: | ---: | ---: |", *rows, ""]  # fmt: skip
    write_result(__file__, info, "\n".join(md), indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
