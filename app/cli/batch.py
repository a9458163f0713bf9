"""``costwise batch MODEL IN OUT``: decide a whole data set into Parquet files.

Locally (no ``--url``) the batch runs in this process through the batch door
(:class:`app.services.batch.service.BatchService`, the code a batch job runs, on Dask
when ``COSTWISE_DASK_SCHEDULER`` is set); with ``--url`` it is a job on the server,
followed to its end. Both draw ``scoring [#####.....] rows n/N`` on stderr (on a
terminal, or with ``--progress``) and print the summary as JSON. Costs:
``--cost c_fn=col:amount`` (per row, from a column) and ``--cost c_fp=5`` (a number), or
``--cost-matrix '[[0, 1], [5, 0]]'``.

Locally, ``COSTWISE_DATA_ROOTS`` limits what may be read and written as it does for the
server; when it is not set, the directories of IN and OUT are the roots of this run (you
named the files yourself).
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from app.cli.progress import new_bar
from app.settings import Settings

INTERRUPTED = 130


def as_uri(value: str) -> str:
    """A URI as given, or a local path made an absolute ``file://`` URI."""
    if urlsplit(value).scheme in ("", "file") and not value.startswith("file:"):
        return Path(value).absolute().as_uri()
    return value


def parse_costs(items: list[str]) -> dict[str, float | dict[str, str]]:
    """``["c_fn=col:amount", "c_fp=5"]`` -> ``{"c_fn": {"column": "amount"}, "c_fp": 5.0}``."""
    costs: dict[str, float | dict[str, str]] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"--cost {item!r}: expected NAME=NUMBER or NAME=col:COLUMN")
        if value.startswith("col:"):
            costs[name.strip()] = {"column": value[4:]}
        else:
            try:
                costs[name.strip()] = float(value)
            except ValueError:
                raise ValueError(
                    f"--cost {item!r}: {value!r} is not a number (a column is col:NAME)"
                ) from None
    return costs


def _options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "format": args.format,
        "columns": args.columns.split(",") if args.columns else None,
        "costs": parse_costs(args.cost) if args.cost else None,
        "cost_matrix": json.loads(args.cost_matrix) if args.cost_matrix else None,
        "priors": [float(p) for p in args.priors.split(",")] if args.priors else None,
        "version": args.version,
        "alias": args.alias,
        "id_columns": args.id_column or [],
        "shadow": bool(args.shadow),
        "actions": args.actions.split(",") if args.actions else None,
    }


def run_local(args: argparse.Namespace, settings: Settings, sessions: Callable[..., Any]) -> int:
    from app.services.batch.scoring import BatchCosts
    from app.services.batch.service import BatchRequest, BatchService
    from app.services.prediction.predictor import Predictor

    source, target = as_uri(args.input), as_uri(args.output)
    if not settings.data_roots:
        roots = [str(Path(urlsplit(u).path).parent) for u in (source, target) if u[:5] == "file:"]
        settings = settings.model_copy(update={"data_roots": roots})
    o = _options(args)
    request = BatchRequest(
        input_uri=source,
        output_uri=target,
        input_format=o["format"],
        columns=o["columns"],
        id_columns=o["id_columns"],
        costs=BatchCosts.of(o["costs"], o["cost_matrix"], o["priors"], o["actions"]),
        version=o["version"],
        alias=o["alias"],
        shadow=o["shadow"],
    )
    service = BatchService(Predictor(sessions(settings), cache_size=1), settings)
    bar = new_bar(args.progress, unit="rows")
    try:
        result = service.run(
            uuid.uuid4().hex,
            args.model,
            request,
            bar if bar is not None else (lambda *_: None),
            lambda _version, _result, move: move(),
        )
    finally:
        if bar is not None:
            bar.close()
    print(json.dumps(result, indent=2))
    return 0


def run_remote(args: argparse.Namespace) -> int:
    from app.cli.remote import connect

    with connect(args) as client:
        job = client.batch(args.model, as_uri(args.input), as_uri(args.output), **_options(args))
        print(f"# job {job.id}: {job.status} (costwise jobs {job.id})", file=sys.stderr)
        bar = new_bar(args.progress, unit="rows")
        try:
            job = client.wait_for_job(
                job.id,
                on_progress=lambda j: bar(j.phase, j.done, j.total) if bar else None,
                poll_interval=args.poll_interval,
            )
        except KeyboardInterrupt:
            client.cancel_job(job.id)
            print(f"# interrupted: job {job.id} cancelled", file=sys.stderr)
            return INTERRUPTED
        finally:
            if bar is not None:
                bar.close()
    if job.status != "succeeded":
        err = job.error
        detail = f"[{err.code}]: {err.detail}" if err else ""
        print(f"error: job {job.id} {job.status} {detail}".rstrip(), file=sys.stderr)
        return 1
    print(json.dumps(job.result, indent=2))
    return 0


def add_batch_parser(
    sub: Any, sessions: Callable[..., Any], add_remote_options: Callable[[Any], None]
) -> None:
    """Register ``costwise batch``."""
    b = sub.add_parser("batch", help="decide every row of a Parquet/CSV data set into Parquet")
    b.add_argument("model", help="registered model name")
    b.add_argument("input", help="input: a path, file:// URI or https:// URL")
    b.add_argument("output", help="output directory (path or file:// URI); must not exist")
    b.add_argument("--format", choices=["parquet", "csv"], help="default: from the suffix")
    b.add_argument("--columns", help="feature columns, comma-separated (default: the model's)")
    b.add_argument(
        "--cost",
        action="append",
        help="a binary cost: NAME=NUMBER or NAME=col:COLUMN (repeatable; e.g. "
        "--cost c_fn=col:amount --cost c_fp=5)",
    )
    b.add_argument(
        "--cost-matrix",
        help="one K x K cost matrix as JSON; with --actions K x A, a cell a number or "
        '{"column": NAME} (that cost per row from the input)',
    )
    b.add_argument(
        "--actions",
        metavar="NAMES",
        help="names of the cost matrix's columns, comma-separated (e.g. approve,review,decline): "
        "each row takes the action of least expected cost (an action column in the output); "
        "a review action on named costs is --cost c_review=NUMBER or col:COLUMN",
    )
    b.add_argument("--priors", help="deployment class priors, comma-separated")
    b.add_argument("--version", type=int)
    b.add_argument("--alias")
    b.add_argument("--id-column", action="append", help="column copied to the output")
    b.add_argument(
        "--shadow",
        action="store_true",
        help="the model's shadow version decides the rows too (shadow_* columns)",
    )
    b.add_argument("--poll-interval", type=float, default=0.5, help="with --url: seconds")
    add_remote_options(b)

    def run(args: argparse.Namespace, settings: Settings) -> int:
        if args.cost and args.cost_matrix:
            raise ValueError("give --cost or --cost-matrix, not both")
        return run_remote(args) if args.url else run_local(args, settings, sessions)

    b.set_defaults(func=run)
