"""Benchmark of the boosting core against scikit-learn and LightGBM (one run, side by side).

Fit with 100 stumps on ``../shared/datasets/magic.csv`` (skipped with a message if the
folder is absent) and on ``make_classification(200_000, 50, n_informative=20,
random_state=0)``, 75/25 split, for:

* ours: ``models.boosting.adaboost.AdaBoost(n_estimators=100)`` (stumps, error criterion), and
  ``ours_gini`` with ``stump_criterion="gini"`` (scikit-learn's split criterion);
* scikit-learn: ``AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=100)``;
* LightGBM: ``LGBMClassifier(n_estimators=100, max_depth=1, num_leaves=2, verbose=-1)``.

Reports fit time, test accuracy at the 0.5 threshold, ``predict_proba`` time of one row
(median of many calls) and of 100,000 rows (median of 5), the peak memory of our fit on
the large data (in a subprocess), and ratios to LightGBM / scikit-learn. Results go to
``bench/results/training/core.json`` and ``.md``.

Usage::

    .venv/bin/python -m bench training.core            # full run (~4 minutes, sklearn is slow)
    .venv/bin/python -m bench training.core --quick    # 20,000 x 50, fewer repeats
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import lightgbm
import numpy as np
import sklearn
from sklearn.datasets import make_classification
from sklearn.ensemble import AdaBoostClassifier
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from bench.datasets import DATA_DIR
from bench.record import RESULTS, heading, run_header, table, versions, write_result
from bench.timing import median_seconds
from models.boosting.adaboost import AdaBoost

ROOT = Path(__file__).resolve().parents[2]

MAGIC = DATA_DIR / "magic.csv"
M = 100


def models() -> dict[str, Any]:
    return {
        "ours": lambda: AdaBoost(n_estimators=M),
        "ours_gini": lambda: AdaBoost(n_estimators=M, stump_criterion="gini"),
        "sklearn": lambda: AdaBoostClassifier(
            DecisionTreeClassifier(max_depth=1), n_estimators=M, random_state=0
        ),
        "lightgbm": lambda: lightgbm.LGBMClassifier(
            n_estimators=M, max_depth=1, num_leaves=2, verbose=-1, random_state=0
        ),
    }


def run_dataset(name: str, X: np.ndarray, y: np.ndarray, quick: bool) -> dict[str, Any]:
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    X100k = np.ascontiguousarray(np.resize(Xte, (100_000, X.shape[1])))
    out: dict[str, Any] = {"shape": list(X.shape), "n_train": len(ytr), "models": {}}
    x1 = Xte[:1].copy()
    for label, make in models().items():
        model = make()
        t0 = time.perf_counter()
        model.fit(Xtr, ytr)
        fit_s = time.perf_counter() - t0
        p = model.predict_proba(Xte)[:, 1]
        acc = float(((p >= 0.5).astype(int) == yte).mean())
        row = median_seconds(lambda m=model: m.predict_proba(x1), 300 if quick else 3000)
        bulk = median_seconds(lambda m=model: m.predict_proba(X100k), 2 if quick else 5)
        out["models"][label] = {
            "fit_s": fit_s,
            "accuracy": acc,
            "predict_1row_us": row * 1e6,
            "predict_100k_ms": bulk * 1e3,
            "n_learners": int(getattr(model, "n_estimators_", M)),
        }
        print(
            f"  {name:>12} {label:>9}: fit {fit_s:8.3f} s  acc {acc:.4f}  "
            f"1 row {row * 1e6:8.1f} us  100k {bulk * 1e3:8.1f} ms",
            flush=True,
        )
    return out


_MEM_SCRIPT = """
import sys, tracemalloc
import numpy as np


def hwm():
    # peak resident set of this process image (VmHWM; ru_maxrss would include the parent)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return float(line.split()[1]) / 1024
    return float("nan")


sys.path.insert(0, {root!r})
from models.boosting.adaboost import AdaBoost
X = np.load({x!r}, allow_pickle=False)
y = np.load({y!r}, allow_pickle=False)
before = hwm()
tracemalloc.start()
AdaBoost(n_estimators=100).fit(X, y)
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
after = hwm()
print(peak / 2**20, before, after)
"""


def peak_memory(X: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Peak memory of our fit in a fresh process that only loads the training data."""
    with tempfile.TemporaryDirectory() as tmp:
        xp, yp = str(Path(tmp) / "X.npy"), str(Path(tmp) / "y.npy")
        np.save(xp, X)
        np.save(yp, y)
        code = _MEM_SCRIPT.format(root=str(ROOT), x=xp, y=yp)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
    traced, before, after = (float(v) for v in out.stdout.split())
    return {
        "tracemalloc_peak_mib": traced,
        "peak_rss_before_fit_mib": before,
        "peak_rss_after_fit_mib": after,
        "train_matrix_mib": X.nbytes / 2**20,
    }


def ratios(res: dict[str, Any]) -> dict[str, float]:
    m = res["models"]
    o, s, g = m["ours"], m["sklearn"], m["lightgbm"]
    return {
        "fit_ours_over_lightgbm": o["fit_s"] / g["fit_s"],
        "fit_sklearn_over_ours": s["fit_s"] / o["fit_s"],
        "accuracy_ours_minus_sklearn_points": 100 * (o["accuracy"] - s["accuracy"]),
        "predict_1row_ours_over_lightgbm": o["predict_1row_us"] / g["predict_1row_us"],
        "predict_100k_ours_over_lightgbm": o["predict_100k_ms"] / g["predict_100k_ms"],
    }


def markdown(report: dict[str, Any]) -> str:
    lines = heading("Core benchmark", report) + [
        "100 stumps each; 75/25 stratified split; accuracy at the 0.5 threshold; one-row "
        "time = median over many calls.",
        "",
    ]
    for name, res in report["datasets"].items():
        if "skipped" in res:
            lines += [f"## {name}", "", f"skipped: {res['skipped']}", ""]
            continue
        lines += [
            f"## {name} ({res['shape'][0]} x {res['shape'][1]}, {res['n_train']} train rows)",
            "",
        ]
        columns = ["model", "fit (s)", "test accuracy", "predict_proba 1 row (us)",
                   "predict_proba 100k rows (ms)"]  # fmt: skip
        lines += table(columns, (
            (label, f"{m['fit_s']:.3f}", f"{m['accuracy']:.4f}", f"{m['predict_1row_us']:.1f}",
             f"{m['predict_100k_ms']:.1f}")
            for label, m in res["models"].items()
        ))  # fmt: skip
        lines += ["", "Ratios: " + ", ".join(f"{k} = {v:.3g}" for k, v in res["ratios"].items())]
        lines.append("")
    if "memory" in report:
        mem = report["memory"]
        lines += [
            "## Peak memory of our fit on the large data's training split (fresh subprocess)",
            "",
            f"tracemalloc peak during fit: {mem['tracemalloc_peak_mib']:.0f} MiB; peak RSS (VmHWM) "
            f"{mem['peak_rss_before_fit_mib']:.0f} MiB before fit -> "
            f"{mem['peak_rss_after_fit_mib']:.0f} MiB after "
            f"(training matrix itself: {mem['train_matrix_mib']:.0f} MiB).",
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20,000 x 50 instead of 200,000")
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args()
    n_big = 20_000 if args.quick else 200_000
    report: dict[str, Any] = {
        **run_header(__file__),
        "versions": versions("numpy", "sklearn", "lightgbm"),
        "quick": args.quick,
        "datasets": {},
    }
    print(
        f"{report['machine']}; numpy {np.__version__}, sklearn {sklearn.__version__}, "
        f"lightgbm {lightgbm.__version__}",
        flush=True,
    )
    if MAGIC.exists():
        data = np.genfromtxt(MAGIC, delimiter=",", names=True)
        names = [c for c in data.dtype.names if c != "label"]
        X = np.column_stack([data[c] for c in names])
        y = data["label"].astype(int)
        res = run_dataset("magic", X, y, args.quick)
        res["ratios"] = ratios(res)
        report["datasets"]["magic"] = res
    else:
        print(f"magic: skipped, {MAGIC} not found", flush=True)
        report["datasets"]["magic"] = {"skipped": f"{MAGIC} not found"}
    X, y = make_classification(n_big, 50, n_informative=20, random_state=0)
    name = f"make_classification_{n_big}x50"
    res = run_dataset(name, X, y, args.quick)
    res["ratios"] = ratios(res)
    report["datasets"][name] = res
    Xtr, _, ytr, _ = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    report["memory"] = peak_memory(Xtr, ytr)
    print(json.dumps(report["memory"]), flush=True)
    label = "quick" if args.quick else ""
    write_result(__file__, report, markdown(report), label=label, results=args.out_dir)


if __name__ == "__main__":
    main()
