"""Training from a dataset reference at scale: wall time and peak memory (issue 18).

Goal: 10,000,000 rows x 50 features train with the default settings (algorithm
``auto``) with a peak RSS under 2 GiB.

For each ``--rows`` value the script

1. generates a synthetic Parquet file of ``rows x features`` float64 columns plus a
   0/1 label in a temporary directory (chunks of 250,000 rows = one row group each;
   linear terms, two interactions, a threshold AND, 2% missing values in two columns;
   never committed);
2. trains it in a **child process** through the training door exactly as a training
   job does (``Trainer.register(name, DatasetRef(...), spec, as_job=True)``: open the
   reference under COSTWISE_DATA_ROOTS, read it twice in blocks, bin it, fit ``auto``,
   register the version in a SQLite registry), with the default settings;
3. reports the child's wall time, its time per phase (reading, boosting, ...) from the
   progress callback, and its peak RSS (``ru_maxrss`` of the child, from
   ``resource.getrusage(RUSAGE_CHILDREN)`` once it exited: the whole process, Python,
   numpy, pyarrow and numba included).

Run::

    .venv/bin/python -m bench training.data_scale --rows 1000000 10000000 [--features 50]
    .venv/bin/python -m bench training.data_scale --rows 10000000 --read-only  # no training

Writes ``bench/results/training/data_scale.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.record import run_header, write_result

ROOT = Path(__file__).resolve().parents[2]

CHUNK = 250_000


def generate(path: Path, rows: int, features: int, seed: int = 0) -> float:
    """Write the synthetic Parquet file in chunks; returns seconds taken."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    started = time.perf_counter()
    names = [f"x{j}" for j in range(features)]
    schema = pa.schema([(n, pa.float64()) for n in names] + [("label", pa.int8())])
    beta = np.random.default_rng(seed).normal(size=features) * (
        np.arange(features) < 10
    )  # ten informative linear features
    with pq.ParquetWriter(path, schema) as writer:
        for i, start in enumerate(range(0, rows, CHUNK)):
            n = min(CHUNK, rows - start)
            rng = np.random.default_rng([seed, i])
            X = rng.normal(size=(n, features))
            z = X @ beta * 0.5 + 1.5 * X[:, 10] * X[:, 11] - 1.0 * X[:, 12] * X[:, 13]
            z += 2.0 * ((X[:, 14] > 0.5) & (X[:, 15] > 0.0)) - 1.0
            y = (rng.random(n) < 1.0 / (1.0 + np.exp(-z))).astype(np.int8)
            X[rng.random(n) < 0.02, 0] = np.nan
            X[rng.random(n) < 0.02, 11] = np.nan
            cols = [pa.array(X[:, j]) for j in range(features)] + [pa.array(y)]
            writer.write_table(pa.Table.from_arrays(cols, schema=schema), row_group_size=n)
    return time.perf_counter() - started


def child_read(path: str, out: str) -> None:
    """``--read-only``: open and read ``path`` into binned training data (both passes,
    the sample, the edges and the codes), no training (runs in a child)."""
    from app.services.datasets import DatasetReader, DatasetRef
    from app.services.training import TrainingSpec
    from app.services.training.dataset import read_training_data
    from app.settings import Settings

    settings = Settings(data_roots=[str(Path(path).parent)])
    started = time.perf_counter()
    ref = DatasetRef.from_mapping(
        {"uri": f"file://{path}", "label_column": "label"}, need_label=True
    )
    data = read_training_data(
        DatasetReader.from_settings(settings).open(ref), TrainingSpec(), settings
    )
    result = {
        "seconds": round(time.perf_counter() - started, 2),
        "phases": {"reading": round(time.perf_counter() - started, 2)},
        "codes_mib": round(data.X.nbytes / 2**20, 1),
        "n_rows": int(len(data.y)),
        "binned": data.edges is not None,
        "capacity": {},
        "metrics": {},
    }
    Path(out).write_text(json.dumps(result))


def child(path: str, registry: str, out: str) -> None:
    """Train ``path`` through the training door, as a job does (runs in a child)."""
    from app.db import make_engine, make_session_factory, upgrade_to_head
    from app.services.datasets import DatasetRef
    from app.services.training import Trainer, TrainingSpec
    from app.settings import Settings
    from models.boosting.progress import progress_callback

    settings = Settings(
        database_url=f"sqlite:///{registry}",
        data_roots=[str(Path(path).parent)],
    )
    upgrade_to_head(settings.database_url)
    engine = make_engine(settings.database_url)
    trainer = Trainer(make_session_factory(engine), settings)
    phases: dict[str, float] = {}
    state = {"phase": "start", "since": time.perf_counter()}

    def callback(phase: str, done: int, total: int) -> None:
        if phase != state["phase"]:
            now = time.perf_counter()
            phases[str(state["phase"])] = phases.get(str(state["phase"]), 0.0) + (
                now - float(state["since"])
            )
            state.update(phase=phase, since=now)

    started = time.perf_counter()
    ref = DatasetRef.from_mapping(
        {"uri": f"file://{path}", "label_column": "label"}, need_label=True
    )
    with progress_callback(callback):
        view = trainer.register("scale", ref, TrainingSpec(), as_job=True)
    seconds = time.perf_counter() - started
    phases[str(state["phase"])] = phases.get(str(state["phase"]), 0.0) + (
        time.perf_counter() - float(state["since"])
    )
    result = {
        "seconds": round(seconds, 2),
        "phases": {k: round(v, 2) for k, v in phases.items()},
        "capacity": view.params.get("fitted", {}).get("capacity", {}),
        "metrics": {k: view.metrics.get(k) for k in ("auc", "log_loss", "brier")},
        "n_rows": view.data["n_rows"],
        "binned": view.data["dataset"]["binned"],
    }
    result["capacity"] = {
        k: result["capacity"].get(k)
        for k in ("weak_learner", "max_depth", "n_estimators", "search_rows", "time_fallback")
    }
    Path(out).write_text(json.dumps(result))


def _git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
    except OSError:
        return "unknown"


def run(rows: int, features: int, workdir: Path, read_only: bool = False) -> dict[str, Any]:
    data_dir = workdir / f"data-{rows}"
    data_dir.mkdir()
    path = data_dir / "train.parquet"
    gen = generate(path, rows, features)
    size = path.stat().st_size
    out = workdir / f"result-{rows}.json"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            __spec__.name,
            "--child",
            str(path),
            str(workdir / f"r{rows}.db"),
            str(out),
        ]
        + (["--read-only"] if read_only else []),
        cwd=ROOT,
    )
    wall = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode != 0:
        raise SystemExit(f"the training child failed for {rows} rows ({proc.returncode})")
    if peak_kib < before:  # pragma: no cover - ru_maxrss is a running maximum
        raise SystemExit("peak RSS went down?")
    result = json.loads(out.read_text())
    path.unlink()
    return {
        "rows": rows,
        "features": features,
        "parquet_bytes": size,
        "generate_seconds": round(gen, 1),
        "wall_seconds": round(wall, 1),
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "peak_rss_is_max_over_children": before > 0,
        **result,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--label", default="", help="names this configuration's result files")
    parser.add_argument(
        "--read-only", action="store_true", help="read and bin the data, do not train"
    )
    args = parser.parse_args()
    if args.child:
        if args.read_only:
            child_read(args.child[0], args.child[2])
        else:
            child(*args.child)
        return
    runs = []
    with tempfile.TemporaryDirectory(prefix="costwise-scale-") as tmp:
        for rows in sorted(args.rows):  # ascending: ru_maxrss of children is a running max
            r = run(rows, args.features, Path(tmp), args.read_only)
            print(json.dumps(r), flush=True)
            runs.append(r)
    load = os.getloadavg()
    report = {
        **run_header(__file__),
        "git_commit": _git_commit(),
        "load_average_at_end": [round(v, 2) for v in load],
        "note": "shared machine: 6 engineers on 2 cores; timings are noisy",
        "runs": runs,
    }
    lines = [
        f"# Training from a dataset reference at scale ({report['date']})",
        "",
        f"Machine: {report['machine']} (shared: 6 engineers on 2 cores, load average "
        f"{load[0]:.1f} at the end; timings are noisy). git {report['git_commit']}.",
        f"Command: `{report['command']}`",
        "",
        "| rows | features | Parquet | wall | reading | boosting | peak RSS | chosen | AUC |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in runs:
        cap = r["capacity"]
        chosen = f"{cap.get('weak_learner')} d{cap.get('max_depth')} x{cap.get('n_estimators')}"
        lines.append(
            f"| {r['rows']:,} | {r['features']} | {r['parquet_bytes'] / 2**20:,.0f} MiB | "
            f"{r['wall_seconds']:,.1f} s | {r['phases'].get('reading', 0):,.1f} s | "
            f"{r['phases'].get('boosting', 0):,.1f} s | {r['peak_rss_mib']:,.0f} MiB | "
            f"{chosen} | {r['metrics'].get('auc')} |"
        )
    label = "-".join(s for s in ("read-only" if args.read_only else "", args.label) if s)
    write_result(__file__, report, "\n".join(lines), label=label)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
