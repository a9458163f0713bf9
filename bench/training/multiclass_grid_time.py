"""Training time of the multiclass default with the two-class grid and with its own.

``AutoCalibrated(random_state=0)`` on seed 0's stratified 70% training split (as in
:mod:`bench.quality.baselines`) of each set, once with ``grid=DEFAULT_GRID`` (depth-6 trees
up to 100 rounds) and once with the default for more than two classes
(``MULTICLASS_GRID``: up to 300), in one process, one after the other. Prints the wall
seconds and the chosen (depth, rounds). Timings on a shared machine: compare the two
lines of a set within one run.

Run: ``python -m bench training.multiclass_grid_time --datasets splice satimage``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench.papers.common import load_dataset, stratified_split
from bench.quality.baselines import DEFAULT_DATA_DIR, TEST_SIZE
from models.auto import DEFAULT_GRID, AutoCalibrated


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    ap.add_argument("--datasets", nargs="+", default=["splice", "satimage"])
    args = ap.parse_args(argv)
    for name in args.datasets:
        ds = load_dataset(name, data_dir=args.data_dir)
        Xtr, _, ytr, _ = stratified_split(ds.X, ds.y, TEST_SIZE, 0)
        for label, grid in (("two-class grid", DEFAULT_GRID), ("multiclass grid", None)):
            t0 = time.perf_counter()
            model = AutoCalibrated(grid=grid, random_state=0).fit(Xtr, ytr)
            seconds = time.perf_counter() - t0
            cap = model.capacity_
            print(f"{name}, {label}: {seconds:.1f} s, depth {cap['max_depth']}, "
                  f"{cap['n_estimators']} rounds", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
