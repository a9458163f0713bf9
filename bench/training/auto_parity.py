"""Bit-for-bit parity of the default algorithm between two source trees.

Trains :class:`models.auto.AutoCalibrated` (the default algorithm) under several settings
on small data sets -- seeded ``make_classification`` with two and three classes and
``examples/fraud.csv`` -- and writes what it chose and served: the recorded capacity
(without its timings), the calibration record, ``predict_proba`` on the training rows
and the least-expected-cost decisions at a cost matrix. Run it once with the reference
tree's code on ``PYTHONPATH`` (``--out ref.npz``), then with this tree's
(``--compare ref.npz``): every array must be equal bit for bit and every record equal.

    PYTHONPATH=/path/to/reference python -m bench training.auto_parity --out /tmp/ref.npz
    PYTHONPATH=. python -m bench training.auto_parity --compare /tmp/ref.npz

Exit status 1 when anything differs (each difference is printed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import make_classification

from models.auto import AutoCalibrated

ROOT = Path(__file__).resolve().parents[2]
TIMING = ("search_seconds", "final_estimate_seconds", "seconds")
SMALL_GRID = [("stump", 1, 60), ("tree", 2, 30), ("tree", 4, 20), ("oblique", 1, 10)]


def _fraud() -> tuple[np.ndarray, np.ndarray]:
    # empty cells (missing values) read as NaN, which the boosters route as missing
    data = np.genfromtxt(ROOT / "examples" / "fraud.csv", delimiter=",", skip_header=1)[:2000]
    return data[:, :-1], data[:, -1].astype(int)


def _datasets() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    X2, y2 = make_classification(600, 6, n_informative=4, random_state=3)
    X3, y3 = make_classification(
        600, 6, n_informative=4, n_classes=3, n_clusters_per_class=1, random_state=4
    )
    return {"binary": (X2, y2), "three_class": (X3, y3), "fraud": _fraud()}


CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "small_grid": {"grid": SMALL_GRID},
    "refit": {"grid": SMALL_GRID, "serve": "refit"},
    "logistic": {"grid": SMALL_GRID, "score_kind": "logistic"},
    "isotonic_per_class": {
        "grid": SMALL_GRID,
        "calibration": "isotonic",
        "multiclass_calibration": "per_class",
    },
    "brier_capped": {"grid": SMALL_GRID, "metric": "brier", "max_rounds": 15, "n_folds": 3},
    "subsample": {"grid": SMALL_GRID[:2], "max_search_rows": 300},
    "subsample_refit": {"grid": SMALL_GRID[:2], "max_search_rows": 300, "serve": "refit"},
}


def _untimed(record: Any) -> Any:
    if isinstance(record, dict):
        return {k: _untimed(v) for k, v in record.items() if k not in TIMING}
    if isinstance(record, list):
        return [_untimed(v) for v in record]
    return record


def run() -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    arrays: dict[str, np.ndarray] = {}
    records: dict[str, Any] = {}
    for data_name, (X, y) in _datasets().items():
        k = len(np.unique(y))
        costs = np.ones((k, k)) - np.eye(k)
        costs[-1, :-1] = 5.0  # missing the last class costs 5
        for config_name, kwargs in CONFIGS.items():
            key = f"{data_name}/{config_name}"
            model = AutoCalibrated(random_state=0, n_jobs=1, **kwargs).fit(X, y)
            arrays[f"{key}/proba"] = model.predict_proba(X)
            decisions = model.decide(X, costs)
            arrays[f"{key}/decisions"] = decisions.labels_index
            arrays[f"{key}/expected_cost"] = decisions.expected_cost
            arrays[f"{key}/served_proba"] = model.to_inference().predict_proba(X)
            records[key] = {
                "capacity": _untimed(model.capacity_),
                "calibration": _untimed(model.calibration_info_),
                "n_estimators": model.n_estimators_,
            }
            print(key, model.capacity_["weak_learner"], model.capacity_["max_depth"],
                  model.capacity_["n_estimators"], flush=True)  # fmt: skip
    return arrays, records


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", type=Path, help="write the results here (.npz + .json)")
    group.add_argument("--compare", type=Path, help="compare with results written by --out")
    args = ap.parse_args()
    arrays, records = run()
    if args.out is not None:
        np.savez(args.out, **arrays)
        args.out.with_suffix(".json").write_text(json.dumps(records, indent=1, default=str))
        print(f"wrote {args.out} ({len(arrays)} arrays, {len(records)} fits)")
        return 0
    ref = np.load(args.compare, allow_pickle=False)
    ref_records = json.loads(args.compare.with_suffix(".json").read_text())
    mine = json.loads(json.dumps(records, default=str))
    bad = [k for k in arrays if k not in ref or ref[k].dtype != arrays[k].dtype
           or ref[k].tobytes() != arrays[k].tobytes()]  # fmt: skip
    bad += sorted(set(ref.files) - set(arrays))
    bad += [f"{k} (record)" for k in mine if ref_records.get(k) != mine[k]]
    bad += [f"{k} (record)" for k in sorted(set(ref_records) - set(mine))]
    for k in bad:
        print("DIFFERS:", k)
    print(f"{len(arrays)} arrays and {len(mine)} records compared: "
          f"{'all identical' if not bad else f'{len(bad)} differ'}")  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
