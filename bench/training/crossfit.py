"""Cross-fitting in parallel: threads against processes (loky) against one after another.

The default training cross-fits its calibration (5 fold fits + 1 final fit). This
measures the k-fold :class:`models.boosting.calibrated.CalibratedBoosting` fit with the fits run

* ``sequential``: one after another (``n_jobs=1``);
* ``threads``: :func:`models.boosting.crossfit.run_parallel` on 2 threads (what the core does);
* ``loky``: joblib's process pool on 2 workers, the fitted models sent back in memory
  (what the core would do with processes; the progress callback cannot follow them);

and a single fit of the booster on all rows, so that the cost is read in "fits". Wall
and CPU time (of this process and its children) are reported: on a shared machine the
wall time is noisy, and CPU / wall > 1 shows that the threads do run concurrently.

Run::

    .venv/bin/python -m bench training.crossfit [--rows 20000] [--repeats 3]

Writes ``bench/results/training/crossfit.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.datasets import make_classification

from bench.record import run_header, write_result
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedBoosting
from models.boosting.crossfit import fold_indices

ROOT = Path(__file__).resolve().parents[2]


def cpu_seconds() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _fit(booster: AdaBoost, X: np.ndarray, y: np.ndarray) -> AdaBoost:
    return booster.fit(X, y)


def loky_kfold(X: np.ndarray, y: np.ndarray, make: Any, k: int) -> list[AdaBoost]:
    _, y_index = np.unique(y, return_inverse=True)
    folds = fold_indices(y_index, k, 0, np.unique(y))
    jobs = [delayed(_fit)(make(), X[tr], y[tr]) for tr, _ in folds]
    jobs.append(delayed(_fit)(make(), X, y))
    return list(Parallel(n_jobs=2, backend="loky")(jobs))


def measure(f: Any, repeats: int) -> dict[str, float]:
    f()  # warm-up (imports, loky workers)
    walls, cpus = [], []
    for _ in range(repeats):
        c0, t0 = cpu_seconds(), time.perf_counter()
        f()
        walls.append(time.perf_counter() - t0)
        cpus.append(cpu_seconds() - c0)
    i = int(np.argmin(walls))
    return {"wall_s": round(walls[i], 3), "cpu_s": round(cpus[i], 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--features", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--weak-learner", default="stump")
    ap.add_argument("--max-depth", type=int, default=3)
    ap.add_argument("--label", default="", help="names this configuration's result file")
    args = ap.parse_args()
    X, y = make_classification(
        args.rows, args.features, n_informative=10, random_state=0, flip_y=0.05
    )

    def make() -> AdaBoost:
        return AdaBoost(args.rounds, weak_learner=args.weak_learner, max_depth=args.max_depth,
                        random_state=0)  # fmt: skip

    def kfold(n_jobs: int) -> Any:
        return lambda: CalibratedBoosting(make(), split="kfold", random_state=0,
                                          n_jobs=n_jobs).fit(X, y)  # fmt: skip

    runs = {
        "one_fit": lambda: make().fit(X, y),
        "sequential": kfold(1),
        "threads": kfold(2),
        "loky": lambda: loky_kfold(X, y, make, 5),
    }
    out: dict[str, Any] = {
        **run_header(__file__),
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_before": os.getloadavg(),
        "rows": args.rows,
        "features": args.features,
        "rounds": args.rounds,
        "weak_learner": args.weak_learner,
        "results": {},
    }
    for name, f in runs.items():
        out["results"][name] = r = measure(f, args.repeats)
        print(f"{name:>10}: wall {r['wall_s']:.2f} s  cpu {r['cpu_s']:.2f} s", flush=True)
    one = out["results"]["one_fit"]["wall_s"]
    for r in out["results"].values():
        r["fits"] = round(r["wall_s"] / one, 2)
    out["load_average_after"] = os.getloadavg()
    lines = [
        f"# Cross-fitting: threads vs processes ({out['date']})",
        "",
        f"{out['machine']}, {out['cpus']} CPUs, load average before {out['load_average_before']}"
        f" after {out['load_average_after']} (shared machine).",
        f"{args.rows} x {args.features}, AdaBoost {args.rounds} rounds of {args.weak_learner}; "
        "5-fold cross-fitting = 5 fold fits + 1 final fit. `fits` = wall / one fit on all rows.",
        "",
        "| run | wall s | cpu s | fits |",
        "|---|---:|---:|---:|",
    ]
    lines += [
        f"| {k} | {v['wall_s']:.2f} | {v['cpu_s']:.2f} | {v['fits']:.2f} |"
        for k, v in out["results"].items()
    ]
    lines += ["", f"Command: `{out['command']}`"]
    write_result(__file__, out, "\n".join(lines), label=args.label)


if __name__ == "__main__":
    main()
