"""k-fold calibration's score shift (issue 16): refit-on-all-rows booster vs the fold models.

With ``calibration_split: "kfold"`` (the service default) the Platt map is fitted on the
out-of-fold scores of ``n_folds`` boosters, each trained on (k-1)/k of the rows, and then
applied to the scores of a booster refitted on ALL rows. A booster trained on more rows
may score on another scale (more confident margins), so the map learnt on the fold
models may not fit the refit model. This script measures that shift and compares the
service's rule with averaging the fold models' calibrated probabilities (scikit-learn's
``CalibratedClassifierCV(ensemble=True)``).

Protocol, per task of ``../shared/datasets`` (multiclass ones one-vs-rest, the 29 tasks
of the Nikolaou reproduction, classes as they are: no balancing), per seed and per raw
score (``vote`` = s(x), Eq. 24; ``logistic`` = s'(x) = 1/(1+e^(-2F)), Eq. 25): a
stratified 25% test set; on the rest, AdaBoost with 100 stumps and 5-fold cross-fitting
exactly as :class:`models.boosting.calibrated.CalibratedBoosting` does it
(:func:`models.boosting.crossfit.cross_fit`, same folds and seeds).

* Ideal Platt slope: Platt scaling (with Platt's target correction) fitted on the TEST
  rows, separately for the refit booster's scores (``A_refit``) and for each fold
  booster's scores (``A_fold``, mean of the 5); the slope the service uses is the one
  fitted on the out-of-fold scores (``A_oof``). Reported: ``A_refit / A_fold`` (the shift
  between the refit and the fold models) and ``A_oof / A_refit`` (how far the applied map
  is from the refit model's ideal one); 1 = no shift.
* Probabilities on the test rows, three rules: ``refit`` (the service: the out-of-fold
  map on the refit booster), ``ensemble`` (scikit-learn's ensemble=True: fold k's map,
  fitted on fold k's held-out rows, on fold k's booster, averaged over k) and
  ``folds_oof`` (the out-of-fold map on each fold booster, averaged). Scored by Brier
  score and log loss. ``one_fold`` separates the two effects of ``folds_oof``: the
  out-of-fold map on ONE fold booster (no scale shift, no averaging; its metric averaged
  over the 5 folds).

Run: ``python -m bench.papers.kfold_shift [--seeds 3] [--out docs/results/kfold_shift]``;
``--quick`` runs two scikit-learn data sets with tiny settings (CI).

References
----------
.. [1] Nikolaou et al. (2016), section 4 (Platt scaling of s(x)) and section 6
   (cross-validated calibration as the fix of the hold-out's cost).
.. [2] scikit-learn, ``CalibratedClassifierCV`` (``ensemble=True``: one calibrated
   classifier per fold, probabilities averaged).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import wilcoxon

from bench.papers import common as H
from bench.papers.nikolaou import DEFAULT_DATASETS, expand_tasks
from models.boosting.adaboost import AdaBoost
from models.boosting.crossfit import cross_fit
from models.calibration.calibrators import make_calibrator
from models.evaluation.metrics import brier_score, log_loss

RULES = ("refit", "ensemble", "folds_oof", "one_fold")
SCORES = ("vote", "logistic")


def _platt(scores: np.ndarray, y01: np.ndarray) -> Any:
    return make_calibrator("platt").fit(scores, y01)


def run_task(
    X: np.ndarray, y01: np.ndarray, seed: int, kind: str, rounds: int, n_folds: int
) -> dict[str, Any]:
    """Slopes and test scores of the three rules for one split and one raw score."""
    Xtr, Xte, ytr, yte = H.stratified_split(X, y01, 0.25, seed)
    cf = cross_fit(
        lambda: AdaBoost(n_estimators=rounds, score_kind=kind, random_state=seed),
        Xtr,
        ytr,
        ytr,
        np.array([0, 1]),
        split="kfold",
        n_folds=n_folds,
        random_state=seed,
        n_jobs=1,
        keep_folds=True,
    )
    oof_map = _platt(cf.scores, ytr)
    s_refit = cf.estimator.score_samples(Xte)
    s_folds = [m.score_samples(Xte) for m in cf.fold_models]
    a_refit = _platt(s_refit, yte).A_
    a_folds = [_platt(s, yte).A_ for s in s_folds]
    fold_maps = [_platt(cf.scores[te], ytr[te]) for _, te in cf.folds]
    probs = {
        "refit": oof_map.predict(s_refit),
        "ensemble": np.mean([c.predict(s) for c, s in zip(fold_maps, s_folds, strict=True)], 0),
        "folds_oof": np.mean([oof_map.predict(s) for s in s_folds], axis=0),
    }
    out: dict[str, Any] = {
        "n_train": int(len(ytr)),
        "n_test": int(len(yte)),
        "A_oof": float(oof_map.A_),
        "A_refit": float(a_refit),
        "A_fold": float(np.mean(a_folds)),
        "shift_refit_vs_folds": float(a_refit / np.mean(a_folds)),
        "applied_vs_ideal": float(oof_map.A_ / a_refit),
    }
    for rule, p in probs.items():
        out[f"brier_{rule}"] = brier_score(yte, p)
        out[f"logloss_{rule}"] = log_loss(yte, p)
    single = [oof_map.predict(s) for s in s_folds]
    out["brier_one_fold"] = float(np.mean([brier_score(yte, p) for p in single]))
    out["logloss_one_fold"] = float(np.mean([log_loss(yte, p) for p in single]))
    return out


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per score kind: slope ratios (median, quartiles, share off by > 5%), the rules'
    mean Brier / log loss, and ensemble vs refit per task and per data set (Wilcoxon)."""
    out: dict[str, Any] = {}
    for kind in SCORES:
        sub = [r for r in rows if r["score"] == kind]
        if not sub:
            continue
        res: dict[str, Any] = {}
        for key in ("shift_refit_vs_folds", "applied_vs_ideal"):
            v = np.array([r[key] for r in sub])
            q1, med, q3 = np.percentile(v, [25, 50, 75])
            res[key] = {"median": float(med), "q1": float(q1), "q3": float(q3),
                        "share_off_5pct": float(np.mean(np.abs(v - 1) > 0.05))}  # fmt: skip
        for metric in ("brier", "logloss"):
            res[metric] = {
                rule: float(np.mean([r[f"{metric}_{rule}"] for r in sub])) for rule in RULES
            }
            for unit in ("task", "dataset"):
                groups: dict[str, list[dict[str, Any]]] = {}
                for r in sub:
                    groups.setdefault(r[unit], []).append(r)
                for rule in RULES[1:]:
                    d = np.array([np.mean([g[f"{metric}_{rule}"] - g[f"{metric}_refit"] for g in grp])
                                  for grp in groups.values()])  # fmt: skip
                    p = float(wilcoxon(d).pvalue) if np.any(d != 0) and len(d) > 1 else 1.0
                    res[metric][f"{rule}_vs_refit_{unit}"] = {
                        "better": int((d < 0).sum()), "worse": int((d > 0).sum()),
                        "n": int(len(d)), "mean_diff": float(d.mean()), "wilcoxon_p": p,
                    }  # fmt: skip
        out[kind] = res
    return out


def body(summary: dict[str, Any], settings: dict[str, Any]) -> str:
    """Markdown tables of :func:`summarize`."""
    lines = [
        f"{len(settings['tasks'])} tasks x {settings['seeds']} seeds, AdaBoost with "
        f"{settings['rounds']} stumps, {settings['n_folds']}-fold cross-fitting, stratified 25% "
        "test set; Platt scaling with Platt's target correction.",
        "",
        "### Ideal Platt slopes on the test rows",
        "",
    ]
    rows = []
    for kind, res in summary.items():
        for key, label in (("shift_refit_vs_folds", "A_refit / A_fold (refit vs fold models)"),
                           ("applied_vs_ideal", "A_oof / A_refit (applied vs ideal for the refit)")):  # fmt: skip
            r = res[key]
            rows.append([kind, label, f"{r['median']:.3f}", f"{r['q1']:.3f} - {r['q3']:.3f}",
                         f"{100 * r['share_off_5pct']:.0f}%"])  # fmt: skip
    lines += [H.md_table(["score", "ratio", "median", "quartiles", "off by > 5%"], rows), ""]
    lines += ["### Test Brier score and log loss of the four rules", ""]
    rows = []
    for kind, res in summary.items():
        for metric in ("brier", "logloss"):
            m = res[metric]
            row = [kind, metric, *(f"{m[r]:.5f}" for r in RULES)]
            for rule in RULES[1:]:
                for unit in ("task", "dataset"):
                    c = m[f"{rule}_vs_refit_{unit}"]
                    row.append(
                        f"{c['better']} / {c['worse']} of {c['n']} (p {c['wilcoxon_p']:.2g})"
                    )
            rows.append(row)
    lines += [
        H.md_table(
            [
                "score",
                "metric",
                "refit (service)",
                "ensemble (sklearn)",
                "folds_oof",
                "one_fold",
                "ensemble better / worse: tasks",
                "data sets",
                "folds_oof better / worse: tasks",
                "data sets",
                "one_fold better / worse: tasks",
                "data sets",
            ],
            rows,
        ),  # fmt: skip
        "",
        "Per task / data set: the metric averaged over seeds (and over a data set's "
        "one-vs-rest tasks), compared with the refit rule; Wilcoxon signed-rank, two-sided.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run every task, seed and score kind; write ``kfold_shift.{csv,json,md}`` in --out."""
    p = H.base_parser("kfold_shift", __doc__.splitlines()[0], default_repeats=3)
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--folds", type=int, default=5)
    args = p.parse_args(argv)
    started = time.time()
    source = args.source or ("builtin" if args.quick else "shared")
    datasets = args.datasets or (["breast_cancer", "wine:0-vs-rest"] if args.quick
                                 else list(DEFAULT_DATASETS))  # fmt: skip
    rounds = min(args.rounds, 10) if args.quick else args.rounds
    seeds = min(args.repeats, 1) if args.quick else args.repeats
    tasks = expand_tasks(datasets, source)
    by_name: dict[str, H.BinaryTask] = {}
    for ds_name in dict.fromkeys(t.split(":")[0] for t in tasks):
        for t in H.binary_tasks(H.load_dataset(ds_name, source)):
            if t.name in tasks:
                by_name[t.name] = t
    bar = H.Progress(len(tasks) * seeds * len(SCORES), "kfold_shift")
    rows: list[dict[str, Any]] = []
    for name in tasks:
        task = by_name[name]
        for r in range(seeds):
            seed = (args.seed + 1000 * r + zlib.crc32(name.encode())) % (2**31)
            for kind in SCORES:
                res = run_task(task.X, task.y01, seed, kind, rounds, args.folds)
                rows.append({"task": name, "dataset": name.split(":")[0], "seed": seed,
                             "score": kind, **res})  # fmt: skip
                bar.update(1, f"{name} r{r} {kind}")
    bar.close()
    settings = {"tasks": list(tasks), "seeds": seeds, "rounds": rounds, "n_folds": args.folds,
                "source": source}  # fmt: skip
    summary = summarize(rows)
    info = H.run_info(argv, started, module="bench.papers.kfold_shift")
    out = args.out
    H.write_csv(out / "kfold_shift.csv", rows)
    H.write_json(out / "kfold_shift.json", {"run": info, "settings": settings,
                                            "summary": summary, "rows": rows})  # fmt: skip
    H.write_summary(out / "kfold_shift.md", "k-fold calibration: refit booster vs fold models",
                    info, "\n" + body(summary, settings))  # fmt: skip
    print(f"wrote {out}/kfold_shift.md ({info['duration_s']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
