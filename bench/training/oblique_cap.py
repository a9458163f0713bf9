"""The oblique entry's cap on multiclass data: default training time with and without it.

Fits ``AutoCalibrated(random_state=0)`` (the service default) in process on seed 0's
training split (stratified 70%, as :mod:`bench.quality.baselines`) of the multiclass sets
named, once with the oblique entry always offered (``OBLIQUE_MAX_CELLS`` lifted: what
the search did on these sets before the cap counted one logistic fit per class) and once
with the cap as it is; prints the wall time, the entries tried, the choice and whether
the two fitted models give the same probabilities on the test rows, bit for bit.

Run::

    .venv/bin/python -m bench training.oblique_cap [--datasets satimage splice vehicle]

Writes ``bench/results/training/oblique_cap.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import models.auto.grid as auto  # the module that reads the cap
from bench.papers.common import stratified_split
from bench.quality.baselines import DEFAULT_DATA_DIR, TEST_SIZE, plan_units, unit_data
from bench.record import write_result
from models.auto import AutoCalibrated


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench training.oblique_cap", description=__doc__)
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    ap.add_argument("--datasets", nargs="+", default=["satimage", "splice", "vehicle"])
    args = ap.parse_args(argv)
    cap = auto.OBLIQUE_MAX_CELLS
    units = [
        u for u in plan_units(args.data_dir, args.datasets, range(1), False)
        if u.kind == "multiclass"
    ]  # fmt: skip
    rows: list[dict[str, Any]] = []
    load = os.getloadavg()
    for u in units:
        X, y, _ = unit_data(u, args.data_dir)
        itr, ite, ytr, _ = stratified_split(np.arange(len(y)), y, TEST_SIZE, u.seed)
        out: dict[str, Any] = {"task": u.task, "rows": len(itr), "features": X.shape[1]}
        proba = {}
        for name, limit in (("uncapped", sys.maxsize), ("capped", cap)):
            auto.OBLIQUE_MAX_CELLS = limit
            t0 = time.perf_counter()
            model = AutoCalibrated(random_state=0).fit(X[itr], ytr)
            out[name] = {
                "seconds": round(time.perf_counter() - t0, 2),
                "tried": [c["weak_learner"] for c in model.capacity_["curves"]],
                "chosen": f"{model.capacity_['weak_learner']}-d{model.capacity_['max_depth']}"
                f"x{model.capacity_['n_estimators']}",
            }
            proba[name] = model.predict_proba(X[ite])
        auto.OBLIQUE_MAX_CELLS = cap
        out["same_probabilities"] = proba["uncapped"].tobytes() == proba["capped"].tobytes()
        print(out, flush=True)
        rows.append(out)
    write_result(
        __file__, {"load_average_before": [round(v, 2) for v in load], "results": rows}, argv=argv
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
