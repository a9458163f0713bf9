"""Where does the multiclass loss come from? Booster capacity vs the calibration map.

For every multiclass set and seed (the same stratified 70/30 splits as
:mod:`bench.quality.baselines`), the default grid of :mod:`models.auto` is cross-fitted on
the training rows (5 stratified folds, staged SAMME votes on the held-out fold at every
checkpoint), and several calibration maps of the K scores are compared *on the same
out-of-fold scores*:

* ``ovr``    -- one Platt map per class on the vote fractions, normalised (the
  multiclass default before 2026-11-25);
* ``full1``, ``full.1`` -- multinomial logistic regression on the K vote fractions
  (:class:`models.calibration.multinomial.MultinomialCalibrator`, full K x K weights,
  ridge 1 or 0.1; 0.1 is the default now);
* ``vector`` -- diagonal weights (vector scaling), ridge 0.1;
* ``scalar`` -- one weight for all classes and class biases (temperature scaling);

Each map chooses its own (weak learner, rounds) by the smoothed out-of-fold log loss (as
:mod:`models.auto` does); the chosen booster is refitted on all training rows and the
map fitted on the out-of-fold scores; the test rows give log loss, Brier score and the
total cost under the three K x K matrices of :mod:`bench.quality.baselines`, whose four
baselines are fitted on the same split. ``cccv`` is scikit-learn's
``CalibratedClassifierCV(SAMME(chosen), cv=5)`` (sigmoid per class, normalised, the 5
fold pairs averaged): the same booster with scikit-learn's calibration.

Run: ``python -m bench quality.multiclass_calibration --data-dir ../shared/datasets``
(``--maps``, ``--grid`` and ``--no-cccv`` narrow it; results of 2026-11-25 in
``bench/results/quality/multiclass_calibration.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from bench.papers.common import load_dataset, stratified_split
from bench.quality.baselines import (
    BASELINES,
    DEFAULT_DATA_DIR,
    TEST_SIZE,
    bayes_matrix,
    brier,
    cost_ratio,
    fit_baseline,
    geomean,
    matrices,
    matrix_cost,
    unit_cost,
)
from bench.record import write_result
from models.auto import DEFAULT_GRID, AutoCalibratedMulticlass, checkpoints, smoothed
from models.boosting.crossfit import fold_indices
from models.calibration.calibrators import make_calibrator
from models.calibration.multinomial import MultinomialCalibrator
from models.inference.multiclass_scorers import normalise_rows
from models.multiclass.samme import SAMME

SETS = ("iris", "wine", "vehicle", "satimage", "splice")
CCCV = True


def staged_votes(model: SAMME, X: np.ndarray, cps: np.ndarray) -> np.ndarray:
    """Vote fractions after each checkpoint's rounds, (len(cps), n, K): the search's own."""
    return AutoCalibratedMulticlass(score_kind="vote")._staged(model, X, cps)


class OvR:
    def fit(self, s: np.ndarray, y: np.ndarray) -> OvR:
        self.maps = [make_calibrator("platt").fit(s[:, j], (y == j).astype(np.int8))
                     for j in range(s.shape[1])]  # fmt: skip
        return self

    def predict_proba(self, s: np.ndarray) -> np.ndarray:
        return normalise_rows(
            np.column_stack([m.predict(s[:, j]) for j, m in enumerate(self.maps)])
        )


MAPS: dict[str, Any] = {
    "ovr": OvR,
    "full1": lambda: MultinomialCalibrator("full", 1.0),
    "full.1": lambda: MultinomialCalibrator("full", 0.1),
    "vector": lambda: MultinomialCalibrator("vector", 0.1),
    "scalar": lambda: MultinomialCalibrator("scalar", 0.01),
}


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    return float(-np.mean(np.log(np.clip(p[np.arange(len(y)), y], 1e-15, 1.0))))


def run_split(name: str, X: np.ndarray, y: np.ndarray, seed: int, grid: Any) -> dict[str, Any]:
    idx = np.arange(len(y))
    itr, ite, ytr, yte = stratified_split(idx, y, TEST_SIZE, seed)
    Xtr, Xte = X[itr], X[ite]
    k = int(y.max()) + 1
    classes = np.arange(k)
    folds = fold_indices(ytr, 5, seed, classes)
    oofs = []
    for wl, depth, m in grid:
        cps = checkpoints(m)
        oof = np.empty((len(cps), len(ytr), k))
        for tr, te in folds:
            mod = SAMME(n_estimators=m, weak_learner=wl, max_depth=depth, random_state=seed)
            mod.fit(Xtr[tr], ytr[tr])
            oof[:, te] = staged_votes(mod, Xtr[te], cps)
        oofs.append((wl, depth, cps, oof))
    out: dict[str, Any] = {"dataset": name, "seed": seed, "methods": {}}
    mats = matrices(k, ytr, name, seed)
    probs: dict[str, np.ndarray] = {}
    for mname, make in MAPS.items():
        best = None
        curves = {}
        for wl, depth, cps, oof in oofs:
            losses = np.array([log_loss(make().fit(oof[c], ytr).predict_proba(oof[c]), ytr)
                               for c in range(len(cps))])  # fmt: skip
            sm = smoothed(losses)
            c = int(np.argmin(sm))
            curves[f"{wl}{depth}"] = round(float(sm[c]), 5)
            if best is None or sm[c] < best[0]:
                best = (float(sm[c]), wl, depth, int(cps[c]), oof[c])
        assert best is not None
        _, wl, depth, rounds, s = best
        final = SAMME(n_estimators=rounds, weak_learner=wl, max_depth=depth, random_state=seed)
        final.fit(Xtr, ytr)
        cal = make().fit(s, ytr)
        st = np.clip(final.ensemble_.vote_fractions(np.asarray(Xte, dtype=np.float64)), 0, 1)
        probs[mname] = cal.predict_proba(st)
        out["methods"][mname] = {"choice": f"{wl}{depth}x{rounds}", "oof": curves}
        if mname == next(iter(MAPS)):
            chosen = (wl, depth, rounds)
    from sklearn.calibration import CalibratedClassifierCV

    wl, depth, rounds = chosen
    if CCCV:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cccv = CalibratedClassifierCV(
                SAMME(n_estimators=rounds, weak_learner=wl, max_depth=depth, random_state=seed),
                cv=5,
            ).fit(Xtr, ytr)
            probs["cccv"] = cccv.predict_proba(Xte)
    for b in BASELINES:
        probs[b], _ = fit_baseline(b, seed, Xtr, ytr, Xte)
    for mname, P in probs.items():
        costs = {s: matrix_cost(yte, bayes_matrix(P, C), C) for s, C in mats.items()}
        out["methods"].setdefault(mname, {}).update(
            {
                "log_loss": round(log_loss(P, yte), 5),
                "brier": round(brier(P, yte), 5),
                "costs": costs,
            }  # fmt: skip
        )
    for mname in list(MAPS) + (["cccv"] if CCCV else []):
        ratios = []
        for s, C in mats.items():
            best_cost = min(out["methods"][b]["costs"][s] for b in BASELINES)
            ratios.append(cost_ratio(out["methods"][mname]["costs"][s], best_cost, unit_cost(s, C)))
        out["methods"][mname]["ratios"] = ratios
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    ap.add_argument("--datasets", nargs="+", default=list(SETS))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--grid", default=None, help="JSON list of [weak_learner, depth, rounds]")
    ap.add_argument("--maps", nargs="+", default=list(MAPS), choices=list(MAPS))
    ap.add_argument("--no-cccv", action="store_true", help="skip CalibratedClassifierCV")
    args = ap.parse_args(argv)
    global CCCV
    CCCV = not args.no_cccv
    grid = DEFAULT_GRID if args.grid is None else [tuple(e) for e in json.loads(args.grid)]
    for m in list(MAPS):
        if m not in args.maps:
            del MAPS[m]
    started = time.time()
    results = []
    for name in args.datasets:
        ds = load_dataset(name, data_dir=args.data_dir)
        for seed in range(args.seeds):
            t0 = time.time()
            r = run_split(name, ds.X, ds.y, seed, grid)
            r["seconds"] = round(time.time() - t0, 1)
            results.append(r)
            line = {m: (v.get("choice", ""), v["brier"], round(geomean(v["ratios"]), 3)
                        if "ratios" in v else None) for m, v in r["methods"].items()}  # fmt: skip
            print(name, seed, r["seconds"], json.dumps(line), flush=True)
    summary: dict[str, dict[str, float]] = {}
    for m in list(MAPS) + (["cccv"] if CCCV else []):
        per_set = {}
        for name in args.datasets:
            rs = [x for r in results if r["dataset"] == name for x in r["methods"][m]["ratios"]]
            per_set[name] = round(geomean(rs), 3)
        allr = [x for r in results for x in r["methods"][m]["ratios"]]
        per_set["all"] = round(geomean(allr), 3)
        summary[m] = per_set
    print(json.dumps(summary, indent=1))
    write_result(__file__, {"seconds": round(time.time() - started, 1), "summary": summary,
                            "results": results}, argv=argv, indent=1)  # fmt: skip
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    raise SystemExit(main())
