"""How the default model should serve its cross-fitting boosters: measured at model level.

The automatic capacity search (models/auto/) fits k fold boosters and fits the
calibration map on their out-of-fold scores. This script fits the default two-class
model (``AutoCalibratedBoosting(random_state=0)``, as the service does) on the 70/30
splits of bench/quality/baselines.py and scores four ways of serving it at the five cost
ratios of that benchmark:

``served``     what the model serves (default: the map on the mean of the k fold scores)
``meanproba``  the mean of the map applied to each fold's score
``perfold``    one map per fold, fitted on that fold's out-of-fold rows only, averaged
               (scikit-learn ``CalibratedClassifierCV(ensemble=True)``)
``refit``      one booster with the chosen capacity refitted on all rows, the same map
               (the default before the fold ensemble)

The baselines are not refitted: their costs are read from a committed quality.baselines run
(``--baseline-csv``, same splits and seeds), and each ratio is cost / best baseline cost
as there (``cost_ratio``). Model level (no HTTP), so a run takes minutes, not an hour.

    python -m bench quality.fold_ensemble --data-dir ../shared/datasets --seeds 3 \\
        [--params '{"score_kind": "logistic"}'] [--label x] [--served-only]

Writes ``bench/results/quality/fold_ensemble[-<label>].{json,md}``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.papers.common import stratified_split
from bench.quality import baselines
from bench.quality.baselines import (
    RATIOS,
    TEST_SIZE,
    add_binary_plan_options,
    bayes_binary,
    binary_cost,
    binary_units,
    brier,
    cost_ratio,
    geomean,
    ratio_label,
    unit_cost,
    unit_data,
)
from bench.record import result_path, run_header, write_result
from models.auto import AutoCalibratedBoosting
from models.boosting.adaboost import AdaBoost
from models.boosting.crossfit import fold_indices
from models.calibration.calibrators import make_calibrator
from models.inference.fold_ensemble import FoldEnsembleScorer

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BASELINES = result_path(baselines.__file__, "oof", ".csv")


def best_baseline_costs(path: Path) -> dict[tuple[str, int, str], float]:
    best: dict[tuple[str, int, str], float] = {}
    with path.open() as fh:
        for r in csv.DictReader(fh):
            if r["kind"] != "binary" or r["method"] == "costwise":
                continue
            key = (r["task"], int(r["seed"]), r["setting"])
            best[key] = min(best.get(key, np.inf), float(r["cost"]))
    return best


def variants(
    model: AutoCalibratedBoosting, Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, all_: bool
) -> dict[str, np.ndarray]:
    """P(y = 1) of the test rows for each way of serving the fitted model."""
    out = {"served": model.predict_proba(Xte)[:, 1]}
    scorer = model.to_inference().scorer
    if not all_ or not isinstance(scorer, FoldEnsembleScorer):
        return out
    raw = np.column_stack([e.score(Xte, scorer.score_kind) for e in scorer.ensembles])
    k = raw.shape[1]
    cal = model.calibrator_
    out["meanproba"] = np.mean([cal.predict(raw[:, i]) for i in range(k)], axis=0)
    folds = fold_indices(ytr, k, model.random_state, np.array([0, 1]))
    oof_raw = model.oof_.raw[:, 1]  # the out-of-fold fold scores the map was fitted on
    per = [
        make_calibrator(model.method).fit(oof_raw[te], ytr[te]).predict(raw[:, i])
        for i, (_, te) in enumerate(folds)
    ]
    out["perfold"] = np.mean(per, axis=0)
    cap = model.capacity_
    booster = AdaBoost(
        n_estimators=cap["n_estimators"],
        weak_learner=cap["weak_learner"],
        max_depth=cap["max_depth"],
        score_kind=model.score_kind,
        random_state=model.random_state,
    ).fit(Xtr, ytr)
    out["refit"] = cal.predict(booster.score_samples(Xte))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_binary_plan_options(ap, "JSON: AutoCalibratedBoosting parameters")
    ap.add_argument("--served-only", action="store_true", help="score only what is served")
    ap.add_argument("--baseline-csv", type=Path, default=DEFAULT_BASELINES)
    ap.add_argument("--label", default="")
    args = ap.parse_args(argv)
    params = json.loads(args.params)
    best = best_baseline_costs(args.baseline_csv)
    units = binary_units(args)
    started = time.perf_counter()
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()  # at the start: the code this run imports
    load_before = [round(v, 2) for v in os.getloadavg()]
    rows: list[dict[str, Any]] = []
    for u in units:
        X, y, _ = unit_data(u, args.data_dir)
        itr, ite, ytr, yte = stratified_split(np.arange(len(y)), y, TEST_SIZE, u.seed)
        t0 = time.perf_counter()
        model = AutoCalibratedBoosting(**{"random_state": 0, **params}).fit(X[itr], ytr)
        fit_s = time.perf_counter() - t0
        for name, p in variants(model, X[itr], ytr, X[ite], not args.served_only).items():
            ratios = []
            for a, b in RATIOS:
                s = ratio_label(a, b)
                cost = binary_cost(yte, bayes_binary(p, a, b), a, b)
                ratios.append(cost_ratio(cost, best[(u.task, u.seed, s)], unit_cost(s)))
            rows.append({"task": u.task, "seed": u.seed, "variant": name,
                         "ratio": geomean(ratios), "brier": brier(p, yte),
                         "fit_s": round(fit_s, 3)})  # fmt: skip
        print(u.key, f"{fit_s:.1f}s", " ".join(
            f"{r['variant']}={r['ratio']:.3f}" for r in rows if r["task"] == u.task
            and r["seed"] == u.seed), flush=True)  # fmt: skip
    names = list(dict.fromkeys(r["variant"] for r in rows))
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    summary = {}
    for n in names:
        per_task = {
            t: geomean([r["ratio"] for r in rows if r["variant"] == n and r["task"] == t])
            for t in tasks
        }
        summary[n] = {
            "geomean": round(geomean([r["ratio"] for r in rows if r["variant"] == n]), 4),
            "tasks_within_5pct": sum(v <= 1.05 for v in per_task.values()),
            "tasks_above_1_3": sorted(t for t, v in per_task.items() if v > 1.3),
            "mean_brier": round(float(np.mean([r["brier"] for r in rows if r["variant"] == n])), 5),
            "per_task": {t: round(v, 4) for t, v in per_task.items()},
        }
    res = {
        **run_header(__file__, argv),
        "git_commit": commit,
        "params": params,
        "baselines": str(args.baseline_csv.relative_to(ROOT)),
        "seconds": round(time.perf_counter() - started, 1),
        "load_average_before_after": [load_before, [round(v, 2) for v in os.getloadavg()]],
        "summary": summary,
        "rows": rows,
    }
    lines = [
        f"# Serving the fold boosters of the default model ({res['date']})",
        "",
        f"- command: `{res['command']}`; git {res['git_commit'][:10]}; {res['seconds']} s; machine "
        f"{res['machine']}; load average before/after {res['load_average_before_after']} "
        "(shared, loaded)",
        f"- model: AutoCalibratedBoosting({json.dumps({'random_state': 0, **params})}); "
        f"{len(tasks)} two-class tasks x {args.seeds} seeds (70/30 splits of quality.baselines); "
        f"best baseline costs from `{res['baselines']}`",
        "- ratio: geometric mean over (task, cost ratio, seed) of cost / best baseline cost",
        "",
        "| variant | geo-mean ratio | tasks <= 1.05 | tasks > 1.3 | mean Brier |",
        "| --- | ---: | ---: | --- | ---: |",
    ]
    for n, s in summary.items():
        lines.append(f"| {n} | {s['geomean']:.3f} | {s['tasks_within_5pct']} of {len(tasks)} | "
                     f"{', '.join(s['tasks_above_1_3']) or '-'} | {s['mean_brier']:.5f} |")  # fmt: skip
    lines += ["", "| task | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for t in tasks:
        lines.append(
            f"| {t} | " + " | ".join(f"{summary[n]['per_task'][t]:.3f}" for n in names) + " |"
        )
    write_result(__file__, res, "\n".join(lines), label=args.label, argv=argv, indent=1)
    print("\n".join(lines[: 12 + len(names)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
