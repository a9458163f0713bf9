"""Benchmark: fit time of JOUS-Boost (delta - 1 AdaBoost fits) against plain AdaBoost.

Data: ``make_classification(20_000, 20, random_state=0)``; every model uses 100 stumps
(``models.boosting.adaboost.AdaBoost`` defaults). One run each (fit on all 20,000 rows):

* ``adaboost``: ``AdaBoost(n_estimators=100)``;
* ``jous_over``: ``JOUSBoost(delta=10, nu=1, sampling="over")`` (the paper's
  section 5.1 settings, jittered over-sampling);
* ``jous_under``: ``JOUSBoost(delta=10, sampling="under")``.

Reported per model: fit time, rows fitted in total (sum over the artificial data sets),
the ratio of both to plain AdaBoost, and ``predict_proba`` time of one row (median of
many calls) and of the 20,000 rows through the served ``InferenceModel``.
Results go to ``bench/results/training/jous.json`` and ``.md``.

Usage::

    .venv/bin/python -m bench training.jous
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import make_classification

from bench.record import RESULTS, heading, run_header, versions, write_result
from bench.timing import median_seconds
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.variants.jous import JOUSBoost

ROOT = Path(__file__).resolve().parents[2]

M = 100
N, D = 20_000, 20


def run(X: np.ndarray, y: np.ndarray) -> dict[str, dict[str, Any]]:
    builders: dict[str, Callable[[], Any]] = {
        "adaboost": lambda: AdaBoost(n_estimators=M, random_state=0),
        "jous_over": lambda: JOUSBoost(
            delta=10, nu=1.0, sampling="over", n_estimators=M, random_state=0
        ),
        "jous_under": lambda: JOUSBoost(delta=10, sampling="under", n_estimators=M, random_state=0),
    }
    out: dict[str, dict[str, Any]] = {}
    for name, build in builders.items():
        model = build()
        t0 = time.perf_counter()
        model.fit(X, y)
        fit_s = time.perf_counter() - t0
        if isinstance(model, JOUSBoost):
            rows = int(model.sample_sizes_.sum())
            inference = model.to_inference()
            learners = int(model.n_estimators_)
        else:
            rows = len(y)
            inference = CalibratedBoosting(model, method="none").fit(X, y).to_inference()
            learners = int(model.n_estimators_)
        one = X[:1]
        inference.predict_proba(one)
        out[name] = {
            "fit_s": fit_s,
            "rows_fitted": rows,
            "weak_learners": learners,
            "predict_1row_us": median_seconds(partial(inference.predict_proba, one), 300, warmup=0)
            * 1e6,
            "predict_all_ms": median_seconds(partial(inference.predict_proba, X), 5, warmup=0)
            * 1e3,
        }
        print(name, json.dumps(out[name]), flush=True)
    base = out["adaboost"]
    for res in out.values():
        res["fit_over_adaboost"] = res["fit_s"] / base["fit_s"]
        res["rows_over_adaboost"] = res["rows_fitted"] / base["rows_fitted"]
    return out


def markdown(report: dict[str, Any]) -> str:
    lines = heading("JOUS-Boost fit-time benchmark", report) + [
        f"Data: make_classification({N}, {D}, random_state=0), "
        f"fit on all rows; {M} stumps per AdaBoost; JOUS with delta=10 (9 AdaBoost fits), "
        "nu=1; one run. Predict times through the served InferenceModel (one row: median "
        "of 300 calls; all rows: median of 5).",
        "",
        "| model | fit (s) | fit / AdaBoost | rows fitted | rows / AdaBoost | weak learners "
        "| predict_proba 1 row (us) | predict_proba 20k rows (ms) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in report["models"].items():
        lines.append(
            f"| {name} | {m['fit_s']:.3f} | {m['fit_over_adaboost']:.1f}x | {m['rows_fitted']} | "
            f"{m['rows_over_adaboost']:.1f}x | {m['weak_learners']} | "
            f"{m['predict_1row_us']:.1f} | {m['predict_all_ms']:.1f} |"
        )
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args()
    X, y = make_classification(N, D, random_state=0)
    report: dict[str, Any] = {
        **run_header(__file__),
        "versions": versions("numpy", "sklearn"),
        "data": {
            "generator": "make_classification",
            "n_samples": N,
            "n_features": D,
            "random_state": 0,
            "class_counts": np.bincount(y).tolist(),
        },
        "models": run(X, y),
    }
    write_result(__file__, report, markdown(report), results=args.out_dir)


if __name__ == "__main__":
    main()
