"""Power of the monitoring's calibration alarm, by simulation: how often it fires on
calibrated traffic (false alarms) and after a base-rate shift or a mis-scaling.

Buckets of labelled rows whose probabilities come from a model calibrated for a base
rate of 0.5 (``p = sigmoid(z)``, ``z ~ N(0, 1.5^2)``); the outcomes are drawn from the
true probabilities of each scenario. For each scenario and bucket size it reports the
share of buckets in which the alarm fired (Bonferroni over Cox, Spiegelhalter and
Hosmer-Lemeshow at 0.01 / 3) and in which each test alone would have fired at 0.01.

    python -m bench quality.monitoring_power                 # 1,000 buckets per cell
    python -m bench quality.monitoring_power --buckets 200   # quicker
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from scipy.special import expit, logit

from bench.record import heading, run_header, table, versions, write_result
from models.feedback.monitoring import ALARM_ALPHA, calibration_summary

TESTS = ("cox", "spiegelhalter", "hosmer_lemeshow")


def _prior_shift(prior: float) -> Callable[[np.ndarray, np.random.Generator], tuple]:
    def make(p: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        r1, r0 = prior / 0.5, (1.0 - prior) / 0.5
        return p, p * r1 / (p * r1 + (1.0 - p) * r0)

    return make


def _scaled(slope: float) -> Callable[[np.ndarray, np.random.Generator], tuple]:
    def make(p: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        # served p = sigmoid(logit(q) / slope): slope < 1 over-confident, > 1 under-confident
        return expit(logit(p) / slope), p

    return make


def _certain_zeros(p: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    # a fifth of the rows served p = 0 while 20% of them are positive
    n0 = p.size // 5
    served, true = p.copy(), p.copy()
    served[:n0], true[:n0] = 0.0, 0.2
    return served, true


SCENARIOS: dict[str, Callable] = {
    "calibrated": _prior_shift(0.5),
    "base rate 0.5 -> 0.45": _prior_shift(0.45),
    "base rate 0.5 -> 0.4": _prior_shift(0.4),
    "base rate 0.5 -> 0.3": _prior_shift(0.3),
    "over-confident (slope 0.67)": _scaled(1 / 1.5),
    "under-confident (slope 1.5)": _scaled(1.5),
    "a fifth at p = 0, 20% positive": _certain_zeros,
}


def run(buckets: int, sizes: list[int], seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for name, make in SCENARIOS.items():
        for n in sizes:
            fired = {"alarm": 0, **{t: 0 for t in TESTS}}
            for _ in range(buckets):
                served, true = make(expit(rng.normal(0.0, 1.5, n)), rng)
                y = (rng.random(n) < true).astype(np.int64)
                s = calibration_summary(y, np.column_stack([1.0 - served, served]))
                fired["alarm"] += bool(s["alarm"]["fired"])
                for t in TESTS:
                    fired[t] += s[t] is not None and s[t]["p_value"] < ALARM_ALPHA
            rows.append({"scenario": name, "rows": n, **{k: v / buckets for k, v in fired.items()}})
    return rows


def markdown(result: dict) -> str:
    rows = result["rows"]
    return "\n".join(
        [
            *heading("Power of the calibration alarm", result),
            "",
            f"Share of {result['buckets']:,} simulated buckets per cell in which the alarm fired "
            "(Bonferroni over the three tests, 0.01 / 3), and in which each test alone would "
            "have fired at 0.01.",
            "",
            *table(
                [
                    "scenario",
                    "rows",
                    "alarm",
                    "Cox alone",
                    "Spiegelhalter alone",
                    "Hosmer-Lemeshow alone",
                ],
                (
                    [
                        r["scenario"],
                        f"{r['rows']:,}",
                        f"{r['alarm']:.3f}",
                        f"{r['cox']:.3f}",
                        f"{r['spiegelhalter']:.3f}",
                        f"{r['hosmer_lemeshow']:.3f}",
                    ]
                    for r in rows
                ),
            ),
            "",
        ]
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--buckets", type=int, default=1000, help="buckets per scenario and size")
    p.add_argument("--rows", type=int, nargs="*", default=[200, 1000], help="bucket sizes")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    start = time.perf_counter()
    rows = run(args.buckets, args.rows, args.seed)
    result = {
        **run_header(__file__),
        "versions": versions("numpy", "scipy"),
        "buckets": args.buckets,
        "seed": args.seed,
        "seconds": round(time.perf_counter() - start, 1),
        "rows": rows,
    }
    write_result(__file__, result, markdown(result))


if __name__ == "__main__":
    main()
