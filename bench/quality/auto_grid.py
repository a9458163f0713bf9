"""In-process comparison of `auto` configurations against the quality benchmark's baselines.

Usage (from the repository root)::

    .venv/bin/python -m bench quality.auto_grid --datasets wine iris wdbc --seeds 3 \
        --config default '{}' --config logistic '{"grid": [["stump", 1, 400], ...]}'

What it does: the same units, splits and cost settings as :mod:`bench.quality.baselines`
(stratified 70/30 per seed; two-class tasks at five c_fp:c_fn ratios, multiclass sets under
three K x K matrices), but ``models.auto.AutoCalibrated`` is fitted **in process** on the
whole training split (what the service trains since it stopped holding out 20% for its
reported metrics) with each ``--config`` (keyword arguments of ``AutoCalibrated``, JSON;
``random_state`` 0 as the service's default), and decides by its inference object as the
service does. The baselines are not refitted: their costs are read from committed
quality-benchmark CSVs (``--baselines``, one or more) of the same splits -- the baselines
are seeded and deterministic, so their costs are those of a fresh fit; with
``--fit-missing-baselines CSV`` the units those files lack (e.g. a third seed) get their six
baselines fitted in process as the quality benchmark fits them, written to that CSV for
the next run. ``"extend_max_factor"`` in a ``--config`` sets
:data:`models.auto.search.EXTEND_MAX_FACTOR` for that configuration. Ratio and summaries as in
:mod:`bench.quality.baselines` (``summarise``). This is for choosing between configurations
quickly; the figures to publish come from :mod:`bench.quality.baselines` itself (HTTP, all
methods fitted in the same run).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import csv
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.papers.common import stratified_split, write_csv
from bench.quality import baselines
from bench.quality.baselines import (
    BASELINES,
    COSTWISE,
    DEFAULT_DATA_DIR,
    RATIOS,
    TEST_SIZE,
    _bayes,
    _score,
    brier,
    fit_baseline,
    matrices,
    plan_units,
    ratio_label,
    summarise,
    unit_cost,
    unit_data,
)
from bench.record import result_path, write_result
from models.auto import AutoCalibrated, search
from models.auto.search import EXTEND_MAX_FACTOR
from models.boosting.adaboost import AdaBoost
from models.boosting.crossfit import fold_indices
from models.decisions.rule import decide
from models.multiclass.samme import SAMME


def load_baselines(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open() as f:
        for r in csv.DictReader(f):
            if r["method"] in BASELINES and r["kind"] in ("binary", "multiclass"):
                rows.append({**r, "seed": int(r["seed"]), "cost": float(r["cost"])})
    return rows


BASELINE_COLUMNS = [
    "kind",
    "task",
    "dataset",
    "seed",
    "method",
    "setting",
    "cost",
    "brier",
    "fit_s",
]


def fit_missing_baselines(
    units: list[Any], data_dir: Path, have: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The six baselines' rows of the units that ``have`` lacks (a (task, seed) with no
    row of some baseline), fitted in process as :func:`bench.quality.baselines.run_unit`
    fits them (same split, seed, decisions and scoring)."""
    done = {(r["kind"], r["task"], int(r["seed"]), r["method"]) for r in have}
    out: list[dict[str, Any]] = []
    for unit in units:
        missing = [b for b in BASELINES if (unit.kind, unit.task, unit.seed, b) not in done]
        if not missing:
            continue
        X, y, _ = unit_data(unit, data_dir)
        itr, ite, ytr, yte = stratified_split(np.arange(len(y)), y, TEST_SIZE, unit.seed)
        k = int(y.max()) + 1
        if unit.kind == "binary":
            settings: list[tuple[str, Any]] = [(ratio_label(a, b), (a, b)) for a, b in RATIOS]
        else:
            settings = list(matrices(k, ytr, unit.dataset, unit.seed).items())
        for b in missing:
            P, fit_s = fit_baseline(b, unit.seed, X[itr], ytr, X[ite])
            bs = brier(P[:, 1] if k == 2 else P, yte)
            for name, s in settings:
                cost = _score(unit.kind, yte, _bayes(unit.kind, P, s), s)
                out.append(
                    {"kind": unit.kind, "task": unit.task, "dataset": unit.dataset,
                     "seed": unit.seed, "method": b, "setting": name, "cost": cost,
                     "brier": bs, "fit_s": round(fit_s, 3)}
                )  # fmt: skip
        print(f"  baselines of {unit.key}: {', '.join(missing)}", flush=True)
    return out


def _served_map_on_oof(model: AutoCalibrated) -> np.ndarray:
    """The served calibration map applied to the out-of-fold scores it was fitted on."""
    inner, raw = model.model_, model.oof_.raw
    if hasattr(inner, "calibrator_"):
        p1 = inner.calibrator_.predict(raw[:, 1])
        return np.column_stack([1.0 - p1, p1])
    joint = getattr(inner, "joint_calibrator_", None)
    if joint is not None:  # one multinomial map of the K scores (the multiclass default)
        return np.asarray(joint.predict_proba(raw))
    p = np.column_stack([c.predict(raw[:, j]) for j, c in enumerate(inner.calibrators_)])
    return p / p.sum(axis=1, keepdims=True)


def fold_average_proba(model: AutoCalibrated, Xtr: Any, ytr: Any, Xte: Any) -> np.ndarray:
    """An alternative to measure, not what the service serves: the average of the
    probabilities of k boosters of the chosen capacity, each fitted without one of the
    search's folds and calibrated by the served map(s) (``CalibratedClassifierCV``'s
    ``ensemble=True`` with one shared map), instead of one booster refitted on all rows."""
    inner, cap = model.model_, model.capacity_
    classes = inner.classes_
    folds = fold_indices(np.searchsorted(classes, ytr), inner.n_folds, 0, classes)
    family = AdaBoost if len(classes) == 2 else SAMME
    out = []
    for train, _ in folds:
        b = family(
            n_estimators=cap["n_estimators"],
            weak_learner=cap["weak_learner"],
            max_depth=cap["max_depth"],
        ).fit(Xtr[train], ytr[train])
        s = b.score_samples(Xte)
        if len(classes) == 2:
            p1 = inner.calibrator_.predict(s)
            out.append(np.column_stack([1.0 - p1, p1]))
        else:
            p = np.column_stack([c.predict(s[:, j]) for j, c in enumerate(inner.calibrators_)])
            out.append(p / p.sum(axis=1, keepdims=True))
    return np.mean(out, axis=0)


def run_config(units: list[Any], data_dir: Path, kwargs: dict[str, Any]) -> tuple[list, list]:
    """Fit ``AutoCalibrated(**kwargs)`` per unit; ``"fold_average": true`` in ``kwargs``
    decides by :func:`fold_average_proba` instead of the served model, and
    ``"extend_max_factor": F`` sets :data:`models.auto.search.EXTEND_MAX_FACTOR` for this
    configuration (1: no entry is refitted with more rounds)."""
    kwargs = dict(kwargs)
    fold_average = bool(kwargs.pop("fold_average", False))
    # the search's rule for curves still falling at their cap (1: off), for this config
    search.EXTEND_MAX_FACTOR = int(kwargs.pop("extend_max_factor", EXTEND_MAX_FACTOR))
    rows: list[dict[str, Any]] = []
    chosen: list[dict[str, Any]] = []
    for unit in units:
        X, y, _ = unit_data(unit, data_dir)
        idx = np.arange(len(y))
        itr, ite, ytr, yte = stratified_split(idx, y, TEST_SIZE, unit.seed)
        Xtr, Xte = X[itr], X[ite]
        k = int(y.max()) + 1
        t0 = time.perf_counter()
        model = AutoCalibrated(random_state=0, **kwargs).fit(Xtr, ytr)
        fit_s = time.perf_counter() - t0
        inf = model.to_inference()
        P_bag = fold_average_proba(model, Xtr, ytr, Xte) if fold_average else None
        if unit.kind == "binary":
            settings: list[tuple[str, Any]] = [(ratio_label(a, b), (a, b)) for a, b in RATIOS]
        else:
            settings = list(matrices(k, ytr, unit.dataset, unit.seed).items())
        for name, s in settings:
            C = np.array([[0.0, s[0]], [s[1], 0.0]]) if unit.kind == "binary" else s
            decided = inf.decide(Xte, C) if P_bag is None else decide(P_bag, C)
            d = np.asarray(model.model_.classes_)[decided.labels_index]
            rows.append(
                {
                    "kind": unit.kind,
                    "task": unit.task,
                    "seed": unit.seed,
                    "method": COSTWISE,
                    "setting": name,
                    "fit_s": fit_s,
                    "cost": _score(unit.kind, yte, d, s),
                    "unit_cost": unit_cost(name, s if unit.kind == "multiclass" else None),
                }
            )
        cap = model.capacity_
        ytr_i = np.searchsorted(model.classes_, ytr)
        yte_i = np.searchsorted(model.classes_, yte)
        oof_p, test_p = model.oof_.proba, model.predict_proba(Xte)
        naive_p = _served_map_on_oof(model)
        chosen.append(
            {
                "unit": unit.key,
                "fit_s": round(fit_s, 2),
                "chosen": f"{cap['weak_learner']}-d{cap['max_depth']}x{cap['n_estimators']}",
                # the reported (out-of-fold) Brier score against the test rows' one
                "oof_brier": brier(oof_p[:, 1] if k == 2 else oof_p, ytr_i),
                "test_brier": brier(test_p[:, 1] if k == 2 else test_p, yte_i),
                # the naive alternative: the served map on the scores it was fitted on
                "naive_brier": brier(naive_p[:, 1] if k == 2 else naive_p, ytr_i),
            }
        )
    return rows, chosen


def _key(r: dict[str, Any]) -> tuple[str, str, int, str]:
    return (r["kind"], r["task"], int(r["seed"]), r["method"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench quality.auto_grid", description=__doc__)
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    ap.add_argument("--datasets", nargs="+", default=None)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--kinds", nargs="+", default=["binary", "multiclass"])
    ap.add_argument(
        "--baselines",
        type=Path,
        nargs="+",
        default=[result_path(baselines.__file__, "auto", ".csv")],
        help="quality-benchmark CSVs whose baseline rows are read (the first file that "
        "has a (task, seed, baseline) wins)",
    )
    ap.add_argument(
        "--fit-missing-baselines",
        type=Path,
        default=None,
        metavar="CSV",
        help="fit the baselines of the units the --baselines files lack (in process, as "
        "the quality benchmark does) and write their rows to this CSV",
    )
    ap.add_argument(
        "--config",
        nargs=2,
        action="append",
        metavar=("NAME", "JSON"),
        required=True,
        help="a name and AutoCalibrated keyword arguments (JSON)",
    )
    ap.add_argument("--label", default="", help="names this comparison's result file")
    args = ap.parse_args(argv)
    base: list[dict[str, Any]] = []
    seen: set[tuple[str, str, int, str]] = set()
    for path in args.baselines:
        rows = [r for r in load_baselines(path) if _key(r) not in seen]
        seen |= {_key(r) for r in rows}
        base += rows
    units = [
        u
        for u in plan_units(args.data_dir, args.datasets, range(args.seeds), False)
        if u.kind in args.kinds
    ]
    sources = [str(p) for p in args.baselines]
    if args.fit_missing_baselines is not None:
        fitted = fit_missing_baselines(units, args.data_dir, base)
        if fitted:
            write_csv(args.fit_missing_baselines, fitted, BASELINE_COLUMNS)
            sources.append(f"{args.fit_missing_baselines} (fitted by this run)")
        base += [{**r, "cost": float(r["cost"])} for r in fitted]
    report: dict[str, Any] = {"baselines": sources, "configs": {}}
    for name, js in args.config:
        kwargs = json.loads(js)
        t0 = time.perf_counter()
        rows, chosen = run_config(units, args.data_dir, kwargs)
        wall = time.perf_counter() - t0
        out: dict[str, Any] = {"kwargs": kwargs, "wall_s": round(wall, 1), "chosen": chosen}
        gap = [np.log(c["oof_brier"] / c["test_brier"]) for c in chosen if c["test_brier"] > 0]
        out["oof_over_test_brier_geomean"] = float(np.exp(np.mean(gap)))
        naive = [np.log(c["naive_brier"] / c["test_brier"]) for c in chosen if c["test_brier"] > 0]
        out["naive_over_test_brier_geomean"] = float(np.exp(np.mean(naive)))
        for kind in ("binary", "multiclass"):
            s = summarise([*rows, *base], kind)
            if s.get("n"):
                out[kind] = {
                    "geomean": round(s["geomean"], 4),
                    "geomean_nonzero": round(s["geomean_nonzero"], 4),
                    "median": round(s["median"], 4),
                    "worst_task": s["worst_task"],
                    "above_goal": s["above_goal"],
                    "per_task": {t: round(v, 3) for t, v in s["per_task"].items()},
                }
                print(
                    f"{name} {kind}: geomean {s['geomean']:.4f}, without zero-cost triples "
                    f"{s['geomean_nonzero']:.4f}, median {s['median']:.4f}, worst "
                    f"{s['worst_task']}, above 1.25 {s['above_goal']}",
                    flush=True,
                )
        print(
            f"{name}: {wall:.0f} s; reported/test Brier (geomean) "
            f"{out['oof_over_test_brier_geomean']:.3f} (served map on its own scores "
            f"{out['naive_over_test_brier_geomean']:.3f}); "
            + ", ".join(c["chosen"] for c in chosen),
            flush=True,
        )
        report["configs"][name] = out
    write_result(__file__, report, label=args.label, argv=argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
