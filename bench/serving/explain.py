"""Cost of ``explain: true``: one-row and 10,000-row decisions of the default two-class model with explanations, against the plain decision in the same run.

Trains the service default (``build_estimator("auto", {"random_state": 0})``, what
``POST /v1/models`` trains without parameters: a fold ensemble of the chosen weak learner
under one calibration map) on a stratified 75% of each two-class data set of
``../shared/datasets`` given (``--datasets``; by default pima, whose default is oblique,
spambase and german, depth-3 trees, and housevotes, stumps), stores it as an artifact and
loads it back (as the service serves it). Then, alternating the two in rounds so that machine noise hits them
alike, it times on held-out rows (repeated to 10,000), under per-row named costs:

* ``plain``: the decision as the predictor makes it,
  :func:`app.services.decisions.row_decisions.decide_rows` on ``check_features`` of the rows;
* ``explain``: the same decision, then :func:`app.services.prediction.explanations.explain_rows`
  (the attribution, the probability and the expected-cost margin), which is what the
  predictor adds with ``explain: true``;
* ``render``: the extra of the /v1 response, each row's ``explanation`` object built
  (``app.api.routes.predict._add_explanations``) and encoded by orjson, over the plain
  rows' objects encoded.

Also checks, on every 10,000-row block, that bias plus contributions equals the served
score within 1e-9 of the terms' scale (the largest error is recorded).

Usage::

    python -m bench serving.explain

Results: ``bench/results/serving/explain.{json,md}`` (medians per size; the ratio
explain / plain and (explain + render) / plain).
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

DATA = DATA_DIR
BATCH = 10_000


def load(name: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    import pandas as pd

    df = pd.read_csv(DATA / f"{name}.csv")
    X = df.drop(columns="label")
    return X.to_numpy(np.float64), df["label"].to_numpy(), [str(c) for c in X.columns]


def timed(f: Any) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def run_dataset(name: str, calls: int, rounds: int) -> dict[str, Any]:
    import orjson
    from sklearn.model_selection import train_test_split

    from app.api.routes.predict import _add_explanations
    from app.services.decisions.request_costs import CostSetting
    from app.services.decisions.row_decisions import decide_rows
    from app.services.prediction.explanations import explain_rows
    from models.catalog.algorithms import build_estimator
    from models.decisions.rule import row_cost_matrices
    from models.inference.artifacts import dump_model, load_model
    from models.inference.model import check_features

    X, y, names = load(name)
    Xtr, Xte, ytr, _ = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    est = build_estimator("auto", {"random_state": 0})
    t0 = time.perf_counter()
    est.fit(Xtr, ytr)
    fit_s = time.perf_counter() - t0
    blob, _ = dump_model(est.to_inference(names))
    model = load_model(blob)
    scorer = model.scorer
    ensembles = getattr(scorer, "ensembles", None) or (scorer.ensemble,)  # type: ignore[attr-defined]
    rng = np.random.default_rng(0)

    def setting(n: int) -> CostSetting:
        amounts = rng.uniform(1.0, 50.0, size=n)
        return CostSetting(
            row_cost_matrices(np.ones(n), amounts, None, None, n_rows=n), "row_costs"
        )

    def plain(x: np.ndarray, s: CostSetting) -> Any:
        return decide_rows(model, check_features(x, model.n_features), s, None)

    def explained(x: np.ndarray, s: CostSetting) -> Any:
        checked = check_features(x, model.n_features)
        proba, decisions, used, raw = decide_rows(model, checked, s, None)
        return decisions, explain_rows(model, checked, proba, raw, used)

    def rows(d: Any) -> list[dict[str, Any]]:
        return [
            {"id": None, "decision": int(i), "probabilities": None, "threshold": None,
             "expected_cost": c}
            for i, c in zip(d.labels_index.tolist(), d.expected_cost.tolist(), strict=True)
        ]  # fmt: skip

    singles = [np.ascontiguousarray(Xte[i : i + 1]) for i in range(min(len(Xte), 200))]
    one_settings = [setting(1) for _ in singles]
    big = np.ascontiguousarray(np.resize(Xte, (BATCH, Xte.shape[1])))
    big_setting = setting(BATCH)
    for i in range(20):  # warm up (compiled kernels, caches)
        plain(singles[i % len(singles)], one_settings[i % len(singles)])
        explained(singles[i % len(singles)], one_settings[i % len(singles)])
    explained(big, big_setting)

    one: dict[str, list[float]] = {"plain": [], "explain": []}
    many: dict[str, list[float]] = {"plain": [], "explain": [], "render": [], "render_plain": []}
    worst = 0.0
    for r in range(rounds):
        for kind, f in (("plain", plain), ("explain", explained))[:: 1 if r % 2 == 0 else -1]:
            t = [
                timed(lambda j=j, f=f: f(singles[j % len(singles)], one_settings[j % len(singles)]))
                for j in range(calls)
            ]
            one[kind].append(float(np.median(t)))
        many["plain"].append(timed(lambda: plain(big, big_setting)))
        out: list[Any] = []
        many["explain"].append(timed(lambda out=out: out.append(explained(big, big_setting))))
        decisions, e = out[0]
        terms = np.abs(e.bias) + np.abs(e.contributions).sum(axis=1)
        err = np.abs(e.bias + e.contributions.sum(axis=1) - e.score) / terms
        worst = max(worst, float(err.max()))
        base = rows(decisions)
        many["render_plain"].append(timed(lambda b=base: orjson.dumps(b)))
        with_e = rows(decisions)
        many["render"].append(
            timed(lambda w=with_e, e=e: (_add_explanations(w, e), orjson.dumps(w)))
        )
    med = {k: statistics.median(v) for k, v in one.items()}
    medb = {k: statistics.median(v) for k, v in many.items()}
    render_extra = medb["render"] - medb["render_plain"]
    return {
        "train_rows": len(Xtr),
        "features": X.shape[1],
        "fit_seconds": round(fit_s, 2),
        "weak_learner": est.capacity_["weak_learner"],
        "max_depth": est.capacity_.get("max_depth"),
        "folds": len(ensembles),
        "learners": int(sum(e.n_learners for e in ensembles)),
        "one_row_us": {k: round(v * 1e6, 1) for k, v in med.items()},
        "one_row_ratio": round(med["explain"] / med["plain"], 2),
        "batch_ms": {k: round(v * 1e3, 2) for k, v in medb.items()},
        "batch_us_per_row": {
            "plain": round(medb["plain"] / BATCH * 1e6, 3),
            "explain": round(medb["explain"] / BATCH * 1e6, 3),
            "render_extra": round(render_extra / BATCH * 1e6, 3),
        },
        "batch_ratio": round(medb["explain"] / medb["plain"], 2),
        "batch_ratio_with_render": round((medb["explain"] + render_extra) / medb["plain"], 2),
        "max_sum_error": worst,
    }


def markdown(result: dict[str, Any]) -> str:
    lines = heading("Cost of explain: true (default two-class model)", result)
    rows = []
    for name, r in result["datasets"].items():
        learner = r["weak_learner"] + (f" d{r['max_depth']}" if r["weak_learner"] == "tree" else "")
        rows.append([
            name, f"{learner}, {r['folds']} folds, {r['learners']} learners, {r['features']} features",
            r["one_row_us"]["plain"], r["one_row_us"]["explain"], f"{r['one_row_ratio']}x",
            r["batch_ms"]["plain"], r["batch_ms"]["explain"], f"{r['batch_ratio']}x",
            f"{r['batch_ratio_with_render']}x", f"{r['max_sum_error']:.1e}",
        ])  # fmt: skip
    lines += [
        "",
        *table(
            [
                "data set",
                "served model",
                "1 row plain (us)",
                "1 row explain (us)",
                "ratio",
                "10k plain (ms)",
                "10k explain (ms)",
                "ratio",
                "ratio with JSON",
                "max sum error",
            ],
            rows,
        ),  # fmt: skip
        "",
        "Medians over rounds alternating plain and explain in one process; per-row named "
        "costs. `ratio with JSON` adds the extra of building and encoding each row's "
        "`explanation` object (the /v1 response) over the plain rows' objects. `max sum "
        "error`: largest |bias + sum(contributions) - score| over the terms' scale.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="+", default=["pima", "spambase", "german", "housevotes"])
    p.add_argument("--calls", type=int, default=300, help="one-row calls per round")
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args(argv)
    result: dict[str, Any] = {
        "versions": versions("numpy", "sklearn", "numba"),
        "datasets": {},
    }
    for name in args.datasets:
        result["datasets"][name] = run_dataset(name, args.calls, args.rounds)
        print(name, result["datasets"][name], file=sys.stderr)
    from bench.record import run_header

    result = {**run_header(__file__, argv), **result}
    write_result(__file__, result, markdown(result), argv=argv)


if __name__ == "__main__":
    main()
