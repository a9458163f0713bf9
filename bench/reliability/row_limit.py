"""The row limit of unbinned trainings from a reference: rows read, time and peak memory.

A training from a dataset reference with an algorithm other than ``auto`` (or with more
than two classes) reads the rows as floats under COSTWISE_MAX_TRAIN_ROWS. This script
generates a file far larger than that limit (``--rows``, 4 float32 features and a 0/1
label; Parquet with 250,000-row groups, whose footer tells the row count, or CSV with
``--format csv``, whose count is only known once read; in a temporary directory, never
committed) and, in a
**fresh child process** per run, opens and reads it exactly as a training does
(:func:`app.services.training.dataset.read_training_data` with ``algorithm=adaboost``
and the default COSTWISE_MAX_TRAIN_ROWS of 2,000,000), until the 413. It reports the
outcome, the child's wall time and its peak RSS (``ru_maxrss``: Python, numpy and
pyarrow included).

``--code DIR`` (repeatable) runs the same child against other source trees (e.g. an
export of an older version) in the same run, so figures compare on one machine at one
time; by default only this tree runs.

Run (a heavy run: serialise it with other load runs)::

    .venv/bin/python bench/reliability/row_limit.py \\
        --rows 20000000 [--format csv]

Writes ``bench/results/reliability/row_limit-<format>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.record import write_result  # noqa: E402

CHUNK = 250_000

CHILD = r"""
import json, resource, sys, time
from app.errors import ServiceError
from app.services.datasets import DatasetReader, DatasetRef
from app.services.training.dataset import read_training_data
from app.services.training.spec import TrainingSpec
from app.settings import Settings

root, uri, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
settings = Settings(data_roots=[root], max_dataset_rows=100_000_000)
spec = TrainingSpec(algorithm="adaboost", n_estimators=5)
started = time.perf_counter()
outcome = {}
try:
    opened = DatasetReader([root]).open(DatasetRef(uri, fmt, "label"))
    data = read_training_data(opened, spec, settings)
    outcome = {"outcome": "read", "rows": int(len(data.y))}
except ServiceError as exc:
    outcome = {"outcome": exc.code, "detail": exc.detail}
outcome["seconds"] = time.perf_counter() - started
outcome["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(outcome))
"""


def generate(path: Path, rows: int, fmt: str, seed: int = 0) -> None:
    """Write ``rows`` x 4 float32 features + an int8 label, one row group per chunk."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    schema = pa.schema([(f"x{j}", pa.float32()) for j in range(4)] + [("label", pa.int8())])
    writer: Any = (
        pq.ParquetWriter(path, schema) if fmt == "parquet" else pacsv.CSVWriter(path, schema)
    )
    with writer:
        for start in range(0, rows, CHUNK):
            n = min(CHUNK, rows - start)
            X = rng.standard_normal((n, 4), dtype=np.float32)
            y = (X[:, 0] + X[:, 1] > 0).astype(np.int8)
            cols = [pa.array(X[:, j]) for j in range(4)] + [pa.array(y)]
            table = pa.Table.from_arrays(cols, schema=schema)
            if fmt == "parquet":
                writer.write_table(table, row_group_size=CHUNK)
            else:
                writer.write_table(table)


def run_child(code: Path, root: Path, uri: str, fmt: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    env.pop("COSTWISE_MAX_TRAIN_ROWS", None)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), uri, fmt],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(code),
        timeout=1800,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--code", type=Path, action="append", default=None)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    args = parser.parse_args()
    codes = args.code or [ROOT]
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="costwise-row-limit-") as tmp:
        root = Path(tmp)
        path = root / f"big.{args.format}"
        started = time.perf_counter()
        generate(path, args.rows, args.format)
        print(f"generated {args.rows} rows in {time.perf_counter() - started:.1f} s")
        for _ in range(args.repeat):
            for code in codes:  # interleaved: the same conditions for each tree
                r = run_child(code.resolve(), root, path.as_uri(), args.format)
                r["code"] = str(code)
                results.append(r)
                print(json.dumps(r))
    payload = {"rows": args.rows, "format": args.format, "results": results}
    write_result(__file__, payload, label=args.format)


if __name__ == "__main__":
    main()
