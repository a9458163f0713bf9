"""Prediction ids and the log's insert: random ids against time-ordered ids on a large log.

The prediction log has a unique index on ``(model_id, prediction_id)``. With random ids
every insert lands at a random page of that B-tree; with ids that start with the time
(what :func:`app.services.feedback.prediction_log.new_ids` makes) they land at its right
end. This benchmark measures what that costs the log's writer on a large log.

For each scheme, a fresh SQLite registry (migrated to head) gets ``--rows`` logged
predictions whose ids follow that scheme (one request per row, as single-row traffic
leaves them), written by the log's own batched insert; then, alternating the two
registries batch by batch so that machine noise hits them alike, ``--batches`` batches of
``--batch`` single-row requests are inserted the way the writer does it
(:func:`~app.services.feedback.prediction_log.columns_of` then
:func:`~app.registry.prediction_log.write_rows`, one transaction a batch). Reported per
row: this process's CPU time and the wall time of the insert.

    python -m bench serving.log_ids [--rows 1000000] [--batches 40] [--batch 500]
    python -m bench serving.log_ids --database-url postgresql+psycopg://postgres@127.0.0.1:5432/test

With ``--database-url`` (a PostgreSQL server) each scheme gets a fresh database on that
server instead (created, migrated, dropped afterwards; result labelled ``postgresql``).

``random`` is the earlier scheme (24 random hex digits a request); ``time-ordered`` is
the service's. Results: ``bench/results/serving/log_ids[-postgresql].{json,md}``.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from app.registry.prediction_log import write_rows
from app.services.feedback.prediction_log import LogEntry, columns_of, new_ids
from bench.record import heading, run_header, table, write_result
from bench.reliability.stall import stall_database
from bench.seed import one_version, zero_one_entry


def random_id() -> str:
    return secrets.token_hex(12) + "-0"


def ordered_id() -> str:
    return new_ids(1)[0]


SCHEMES: dict[str, Callable[[], str]] = {"random": random_id, "time-ordered": ordered_id}


def entries(ids: list[str], model_id: int, version_id: int, rows_each: int) -> list[LogEntry]:
    """Log entries of ``rows_each`` rows (1: single-row requests) holding ``ids``."""
    rng = np.random.default_rng(len(ids))
    out = []
    for start in range(0, len(ids), rows_each):
        chunk = ids[start : start + rows_each]
        out.append(zero_one_entry(model_id, version_id, chunk, rng.uniform(size=len(chunk))))
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    per_row: dict[str, dict[str, list[float]]] = {s: {"cpu": [], "wall": []} for s in SCHEMES}
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as databases:
        targets = {}
        for scheme, make in SCHEMES.items():
            if args.database_url:
                url = databases.enter_context(stall_database(args.database_url))
            else:
                url = f"sqlite:///{Path(tmp) / scheme}.db"
            engine, model_id, version_id = one_version(url)
            for start in range(0, args.rows, 10_000):
                ids = [make() for _ in range(min(10_000, args.rows - start))]
                write_rows(engine, columns_of(entries(ids, model_id, version_id, 10_000)))
            targets[scheme] = (engine, model_id, version_id)
        for _ in range(args.batches):
            for scheme, (engine, model_id, version_id) in targets.items():
                batch = entries([SCHEMES[scheme]() for _ in range(args.batch)], model_id,
                                version_id, 1)  # fmt: skip
                cpu, wall = time.process_time(), time.perf_counter()
                write_rows(engine, columns_of(batch))
                per_row[scheme]["cpu"].append((time.process_time() - cpu) / args.batch * 1e6)
                per_row[scheme]["wall"].append((time.perf_counter() - wall) / args.batch * 1e6)
        for engine, _, _ in targets.values():
            engine.dispose()
    medians = {
        s: {k: round(statistics.median(v), 1) for k, v in m.items()} for s, m in per_row.items()
    }
    return {
        "database": "postgresql" if args.database_url else "sqlite",
        "rows_before": args.rows,
        "batches": args.batches,
        "batch": args.batch,
        "per_row_us": medians,
        "ratio_random_over_ordered": {
            k: round(medians["random"][k] / medians["time-ordered"][k], 2) for k in ("cpu", "wall")
        },
    }


def markdown(result: dict[str, Any]) -> str:
    m = result["per_row_us"]
    r = result["ratio_random_over_ordered"]
    rows = [[s, f"{m[s]['cpu']:.1f}", f"{m[s]['wall']:.1f}"] for s in SCHEMES]
    rows.append(["random / time-ordered", f"{r['cpu']:.2f}x", f"{r['wall']:.2f}x"])
    return "\n".join([
        *heading("Prediction ids and the log's insert", result),
        f"A {'PostgreSQL' if result['database'] == 'postgresql' else 'SQLite'} log of "
        f"{result['rows_before']:,} rows per scheme, then {result['batches']} "
        f"alternating batches of {result['batch']} single-row requests each; medians per row.",
        "",
        *table(["ids", "CPU us per row", "wall us per row"], rows),
        "",
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="logged rows before measuring")
    p.add_argument("--batches", type=int, default=40)
    p.add_argument("--batch", type=int, default=500, help="single-row requests per batch")
    p.add_argument("--database-url", default=None, help="a PostgreSQL server (default: SQLite)")
    args = p.parse_args(argv)
    result = {**run_header(__file__, argv), **run(args)}
    label = "postgresql" if args.database_url else ""
    write_result(__file__, result, markdown(result), label=label, argv=argv)
    print(markdown(result))


if __name__ == "__main__":
    main()
