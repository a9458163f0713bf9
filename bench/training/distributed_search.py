"""What choosing the rounds costs a Dask worker: the rounds search's tasks on one partition.

A distributed training that does not fix ``n_estimators`` (``models.distributed.capacity``)
grows its boosters to the cap (400 rounds of stumps) and then runs, per partition, one
task that scores the rows with their fold's booster at the 59 checkpoints
(``staged_out_of_fold``) and, per Newton pass of the Platt fits, one task of eight sums
per checkpoint (``platt_sums``). This times both, in one process, on one partition of
``--rows`` rows x 50 features (bin codes), 5 folds, and runs the whole set of Platt fits
(``platt_curve``) on that partition alone to count its passes. The stumps are drawn at
random (the cost of a stump does not depend on its quality); the labels follow a few
features, so the staged scores separate the classes as a boosted model's do.

Reported: seconds of the staged task and of one pass over all checkpoints, passes of the
fits, the bytes of the staged scores per row and the floats reaching the driver per pass.

Run::

    flock /tmp/costwise-heavy.lock nice -n 5 .venv/bin/python -m bench training.distributed_search
"""

from __future__ import annotations

import argparse
import os
import time
from types import SimpleNamespace
from typing import Any

import numpy as np

from bench.record import heading, run_header, table, versions, write_result

D, K = 50, 5


def main() -> None:
    from models.auto.curve import checkpoints
    from models.distributed.capacity import (
        N_SUMS,
        platt_curve,
        platt_sums,
        platt_targets,
        round_cap,
        staged_out_of_fold,
    )
    from models.distributed.rows import fold_of_rows

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    load_before = os.getloadavg()
    rng = np.random.default_rng(0)
    n = args.rows
    codes = rng.integers(0, 255, size=(D, n), dtype=np.uint8)
    logit = (codes[0].astype(np.float64) - 127) / 40 - (codes[1].astype(np.float64) - 127) / 60
    y_index = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.uint8)
    keys = rng.integers(0, 2**63, size=n, dtype=np.int64).astype(np.uint64)
    fold = fold_of_rows(keys, y_index, K)
    cap = round_cap(None)
    cps = checkpoints(cap)
    stumps = []
    for _ in range(K):
        features = np.where(rng.random(cap) < 0.5, rng.integers(0, 2, cap), rng.integers(0, D, cap))
        stumps.append([
            (int(f), int(rng.integers(0, 254)), *((1.0, -1.0) if f == 0 else (-1.0, 1.0)), 1.0,
             float(rng.uniform(0.01, 0.3)))
            for f in features
        ])  # fmt: skip
    part = SimpleNamespace(codes=codes, fold=fold, y_index=y_index)

    t0 = time.perf_counter()
    staged = staged_out_of_fold(part, stumps, cps)
    staged_seconds = time.perf_counter() - t0
    n_pos = int(y_index.sum())
    targets = platt_targets(n_pos, n - n_pos)
    b0 = float(np.log((n - n_pos + 1.0) / (n_pos + 1.0)))
    points = np.array([(i, 0.0, b0) for i in range(len(cps))])
    t0 = time.perf_counter()
    platt_sums(staged, part, points, targets)
    pass_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    curve = platt_curve(lambda p: platt_sums(staged, part, p, targets), cps, n_pos, n - n_pos,
                        "log_loss")  # fmt: skip
    curve_seconds = time.perf_counter() - t0
    result: dict[str, Any] = {
        **run_header(__file__),
        "versions": versions("numpy"),
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in os.getloadavg()],
        "rows": n,
        "features": D,
        "n_folds": K,
        "round_cap": cap,
        "checkpoints": len(cps),
        "staged_seconds": round(staged_seconds, 2),
        "staged_bytes_per_row": int(staged.nbytes // n),
        "pass_seconds": round(pass_seconds, 3),
        "passes": curve.passes,
        "fits_seconds": round(curve_seconds, 2),
        "floats_to_driver_per_checkpoint_and_pass": N_SUMS,
        "rounds_chosen_on_random_stumps": curve.rounds,
    }
    write_result(__file__, result, markdown(result))


def markdown(r: dict[str, Any]) -> str:
    lines = heading("The distributed rounds search's tasks on one partition", r)
    lines += [
        "",
        f"{r['rows']:,} rows x {r['features']} features (bin codes), {r['n_folds']} folds, "
        f"{r['round_cap']} random stumps a fold booster, {r['checkpoints']} checkpoints. "
        f"Load average before {r['load_before']}, after {r['load_after']}.",
        "",
        *table(
            ["task", "seconds"],
            [
                ["staged out-of-fold scores (once)", r["staged_seconds"]],
                ["one Platt pass, every checkpoint", r["pass_seconds"]],
                [f"all Platt fits ({r['passes']} passes)", r["fits_seconds"]],
            ],
        ),
        "",
        f"Staged scores: {r['staged_bytes_per_row']} bytes a row on the worker; per pass "
        f"{r['floats_to_driver_per_checkpoint_and_pass']} floats per checkpoint evaluated "
        "reach the driver (after the reduction), whatever the rows.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
