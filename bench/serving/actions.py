"""Decisions among actions against the plain two-class decision: one row and 10,000 rows.

Trains the service default (``build_estimator("auto", {"random_state": 0})``) on 75% of
``examples/fraud.csv``, stores it as an artifact and loads it back (as the service serves
it), then times what a predict does after parsing: the request's cost setting built and
validated (:meth:`app.services.prediction.request.CostRequest.setting`) and the rows
decided (:func:`app.services.decisions.row_decisions.decide_rows`: probabilities, then
the decision), for each cost setting below, in the same process, rounds alternating
between the settings so that machine noise hits them alike:

* ``plain``: named costs ``c_fp = 5, c_fn = 100`` (a 2 x 2 matrix, the threshold rule);
* ``review``: the same with ``c_review = 4`` (actions negative / positive / review);
* ``matrix``: the same costs as a 2 x 2 ``cost_matrix`` (validated on every request,
  where named costs are remembered): the plain counterpart of a matrix of actions;
* ``actions4``: four named actions, a 2 x 4 ``cost_matrix``;
* ``plain_rows`` / ``review_rows`` / ``actions_rows``: per-row costs (10,000 rows only): a
  miss costs the row's amount (``row_costs``), with ``c_review = 4`` on every row, and
  per-row 2 x 3 matrices approve / review / decline (declining costs the amount).

One row: median of ``--calls`` calls per round (held-out rows in turn); 10,000 rows
(held-out rows repeated): median of 5 calls per round. The result is the median over
``--rounds`` rounds and the ratio of each setting to its plain counterpart (``review``
to ``plain``, ``actions4`` to ``matrix``, the per-row ones to ``plain_rows``).

Usage::

    python -m bench serving.actions

Results: ``bench/results/serving/actions.{json,md}``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.timing import median_seconds

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "fraud.csv"
BATCH = 10_000


def median_us(f: Callable[[], Any], calls: int, warm: int = 20) -> float:
    """The median microseconds of ``calls`` calls of ``f`` after ``warm`` untimed ones."""
    return median_seconds(f, calls, warm) * 1e6


def train() -> tuple[Any, np.ndarray, np.ndarray, dict[str, Any]]:
    import pandas as pd
    from sklearn.model_selection import train_test_split

    from models.catalog.algorithms import build_estimator
    from models.inference.artifacts import dump_model, load_model

    df = pd.read_csv(DATA)
    X, y = df.drop(columns="fraud").to_numpy(np.float64), df["fraud"].to_numpy()
    Xtr, Xte, ytr, _ = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    est = build_estimator("auto", {"random_state": 0})
    t0 = time.perf_counter()
    est.fit(Xtr, ytr)
    fit_s = time.perf_counter() - t0
    blob, _ = dump_model(est.to_inference())
    amounts = Xte[:, list(df.columns).index("amount")]
    info = {"data": "examples/fraud.csv", "shape": list(X.shape), "fit_s": round(fit_s, 2),
            "test_rows": len(Xte)}  # fmt: skip
    return load_model(blob), Xte, amounts, info


def settings(amounts: np.ndarray) -> dict[str, Callable[[int], Any]]:
    """Each setting as the predictor's cost request of ``n`` rows (amounts cycled)."""
    from app.services.prediction.request import CostRequest

    named = {"c_fp": 5.0, "c_fn": 100.0}
    four = [[0.0, 4.0, 1.0, 10.0], [100.0, 4.0, 30.0, 0.0]]

    def rows(n: int) -> np.ndarray:
        return np.resize(amounts, n)

    def row_costs(n: int, review: bool) -> np.ndarray:
        a = rows(n)
        cols = [np.full(n, 5.0), a, np.zeros(n), np.zeros(n)]
        return np.column_stack([*cols, np.full(n, 4.0)] if review else cols)

    def action_rows(n: int) -> np.ndarray:
        a = rows(n)
        m = np.empty((n, 2, 3))
        m[:, 0] = np.column_stack([np.zeros(n), np.full(n, 4.0), a])
        m[:, 1] = np.column_stack([a, np.full(n, 4.0), np.zeros(n)])
        return m

    return {
        "plain": lambda n: CostRequest(costs=named),
        "review": lambda n: CostRequest(costs={**named, "c_review": 4.0}),
        "matrix": lambda n: CostRequest(cost_matrix=[[0.0, 5.0], [100.0, 0.0]]),
        "actions4": lambda n: CostRequest(
            cost_matrix=four, actions=["approve", "review", "second_factor", "decline"]
        ),
        "plain_rows": lambda n: CostRequest(row_costs=row_costs(n, False)),
        "review_rows": lambda n: CostRequest(row_costs=row_costs(n, True)),
        "actions_rows": lambda n: CostRequest(
            cost_array=action_rows(n), actions=["approve", "review", "decline"]
        ),
    }


PAIRS = {"review": "plain", "actions4": "matrix", "review_rows": "plain_rows",
         "actions_rows": "plain_rows"}  # fmt: skip
ONE_ROW = ("plain", "review", "matrix", "actions4")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from app.services.decisions.row_decisions import decide_rows
    from models.inference.model import check_features

    model, Xte, amounts, info = train()
    k, d = model.n_classes, model.n_features
    requests = settings(amounts)
    singles = [np.ascontiguousarray(Xte[i : i + 1]) for i in range(200)]
    big = np.ascontiguousarray(np.resize(Xte, (BATCH, d)))
    one_reqs = {name: requests[name](1) for name in ONE_ROW}
    big_reqs = {name: make(BATCH) for name, make in requests.items()}
    one: dict[str, list[float]] = {name: [] for name in ONE_ROW}
    many: dict[str, list[float]] = {name: [] for name in requests}
    for _ in range(args.rounds):
        for name in ONE_ROW:
            req, it = one_reqs[name], iter(range(10**9))

            def call(req: Any = req, it: Any = it) -> Any:
                x = singles[next(it) % len(singles)]
                return decide_rows(model, check_features(x, d), req.setting(1, k), None)

            one[name].append(median_us(call, args.calls))
        for name, req in big_reqs.items():

            def call_big(req: Any = req) -> Any:
                return decide_rows(model, check_features(big, d), req.setting(BATCH, k), None)

            many[name].append(median_us(call_big, 5, warm=1) / 1e3)
    out: dict[str, Any] = {"model": info, "rounds": args.rounds, "calls": args.calls}
    out["one_row_us"] = {n: round(statistics.median(v), 2) for n, v in one.items()}
    out["rows_10k_ms"] = {n: round(statistics.median(v), 3) for n, v in many.items()}
    out["ratio_one_row"] = {n: round(out["one_row_us"][n] / out["one_row_us"][b], 3)
                            for n, b in PAIRS.items() if n in ONE_ROW}  # fmt: skip
    out["ratio_10k"] = {n: round(out["rows_10k_ms"][n] / out["rows_10k_ms"][b], 3)
                        for n, b in PAIRS.items()}  # fmt: skip
    return out


def markdown(res: dict[str, Any]) -> str:
    from bench.record import heading, table

    lines = heading("Decisions among actions against the plain decision", res)
    lines += ["", f"Model: {res['model']}; median over {res['rounds']} rounds.", ""]
    rows = []
    for name, ms in res["rows_10k_ms"].items():
        us = res["one_row_us"].get(name)
        rows.append([
            name,
            "" if us is None else f"{us:.1f}",
            "" if name not in res["ratio_one_row"] else f"{res['ratio_one_row'][name]:.2f}",
            f"{ms:.2f}",
            "" if name not in res["ratio_10k"] else f"{res['ratio_10k'][name]:.2f}",
        ])  # fmt: skip
    cols = ["setting", "1 row (us)", "ratio", "10,000 rows (ms)", "ratio"]
    lines += table(cols, rows)
    lines += ["", "Ratios: review to plain, actions4 to matrix, the per-row settings to "
              "plain_rows.",
              "Times: cost setting built and validated, probabilities and decision "
              "(decide_rows), no HTTP."]  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000, help="one-row calls per round")
    args = parser.parse_args()
    from bench.record import versions, write_result

    res = {**run(args), "versions": versions("numpy")}
    write_result(__file__, res, markdown({**res, **_header()}))


def _header() -> dict[str, Any]:
    from bench.record import run_header

    return run_header(__file__)


if __name__ == "__main__":
    main()
