"""Yang, Guo & Chang (2020), section 5.1 and Table 1: angle-based cost-sensitive boosting.

Reproduces Simulations 1 and 2 of *Angle-Based Cost-Sensitive Multicategory
Classification* (section 5.1.1, the waveform model of Breiman et al. 1984; section 5.1.2,
the four-class model of Wang 2013) with the paper's cost matrices, training size 300,
test size 4700, 200 boosting steps and trees with at most 4 terminal nodes (section 5:
depth-2 trees here), and reports the test cost

    TC(Phi) = 1/n_t sum_i sum_{k != y_i} C[y_i][k] I(Phi(x_i) = k)      (section 5, first display)

of angle-based AdaBoost (Algorithm 1) and LogitBoost (Algorithm 2) against SAMME, averaged
over replications with standard errors, beside the paper's Table 1. It adds one real
multiclass dataset (``vehicle``) with a non-uniform cost matrix, on which calibrated SAMME
and calibrated one-vs-rest AdaBoost decide at that cost matrix (argmin_k sum_j C_jk p_j,
Eq. 4) as extra columns. Trees: ``weak_learner="tree"``: costwise's histogram tree, or with
``--tree sklearn-gini`` scikit-learn's Gini ``DecisionTreeClassifier``
(:func:`bench.papers.common.tree_learner`).

Run: ``python -m bench.papers.yang [--repeats N] [--tree costwise|sklearn-gini] [--quick]
[--out docs/results/yang]``.

References
----------
.. [1] Yang, Y., Guo, Y., Chang, X. (2020). Angle-based cost-sensitive multicategory
   classification. Section 5.1, Table 1; Eq. 4 (cost-sensitive Bayes rule).
.. [2] Zhu, J., Zou, H., Rosset, S., Hastie, T. (2009). Multi-class AdaBoost (SAMME).
.. [3] Wang, J. (2013). Boosting the generalized margin in cost-sensitive multiclass
   classification. JCGS 22 (the Simulation 2 model and both cost matrices).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bench.papers import common
from models.catalog.algorithms import get_algorithm
from models.decisions.rule import decide
from models.multiclass.samme import SAMME

#: Cost matrices of section 5.1.1 and 5.1.2 (rows = truth, columns = prediction).
SIM_COSTS: dict[str, list[list[float]]] = {
    "sim1": [[0, 2, 2], [1, 0, 1], [1, 1, 0]],
    "sim2": [[0, 1, 2, 2], [1, 0, 2, 2], [0.5, 0.5, 0, 1], [0.5, 0.5, 1, 0]],
}

#: Table 1 of the paper: mean test cost (standard error) over 100 replications.
#: Keys: simulation and scenario ("" = cost-insensitive, "c" = cost-sensitive).
PAPER_TABLE1: dict[str, dict[str, tuple[float, float]]] = common.paper_table(
    ("Simulation 1", "Simulation 1c", "Simulation 2", "Simulation 2c"),
    ("adaboost_mh", "samme", "adaboost_m2", "pnorm", "angle_adaboost", "angle_logitboost"),
    [
        [(0.252, 0.0048), (0.182, 0.0008), (0.264, 0.0018), (0.211, 0.0012), (0.201, 0.0010), (0.204, 0.0010)],
        [(0.300, 0.0072), (0.237, 0.0014), (0.389, 0.0021), (0.293, 0.0020), (0.246, 0.0014), (0.248, 0.0014)],
        [(0.363, 0.0058), (0.150, 0.0051), (0.141, 0.0051), (0.123, 0.0022), (0.101, 0.0007), (0.098, 0.0006)],
        [(0.390, 0.0127), (0.177, 0.0054), (0.275, 0.0015), (0.164, 0.0020), (0.106, 0.0011), (0.100, 0.0010)],
    ],
)  # fmt: skip

#: Real-data cost matrices (rows = truth, columns = prediction; classes in code order).
#: vehicle: 0 bus, 1 opel, 2 saab, 3 van (UCI Statlog vehicle silhouettes). Telling the two
#: saloon cars apart is the hard, cheap mistake (1); calling a large vehicle (bus/van) a car
#: is the expensive one (5: e.g. a wrong toll class or lane assignment for a heavy
#: vehicle); a car called a large vehicle costs 2, bus <-> van costs 2. The matrix is an
#: illustrative assumption (the dataset has no costs), deliberately asymmetric.
#: wine (scikit-learn, used by --quick): an asymmetric 3 x 3 matrix of the same spirit.
DATASET_COSTS: dict[str, list[list[float]]] = {
    "vehicle": [[0, 5, 5, 2], [2, 0, 1, 2], [2, 1, 0, 2], [2, 5, 5, 0]],
    "wine": [[0, 1, 4], [2, 0, 1], [4, 1, 0]],
}

#: Columns of our tables: key -> label.
SIM_METHODS: dict[str, str] = {
    "samme": "SAMME (argmax, cost-blind)",
    "angle_adaboost": "Angle-based AdaBoost",
    "angle_logitboost": "Angle-based LogitBoost",
}
DATA_METHODS: dict[str, str] = {
    **SIM_METHODS,
    "samme_calibrated": "SAMME calibrated, decides at C",
    "ovr_calibrated": "OvR AdaBoost calibrated, decides at C",
}

N_TRAIN, N_TEST, N_ROUNDS, MAX_DEPTH = 300, 4700, 200, 2


def waveform(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Simulation 1 (section 5.1.1): K = 3, d = 21, ``x_ij ~ N(mu(y_i, j), 1)``.

    ``mu(1, j) = u v1(j) + (1-u) v2(j)``, ``mu(2, j) = u v1(j) + (1-u) v3(j)``,
    ``mu(3, j) = u v2(j) + (1-u) v3(j)`` with ``v1(j) = max(6 - |j - 11|, 0)``,
    ``v2(j) = v1(j - 4)``, ``v3(j) = v1(j + 4)``, j = 1..21 and ``u ~ U(0, 1)`` drawn once
    per observation (the standard waveform generator; the paper writes only u ~ U(0,1)).
    Labels are returned as 0..2 (paper's classes 1..3).
    """
    j = np.arange(1, 22)
    v1 = np.maximum(6 - np.abs(j - 11), 0).astype(np.float64)
    v2 = np.maximum(6 - np.abs(j - 4 - 11), 0).astype(np.float64)
    v3 = np.maximum(6 - np.abs(j + 4 - 11), 0).astype(np.float64)
    y = rng.integers(0, 3, n)
    u = rng.uniform(0.0, 1.0, (n, 1))
    a = np.stack([v1, v1, v2])[y]
    b = np.stack([v2, v3, v3])[y]
    X = u * a + (1 - u) * b + rng.standard_normal((n, 21))
    return X, y.astype(np.int64)


def wang_sim2(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Simulation 2 (section 5.1.2): K = 4, d = 10.

    ``x_1 ~ N(3(I(y=1) - I(y=3)), 1)``, ``x_2 ~ N(3(I(y=2) - I(y=3)), 1)``, ``x_j ~ N(0, 1)``
    for j = 3..10. Labels are returned as 0..3 (paper's classes 1..4).
    """
    y = rng.integers(0, 4, n)
    X = rng.standard_normal((n, 10))
    X[:, 0] += 3.0 * ((y == 0).astype(float) - (y == 2))
    X[:, 1] += 3.0 * ((y == 1).astype(float) - (y == 2))
    return X, y.astype(np.int64)


SIMULATIONS: dict[str, tuple[str, Callable[[int, np.random.Generator], Any]]] = {
    "sim1": ("Simulation 1", waveform),
    "sim2": ("Simulation 2", wang_sim2),
}


def test_cost(y: np.ndarray, pred: np.ndarray, cost: Sequence[Sequence[float]]) -> float:
    """``TC = mean_i C[y_i][pred_i]`` (section 5 of [1]_; zero diagonal)."""
    C = np.asarray(cost, dtype=np.float64)
    return float(C[np.asarray(y, dtype=np.int64), np.asarray(pred, dtype=np.int64)].mean())


def _common(n_rounds: int, seed: int) -> dict[str, Any]:
    return {
        "n_estimators": n_rounds,
        "weak_learner": "tree",
        "max_depth": MAX_DEPTH,
        "random_state": seed,
    }


def _angle(name: str, cost: Any, n_rounds: int, seed: int) -> Any:
    return get_algorithm(name).build(_common(n_rounds, seed), {"cost_matrix": cost})


def run_simulation(
    key: str, rep: int, seed: int, n_rounds: int, n_test: int
) -> list[dict[str, Any]]:
    """One replication of one simulation: both scenarios, all methods; rows of test costs."""
    title, gen = SIMULATIONS[key]
    rng = np.random.default_rng([seed, rep, int(key[-1])])
    X, y = gen(N_TRAIN + n_test, rng)
    Xtr, ytr, Xte, yte = X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]
    K = int(y.max()) + 1
    zero_one = (1.0 - np.eye(K)).tolist()
    s = seed + rep
    samme_pred = SAMME(**_common(n_rounds, s)).fit(Xtr, ytr).predict(Xte)
    rows: list[dict[str, Any]] = []
    for scen, cost in (("", zero_one), ("c", SIM_COSTS[key])):
        train_cost = None if scen == "" else cost
        preds = {"samme": samme_pred}
        for name in ("angle_adaboost", "angle_logitboost"):
            preds[name] = _angle(name, train_cost, n_rounds, s).fit(Xtr, ytr).predict(Xte)
        for m, p in preds.items():
            rows.append(
                {
                    "experiment": title + scen,
                    "repeat": rep,
                    "method": m,
                    "test_cost": test_cost(yte, p, cost),
                    "error_rate": float(np.mean(p != yte)),
                }
            )
    return rows


def run_dataset(
    X: np.ndarray, y: np.ndarray, name: str, rep: int, seed: int, n_rounds: int
) -> list[dict[str, Any]]:
    """One stratified 70/30 split of a real dataset, every method at its cost matrix."""
    cost = DATASET_COSTS[name]
    s = seed + rep
    Xtr, Xte, ytr, yte = common.stratified_split(X, y, 0.3, s)
    preds: dict[str, np.ndarray] = {
        "samme": SAMME(**_common(n_rounds, s)).fit(Xtr, ytr).predict(Xte)
    }
    for m in ("angle_adaboost", "angle_logitboost"):
        preds[m] = _angle(m, cost, n_rounds, s).fit(Xtr, ytr).predict(Xte)
    for m, algo in (("samme_calibrated", "samme"), ("ovr_calibrated", "ovr_adaboost")):
        est = get_algorithm(algo).build({**_common(n_rounds, s), "score_kind": "vote"}, {})
        est.fit(Xtr, ytr)
        idx = decide(est.predict_proba(Xte), np.asarray(cost, dtype=np.float64)).labels_index
        preds[m] = np.asarray(est.classes_)[idx]
    return [
        {
            "experiment": name,
            "repeat": rep,
            "method": m,
            "test_cost": test_cost(yte, p, cost),
            "error_rate": float(np.mean(p != yte)),
        }
        for m, p in preds.items()
    ]


def aggregate(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Mean, standard error (sd / sqrt(R)) and mean error rate per experiment and method."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    keys = sorted({(r["experiment"], r["method"]) for r in rows})
    for exp, m in keys:
        tc = np.array([r["test_cost"] for r in rows if r["experiment"] == exp and r["method"] == m])
        er = np.array(
            [r["error_rate"] for r in rows if r["experiment"] == exp and r["method"] == m]
        )
        se = float(tc.std(ddof=1) / np.sqrt(tc.size)) if tc.size > 1 else float("nan")
        out.setdefault(exp, {})[m] = {
            "mean": float(tc.mean()),
            "se": se,
            "error_rate": float(er.mean()),
            "n": int(tc.size),
        }
    return out


def _cell(v: dict[str, float] | tuple[float, float] | None) -> str:
    if v is None:
        return "-"
    mean, se = (v["mean"], v["se"]) if isinstance(v, dict) else v
    return f"{mean:.3f} ({se:.4f})" if np.isfinite(se) else f"{mean:.3f}"


def summary_body(agg: dict[str, Any], settings: dict[str, Any]) -> str:
    """Markdown tables: ours beside Table 1, then the real dataset."""
    lines = [
        "",
        "Reproduction of section 5.1 (Table 1) of Yang, Guo & Chang (2020). Test cost "
        "TC = mean C[y][prediction]; mean (standard error = sd/sqrt(R)) over "
        f"R = {settings['repeats']} replications (the paper: 100). Training set "
        f"{N_TRAIN}, test set {settings['n_test']}, {settings['n_rounds']} boosting rounds, "
        f"trees of depth {MAX_DEPTH} (at most 4 terminal nodes, as in the paper): "
        f"{common.TREES[settings.get('tree', 'costwise')]}. "
        "'c' = cost-sensitive scenario (the paper's cost matrices of Wang 2013); without "
        "'c' training and test costs are 0-1. Our SAMME is the cost-blind argmax of the "
        "votes in both scenarios (the paper does not say how it made SAMME cost-sensitive).",
        "",
        "Cost matrices (rows = true class 1..K, columns = predicted):",
        "",
        f"- Simulation 1: `{SIM_COSTS['sim1']}`",
        f"- Simulation 2: `{SIM_COSTS['sim2']}`",
        "",
    ]
    header = ["experiment", "source", *SIM_METHODS.values()]
    rows = []
    for exp in PAPER_TABLE1:
        if exp in agg:
            rows.append([exp, "ours", *(_cell(agg[exp].get(m)) for m in SIM_METHODS)])
            rows.append(["", "paper", *(_cell(PAPER_TABLE1[exp].get(m)) for m in SIM_METHODS)])
    lines += [common.md_table(header, rows, "ll" + "r" * len(SIM_METHODS)), ""]
    other = ["adaboost_mh", "adaboost_m2", "pnorm"]
    lines += [
        "The paper's other columns (not implemented here): "
        + "; ".join(
            f"{exp}: AdaBoost.MH {PAPER_TABLE1[exp]['adaboost_mh'][0]}, AdaBoost.M2 "
            f"{PAPER_TABLE1[exp]['adaboost_m2'][0]}, p-norm {PAPER_TABLE1[exp]['pnorm'][0]}"
            for exp in PAPER_TABLE1
            if all(o in PAPER_TABLE1[exp] for o in other)
        )
        + ".",
        "",
    ]
    for name in settings["datasets"]:
        if name not in agg:
            continue
        lines += [
            f"## {name}: non-uniform costs",
            "",
            f"Cost matrix (rows = true class code, columns = predicted): `{DATASET_COSTS[name]}`.",
            "",
            "Stratified 70/30 splits, same rounds and trees as above; the calibrated models "
            "(Platt per class on a held-out third of the training rows, normalised) "
            "decide argmin_k sum_j C[j][k] p_j (Eq. 4 of the paper).",
            "",
            common.md_table(
                ["method", "test cost (se)", "error rate"],
                [
                    [label, _cell(agg[name][m]), f"{agg[name][m]['error_rate']:.3f}"]
                    for m, label in DATA_METHODS.items()
                    if m in agg[name]
                ],
                "lrr",
            ),
            "",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the experiment and write ``<out>/yang.{md,csv,json}``."""
    parser = common.base_parser("yang", __doc__.splitlines()[0], default_repeats=100)
    parser.add_argument("--rounds", type=int, default=None, help=f"boosting rounds ({N_ROUNDS})")
    parser.add_argument(
        "--data-repeats", type=int, default=None, help="splits of the real dataset (default 10)"
    )
    common.add_tree_option(parser)
    args = parser.parse_args(argv)
    started = time.time()
    if args.quick:
        repeats, n_rounds, n_test = min(args.repeats, 2), args.rounds or 10, 300
        names, source, data_repeats = args.datasets or ["wine"], args.source or "builtin", 2
    else:
        repeats, n_rounds, n_test = args.repeats, args.rounds or N_ROUNDS, N_TEST
        names, source = args.datasets or ["vehicle"], args.source or "shared"
        data_repeats = args.data_repeats or 10
    datasets = [common.load_dataset(n, source=source) for n in names]
    for ds in datasets:
        if ds.name not in DATASET_COSTS:
            parser.error(f"no cost matrix for dataset {ds.name!r}; known: {list(DATASET_COSTS)}")
    progress = common.Progress(2 * repeats + data_repeats * len(datasets), "yang")
    rows: list[dict[str, Any]] = []
    with common.tree_learner(args.tree):
        for rep in range(repeats):
            for key in SIMULATIONS:
                rows += run_simulation(key, rep, args.seed, n_rounds, n_test)
                progress.update(1, f"{key} rep {rep}")
        for ds in datasets:
            for rep in range(data_repeats):
                rows += run_dataset(ds.X, ds.y, ds.name, rep, args.seed, n_rounds)
                progress.update(1, f"{ds.name} rep {rep}")
    progress.close()
    agg = aggregate(rows)
    settings = {
        "repeats": repeats,
        "data_repeats": data_repeats,
        "n_rounds": n_rounds,
        "n_train": N_TRAIN,
        "n_test": n_test,
        "max_depth": MAX_DEPTH,
        "tree": args.tree,
        "datasets": [ds.name for ds in datasets],
        "seed": args.seed,
    }
    info = common.run_info(argv, started, module="bench.papers.yang")
    out = args.out
    common.write_csv(out / "yang.csv", rows)
    return common.write_results(
        out / "yang",
        "Yang, Guo & Chang (2020), Table 1: angle-based cost-sensitive boosting vs SAMME",
        info,
        summary_body(agg, settings),
        settings=settings,
        results=agg,
        paper_table1=PAPER_TABLE1,
        costs={**SIM_COSTS, **{d: DATASET_COSTS[d] for d in settings["datasets"]}},
    )


if __name__ == "__main__":
    raise SystemExit(main())
