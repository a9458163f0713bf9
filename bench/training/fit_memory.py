"""Peak memory of boosting on pre-binned codes (issue 18), in process, no file.

Builds ``N x 50`` uint8 codes (standard normal features binned on a 200,000-row sample,
a logistic label), warms numba up on 3,000 rows, then measures the peak RSS above that
baseline (a thread reading VmRSS every 5 ms) of one step:

* ``fit``: one AdaBoost fit (depth-3 trees, 3 rounds) on the first 2N/3 rows (a fold);
* ``crossfit``: 3-fold ``cross_fit`` of that booster, fold fits on every CPU at once;
* ``crossfit1``: the same, fold fits one after another;
* ``auto [max_rounds]``: ``AutoCalibratedBoosting(random_state=0).fit``;
* ``train [max_rounds]``: the service's ``fit_model`` on these codes (what a job runs
  after reading: the default ``auto`` fit, then out-of-fold metrics and plots), with the
  peak above the baseline reported per phase (``boosting``, ``calibrating``,
  ``evaluating``) from the progress callback.

Run::

    OMP_NUM_THREADS=1 .venv/bin/python -m bench training.fit_memory 1500000 crossfit1

Memory per round does not depend on the number of rounds, so 3 rounds suffice.
"""

import resource
import sys
import threading
import time

import numpy as np

from models.auto import AutoCalibratedBoosting
from models.boosting.adaboost import AdaBoost
from models.boosting.crossfit import cross_fit
from models.features.binning import BinEdges, BinnedRows, prebinned


def rss() -> float:
    """Resident memory of this process in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    n, mode = int(sys.argv[1]), sys.argv[2]
    d = 50
    peak = [0.0]
    phase = ["setup"]
    by_phase: dict[str, float] = {}
    low: dict[str, float] = {}

    def sampler() -> None:
        while True:
            now = rss()
            peak[0] = max(peak[0], now)
            by_phase[phase[0]] = max(by_phase.get(phase[0], 0.0), now)
            low[phase[0]] = min(low.get(phase[0], now), now)
            time.sleep(0.005)

    threading.Thread(target=sampler, daemon=True).start()
    rng = np.random.default_rng(0)
    X = BinnedRows.empty(n, d)
    beta = rng.normal(size=d) * (np.arange(d) < 10)
    y = np.empty(n, dtype=np.int8)
    edges = None
    for s in range(0, n, 250_000):
        B = rng.normal(size=(min(250_000, n - s), d)).astype(np.float32)
        if edges is None:
            edges = BinEdges.from_sample(B[:200_000])
        X[s : s + len(B)] = edges.encode(B)
        z = B @ beta * 0.5 + 1.5 * B[:, 10] * B[:, 11]
        y[s : s + len(B)] = rng.random(len(B)) < 1 / (1 + np.exp(-z))
    del B
    assert edges is not None
    with prebinned(edges):  # numba compiled and loaded before the baseline
        AdaBoost(n_estimators=2, weak_learner="tree", max_depth=3).fit(X[:3000], y[:3000])
    base = rss()
    peak[0] = base
    by_phase.clear()
    low.clear()
    t = time.perf_counter()
    with prebinned(edges):
        if mode == "fit":
            m = 2 * n // 3
            AdaBoost(n_estimators=3, weak_learner="tree", max_depth=3).fit(X[:m], y[:m])
        elif mode.startswith("crossfit"):
            cross_fit(
                lambda: AdaBoost(n_estimators=3, weak_learner="tree", max_depth=3),
                X, y, y.astype(np.int64), np.array([0, 1]), None, n_folds=3, random_state=0,
                n_jobs=1 if mode == "crossfit1" else None, refit=False,
            )  # fmt: skip
        elif mode == "auto":
            rounds = int(sys.argv[3]) if len(sys.argv) > 3 else None
            AutoCalibratedBoosting(random_state=0, max_rounds=rounds).fit(X, y)
        elif mode == "train":
            from app.services.training import TrainingSpec, fit_model
            from app.services.training.spec import TrainingData
            from models.boosting.progress import progress_callback

            def callback(name: str, done: int, total: int) -> None:
                phase[0] = name

            rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
            data = TrainingData(X, y, [f"x{j}" for j in range(d)], edges=edges)
            with progress_callback(callback):
                fit_model(data, TrainingSpec(), max_rounds=rounds)
        else:
            raise SystemExit(f"unknown mode {mode!r}")
    time.sleep(0.05)
    print(
        f"n={n} mode={mode} base={base:.0f} MiB peak={peak[0]:.0f} MiB "
        f"delta={peak[0] - base:.0f} MiB = {(peak[0] - base) * 2**20 / n:.0f} B/row; "
        f"codes {X.nbytes / 2**20:.0f} MiB; {time.perf_counter() - t:.1f} s; "
        f"ru_maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    )
    if mode == "train":
        print(
            "above the baseline by phase, bytes a row (lowest-highest): "
            + ", ".join(
                f"{k} {(low[k] - base) * 2**20 / n:.0f}-{(v - base) * 2**20 / n:.0f}"
                for k, v in by_phase.items()
                if k != "setup"
            )
        )


if __name__ == "__main__":
    main()
