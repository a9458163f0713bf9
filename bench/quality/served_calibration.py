"""Are the default model's probabilities calibrated as served? Measured on held-out rows.

The default (``auto``) cross-fits k fold boosters, fits its calibration map on the
out-of-fold scores of single fold boosters and serves the map applied to the MEAN of
the k fold boosters' scores. The mean is less noisy than one booster's score, so the
map fitted on single scores is too flat for it. This script trains the default in
process (``AutoCalibrated(random_state=0)``, the parameters the service's ``auto``
passes) on stratified 70/30 splits of every two-class set and one-vs-rest task of the
shared data sets (the tasks of ``bench/quality/baselines.py``), and measures on the
held-out 30 %, for what is served and for each candidate way of serving, in one run:

* calibration slope and intercept: the logistic regression ``y ~ a + b logit(p)`` of
  the held-out labels on the logit of the probability (``p`` clipped to
  ``[1e-6, 1 - 1e-6]``); calibrated probabilities have ``b = 1, a = 0``, ``b > 1``
  means under-confident (too close to the base rate);
* ECE with 10 equal-mass bins, log loss (``p`` clipped as above) and the Brier score.

Per task, the held-out rows of all seeds are pooled (each row scored by the model of
its seed's split) before the slope is fitted; tasks whose pooled held-out rows are
separated by the probabilities (no finite slope: mushroom, some one-vs-rest tasks) are
reported as ``n/a`` and left out of the slope summary.

Candidates (each fitted on the same out-of-fold scores the default's map is fitted on):

``<map>_mean``       the map on the mean of the k fold scores (what was served, ``platt_mean``)
``<map>_meanproba``  the map applied to each fold booster's score, probabilities averaged
``<map>_spread``     the map on the mean score spread about the out-of-fold mean score by
                     the noise the mean removes (:func:`models.calibration.spread`)

for the maps ``platt``, ``isotonic``, ``beta`` and ``venn_abers``; ``choice_spread``: the
map of least out-of-fold log loss among platt, isotonic and beta (what
``calibration="auto"`` chooses), spread; ``choice_va_spread``: the same with venn_abers
among the choices. ``served`` is ``model.predict_proba`` of the code as it is. Two
candidates of the spread's factor and one diagnostic:

``platt_pull_spread``    the spread's covariance with the boosters that saw a row, first
                         cleared of their pull toward its label (:func:`pull_spread`)
``platt_oracle_spread``  NOT servable: the factor measured on the test rows' fold scores
                         (no labels) -- what the spread estimates, at its best
``platt_single0``        diagnostic: the map on fold booster 0's score alone

and, besides slope, intercept, ECE, log loss and Brier, the decision cost: per task the
geometric mean over its seeds and the benchmark's five cost ratios of the cost over the
best baseline's cost on the same split (``--baseline-csv``, a ``quality.baselines`` run).

    python -m bench quality.served_calibration --seeds 3 [--datasets pima german] [--summary-only]

Each unit's held-out labels, served probabilities and raw scores (every fold booster's
score of every training and test row, the out-of-fold scores and folds) go to ``--cache``
(default ``/tmp/costwise-served-calibration``, not committed: one ``.npz`` a unit); the
candidates are computed from them when the summary is written, so a new candidate needs
no refit. The summary is computed from every cached unit of the tasks and seeds asked
for, so the heavy work can run in chunks (one data set per run, under the lock) and
``--summary-only`` then writes the result of them all: ``bench/results/quality/served_calibration.{json,md}``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.papers.common import stratified_split
from bench.quality.baselines import (
    RATIOS,
    TEST_SIZE,
    add_binary_plan_options,
    bayes_binary,
    binary_cost,
    binary_units,
    cost_ratio,
    geomean,
    ratio_label,
    unit_cost,
    unit_data,
)
from bench.quality.fold_ensemble import DEFAULT_BASELINES, best_baseline_costs
from bench.record import run_header, write_result
from models.auto.default import AutoCalibrated
from models.boosting.crossfit import cross_calibrated, fold_indices
from models.calibration import spread
from models.calibration.calibrators import make_calibrator
from models.inference.fold_ensemble import FoldEnsembleScorer

MAPS = ("platt", "isotonic", "beta", "venn_abers")
CHOICES = {"choice": ("platt", "isotonic", "beta"), "choice_va": MAPS}
"""Candidate choices by out-of-fold log loss: among these maps, spread."""
EPS = 1e-6
BINS = 10
WITHIN = 0.02


def logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, EPS, 1.0 - EPS)
    return np.log(q) - np.log1p(-q)


def slope_intercept(p: np.ndarray, y: np.ndarray) -> tuple[float, float] | None:
    """``(b, a)`` of ``y ~ a + b logit(p)``; None when ``logit(p)`` separates ``y``."""
    from sklearn.metrics import roc_auc_score

    if roc_auc_score(y, p) >= 1.0:
        return None
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000)
    lr.fit(logit(p)[:, None], y)
    return float(lr.coef_[0, 0]), float(lr.intercept_[0])


def ece(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> float:
    """Expected calibration error over ``bins`` equal-mass bins (sorted by ``p``)."""
    order = np.argsort(p, kind="stable")
    total = 0.0
    for part in np.array_split(order, bins):
        if len(part):
            total += len(part) * abs(float(p[part].mean()) - float(y[part].mean()))
    return total / len(p)


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    q = np.clip(p, EPS, 1.0 - EPS)
    return float(-np.mean(y * np.log(q) + (1 - y) * np.log1p(-q)))


def fit_unit(model: Any, Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray) -> dict[str, Any]:
    """What a unit caches: the served probabilities and the raw material of every candidate
    (each fold booster's score of every training and test row, the out-of-fold scores and
    the folds), so that candidates are computed, and new ones added, without refitting."""
    inner = model.model_
    out: dict[str, Any] = {"served": model.predict_proba(Xte)[:, 1]}
    scorer = inner.to_inference().scorer
    if not isinstance(scorer, FoldEnsembleScorer):
        return out
    kind = scorer.score_kind
    te = np.column_stack([e.score(Xte, kind) for e in scorer.ensembles])
    tr = np.column_stack([e.score(Xtr, kind) for e in scorer.ensembles])
    folds = fold_indices(ytr, te.shape[1], inner.random_state, np.array([0, 1]))
    oof = np.asarray(inner.oof_.raw_positive)
    fold_of_row = np.asarray(folds.fold_of_row)
    assert np.allclose(tr[np.arange(len(ytr)), fold_of_row], oof), "folds differ from the fit's"
    return {**out, "raw_te": te, "raw_tr": tr, "raw_oof": oof, "raw_fold": fold_of_row,
            "raw_ytr": ytr}  # fmt: skip


def _folds_of(fold_of_row: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    k = int(fold_of_row.max()) + 1
    return [(np.flatnonzero(fold_of_row != f), np.flatnonzero(fold_of_row == f)) for f in range(k)]


def oracle_spread(te: np.ndarray, center: float) -> spread.ScoreSpread:
    """NOT servable (it reads the test rows' scores, no label): the factor ``V / Var(mean)``
    of the k boosters' scores of rows none of them saw -- what the spread estimates."""
    v = float(np.mean(np.var(te, axis=0)))
    vm = float(np.var(te.mean(axis=1)))
    return spread.ScoreSpread(center, v / vm if vm > 0 else 1.0)


def _factor(v: float, c: float, k: int) -> float:
    c = min(max(c, 0.0), v)
    return float(min(max(v / (c + (v - c) / k), 1.0), spread.MAX_FACTOR)) if v > 0 else 1.0


def pull_spread(
    oof: np.ndarray, tr: np.ndarray, fold_of_row: np.ndarray, p_oof: np.ndarray, y: np.ndarray
) -> spread.ScoreSpread:
    """Candidate: the spread's covariance with the boosters that saw a row first cleared of
    their pull toward its label, ``beta (y - p)``, ``p`` the row's cross-fitted out-of-fold
    probability and ``beta`` the regression of (their mean - its out-of-fold score) on
    ``y - p``."""
    n, k = tr.shape
    seen = np.ones((n, k), dtype=bool)
    seen[np.arange(n), fold_of_row] = False
    others = np.where(seen, tr, 0.0).sum(axis=1) / (k - 1)
    r = y - p_oof
    d = others - oof
    beta = float(
        np.dot(r - r.mean(), d - d.mean()) / max(np.dot(r - r.mean(), r - r.mean()), 1e-300)
    )
    adj = others - max(beta, 0.0) * r
    center = float(oof.mean())
    v = float(np.var(oof))
    c = float(np.mean((oof - center) * (adj - adj.mean())))
    return spread.ScoreSpread(center, _factor(v, c, k))


def candidates(raw: dict[str, np.ndarray]) -> dict[str, Any]:
    """P(y = 1) of the test rows for each way of serving, and the out-of-fold losses,
    from a unit's cached raw scores (:func:`fit_unit`)."""
    te, tr, oof = raw["raw_te"], raw["raw_tr"], raw["raw_oof"]
    fold_of_row, ytr = raw["raw_fold"].astype(np.int64), raw["raw_ytr"]
    k = te.shape[1]
    folds = _folds_of(fold_of_row)
    sp = spread.fit(oof, tr, fold_of_row)
    mean_te = te.mean(axis=1)
    out: dict[str, Any] = {}
    losses = {}
    for name in MAPS:
        cal = make_calibrator(name).fit(oof, ytr)
        out[f"{name}_mean"] = cal.predict(mean_te)
        out[f"{name}_meanproba"] = np.mean([cal.predict(te[:, i]) for i in range(k)], axis=0)
        out[f"{name}_spread"] = cal.predict(sp.apply(mean_te))
        if name == "platt":
            # diagnostics: one fold booster's own score (what the map was fitted on), and
            # the spread measured on the test rows' scores (not servable)
            out["platt_single0"] = cal.predict(te[:, 0])
            out["platt_oracle_spread"] = cal.predict(oracle_spread(te, sp.center).apply(mean_te))
        p_oof = cross_calibrated(
            lambda s, y, w, n=name: make_calibrator(n).fit(s, y, w),
            lambda c, s: c.predict(s), oof, ytr, None, folds,
        )  # fmt: skip
        losses[name] = log_loss(p_oof, ytr)
        if name == "platt":
            pull = pull_spread(oof, tr, fold_of_row, p_oof, ytr)
            out["platt_pull_spread"] = cal.predict(pull.apply(mean_te))
    chosen = {}
    for label, among in CHOICES.items():
        chosen[label] = min(among, key=lambda n: losses[n])
        out[f"{label}_spread"] = out[f"{chosen[label]}_spread"]
    return {"p": out, "oof_log_loss": losses, "spread": sp.to_state(), "choice": chosen}


def unit_costs(
    p: dict[str, np.ndarray],
    y: np.ndarray,
    best: dict[tuple[str, int, str], float],
    task: str,
    seed: int,
) -> dict[str, float]:
    """Per candidate: the geometric mean over the benchmark's cost ratios of the decision
    cost over the best baseline's cost on the same split (``bench/quality/baselines.py``)."""
    out = {}
    for name, q in p.items():
        ratios = []
        for a, b in RATIOS:
            key = (task, seed, ratio_label(a, b))
            if key not in best:
                break
            cost = binary_cost(y, bayes_binary(np.asarray(q), a, b), a, b)
            ratios.append(cost_ratio(cost, best[key], unit_cost(key[2])))
        else:
            out[name] = geomean(ratios)
    return out


def task_metrics(p: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    si = slope_intercept(p, y)
    return {
        "slope": None if si is None else round(si[0], 4),
        "intercept": None if si is None else round(si[1], 4),
        "ece": round(ece(p, y), 5),
        "log_loss": round(log_loss(p, y), 5),
        "brier": round(float(np.mean((p - y) ** 2)), 5),
    }


def summarise(
    units: list[dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, int]]:
    tasks = list(dict.fromkeys(u["task"] for u in units))
    names = list(dict.fromkeys(n for u in units for n in u["p"]))
    per_task: dict[str, dict[str, Any]] = {}
    seeds: dict[str, int] = {}
    for t in tasks:
        us = [u for u in units if u["task"] == t]
        y = np.concatenate([np.asarray(u["y"]) for u in us])
        per_task[t] = {
            n: {
                **task_metrics(np.concatenate([np.asarray(u["p"][n]) for u in us]), y),
                "cost_ratio": round(geomean([u["costs"][n] for u in us]), 4)
                if all(n in u.get("costs", {}) for u in us)
                else None,
            }
            for n in names
            if all(n in u["p"] for u in us)
        }
        seeds[t] = len(us)
    summary = {}
    for n in names:
        rows = [per_task[t][n] for t in tasks if n in per_task[t]]
        slopes = [r["slope"] for r in rows if r["slope"] is not None]
        summary[n] = {
            "tasks": len(rows),
            "tasks_with_slope": len(slopes),
            "median_slope": round(float(np.median(slopes)), 4) if slopes else None,
            "tasks_within_2pct": sum(abs(s - 1.0) <= WITHIN for s in slopes),
            "tasks_within_10pct": sum(abs(s - 1.0) <= 0.10 for s in slopes),
            "median_intercept": round(
                float(np.median([r["intercept"] for r in rows if r["slope"] is not None])), 4
            )
            if slopes
            else None,
            "mean_ece": round(float(np.mean([r["ece"] for r in rows])), 5),
            "mean_log_loss": round(float(np.mean([r["log_loss"] for r in rows])), 5),
            "mean_brier": round(float(np.mean([r["brier"] for r in rows])), 5),
            # decision cost over the best baseline's, geometric mean over tasks (each the
            # geometric mean over its seeds and the five cost ratios)
            "cost_ratio": round(geomean([r["cost_ratio"] for r in rows]), 4)
            if all(r["cost_ratio"] is not None for r in rows)
            else None,
        }
    return summary, per_task, seeds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_binary_plan_options(ap, "JSON: AutoCalibrated parameters")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/costwise-served-calibration"))
    ap.add_argument("--summary-only", action="store_true", help="fit nothing: cached units")
    ap.add_argument("--skip-cached", action="store_true", help="fit only units not cached")
    ap.add_argument("--label", default="")
    ap.add_argument(
        "--baseline-csv",
        type=Path,
        default=DEFAULT_BASELINES,
        help="best baseline costs of the same splits (decision cost ratios)",
    )
    args = ap.parse_args(argv)
    params = json.loads(args.params)
    units = binary_units(args)
    args.cache.mkdir(parents=True, exist_ok=True)
    # the cached units of these parameters (the default's: no prefix)
    tag = (
        ""
        if not params
        else hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8] + "-"
    )
    started = time.perf_counter()
    for u in [] if args.summary_only else units:
        if args.skip_cached and (args.cache / f"{tag}{u.key}.npz").exists():
            continue
        X, y, _ = unit_data(u, args.data_dir)
        itr, ite, ytr, yte = stratified_split(np.arange(len(y)), y, TEST_SIZE, u.seed)
        t0 = time.perf_counter()
        model = AutoCalibrated(**{"random_state": 0, **params}).fit(X[itr], ytr)
        fit_s = time.perf_counter() - t0
        arrays = fit_unit(model, X[itr], ytr, X[ite])
        info = {
            "task": u.task, "dataset": u.dataset, "seed": u.seed, "fit_s": round(fit_s, 2),
            "capacity": {k: model.capacity_[k] for k in ("weak_learner", "max_depth",
                                                        "n_estimators")},
        }  # fmt: skip
        np.savez(args.cache / f"{tag}{u.key}.npz", info=json.dumps(info), y=yte,
                 p_served=arrays.pop("served"), **arrays)  # fmt: skip
        print(u.key, f"{fit_s:.1f}s", "served slope",
              task_metrics(np.asarray(model.predict_proba(X[ite])[:, 1]), yte)["slope"],
              flush=True)  # fmt: skip
    best = best_baseline_costs(args.baseline_csv)
    allu = []
    for u in units:
        f = args.cache / f"{tag}{u.key}.npz"
        if not f.exists():
            continue
        with np.load(f) as z:
            info = json.loads(str(z["info"]))
            p = {"served": z["p_served"]}
            if "raw_te" in z.files:
                c = candidates({k: z[k] for k in z.files if k.startswith("raw_")})
                p.update(c["p"])
                info.update(oof_log_loss=c["oof_log_loss"], choice=c["choice"],
                            spread=c["spread"])  # fmt: skip
            allu.append({**info, "y": z["y"], "p": p,
                         "costs": unit_costs(p, z["y"], best, u.task, u.seed)})  # fmt: skip
    summary, per_task, seeds = summarise(allu)
    res = {
        **run_header(__file__, argv),
        "params": {"random_state": 0, **params},
        "seeds": args.seeds,
        "bins": BINS,
        "seconds_this_run": round(time.perf_counter() - started, 1),
        "summary": summary,
        "per_task": per_task,
        "seeds_per_task": seeds,
        "units": [{k: v for k, v in u.items() if k not in ("y", "p")} for u in allu],
    }
    names = list(summary)
    n_tasks = len(per_task)
    lines = [
        f"# Served calibration of the default ({res['date']})",
        "",
        f"Machine: {res['machine']}.",
        f"Command: `{res['command']}` (after the data sets were run in chunks).",
        "",
        f"`AutoCalibrated({json.dumps(res['params'])})`, {n_tasks} two-class tasks (positive "
        f"class: the README's `1`, or the class of a one-vs-rest task), up to {args.seeds} seeds "
        "(seeds 0..; the column `seeds` says how many were run), "
        "stratified 70/30; metrics on the held-out rows of the seeds pooled per task. "
        f"Slope and intercept of `y ~ a + b logit(p)`; ECE over {BINS} equal-mass bins. "
        "Tasks separated by the probabilities have no slope (left out of the slope columns).",
        "",
        "| candidate | median slope | within 2 % | within 10 % | median intercept | "
        "mean ECE | mean log loss | mean Brier | cost / best baseline |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for n, s in summary.items():
        lines.append(
            f"| {n} | {s['median_slope']} | {s['tasks_within_2pct']} of "
            f"{s['tasks_with_slope']} | {s['tasks_within_10pct']} | {s['median_intercept']} | "
            f"{s['mean_ece']:.4f} | {s['mean_log_loss']:.4f} | {s['mean_brier']:.4f} | "
            f"{s['cost_ratio']} |"
        )
    show = [n for n in ("served", "platt_mean", "platt_meanproba", "platt_spread",
                        "platt_pull_spread", "platt_oracle_spread", "platt_single0",
                        "beta_spread", "venn_abers_spread", "choice_spread",
                        "choice_va_spread") if n in names]  # fmt: skip
    lines += ["", "Calibration slope per task:", "",
              "| task | seeds | " + " | ".join(show) + " |",
              "| --- | ---: |" + " ---: |" * len(show)]  # fmt: skip
    for t, m in per_task.items():
        lines.append(
            f"| {t} | {seeds[t]} | "
            + " | ".join(str(m[n]["slope"]) if n in m else "-" for n in show)
            + " |"
        )
    for label, among in CHOICES.items():
        choices = [u["choice"][label] for u in allu if u.get("choice")]
        lines += ["", f"`{label}`: map chosen by out-of-fold log loss among {', '.join(among)} "
                  "(units): " + ", ".join(f"{n} {choices.count(n)}" for n in among) + "."]  # fmt: skip
    write_result(__file__, res, "\n".join(lines), label=args.label, argv=argv, indent=1)
    print("\n".join(lines[: 12 + len(names)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
