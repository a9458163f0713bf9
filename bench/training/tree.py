"""Histogram tree (and stump) fit time and memory vs LightGBM, one-row predict latency.

Usage (from the repository root)::

    .venv/bin/python -m bench training.tree            # full run
    .venv/bin/python -m bench training.tree --quick    # smoke test (small data, few rounds)

What it measures, all in one run (machines are shared: compare ratios, not seconds):

1. fit time of ``AdaBoost(weak_learner="tree", max_depth=d, n_estimators=R)`` against
   ``lightgbm.LGBMClassifier`` growing the same depth-limited trees (``max_depth=d``,
   ``num_leaves=2**d``, ``min_child_samples=1``, ``learning_rate=0.1``, no bagging or
   feature sampling, ``n_jobs=2``, ``max_bin=255``) with the same number of rounds R, on
   synthetic 50,000 x 50 and 200,000 x 50 data (``make_classification``), at depth 3 and
   6; and the stump (``weak_learner="stump"``) against LightGBM at depth 1. Each timing
   includes the binning of both libraries. The two libraries alternate, ``--repeats``
   times each, and the median is reported; the kernel is compiled (or loaded from the
   numba cache) by a small warm-up fit first. The compile time of the kernel on first
   use is measured in a fresh process with an empty ``NUMBA_CACHE_DIR``.
2. peak memory of our fit, in a fresh process: the resident set size sampled every 2 ms
   by a thread during the fit, minus the RSS just before it (data made, kernel loaded),
   against the binned matrix (n x d bytes) and the raw float64 matrix (8 n d bytes).
3. one-row ``predict_proba`` of the calibrated inference model (as the service holds
   it, loaded from its artifact) for 100 stumps, 100 depth-3 trees and 200 depth-6
   trees: median of 2,000 calls, in-process.

Writes bench/results/training/tree.json and .md (with date, machine and load average).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import lightgbm
import numba
import numpy as np
import psutil
from sklearn.datasets import make_classification

from bench.record import heading, run_header, versions, write_result
from bench.timing import median_seconds
from models.boosting.adaboost import AdaBoost
from models.boosting.calibrated import CalibratedAdaMEC
from models.inference.artifacts import dump_model, load_model

ROOT = Path(__file__).resolve().parents[2]


def data(n: int, d: int = 50, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(
        n, d, n_informative=20, n_redundant=10, n_clusters_per_class=4, flip_y=0.05,
        random_state=seed,
    )  # fmt: skip
    return X, y


def ours(depth: int, rounds: int) -> AdaBoost:
    if depth == 1:
        return AdaBoost(n_estimators=rounds)  # the stump
    return AdaBoost(n_estimators=rounds, weak_learner="tree", max_depth=depth)


THREADS = 2


def lgbm(depth: int, rounds: int) -> Any:
    return lightgbm.LGBMClassifier(
        n_estimators=rounds, max_depth=depth, num_leaves=2**depth, min_child_samples=1,
        learning_rate=0.1, subsample=1.0, subsample_freq=0, colsample_bytree=1.0,
        n_jobs=THREADS, max_bin=255, verbose=-1, random_state=0,
    )  # fmt: skip


def fit_seconds(make: Any, X: np.ndarray, y: np.ndarray) -> float:
    model = make()
    t0 = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - t0


def peak_fit_memory(n: int, depth: int, rounds: int) -> int:
    """Peak RSS growth of one fit (bytes), measured in a fresh process (see _memory_child)."""
    out = subprocess.run(
        [sys.executable, "-m", __spec__.name, "--memory-child", str(n), str(depth), str(rounds)],
        cwd=ROOT, capture_output=True, text=True, check=True,
        # a fixed mmap threshold: large arrays are mapped and unmapped, so memory freed
        # before the fit (making the data) cannot be reused by it unseen in the RSS
        env=dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536"),
    )  # fmt: skip
    return int(out.stdout.strip().splitlines()[-1])


def _memory_child(n: int, depth: int, rounds: int) -> None:
    """Print the peak RSS growth of one fit, sampled by a thread every 2 ms.

    A fresh process, so that memory freed by earlier fits is not reused unseen: the
    data is made and the kernel loaded (a tiny fit) before the baseline is taken."""
    X, y = data(n)
    Xw, yw = data(500, seed=9)
    ours(depth, 2).fit(Xw, yw)
    make = lambda: ours(depth, rounds)  # noqa: E731
    proc = psutil.Process()
    base = proc.memory_info().rss
    peak = base
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, proc.memory_info().rss)
            time.sleep(0.002)

    t = threading.Thread(target=sample)
    t.start()
    try:
        make().fit(X, y)
    finally:
        done.set()
        t.join()
    print(max(peak, proc.memory_info().rss) - base)


def compile_seconds() -> tuple[float, float]:
    """First fit in a fresh process with an empty numba cache (the one-off JIT cost)."""
    code = (
        "import time, numpy as np; from models.boosting.adaboost import AdaBoost; "
        "X = np.random.default_rng(0).normal(size=(500, 5)); y = (X[:, 0] > 0).astype(int); "
        "t = time.perf_counter(); "
        "AdaBoost(n_estimators=2, weak_learner='tree', max_depth=3).fit(X, y); "
        "print(time.perf_counter() - t)"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
            check=True,
        )  # fmt: skip
        cold = float(out.stdout.strip().splitlines()[-1])
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
            check=True,
        )  # fmt: skip
        warm = float(out.stdout.strip().splitlines()[-1])
    return cold, warm


def one_row_us(depth: int, rounds: int, X: np.ndarray, y: np.ndarray, calls: int) -> float:
    clf = CalibratedAdaMEC(ours(depth, rounds), random_state=0).fit(X, y)
    blob, sha = dump_model(clf.to_inference([f"f{i}" for i in range(X.shape[1])]))
    model = load_model(blob, expected_sha256=sha)
    x1 = X[:1].copy()
    return median_seconds(lambda: model.predict_proba(x1), calls) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small data, few rounds")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument(
        "--threads", type=int, default=2,
        help="threads of both libraries (LightGBM n_jobs, numba.set_num_threads); 1 gives "
        "a comparison less distorted by other jobs on a shared machine",
    )  # fmt: skip
    ap.add_argument("--sizes", type=int, nargs="+", help="row counts (default 50000 200000)")
    ap.add_argument("--memory-child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    global THREADS
    THREADS = args.threads
    numba.set_num_threads(args.threads)
    if args.memory_child:
        _memory_child(*args.memory_child)
        return
    sizes = [5_000, 20_000] if args.quick else (args.sizes or [50_000, 200_000])
    rounds = 10 if args.quick else args.rounds
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()

    cold, warm = compile_seconds()
    print(f"kernel compile on first use: {cold:.1f} s; from the cache: {warm:.2f} s")
    Xw, yw = data(2000, seed=9)
    for depth in (1, 3, 6):
        ours(depth, 2).fit(Xw, yw)
        lgbm(depth, 2).fit(Xw, yw)

    rows: list[dict[str, Any]] = []
    for n in sizes:
        X, y = data(n)
        for depth in (1, 3, 6):
            t_ours: list[float] = []
            t_lgbm: list[float] = []
            for _ in range(args.repeats):  # alternate: both see the same load
                t_ours.append(fit_seconds(lambda d=depth: ours(d, rounds), X, y))
                t_lgbm.append(fit_seconds(lambda d=depth: lgbm(d, rounds), X, y))
            mem = peak_fit_memory(n, depth, rounds)
            row = {
                "n": n, "d": X.shape[1], "depth": depth, "rounds": rounds,
                "ours_s": statistics.median(t_ours), "lightgbm_s": statistics.median(t_lgbm),
                "ours_all_s": t_ours, "lightgbm_all_s": t_lgbm,
                "peak_fit_bytes": mem, "binned_bytes": X.shape[0] * X.shape[1],
                "raw_bytes": X.nbytes,
            }  # fmt: skip
            row["ratio"] = row["ours_s"] / row["lightgbm_s"]
            row["goal_ratio"] = 1.5 if depth == 1 else 2.0
            row["mem_over_binned"] = mem / row["binned_bytes"]
            row["mem_goal_bytes"] = 3 * row["binned_bytes"] + row["raw_bytes"]
            rows.append(row)
            print(
                f"n={n} depth={depth} R={rounds}: ours {row['ours_s']:.2f}s "
                f"lightgbm {row['lightgbm_s']:.2f}s ratio {row['ratio']:.2f} "
                f"(goal {row['goal_ratio']}); peak fit memory {mem / 2**20:.1f} MiB "
                f"(binned {row['binned_bytes'] / 2**20:.1f} MiB, raw {row['raw_bytes'] / 2**20:.1f})",
                flush=True,
            )

    Xp, yp = data(5000 if args.quick else 20_000, seed=5)
    calls = 300 if args.quick else 2000
    predict = {
        "stumps_100": one_row_us(1, 100, Xp, yp, calls),
        "depth3_100": one_row_us(3, 100, Xp, yp, calls),
        "depth6_200": one_row_us(6, 200, Xp, yp, calls),
    }
    print("one-row predict_proba (us):", {k: round(v, 1) for k, v in predict.items()})

    result = {
        **run_header(__file__),
        "started": started.isoformat(timespec="seconds"),
        "versions": versions("numpy", "numba", "lightgbm"),
        "threading_layer": numba.threading_layer(),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "quick": args.quick,
        "threads": args.threads,
        "compile_first_use_s": cold,
        "compile_cached_s": warm,
        "fits": rows,
        "one_row_predict_us": predict,
    }
    label = ["quick"] if args.quick else []
    if args.threads != 2:
        label.append(f"{args.threads}thread")
    if args.sizes and not args.quick:
        label += [f"{n // 1000}k" for n in args.sizes]
    write_result(__file__, result, markdown(result), label="-".join(label))


def markdown(r: dict[str, Any]) -> str:
    lines = heading("Histogram tree vs LightGBM", r) + [
        f"Shared with other jobs: load average {r['load_average_before'][0]:.1f} before, "
        f"{r['load_average_after'][0]:.1f} after; numba threading layer "
        f"{r['threading_layer']}.",
        "",
        "Synthetic `make_classification` data, d = 50; our fit includes binning; "
        "LightGBM grows the same depth-limited trees (num_leaves = 2^depth, "
        f"min_child_samples = 1, no bagging, n_jobs = {r['threads']}, max_bin = 255), same "
        "rounds; our kernel with the same number of numba threads. "
        "Depth 1 is our stump. Times: median of the alternated repeats.",
        "",
        "| n x d | depth | rounds | ours (s) | LightGBM (s) | ratio | goal | peak fit memory "
        "(MiB) | binned / raw (MiB) | memory goal 3 x binned + raw (MiB) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    mib = 2**20
    for f in r["fits"]:
        ok = "met" if f["ratio"] <= f["goal_ratio"] else "not met"
        mem_ok = "met" if f["peak_fit_bytes"] <= f["mem_goal_bytes"] else "not met"
        lines.append(
            f"| {f['n']:,} x {f['d']} | {f['depth']} | {f['rounds']} | {f['ours_s']:.2f} | "
            f"{f['lightgbm_s']:.2f} | {f['ratio']:.2f} | <= {f['goal_ratio']} ({ok}) | "
            f"{f['peak_fit_bytes'] / mib:.1f} | {f['binned_bytes'] / mib:.1f} / "
            f"{f['raw_bytes'] / mib:.1f} | {f['mem_goal_bytes'] / mib:.1f} ({mem_ok}) |"
        )
    p = r["one_row_predict_us"]
    lines += [
        "",
        f"Kernel compile on first use (fresh process, empty numba cache, 2-round fit): "
        f"{r['compile_first_use_s']:.1f} s; the same fit loading the cache: "
        f"{r['compile_cached_s']:.2f} s.",
        "",
        "One-row `predict_proba` of the calibrated model loaded from its artifact, median "
        "of in-process calls (goal < 50 us for the default model sizes):",
        "",
        "| model | us per call |",
        "|---|---|",
        f"| 100 stumps (the default) | {p['stumps_100']:.1f} |",
        f"| 100 trees of depth 3 | {p['depth3_100']:.1f} |",
        f"| 200 trees of depth 6 | {p['depth6_200']:.1f} |",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
