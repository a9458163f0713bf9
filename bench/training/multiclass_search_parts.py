"""Two parts of the multiclass default's search, each against its former form in one run.

On this bench's six-class synthetic data (:func:`bench.training.default_training.synthetic`,
20,000 x 30 by default, the data of ``training.default_training --classes 6``):

* **the validation curve's maps**: a SAMME booster of depth-3 trees (``--rounds``) fitted
  on half the rows, its vote fractions on the other half at every checkpoint of the
  curve (:func:`models.auto.curve.checkpoints`), and one multinomial map per checkpoint
  (:class:`models.calibration.multinomial.MultinomialCalibrator`, as the search fits
  them): each from the class priors (``cold``) against each from the previous
  checkpoint's map (``warm``, what the search does), on one BLAS thread; the Newton
  steps and the largest difference of log loss between the two curves; and the Newton
  curvature ``w (diag p - p p^T)`` as the formula computes it against
  :func:`models.calibration.multinomial._curvature` (the same bits);
* **the tree kernel**: one depth-3 and one depth-6 tree of SAMME's weighted error on
  80% of the rows, from the (n, K) cost matrix (:func:`models.kernels.histogram.grow_tree`)
  against from class-weight histograms (:func:`~models.kernels.histogram.grow_tree_labels`,
  what the multiclass tree learner does), on one thread, checked equal.

Process CPU seconds (``time.process_time``), the two forms alternating, ``--repeats``
rounds, medians; ratios are former / now. About 20 s of CPU. Run::

    python -m bench training.multiclass_search_parts
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bench.record import heading, run_header, table, write_result
from bench.training.default_training import synthetic
from models.auto.curve import checkpoints, loss
from models.auto.estimators import MULTINOMIAL_L2, AutoCalibratedMulticlass
from models.calibration.multinomial import MultinomialCalibrator, _curvature, one_blas_thread
from models.features.binning import bin_features
from models.kernels.histogram import MODE_COST, grow_tree, grow_tree_labels
from models.multiclass.samme import SAMME


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def curve(scores: np.ndarray, y: np.ndarray, warm: bool) -> tuple[np.ndarray, list[int]]:
    """The log loss of each checkpoint's map and its Newton steps (a chain when warm)."""
    losses, steps, previous = [], [], None
    for s in scores:
        cal = MultinomialCalibrator("full", MULTINOMIAL_L2).fit(
            s, y, start=previous if warm else None
        )
        previous = cal
        losses.append(loss("log_loss", cal.predict_proba(s), y, None))
        steps.append(cal.n_iter_)
    return np.asarray(losses), steps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--features", type=int, default=30)
    ap.add_argument("--classes", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=200, help="rounds of the curve's booster")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    X, y = synthetic(args.rows, args.features, 0, args.classes)
    half = args.rows // 2
    booster = SAMME(n_estimators=args.rounds, weak_learner="tree", max_depth=3).fit(
        X[:half], y[:half]
    )
    cps = checkpoints(args.rounds)
    scores = AutoCalibratedMulticlass()._staged(booster, X[half:], cps)
    y_cal = y[half:]
    rows: list[list[Any]] = []
    out: dict[str, Any] = {"rows": args.rows, "features": args.features}
    out.update(classes=args.classes, checkpoints=len(cps), parts={})

    def record(name: str, former: list[float], now: list[float], note: str) -> None:
        f, n = float(np.median(former)), float(np.median(now))
        out["parts"][name] = {"former_s": former, "now_s": now, "ratio": f / n, "note": note}
        rows.append([name, f"{f:.3f}", f"{n:.3f}", f"{f / n:.2f}x", note])

    with one_blas_thread():
        cold_s, warm_s = [], []
        for _ in range(args.repeats):
            t, (cold, cold_steps) = cpu(lambda: curve(scores, y_cal, False))
            cold_s.append(t)
            t, (warm, warm_steps) = cpu(lambda: curve(scores, y_cal, True))
            warm_s.append(t)
        gap = float(np.abs(cold - warm).max())
        note = (
            f"{len(cps)} maps; Newton steps {np.mean(cold_steps):.1f} -> "
            f"{np.mean(warm_steps):.1f} a map; log loss differs by <= {gap:.1e}; "
            f"same best checkpoint: {int(np.argmin(cold)) == int(np.argmin(warm))}"
        )
        record("curve maps: cold -> warm", cold_s, warm_s, note)
        p = np.asarray(MultinomialCalibrator("full", MULTINOMIAL_L2).fit(scores[-1], y_cal)
                       .predict_proba(scores[-1]))  # fmt: skip
        w = np.ones(len(p))
        k = p.shape[1]
        formula_s, now_s = [], []
        for _ in range(args.repeats):
            t, a = cpu(lambda: [w[:, None, None] * (p[:, :, None] * np.eye(k)[None]
                                - p[:, :, None] * p[:, None, :]) for _ in range(20)])  # fmt: skip
            formula_s.append(t)
            t, b = cpu(lambda: [_curvature(p, w, True) for _ in range(20)])
            now_s.append(t)
        same = bool(np.array_equal(a[0], b[0]))
        record("Newton curvature, 20 times", formula_s, now_s, f"{len(p)} rows; same bits: {same}")

    n_fit = int(0.8 * args.rows)
    binned = bin_features(X[:n_fit], 256, None)
    yf = np.ascontiguousarray(y[:n_fit], dtype=np.int32)
    wf = np.random.default_rng(0).random(n_fit)
    wf /= wf.sum()
    H = np.ascontiguousarray(wf[:, None] * (yf[:, None] != np.arange(args.classes)))
    for depth in (3, 6):

        def cost(depth: int = depth) -> Any:
            return grow_tree(binned.codes, H, binned.n_thresholds, binned.max_bins, depth,
                             MODE_COST, False)  # fmt: skip

        def labels(depth: int = depth) -> Any:
            return grow_tree_labels(binned.codes, yf, wf, args.classes, binned.n_thresholds,
                                    binned.max_bins, depth, False)  # fmt: skip

        cost(), labels()  # compiled (or loaded from the cache) before timing
        former, now = [], []
        for _ in range(args.repeats):
            t, a = cpu(lambda: [cost() for _ in range(10)])
            former.append(t)
            t, b = cpu(lambda: [labels() for _ in range(10)])
            now.append(t)
        same = all(np.array_equal(u, v) for u, v in zip(a[0], b[0], strict=True))
        record(f"10 depth-{depth} trees: cost matrix -> class weights", former, now,
               f"{n_fit} rows, {a[0][0].size} nodes; same tree: {same}")  # fmt: skip

    cols = ["part", "former CPU s", "now CPU s", "ratio", "check"]
    md = heading("Multiclass search parts, former against now", {**run_header(__file__, argv)})
    md += ["", *table(cols, rows)]
    write_result(__file__, out, "\n".join(md), argv=argv)
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
