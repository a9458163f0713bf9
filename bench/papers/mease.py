"""Mease, Wyner & Buja (2007), Tables 1-4: JOUS-Boost vs P-AdaBoost and LogitBoost.

Reproduces section 5 of *Boosted Classification Trees and Class Probability/Quantile
Estimation* (JMLR 8) with this project's implementations: the 10-Norm simulation (Eq. 2,
n in {500, 5000}, gamma in {10, 0.5}, hold-out n* = 2500, losses against the true p(x)),
Sonar (10-fold CV, over-sampling only), Satimage ({1, 7} vs {2, 3, 4, 5}, 4435 train /
2000 test) and German credit (10-fold CV, under-sampling only, categorical predictors).
Reported: misclassification error and the squared (3), log (4) and exponential (5)
losses, with p_hat clipped to [0.05, 0.95] for log and exponential loss (section 5.1),
beside the paper's tables; and the hold-out loss curves of P-AdaBoost (and LogitBoost)
against the number of rounds (the overfitting of Figs. 5-9, 13-17), as PNG plots.

Methods: P-AdaBoost = discrete AdaBoost + link (1) (catalog ``p_adaboost``); LogitBoost =
``cs_logitboost`` with c_fp = c_fn (plain LogitBoost of Friedman et al. 2000, regression
stumps only in this library) and, as a second LogitBoost with the paper's 8-node trees,
scikit-learn's ``GradientBoostingClassifier(loss="log_loss", max_leaf_nodes=8,
learning_rate=1)`` (Newton leaf values: LogitBoost's step with p = 1/(1+exp(-2F)));
JOUS-Boost = ``jous`` (delta = 10, nu = 1, over- and/or under-sampling as the paper ran
it). Trees: ``weak_learner="tree"``, ``max_depth=3`` (at most 8 leaves, the paper's
8-node rpart trees): costwise's histogram tree, or with ``--tree sklearn-gini``
scikit-learn's Gini ``DecisionTreeClassifier`` (:func:`bench.papers.common.tree_learner`).

Run: ``python -m bench.papers.mease [--repeats N] [--tree costwise|sklearn-gini] [--quick]
[--out docs/results/mease]``.

References
----------
.. [1] Mease, D., Wyner, A. J., Buja, A. (2007). Boosted classification trees and class
   probability/quantile estimation. JMLR 8, 409-439: Eq. 1 (link), Eq. 2 (10-Norm),
   Eqs. 3-5 (losses), section 5 and Tables 1-4.
.. [2] Friedman, J., Hastie, T., Tibshirani, R. (2000). Additive logistic regression: a
   statistical view of boosting. Annals of Statistics 28, 337-374 (LogitBoost).
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.papers import common
from models.catalog.algorithms import get_algorithm

CLIP = (0.05, 0.95)
N_HOLDOUT = 2500

#: The data sets of Tables 1-4, in the paper's order.
PAPER_SETS = (
    "10-Norm(n=500, γ=10)",
    "10-Norm(n=500, γ=0.5)",
    "10-Norm(n=5000, γ=10)",
    "10-Norm(n=5000, γ=0.5)",
    "Sonar",
    "Satimage",
    "German Credit",
)
_PROBABILITY_COLUMNS = ("jous_over", "jous_under", "p_adaboost", "logitboost")
#: Tables 1-4 of the paper at m = 800 (columns used here; "-" = not run = None).
#: Table 1 (misclassification) has AdaBoost and LogitBoost only; JOUS classifies as AdaBoost.
PAPER: dict[str, dict[str, dict[str, float | None]]] = {
    "misclassification": common.paper_table(PAPER_SETS, ("p_adaboost", "logitboost"), [
        (0.23, 0.25),
        (0.34, 0.36),
        (0.10, 0.12),
        (0.28, 0.29),
        (0.11, 0.16),
        (0.06, 0.06),
        (0.25, 0.25),
    ]),
    "squared": common.paper_table(PAPER_SETS, _PROBABILITY_COLUMNS, [
        (0.14, 0.15, 0.20, 0.22),
        (0.07, 0.07, 0.19, 0.19),
        (0.09, 0.06, 0.05, 0.07),
        (0.03, 0.03, 0.03, 0.10),
        (0.08, None, 0.11, 0.16),
        (0.06, 0.08, 0.06, 0.05),
        (None, 0.18, 0.24, 0.22),
    ]),
    "log": common.paper_table(PAPER_SETS, _PROBABILITY_COLUMNS, [
        (0.49, 0.50, 0.69, 0.75),
        (0.63, 0.63, 1.04, 1.06),
        (0.38, 0.29, 0.25, 0.33),
        (0.53, 0.52, 0.52, 0.77),
        (0.26, None, 0.36, 0.51),
        (0.21, 0.29, 0.22, 0.21),
        (None, 0.55, 0.75, 0.68),
    ]),
    "exponential": common.paper_table(PAPER_SETS, _PROBABILITY_COLUMNS, [
        (0.78, 0.79, 1.12, 1.20),
        (0.95, 0.94, 1.61, 1.63),
        (0.65, 0.53, 0.48, 0.61),
        (0.82, 0.80, 0.80, 1.20),
        (0.50, None, 0.67, 0.88),
        (0.43, 0.53, 0.46, 0.45),
        (None, 0.86, 1.19, 1.08),
    ]),
}  # fmt: skip

LOSSES = ("misclassification", "squared", "log", "exponential")
METHODS: dict[str, str] = {
    "jous_over": "JOUS over-sampled",
    "jous_under": "JOUS under-sampled",
    "p_adaboost": "P-AdaBoost",
    "logitboost": "LogitBoost (stumps)",
    "logitboost_tree": "LogitBoost-type GBM (8-leaf trees)",
}
#: Methods with staged (per-round) probabilities, plotted as curves.
STAGED = ("p_adaboost", "logitboost", "logitboost_tree")


def losses(p: np.ndarray, p_hat: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Hold-out averages of the paper's losses.

    ``p`` is the true P(y = 1 | x) (simulations) or ``1{y = 1}`` (real data, section 5.2);
    misclassification compares ``1{p_hat > 1/2}`` with the labels ``y``. Squared loss (3)
    uses p_hat as is; log (4) and exponential (5) loss clip it to [0.05, 0.95]
    (section 5.1). Log loss is -[p log p_hat + (1 - p) log(1 - p_hat)] (the transcribed
    minus sign before (1 - p) is a typo: the paper calls it the Bernoulli negative
    log-likelihood).
    """
    p = np.asarray(p, dtype=np.float64)
    ph = np.asarray(p_hat, dtype=np.float64)
    pc = np.clip(ph, *CLIP)
    return {
        "misclassification": float(np.mean((ph > 0.5).astype(int) != y)),
        "squared": float(np.mean((p - ph) ** 2)),
        "log": float(np.mean(-(p * np.log(pc) + (1 - p) * np.log(1 - pc)))),
        "exponential": float(
            np.mean(p * np.sqrt((1 - pc) / pc) + (1 - p) * np.sqrt(pc / (1 - pc)))
        ),
    }


def ten_norm(
    n: int, gamma: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """10-Norm model, Eq. 2: x ~ N^10(0, I), logit p = gamma [1 - x1 + x2 - ... + x6] sum_1^6 x_j.

    Returns ``(X, y, p)`` with y ~ Bernoulli(p(x)).
    """
    X = rng.standard_normal((n, 10))
    signs = np.array([-1.0, 1.0, -1.0, 1.0, -1.0, 1.0])
    logit = gamma * (1.0 + X[:, :6] @ signs) * X[:, :6].sum(axis=1)
    p = 1.0 / (1.0 + np.exp(-np.clip(logit, -700, 700)))
    y = (rng.random(n) < p).astype(np.int64)
    return X, y, p


@dataclass
class Problem:
    """One row of the paper's tables: its folds and which JOUS variants the paper ran."""

    key: str
    title: str
    samplings: tuple[str, ...]
    positive: str
    protocol: str
    data: Any  # callable(seed) -> iterator of (Xtr, ytr, Xte, yte, p_te)


def _tenorm_folds(n: int, gamma: float, n_holdout: int) -> Any:
    def folds(seed: int) -> Iterator[tuple[np.ndarray, ...]]:
        rng = np.random.default_rng([seed, n, int(gamma * 10)])
        Xtr, ytr, _ = ten_norm(n, gamma, rng)
        Xte, yte, pte = ten_norm(n_holdout, gamma, rng)
        yield Xtr, ytr, Xte, yte, pte

    return folds


def _cv_folds(X: np.ndarray, y: np.ndarray, n_folds: int) -> Any:
    def folds(seed: int) -> Iterator[tuple[np.ndarray, ...]]:
        from sklearn.model_selection import StratifiedKFold

        for tr, te in StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(X, y):
            yield X[tr], y[tr], X[te], y[te], y[te].astype(np.float64)

    return folds


def _split_folds(X: np.ndarray, y: np.ndarray, n_test: int) -> Any:
    def folds(seed: int) -> Iterator[tuple[np.ndarray, ...]]:
        Xtr, Xte, ytr, yte = common.stratified_split(X, y, n_test / y.size, seed)
        yield Xtr, ytr, Xte, yte, yte.astype(np.float64)

    return folds


def problems(quick: bool, names: Sequence[str] | None, source: str) -> list[Problem]:
    """The paper's simulations and datasets (``quick``: small 10-Norm + breast cancer)."""
    out: list[Problem] = []
    sims = [(500, 10.0), (500, 0.5), (5000, 10.0), (5000, 0.5)]
    if quick:
        sims, n_holdout = [(120, 10.0), (120, 0.5)], 300
    else:
        n_holdout = N_HOLDOUT
    wanted = set(names) if names else None
    for n, g in sims:
        key = f"tenorm_n{n}_g{g:g}"
        if wanted is None or key in wanted or "tenorm" in wanted:
            out.append(
                Problem(
                    key,
                    f"10-Norm(n={n}, γ={g:g})",
                    ("over", "under"),
                    "y = 1 with probability p(x) of Eq. 2",
                    f"one training sample of n = {n}, hold-out n* = {n_holdout} (losses vs true p)",
                    _tenorm_folds(n, g, n_holdout),
                )
            )
    real = ["breast_cancer"] if quick else ["sonar", "satimage", "german"]
    if wanted is not None:
        real = [r for r in real if r in wanted] + [
            r for r in wanted if r not in real and not r.startswith("tenorm")
        ]
    for name in real:
        ds = common.load_dataset(name, source=source)
        if name == "sonar":
            out.append(
                Problem(name, "Sonar", ("over",), "class 1 = rock", "10-fold CV",
                        _cv_folds(ds.X, ds.y, 10))
            )  # fmt: skip
        elif name == "satimage":
            y01 = np.isin(ds.y, [0, 5]).astype(np.int64)
            out.append(
                Problem(
                    name, "Satimage", ("over", "under"),
                    "original classes {1, 7} (codes 0, 5) vs {2, 3, 4, 5}",
                    "random stratified 4435 train / 2000 test split",
                    _split_folds(ds.X, y01, 2000),
                )
            )  # fmt: skip
        elif name == "german":
            out.append(
                Problem(name, "German Credit", ("under",), "class 1 = bad credit", "10-fold CV",
                        _cv_folds(ds.X, ds.y, 10))
            )  # fmt: skip
        else:
            y = (ds.y == np.unique(ds.y)[-1]).astype(np.int64)
            out.append(
                Problem(name, name, ("over", "under"), f"class {int(np.unique(ds.y)[-1])}",
                        "3-fold CV", _cv_folds(ds.X, y, 3))
            )  # fmt: skip
    return out


def _staged_proba(name: str, est: Any, X: np.ndarray, n_rounds: int) -> np.ndarray:
    """P(y = 1 | x) after rounds 1..n_rounds, shape (n_rounds, n) (padded after early stops)."""
    if name == "logitboost_tree":
        stages = [p[:, 1] for p in est.staged_predict_proba(X)]
    else:
        stages = list(est.staged_score_samples(X))
    arr = np.asarray(stages, dtype=np.float64)
    if arr.shape[0] < n_rounds:  # training stopped early: the model no longer changes
        last = arr[-1:] if arr.size else np.full((1, X.shape[0]), 0.5)
        arr = np.concatenate([arr, np.repeat(last, n_rounds - arr.shape[0], axis=0)])
    return arr


def _build(name: str, n_rounds: int, seed: int) -> Any:
    common_params = {
        "n_estimators": n_rounds,
        "weak_learner": "tree",
        "max_depth": 3,
        "random_state": seed,
    }
    if name == "p_adaboost":
        return get_algorithm("p_adaboost").build(common_params, {})
    if name == "logitboost":
        return get_algorithm("cs_logitboost").build(
            {**common_params, "weak_learner": "stump"}, {"c_fp": 1.0, "c_fn": 1.0}
        )
    if name == "logitboost_tree":
        from sklearn.ensemble import GradientBoostingClassifier

        return GradientBoostingClassifier(
            loss="log_loss", learning_rate=1.0, n_estimators=n_rounds, max_leaf_nodes=8,
            max_depth=None, random_state=seed,
        )  # fmt: skip
    sampling = name.removeprefix("jous_")
    return get_algorithm("jous").build(
        common_params, {"delta": 10, "nu": 1.0, "sampling": sampling}
    )


def run_problem(
    prob: Problem,
    seed: int,
    n_rounds: int,
    jous_rounds: int,
    with_tree_logit: bool,
    progress: common.Progress,
) -> dict[str, Any]:
    """Every method on every fold of one problem; pooled hold-out losses and staged curves."""
    methods = [f"jous_{s}" for s in prob.samplings] + ["p_adaboost", "logitboost"]
    if with_tree_logit:
        methods.append("logitboost_tree")
    p_all: list[np.ndarray] = []
    y_all: list[np.ndarray] = []
    pred: dict[str, list[np.ndarray]] = {m: [] for m in methods}
    staged: dict[str, list[np.ndarray]] = {m: [] for m in methods if m in STAGED}
    base: list[np.ndarray] = []
    seconds = dict.fromkeys(methods, 0.0)
    for Xtr, ytr, Xte, yte, pte in prob.data(seed):
        p_all.append(pte)
        y_all.append(yte)
        base.append(np.full(yte.size, ytr.mean()))
        for m in methods:
            t0 = time.perf_counter()
            rounds = jous_rounds if m.startswith("jous") else n_rounds
            est = _build(m, rounds, seed).fit(Xtr, ytr)
            if m in STAGED:
                st = _staged_proba(m, est, Xte, n_rounds)
                staged[m].append(st)
                pred[m].append(st[-1])
            else:
                pred[m].append(est.predict_proba(Xte)[:, 1])
            seconds[m] += time.perf_counter() - t0
            progress.update(1, f"{prob.key} {m}")
    p, y = np.concatenate(p_all), np.concatenate(y_all)
    final = {m: losses(p, np.concatenate(v), y) for m, v in pred.items()}
    # the staged methods also at m = jous_rounds (the same ensemble size as JOUS)
    at_jous = {
        m: losses(p, np.concatenate([s[min(jous_rounds, n_rounds) - 1] for s in v], axis=0), y)
        for m, v in staged.items()
    }
    checkpoints = sorted({*range(1, n_rounds + 1, max(1, n_rounds // 80)), n_rounds})
    curves: dict[str, dict[str, list[Any]]] = {}
    for m, v in staged.items():
        at = [losses(p, np.concatenate([s[r - 1] for s in v]), y) for r in checkpoints]
        curves[m] = {"rounds": list(checkpoints), **{k: [a[k] for a in at] for k in LOSSES}}
    return {
        "key": prob.key,
        "title": prob.title,
        "positive": prob.positive,
        "protocol": prob.protocol,
        "n_test_total": int(y.size),
        "n_folds": len(y_all),
        "final": final,
        "at_jous_rounds": at_jous,
        "baseline": losses(p, np.concatenate(base), y),
        "curves": curves,
        "fit_seconds": seconds,
    }


def _unit_path(ckpt_dir: Path, unit: dict[str, Any]) -> Path:
    return ckpt_dir / f"{unit['key']}-seed{unit['seed']}.json"


def save_checkpoint(ckpt_dir: Path, unit: dict[str, Any], result: dict[str, Any]) -> None:
    """Write one finished problem (with the settings it ran under) atomically."""
    path = _unit_path(ckpt_dir, unit)
    tmp = path.with_suffix(".tmp")
    common.write_json(tmp, {"unit": unit, "result": result})
    tmp.replace(path)


def load_checkpoint(ckpt_dir: Path, unit: dict[str, Any]) -> dict[str, Any] | None:
    """The saved result of ``unit`` if one exists with exactly these settings."""
    path = _unit_path(ckpt_dir, unit)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if doc.get("unit") != unit:
        return None
    result: dict[str, Any] = doc["result"]
    return result


def plot(result: dict[str, Any], out: Path, n_rounds: int, jous_rounds: int) -> Path:
    """Four panels (misclassification, squared, log, exp loss) against rounds, as Figs. 5-18."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    styles = {
        "p_adaboost": ("k", "--", "P-AdaBoost"),
        "logitboost": ("b", (0, (8, 3)), "LogitBoost (stumps)"),
        "logitboost_tree": ("c", "-.", "LogitBoost-type GBM (8 leaves)"),
    }
    for ax, loss in zip(axes, LOSSES, strict=True):
        for m, c in result["curves"].items():
            color, ls, label = styles[m]
            ax.plot(c["rounds"], c[loss], color=color, linestyle=ls, label=label)
        for m, color, ls in (("jous_over", "r", ":"), ("jous_under", "g", "-")):
            if m in result["final"]:
                ax.axhline(
                    result["final"][m][loss], color=color, linestyle=ls, linewidth=1.2,
                    label=f"{METHODS[m]} (m = {jous_rounds})",
                )  # fmt: skip
        ax.plot([0], [result["baseline"][loss]], "ko", markersize=7)
        ax.set_title(loss if loss == "misclassification" else f"{loss} loss")
        ax.set_xlabel("boosting rounds m")
    axes[0].legend(fontsize=7, loc="upper right")
    fig.suptitle(f"{result['title']}: hold-out losses (dot at m = 0: marginal proportion)")
    fig.tight_layout()
    path = out / f"{result['key']}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def summary_body(results: list[dict[str, Any]], settings: dict[str, Any]) -> str:
    """Markdown: one table per loss, ours (at the final rounds) beside the paper's."""
    nr, jr = settings["n_rounds"], settings["jous_rounds"]
    tree = common.TREES[settings.get("tree", "costwise")]
    lines = [
        "",
        "Reproduction of section 5 (Tables 1-4) of Mease, Wyner & Buja (2007). Hold-out "
        "averages; log and exponential loss clip p_hat to [0.05, 0.95] for every method "
        "(section 5.1). Trees with at most 8 leaves (depth 3) for P-AdaBoost, JOUS and the "
        f"GBM ({tree} for P-AdaBoost and JOUS, scikit-learn's regression tree in the GBM); "
        "our LogitBoost fits regression stumps (the library's LogitBoost has no "
        f"trees). P-AdaBoost and the LogitBoosts: m = {nr} rounds (the paper: 800); "
        f"JOUS-Boost: delta = 10, nu = 1, m = {jr} rounds per q-classifier. "
        + (
            f"In brackets: P-AdaBoost / LogitBoost at m = {jr}, the JOUS ensemble size. "
            if jr < nr
            else ""
        )
        + f"Replications: {settings['repeats']} (seed {settings['seed']}); the paper used "
        "one draw per simulation and 10-fold CV without repeats.",
        "",
        common.md_table(
            ["problem", "positive class", "protocol"],
            [[r["title"], r["positive"], r["protocol"]] for r in results],
            "lll",
        ),
        "",
    ]
    for loss in LOSSES:
        lines += [f"## {loss} {'error' if loss == 'misclassification' else 'loss'}", ""]
        cols = [m for m in METHODS if any(m in r["final"] for r in results)]
        rows = []
        for r in results:
            ours = []
            for m in cols:
                if m not in r["final"]:
                    ours.append("-")
                    continue
                cell = f"{r['final'][m][loss]:.3f}"
                if m in r["at_jous_rounds"] and jr < nr:
                    cell += f" [{r['at_jous_rounds'][m][loss]:.3f}]"
                ours.append(cell)
            rows.append([r["title"], "ours", *ours])
            paper = PAPER[loss].get(r["title"])
            if paper is not None:
                pcols = [
                    _fmt(paper.get("logitboost" if m == "logitboost_tree" else m))
                    if m in paper or m == "logitboost_tree"
                    else "-"
                    for m in cols
                ]
                rows.append(["", "paper (m = 800)", *pcols])
        lines += [
            common.md_table(
                ["problem", "source", *(METHODS[m] for m in cols)], rows, "ll" + "r" * len(cols)
            ),
            "",
        ]
    plots = (
        "Plots of the hold-out losses against rounds: "
        + ", ".join(f"[{r['key']}.png]({r['key']}.png)" for r in results)
        if settings.get("plots", True)
        else "No plots (matplotlib was not installed)"
    )
    lines += [
        "The paper's LogitBoost (Dettling & Bühlmann's code with 8-node rpart trees) is "
        f"shown in both LogitBoost columns. {plots}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the experiment and write ``<out>/mease.{md,csv,json}`` and one PNG per problem."""
    parser = common.base_parser("mease", __doc__.splitlines()[0], default_repeats=1)
    parser.add_argument("--rounds", type=int, default=None, help="P-AdaBoost/LogitBoost (800)")
    parser.add_argument("--jous-rounds", type=int, default=None, help="JOUS rounds (800)")
    parser.add_argument("--no-gbm", action="store_true", help="skip the 8-leaf GBM LogitBoost")
    common.add_tree_option(parser)
    parser.add_argument(
        "--over-max-n",
        type=int,
        default=None,
        help="run JOUS over-sampling only on problems with at most this many training rows",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="reuse the problems finished by an earlier run with the same settings "
        "(OUT/checkpoints/, written as each problem ends)",
    )
    args = parser.parse_args(argv)
    started = time.time()
    if args.quick:
        n_rounds, jous_rounds = args.rounds or 12, args.jous_rounds or 6
        source, repeats = args.source or "builtin", 1
    else:
        n_rounds, jous_rounds = args.rounds or 800, args.jous_rounds or 800
        source, repeats = args.source or "shared", args.repeats
    jous_rounds = min(jous_rounds, n_rounds)
    probs = problems(args.quick, args.datasets, source)
    if args.over_max_n is not None:
        for pr in probs:
            n_train = max(f[1].size for f in pr.data(args.seed))
            if n_train > args.over_max_n and "over" in pr.samplings:
                pr.samplings = tuple(s for s in pr.samplings if s != "over")
                pr.protocol += f"; JOUS over-sampling not run (n = {n_train} > --over-max-n)"
    total = 0
    for pr in probs:
        n_methods = len(pr.samplings) + 2 + (0 if args.no_gbm else 1)
        total += n_methods * sum(1 for _ in pr.data(args.seed)) * repeats
    progress = common.Progress(total, "mease")
    results = []
    ckpt_dir = args.out / "checkpoints"
    for rep in range(repeats):
        for pr in probs:
            unit = {
                "key": pr.key, "samplings": list(pr.samplings), "seed": args.seed + rep,
                "n_rounds": n_rounds, "jous_rounds": jous_rounds, "gbm": not args.no_gbm,
                "source": source, "quick": bool(args.quick), "tree": args.tree,
            }  # fmt: skip
            res = load_checkpoint(ckpt_dir, unit) if args.resume else None
            if res is None:
                with common.tree_learner(args.tree):
                    res = run_problem(
                        pr, args.seed + rep, n_rounds, jous_rounds, not args.no_gbm, progress
                    )
                save_checkpoint(ckpt_dir, unit, res)
            else:
                progress.update(len(res["final"]) * res["n_folds"], f"{pr.key} (checkpoint)")
            res["repeat"] = rep
            results.append(res)
    progress.close()
    # several replications: average the per-replication losses (curves from the first)
    merged: list[dict[str, Any]] = []
    for pr in probs:
        rs = [r for r in results if r["key"] == pr.key]
        first = dict(rs[0])
        for part in ("final", "at_jous_rounds", "baseline"):
            src = [r[part] for r in rs]
            if part == "baseline":
                first[part] = {k: float(np.mean([s[k] for s in src])) for k in LOSSES}
            else:
                first[part] = {
                    m: {k: float(np.mean([s[m][k] for s in src])) for k in LOSSES} for m in src[0]
                }
        merged.append(first)
    out = args.out
    settings = {
        "n_rounds": n_rounds,
        "jous_rounds": jous_rounds,
        "repeats": repeats,
        "seed": args.seed,
        "max_depth": 3,
        "tree": args.tree,
        "delta": 10,
        "nu": 1.0,
        "clip": CLIP,
    }
    has_mpl = importlib.util.find_spec("matplotlib") is not None
    if has_mpl:
        for r in merged:
            plot(r, out, n_rounds, jous_rounds)
    else:
        print("matplotlib is not installed: no plots (pip install -e '.[papers]')")
    settings["plots"] = has_mpl
    info = common.run_info(argv, started, module="bench.papers.mease")
    flat = [
        {
            "problem": r["title"],
            "repeat": r["repeat"],
            "method": m,
            "rounds": jous_rounds if m.startswith("jous") else n_rounds,
            **r["final"][m],
            **{f"paper_{k}": (PAPER[k].get(r["title"]) or {}).get(m) for k in LOSSES},
            "fit_seconds": round(r["fit_seconds"][m], 2),
        }
        for r in results
        for m in r["final"]
    ]
    common.write_csv(out / "mease.csv", flat)
    return common.write_results(
        out / "mease",
        "Mease, Wyner & Buja (2007), Tables 1-4: JOUS-Boost vs P-AdaBoost and LogitBoost",
        info,
        summary_body(merged, settings),
        settings=settings,
        results=merged,
        paper=PAPER,
    )


if __name__ == "__main__":
    raise SystemExit(main())
