"""How the oblique weak learner fits its direction: ridge and logistic vs LDA, in process.

For each task, 3 stratified 70/30 splits (seeds 0-2, as ``bench/bench_quality.py``): the
automatic capacity search restricted to the oblique learner (``grid=[("oblique", 1, 50)]``,
5 folds, the fold ensemble for two classes, the multinomial map for more) is fitted on
the training split and its test Brier score (summed over the classes, so twice the
binary Brier score for two classes) printed per seed and averaged.

Variants (``--variant``):

* ``default`` -- the code as it is: weighted ridge logistic regression, ridge ``1/n``
  (:func:`models.weak.oblique.default_ridge`);
* ``ridge-1e-3`` -- the same with a fixed ridge ``1e-3``;
* ``lda`` -- the direction of weighted linear discriminant analysis instead
  (``(S_w + ridge I)^-1 (m_1 - m_0)`` on the standardised features, per class against
  the rest for SAMME), the cut still chosen at the least weighted error.

The variants replace module functions for the run (this script only).

    .venv/bin/python -m bench.bench_oblique --data-dir ../shared/datasets --variant lda
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

import models.multiclass.weak as multiclass_weak
import models.weak.oblique as oblique
from models.auto import AutoCalibrated

TASKS = (
    ("wine", "multi"), ("wine", 0), ("wine", 1), ("wine", 2), ("wdbc", None), ("pima", None),
    ("vehicle", 3), ("vehicle", 2), ("vehicle", "multi"), ("ionosphere", None), ("sonar", None),
)  # fmt: skip


def weighted_lda(
    Z: np.ndarray, y01: np.ndarray, w: np.ndarray, start=None, lam: float = 1e-3, *a, **k
):  # type: ignore[no-untyped-def]
    """Weighted LDA direction and its Bayes intercept (the interface of weighted_logistic)."""
    w1, w0 = w * y01, w * (1.0 - y01)
    s1, s0 = w1.sum(), w0.sum()
    if s1 <= 0 or s0 <= 0:
        return np.zeros(Z.shape[1]), (10.0 if s1 > 0 else -10.0)
    m1, m0 = w1 @ Z / s1, w0 @ Z / s0
    C = Z - np.where(y01[:, None] > 0, m1, m0)
    S = (C * w[:, None]).T @ C + lam * np.eye(Z.shape[1])
    coef = np.linalg.solve(S, m1 - m0)
    return coef, float(-0.5 * coef @ (m1 + m0) + np.log(s1 / s0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--variant", choices=["default", "ridge-1e-3", "lda"], default="default")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    if args.variant == "ridge-1e-3":
        oblique.default_ridge = multiclass_weak.default_ridge = lambda n: 1e-3  # type: ignore[assignment]
    elif args.variant == "lda":
        oblique.weighted_logistic = multiclass_weak.weighted_logistic = weighted_lda  # type: ignore[assignment]
    for name, task in TASKS:
        data = np.genfromtxt(args.data_dir / f"{name}.csv", delimiter=",", skip_header=1)
        X, y = data[:, :-1], data[:, -1].astype(int)
        if task != "multi" and task is not None:
            y = (y == task).astype(int)
        out = []
        for seed in range(args.seeds):
            Xtr, Xte, ytr, yte = train_test_split(
                X, y, test_size=0.3, stratify=y, random_state=seed
            )
            model = AutoCalibrated(grid=[("oblique", 1, 50)], random_state=0, n_jobs=1)
            p = model.fit(Xtr, ytr).predict_proba(Xte)
            out.append(float(((p - np.eye(p.shape[1])[yte]) ** 2).sum(axis=1).mean()))
        label = f"{name}:{task}" if task is not None else name
        print(
            f"{label:14s} {args.variant:11s} {np.round(out, 4)} mean {np.mean(out):.4f}", flush=True
        )


if __name__ == "__main__":
    main()
