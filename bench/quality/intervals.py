"""Probability intervals (``interval: true``): their coverage and width on the shared data sets, and the cost of one-row and 10,000-row decisions with intervals against the plain decision in the same run.

What "coverage" means here. A probability interval cannot be checked against outcomes
row by row (a row has one outcome, not a probability), and the true probability is not
known. What the fold spread estimates is how much the served probability depends on the
training sample. So, per data set and seed, the rows are split into a held-out 25% and two
disjoint halves A and B of the rest (stratified); the default (``auto``) is trained on A
(the served model, whose intervals are measured), on B (an independent training sample
of the same size) and on A and B together (twice the data). On the held-out rows:

* ``cover_B``: the share of rows whose probability under the model trained on B lies in
  the interval of the model trained on A (coverage of an independent retrain: the
  interval's own claim);
* ``cover_AB``: the same for the model trained on A and B (a better-informed estimate of
  the probability; the interval is not centred on it, so this is a harder target);
* ``width``: the mean of ``p_high - p_low``;
* ``stable``: the share of rows flagged stable under costs ``c_fp = 1, c_fn = 5`` and
  ``agree_stable`` / ``agree_unstable``: among stable / unstable rows, the share whose
  decision the model trained on B makes too (what the flag is for).

Methods: ``fold_range`` (the fold boosters' smallest and largest score, mapped) and
``fold_jackknife`` at levels 0.8, 0.9 and 0.95 (:mod:`models.uncertainty.interval`).

Timing (as ``bench/serving/explain.py``): the model trained on A, stored as an artifact
and loaded back; alternating rounds of the plain decision
(:func:`app.services.decisions.row_decisions.decide_rows`) and the same decision plus
:func:`app.services.prediction.intervals.interval_rows`, on one row and on 10,000 rows,
per-row named costs with a review action (``c_review``).

Usage::

    python -m bench quality.intervals

Results: ``bench/results/quality/intervals.{json,md}``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.datasets import DATA_DIR  # noqa: E402
from bench.record import heading, table, versions, write_result  # noqa: E402
from bench.timing import seconds  # noqa: E402

DATA = DATA_DIR
BATCH = 10_000
VARIANTS: tuple[tuple[str, str, float], ...] = (
    ("fold_range", "fold_range", 0.9),
    ("jackknife 0.8", "fold_jackknife", 0.8),
    ("jackknife 0.9", "fold_jackknife", 0.9),
    ("jackknife 0.95", "fold_jackknife", 0.95),
)
COSTS = np.array([[0.0, 1.0], [5.0, 0.0]])


def load(name: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    import pandas as pd

    df = pd.read_csv(DATA / f"{name}.csv")
    X = df.drop(columns="label")
    return X.to_numpy(np.float64), df["label"].to_numpy(), [str(c) for c in X.columns]


def _fit(X: np.ndarray, y: np.ndarray, names: list[str], seed: int) -> Any:
    from models.catalog.algorithms import build_estimator
    from models.inference.artifacts import dump_model, load_model

    est = build_estimator("auto", {"random_state": seed})
    est.fit(X, y)
    return load_model(dump_model(est.to_inference(names))[0])


def coverage(name: str, seed: int) -> dict[str, Any]:
    from sklearn.model_selection import train_test_split

    from models.decisions.rule import decide
    from models.uncertainty.interval import probability_interval
    from models.uncertainty.stability import stable_decisions

    X, y, names = load(name)
    Xr, Xte, yr, _ = train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y)
    Xa, Xb, ya, yb = train_test_split(Xr, yr, test_size=0.5, random_state=seed, stratify=yr)
    model_a = _fit(Xa, ya, names, seed)
    model_b = _fit(Xb, yb, names, seed)
    model_ab = _fit(Xr, yr, names, seed)
    pa = model_a.predict_proba(Xte)[:, 1]
    pb = model_b.predict_proba(Xte)[:, 1]
    pab = model_ab.predict_proba(Xte)[:, 1]
    decided_b = decide(np.column_stack([1 - pb, pb]), COSTS).labels_index
    decided_a = decide(np.column_stack([1 - pa, pa]), COSTS).labels_index
    out: dict[str, Any] = {"test_rows": len(Xte), "train_rows": len(Xa)}
    for label, method, level in VARIANTS:
        iv = probability_interval(model_a, Xte, pa, method=method, level=level)
        stable = stable_decisions(iv.low, iv.high, COSTS)
        same = decided_a == decided_b
        out[label] = {
            "cover_B": float(np.mean((iv.low <= pb) & (pb <= iv.high))),
            "cover_AB": float(np.mean((iv.low <= pab) & (pab <= iv.high))),
            "width": float(np.mean(iv.high - iv.low)),
            "stable": float(stable.mean()),
            "agree_stable": float(same[stable].mean()) if stable.any() else None,
            "agree_unstable": float(same[~stable].mean()) if (~stable).any() else None,
        }
    return out


def timing(name: str, calls: int, rounds: int) -> dict[str, Any]:
    from sklearn.model_selection import train_test_split

    from app.services.decisions.request_costs import CostSetting
    from app.services.decisions.row_decisions import decide_rows
    from app.services.prediction.intervals import interval_rows
    from models.decisions.actions import review_matrix
    from models.decisions.rule import row_cost_matrices
    from models.inference.model import check_features

    X, y, names = load(name)
    Xtr, Xte, ytr, _ = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    model = _fit(Xtr, ytr, names, 0)
    rng = np.random.default_rng(0)

    def setting(n: int) -> CostSetting:
        amounts = rng.uniform(1.0, 50.0, size=n)
        binary = row_cost_matrices(np.ones(n), amounts, None, None, n_rows=n)
        matrix = review_matrix(binary, np.full(n, 0.5))
        return CostSetting(matrix, "row_costs", ("negative", "positive", "review"), (0, 1, -1))

    def plain(x: np.ndarray, s: CostSetting) -> Any:
        return decide_rows(model, check_features(x, model.n_features), s, None)

    def with_interval(x: np.ndarray, s: CostSetting) -> Any:
        checked = check_features(x, model.n_features)
        proba, decisions, used, _ = decide_rows(model, checked, s, None)
        return decisions, interval_rows(model, checked, proba, used, None)

    singles = [np.ascontiguousarray(Xte[i : i + 1]) for i in range(min(len(Xte), 200))]
    one_settings = [setting(1) for _ in singles]
    big = np.ascontiguousarray(np.resize(Xte, (BATCH, Xte.shape[1])))
    big_setting = setting(BATCH)
    for i in range(20):
        plain(singles[i % len(singles)], one_settings[i % len(singles)])
        with_interval(singles[i % len(singles)], one_settings[i % len(singles)])
    with_interval(big, big_setting)
    one: dict[str, list[float]] = {"plain": [], "interval": []}
    many: dict[str, list[float]] = {"plain": [], "interval": []}
    unstable = 0.0
    for r in range(rounds):
        pair = (("plain", plain), ("interval", with_interval))[:: 1 if r % 2 == 0 else -1]
        for kind, f in pair:
            t = [
                seconds(
                    lambda j=j, f=f: f(singles[j % len(singles)], one_settings[j % len(singles)])
                )
                for j in range(calls)
            ]
            one[kind].append(float(np.median(t)))
            many[kind].append(seconds(lambda f=f: f(big, big_setting)))
    _, iv = with_interval(big, big_setting)
    unstable = float(1.0 - iv.stable.mean())
    med = {k: statistics.median(v) for k, v in one.items()}
    medb = {k: statistics.median(v) for k, v in many.items()}
    ens = model.scorer.ensembles
    return {
        "folds": len(ens),
        "learners": int(sum(e.n_learners for e in ens)),
        "features": X.shape[1],
        "one_row_us": {k: round(v * 1e6, 1) for k, v in med.items()},
        "one_row_ratio": round(med["interval"] / med["plain"], 2),
        "batch_ms": {k: round(v * 1e3, 2) for k, v in medb.items()},
        "batch_ratio": round(medb["interval"] / medb["plain"], 2),
        "unstable_share_with_review": round(unstable, 4),
    }


def _mean(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return round(float(np.mean(got)), 3) if got else None


def summary(runs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per data set and method: the means over seeds."""
    out: dict[str, dict[str, Any]] = {}
    for name, seeds in runs.items():
        out[name] = {}
        for label, *_ in VARIANTS:
            keys = ("cover_B", "cover_AB", "width", "stable", "agree_stable", "agree_unstable")
            out[name][label] = {k: _mean([s[label][k] for s in seeds.values()]) for k in keys}
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = heading("Probability intervals: coverage, width and cost", result)
    rows = []
    for name, by_method in result["summary"].items():
        for label, m in by_method.items():
            rows.append([name, label, m["cover_B"], m["cover_AB"], m["width"], m["stable"],
                         m["agree_stable"], m["agree_unstable"]])  # fmt: skip
    lines += [
        "",
        f"Means over seeds {result['seeds']}; held-out 25%, models trained on half of the "
        "rest (A), the other half (B) and both (AB).",
        "",
        *table(
            [
                "data set",
                "method",
                "cover_B",
                "cover_AB",
                "width",
                "stable",
                "agree (stable)",
                "agree (unstable)",
            ],
            rows,
        ),  # fmt: skip
        "",
        "`cover_B`: share of held-out rows whose probability under the model trained on B "
        "is inside A's interval; `cover_AB`: the same for the model trained on A and B; "
        "`width`: mean p_high - p_low; `stable` under c_fp = 1, c_fn = 5; `agree`: share "
        "of rows the model trained on B decides alike, among stable / unstable rows.",
        "",
        *table(
            [
                "data set",
                "served model",
                "1 row plain (us)",
                "1 row interval (us)",
                "ratio",
                "10k plain (ms)",
                "10k interval (ms)",
                "ratio",
                "unstable (review)",
            ],
            [
                [
                    name,
                    f"{t['folds']} folds, {t['learners']} learners, {t['features']} features",
                    t["one_row_us"]["plain"],
                    t["one_row_us"]["interval"],
                    f"{t['one_row_ratio']}x",
                    t["batch_ms"]["plain"],
                    t["batch_ms"]["interval"],
                    f"{t['batch_ratio']}x",
                    t["unstable_share_with_review"],
                ]
                for name, t in result["timing"].items()
            ],
        ),  # fmt: skip
        "",
        "Timing: medians over rounds alternating plain and interval in one process; per-row "
        "costs c_fp = 1, c_fn ~ U(1, 50), c_review = 0.5 (decisions among three actions).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--datasets",
        nargs="+",
        default=["pima", "german", "housevotes", "ionosphere", "wdbc", "sonar", "spambase"],
    )
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--timed", nargs="+", default=["pima", "spambase"])
    p.add_argument("--calls", type=int, default=300, help="one-row calls per round")
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args(argv)
    runs: dict[str, dict[str, Any]] = {}
    for name in args.datasets:
        runs[name] = {}
        for seed in args.seeds:
            t0 = time.perf_counter()
            runs[name][str(seed)] = coverage(name, seed)
            print(name, seed, f"{time.perf_counter() - t0:.1f}s", file=sys.stderr)
    timed = {name: timing(name, args.calls, args.rounds) for name in args.timed}
    from bench.record import run_header

    result: dict[str, Any] = {
        **run_header(__file__, argv),
        "versions": versions("numpy", "sklearn", "numba"),
        "seeds": args.seeds,
        "summary": summary(runs),
        "timing": timed,
        "runs": runs,
    }
    write_result(__file__, result, markdown(result), argv=argv)


if __name__ == "__main__":
    main()
