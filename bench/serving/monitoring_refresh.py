"""Cost of the monitoring reads on a large prediction log: /metrics gauges and the report.

One refresh of the gauges of /metrics, and one ``GET /v1/models/{name}/monitoring``
report.

Usage (from the repository root)::

    .venv/bin/python -m bench serving.monitoring_refresh --rows 700000 --labelled 0.05

Fills a fresh SQLite registry (in a temporary directory, or ``--db PATH`` to reuse one)
with one model version and ``--rows`` logged predictions written by the prediction log's
own batched insert, marks a share ``--labelled`` of them as labelled, then times
``LogMaintenance.refresh()`` (what the server runs every
COSTWISE_MONITORING_REFRESH_SECONDS in a worker thread): the CPU seconds of this
process, the wall time, and the peak RSS of the process afterwards; then, in a second
process so that its peak is its own, ``Monitoring.report()`` over the whole log with
hourly buckets (what the endpoint and the console's panel call). Prints the figures so
that two versions of the code can be compared on the same database.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from sqlalchemy.orm import sessionmaker

from app.db import make_engine
from app.registry.prediction_log import write_rows
from app.services.feedback.log_maintenance import LogMaintenance
from app.services.feedback.monitoring import Monitoring
from app.services.feedback.prediction_log import columns_of, new_ids
from bench.seed import one_version, zero_one_entry


def fill(url: str, rows: int, labelled: float) -> None:
    engine, model_id, version_id = one_version(url)
    rng = np.random.default_rng(0)
    for start in range(0, rows, 10_000):
        n = min(10_000, rows - start)
        entry = zero_one_entry(model_id, version_id, new_ids(n), rng.uniform(size=n))
        write_rows(engine, columns_of([entry]))
    with engine.begin() as c:
        c.exec_driver_sql(
            "UPDATE logged_predictions SET label = decision "
            f"WHERE id % 1000 < {int(labelled * 1000)}"
        )
    engine.dispose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=700_000)
    ap.add_argument("--labelled", type=float, default=0.05, help="share of labelled rows")
    ap.add_argument("--db", type=Path, default=None, help="SQLite file (filled if missing)")
    ap.add_argument("--report", action="store_true", help="time the report instead")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "log.db"
        url = f"sqlite:///{db}"
        if not db.exists():
            fill(url, args.rows, args.labelled)
        engine = make_engine(url)
        sessions = sessionmaker(engine)
        upkeep = LogMaintenance(sessions, Monitoring(sessions))
        cpu, wall = time.process_time(), time.perf_counter()
        if args.report:
            report = Monitoring(sessions).report("m", bucket="hour")
            total = report["versions"][0]["total"]
            snapshot = {("m", 1): {**total, "ece": total["calibration"]["ece"]}}
        else:
            snapshot = upkeep.refresh()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        engine.dispose()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    keys = ("predictions", "labelled", "coverage", "cost_ratio", "ece")
    figures = {
        f"{m}/{v}": {k: f.get(k, (f.get("calibration") or {}).get(k)) for k in keys}
        for (m, v), f in snapshot.items()
    }
    print(
        json.dumps(
            {
                "measured": "report" if args.report else "refresh",
                "cpu_seconds": round(cpu, 3),
                "wall_seconds": round(wall, 3),
                "peak_rss_mib": round(peak, 1),
                "gauges": figures,
            }
        )
    )


if __name__ == "__main__":
    main()
