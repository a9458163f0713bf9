"""Compile the histogram kernels ahead of the first training: ``python -m models.catalog.warmup``.

The weak learners' numba kernels (:mod:`models.kernels.histogram`) are compiled on their
first call and cached on disk (``cache=True``: next to the module in ``__pycache__``, or in
``NUMBA_CACHE_DIR``). Without a warm cache, the first training of a fresh process pays the
compile time (tens of seconds on a loaded 2-core machine; see docs/benchmarks.md). The
container image runs this module at build time with ``NUMBA_CACHE_DIR`` set to a
directory its unprivileged user can read, so that no serving process compiles.

It fits tiny models that reach every compiled entry point the training path uses: the
binary stump and tree (error and Gini criteria) and the multiclass tree; and it predicts
with a multiclass tree ensemble and a multinomial calibration map, which compiles the
prediction kernels (:mod:`models.kernels.predict`) a serving process uses for them.
"""

from __future__ import annotations

import time

import numpy as np


def compile_kernels() -> float:
    """Fit tiny models through every kernel entry point; return the seconds it took."""
    from models.boosting.adaboost import AdaBoost
    from models.calibration.multinomial import MultinomialCalibrator
    from models.multiclass.samme import SAMME

    start = time.perf_counter()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 3))
    X[0, 1] = np.nan
    y = (X[:, 0] > 0).astype(np.int64)
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    AdaBoost(n_estimators=2).fit(X, y)
    for criterion in ("error", "gini"):
        tree = AdaBoost(
            n_estimators=2, weak_learner="tree", max_depth=2, stump_criterion=criterion
        ).fit(X, y)
        samme = SAMME(
            n_estimators=2, weak_learner="tree", max_depth=2, stump_criterion=criterion
        ).fit(X, y3)
    # prediction kernels: two-class tree leaves, oblique outputs, tree votes and
    # fractions, the multinomial map
    tree.predict_proba(X)
    AdaBoost(n_estimators=2, weak_learner="oblique").fit(X, y).predict_proba(X[:1])
    samme.ensemble_.votes(X)
    fractions = samme.ensemble_.vote_fractions(X)
    MultinomialCalibrator().fit(fractions, y3).predict_proba(fractions)
    return time.perf_counter() - start


def main() -> int:
    """CLI: compile and say how long it took."""
    print(f"numba kernels (histograms, prediction) compiled or loaded in {compile_kernels():.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
