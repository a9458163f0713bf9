"""How the oblique weak learner fits its direction: ridge and logistic vs LDA, in process.

For each task, 3 stratified 70/30 splits (seeds 0-2, as ``bench/quality/baselines.py``): the
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

``--grid-check``: instead, the default ``auto`` model (:data:`models.auto.DEFAULT_GRID`,
with the oblique entry) on the two-class tasks, splits ``--first-seed`` ..; where the
oblique learner was chosen, the same fit without the oblique entry (elsewhere the two
models are the same); test Brier score of both per seed and their means.

    .venv/bin/python -m bench quality.oblique --data-dir ../shared/datasets --variant lda
    .venv/bin/python -m bench quality.oblique --data-dir ../shared/datasets --grid-check \
        --first-seed 3 --seeds 7
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

import models.weak.multiclass as multiclass_weak
import models.weak.oblique as oblique
from models.auto import DEFAULT_GRID, AutoCalibrated

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


def _task(data_dir: Path, name: str, task: object) -> tuple[np.ndarray, np.ndarray]:
    data = np.genfromtxt(data_dir / f"{name}.csv", delimiter=",", skip_header=1)
    X, y = data[:, :-1], data[:, -1].astype(int)
    if task != "multi" and task is not None:
        y = (y == task).astype(int)
    return X, y


def grid_check(args: argparse.Namespace) -> None:
    """The default grid with and without its oblique entry (see the module docstring)."""
    axis = [e for e in DEFAULT_GRID if e[0] != "oblique"]
    for name, task in TASKS:
        if task == "multi":
            continue
        X, y = _task(args.data_dir, name, task)
        rows = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            Xtr, Xte, ytr, yte = train_test_split(
                X, y, test_size=0.3, stratify=y, random_state=seed
            )
            model = AutoCalibrated(random_state=0, n_jobs=1).fit(Xtr, ytr)
            chosen = model.capacity_["weak_learner"]
            with_ob = float(np.mean((model.predict_proba(Xte)[:, 1] - yte) ** 2))
            without = with_ob
            if chosen == "oblique":
                other = AutoCalibrated(grid=axis, random_state=0, n_jobs=1).fit(Xtr, ytr)
                without = float(np.mean((other.predict_proba(Xte)[:, 1] - yte) ** 2))
            rows.append((seed, chosen, round(with_ob, 4), round(without, 4)))
        label = f"{name}:{task}" if task is not None else name
        print(
            f"{label:14s} mean Brier with oblique {np.mean([r[2] for r in rows]):.4f} "
            f"without {np.mean([r[3] for r in rows]):.4f} {rows}",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--variant", choices=["default", "ridge-1e-3", "lda"], default="default")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--grid-check", action="store_true")
    args = ap.parse_args()
    if args.grid_check:
        grid_check(args)
        return
    if args.variant == "ridge-1e-3":
        oblique.default_ridge = multiclass_weak.default_ridge = lambda n: 1e-3  # type: ignore[assignment]
    elif args.variant == "lda":
        oblique.weighted_logistic = multiclass_weak.weighted_logistic = weighted_lda  # type: ignore[assignment]
    for name, task in TASKS:
        X, y = _task(args.data_dir, name, task)
        out = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
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
