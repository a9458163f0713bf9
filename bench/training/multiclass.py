"""Benchmark of the multiclass algorithms against scikit-learn's SAMME (one run).

Data: ``make_classification(20_000, 20, n_informative=10, n_classes=4, random_state=0)``,
stratified 75/25 split (15,000 training rows). Every model: 100 rounds of stumps.

* ``samme`` -- :class:`models.multiclass.samme.SAMME` (exact error-criterion stumps), raw
  vote fractions (API ``samme`` with calibration ``none``);
* ``samme_gini`` -- the same with Gini stumps (scikit-learn's split criterion);
* ``samme_calibrated`` -- API ``samme``: SAMME + per-class Platt, hold-out 1/3;
* ``ovr_adaboost`` -- API ``ovr_adaboost``: 4 calibrated AdaBoost models (Platt, hold-out);
* ``angle_adaboost`` / ``angle_logitboost`` -- Algorithms 1-2 of Yang et al., 0-1 costs;
* ``*_linear`` -- the angle-based models trained with the linear cost matrix
  ``C[i][j] = |i - j|`` (the paper's credit-rating costs, section 5.2);
* ``sklearn`` -- ``AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=100)``.

Reported: fit time (s), test accuracy (0-1 decisions), mean test cost under the linear
cost matrix (calibrated models decide at those costs; angle-based ``*_linear`` models
were trained with them; the others decide by argmax), time to decide 5,000 rows through
the served :class:`~models.inference.model.InferenceModel` (scikit-learn: ``predict``; median of
5) and one row (median of 200 calls). Results go to ``bench/results/training/multiclass``.

Usage::

    .venv/bin/python -m bench training.multiclass
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import AdaBoostClassifier
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from bench.record import heading, run_header, table, versions, write_result
from bench.timing import median_seconds
from models.multiclass.angle import AngleAdaBoost, AngleLogitBoost
from models.multiclass.calibrated import CalibratedMulticlass
from models.multiclass.ovr import OneVsRestAdaBoost
from models.multiclass.samme import SAMME

ROOT = Path(__file__).resolve().parents[2]

M = 100
K = 4
LINEAR = np.abs(np.arange(K)[:, None] - np.arange(K)[None, :]).astype(float)


def models() -> dict[str, Any]:
    return {
        "samme": lambda: CalibratedMulticlass(SAMME(M), calibration="none"),
        "samme_gini": lambda: CalibratedMulticlass(
            SAMME(M, stump_criterion="gini"), calibration="none"
        ),
        "samme_calibrated": lambda: CalibratedMulticlass(SAMME(M), random_state=0),
        "ovr_adaboost": lambda: OneVsRestAdaBoost(M, random_state=0),
        "angle_adaboost": lambda: AngleAdaBoost(M),
        "angle_logitboost": lambda: AngleLogitBoost(M),
        "angle_adaboost_linear": lambda: AngleAdaBoost(M, cost_matrix=LINEAR),
        "angle_logitboost_linear": lambda: AngleLogitBoost(M, cost_matrix=LINEAR),
        "sklearn": lambda: AdaBoostClassifier(
            DecisionTreeClassifier(max_depth=1), n_estimators=M, random_state=0
        ),
    }


def run() -> dict[str, Any]:
    X, y = make_classification(20_000, 20, n_informative=10, n_classes=K, random_state=0)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    results: dict[str, Any] = {}
    for name, make in models().items():
        est = make()
        t = time.perf_counter()
        est.fit(Xtr, ytr)
        fit_s = time.perf_counter() - t
        if name == "sklearn":
            decide = est.predict  # argmax of the SAMME votes
            pred = decide(Xte)
            linear_pred = pred
            size = len(est.estimators_)
        else:
            inf = est.to_inference()
            costs = None if inf.rule == "threshold" else inf.training_costs
            linear = LINEAR if inf.rule == "threshold" else inf.training_costs

            def decide(rows: np.ndarray, inf: Any = inf, costs: Any = costs) -> Any:
                return inf.decide(rows, costs).labels_index

            pred = inf.decide(Xte, None if inf.rule == "threshold" else costs).labels_index
            if inf.rule == "fixed" and not np.array_equal(inf.training_costs, LINEAR):
                linear_pred = pred  # trained with 0-1 costs: its own decisions
            else:
                linear_pred = inf.decide(Xte, linear).labels_index
            size = int(est.n_estimators_)
        results[name] = {
            "fit_s": fit_s,
            "n_learners": size,
            "test_accuracy": float((pred == yte).mean()),
            "test_mean_linear_cost": float(LINEAR[yte, linear_pred].mean()),
            "decide_5000_rows_ms": 1e3 * median_seconds(lambda d=decide: d(Xte), 5),
            "decide_1_row_us": 1e6 * median_seconds(lambda d=decide: d(Xte[:1]), 200),
        }
        print(name, json.dumps(results[name]), flush=True)
    return {
        **run_header(__file__),
        "versions": versions("numpy", "sklearn"),
        "data": "make_classification(20000, 20, n_informative=10, n_classes=4, random_state=0), "
        "stratified 75/25 split",
        "rounds": M,
        "results": results,
    }


def markdown(report: dict[str, Any]) -> str:
    lines = heading("Multiclass benchmark", report) + [
        f"Data: {report['data']}. {report['rounds']} rounds of stumps each, one run.",
        "Linear cost = mean of |truth - decision| on the test rows (calibrated models decide "
        "at that cost matrix; `*_linear` angle-based models were trained with it; the others "
        "use their own argmax decisions). Decide times go through the served InferenceModel "
        "(scikit-learn: `predict`).",
        "",
    ]
    columns = ["model", "fit (s)", "learners", "test accuracy", "test linear cost",
               "decide 5,000 rows (ms)", "decide 1 row (us)"]  # fmt: skip
    lines += table(columns, (
        (name, f"{r['fit_s']:.3f}", r["n_learners"], f"{r['test_accuracy']:.4f}",
         f"{r['test_mean_linear_cost']:.4f}", f"{r['decide_5000_rows_ms']:.2f}",
         f"{r['decide_1_row_us']:.1f}")
        for name, r in report["results"].items()
    ))  # fmt: skip
    res = report["results"]
    lines += [
        "",
        f"Fit time ratio scikit-learn / our SAMME: "
        f"{res['sklearn']['fit_s'] / res['samme']['fit_s']:.1f}x; "
        f"angle_adaboost / samme: {res['angle_adaboost']['fit_s'] / res['samme']['fit_s']:.2f}x; "
        f"angle_logitboost / angle_adaboost: "
        f"{res['angle_logitboost']['fit_s'] / res['angle_adaboost']['fit_s']:.2f}x.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    report = run()
    write_result(__file__, report, markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
