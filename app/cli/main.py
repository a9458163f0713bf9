"""The ``costwise`` command line: serve, migrate, train, predict, batch, recalibrate, models,
jobs.

``models``, ``train``, ``predict`` and ``recalibrate`` work on the local registry, or on a running
server with ``--url`` (see :mod:`app.cli.remote`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from app.cli import remote
from app.cli.batch import add_batch_parser
from app.cli.challenger import add_challenger_parsers
from app.cli.keys import add_keys_parser
from app.cli.monitoring import add_monitoring_parsers
from app.cli.predict import add_predict_parser
from app.cli.progress import progress_bar
from app.cli.recalibrate import add_priors_parser, add_recalibrate_parser
from app.cli.remote import (
    add_jobs_parser,
    add_remote_options,
    add_train_remote_options,
    local_or_remote,
)
from app.cli.worker import add_worker_parser
from app.errors import ServiceError
from app.settings import Settings, get_settings
from costwise.errors import CostwiseError
from models.calibration.calibrators import TRAINING_CALIBRATIONS
from models.weak import WEAK_LEARNERS

WORKER_PING_SECONDS = 60
"""How long uvicorn's supervisor waits for a worker's answer before replacing it."""
BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a command whose reader left


def _sqlite_path(url: str) -> Path | None:
    if url.startswith("sqlite:///") and ":memory:" not in url:
        return Path(url[len("sqlite:///") :])
    return None


def _prepare_database(settings: Settings, migrate: bool) -> None:
    from app.db import upgrade_to_head

    path = _sqlite_path(settings.database_url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    if migrate:
        upgrade_to_head(settings.database_url)


_ENGINES: list[Any] = []  # the engines of this command (one, normally)


def _sessions(settings: Settings) -> Any:
    from app.db import ensure_schema_at_head, make_engine, make_session_factory

    _prepare_database(settings, migrate=_sqlite_path(settings.database_url) is not None)
    engine = make_engine(settings.database_url)
    _ENGINES.append(engine)  # disposed when the command ends (main)
    ensure_schema_at_head(engine)
    return make_session_factory(engine)


def _dispose_engines() -> None:
    """Close the connection pools the command opened (pooled connections left to the
    garbage collector are closed unannounced: a ResourceWarning, a server-side log line)."""
    while _ENGINES:
        _ENGINES.pop().dispose()


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    from app.api.server.connection_budget import fit_open_files
    from app.api.server.protocol import uvicorn_options

    migrate = (
        args.migrate
        if args.migrate is not None
        else (_sqlite_path(settings.database_url) is not None)
    )
    from app.api.wiring import timeouts_of
    from app.db import database_errors, ensure_schema_at_head, make_engine, make_session_factory
    from app.errors import Unavailable
    from app.services.access.keys import check_auth_configuration

    engine = make_engine(settings.database_url, timeouts=timeouts_of(settings))
    try:
        _prepare_database(settings, migrate)
        ensure_schema_at_head(engine)  # refuse to start with a clear message, before uvicorn
        with database_errors():
            check_auth_configuration(settings, make_session_factory(engine))  # prod, no auth
    except Unavailable as error:  # unreachable: start anyway, ready once it answers
        print(
            f"costwise: starting without the database ({error.detail}); /health/ready "
            "answers 503 until it answers and the start-up checks pass",
            file=sys.stderr,
        )
    finally:
        engine.dispose()
    budget, warning = fit_open_files(settings.max_connections)  # raises the soft fd limit
    if warning:
        print(warning, file=sys.stderr)
    uvicorn.run(
        "app.api.main:create_app",
        factory=True,
        host=args.host or settings.host,
        port=args.port or settings.port,
        workers=args.workers or settings.workers,
        log_level=settings.log_level.lower(),
        access_log=args.access_log,
        # With several workers uvicorn's supervisor pings each child and kills one that does
        # not answer within this many seconds (its default, 5, is shorter than a child's
        # imports take on a loaded machine: the children were killed and restarted forever).
        timeout_worker_healthcheck=WORKER_PING_SECONDS,
        **uvicorn_options(settings, budget),  # header limits, keep-alive, connection budget
    )
    return 0


def cmd_db(args: argparse.Namespace, settings: Settings) -> int:
    from app.db import make_engine, schema_revision

    if args.action == "upgrade":
        _prepare_database(settings, migrate=True)
        print("database schema is at head")
        return 0
    engine = make_engine(settings.database_url)
    try:
        current, head = schema_revision(engine)
    finally:
        engine.dispose()
    print(json.dumps({"current": current, "head": head, "at_head": current == head}))
    return 0 if current == head else 1


def _params(args: argparse.Namespace) -> dict[str, Any]:
    keys = (
        "n_estimators",
        "weak_learner",
        "max_depth",
        "score",
        "calibration",
        "calibration_split",
        "evaluation_fraction",
        "random_state",
    )
    params = {k: getattr(args, k) for k in keys if getattr(args, k) is not None}
    if getattr(args, "distributed", False):  # the API's field (only when asked)
        params["distributed"] = True
    return params


def dataset_ref(args: argparse.Namespace) -> Any:
    """The ``--dataset`` reference of ``costwise train`` (its errors name the option)."""
    from app.services.datasets import DatasetRef

    ref: dict[str, Any] = {"uri": args.dataset, "label_column": args.label_column}
    if args.format:
        ref["format"] = args.format
    if args.columns:
        ref["columns"] = args.columns
    return DatasetRef.from_mapping(ref, need_label=True)


def cmd_train(args: argparse.Namespace, settings: Settings) -> int:
    from app.services.training import Trainer, TrainingSpec
    from app.services.training.distributed import check_distributed
    from app.services.training.spec import checked_spec

    if bool(args.csv) == bool(args.dataset):
        raise ValueError("give a CSV file or --dataset URI (one of the two)")
    trainer = Trainer(_sessions(settings), settings)  # the API's door: same limits
    spec = TrainingSpec(**_params(args))
    data: Any
    if args.dataset:  # read under COSTWISE_DATA_ROOTS, in bounded memory
        data = dataset_ref(args)
        checked_spec(spec)
        trainer.open_dataset(data)  # 403/422 before anything else
    else:
        data = trainer.csv_data(Path(args.csv).read_bytes(), args.label_column)
    # --distributed: this process drives the Dask cluster, as a training job's does
    check_distributed(spec, settings, data, "job")
    trainer.check_rounds(spec)
    with progress_bar(args.progress):  # COSTWISE_MAX_TRAINING_SECONDS applies
        view = trainer.register(args.model, data, spec, description=args.description)
    print(
        json.dumps(
            {
                "model": view.model,
                "version": view.version,
                "metrics": view.metrics,
                "training_seconds": round(view.training_seconds, 3),
            },
            indent=2,
        )
    )
    return 0


def cmd_models(args: argparse.Namespace, settings: Settings) -> int:
    from app.services.model_registry.service import ModelRegistry

    models, total = ModelRegistry(_sessions(settings)).list_models(limit=1000)
    for m in models:
        aliases = ", ".join(f"{a}->v{v}" for a, v in m.aliases.items())
        print(f"{m.name}\tlatest=v{m.latest_version}\t{aliases}")
    print(f"# {total} model(s)", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="costwise",
        description="Calibrated boosting models with per-request costs. "
        "Configuration comes from COSTWISE_* environment variables (see README).",
    )
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="run the HTTP API (uvicorn)")
    s.add_argument("--host")
    s.add_argument("--port", type=int)
    s.add_argument("--workers", type=int)
    s.add_argument("--access-log", action="store_true", help="log every request")
    s.add_argument(
        "--migrate",
        dest="migrate",
        action="store_true",
        default=None,
        help="upgrade the schema first (default for SQLite)",
    )
    s.add_argument("--no-migrate", dest="migrate", action="store_false")
    s.set_defaults(func=cmd_serve)

    d = sub.add_parser("db", help="database schema: upgrade to head, or show the revision")
    d.add_argument("action", choices=["upgrade", "current"])
    d.set_defaults(func=cmd_db)

    t = sub.add_parser(
        "train", help="train and register a version from a CSV file or a dataset reference"
    )
    t.add_argument("csv", nargs="?", help="CSV with a header row (or give --dataset)")
    t.add_argument("--model", required=True, help="registered model name")
    t.add_argument(
        "--dataset",
        metavar="URI",
        help="train on data the service reads itself: file:///path under "
        "COSTWISE_DATA_ROOTS, or http(s):// (docs/data.md)",
    )
    t.add_argument("--format", choices=["parquet", "csv"], help="of --dataset (default: suffix)")
    t.add_argument(
        "--columns", type=lambda v: [c for c in v.split(",") if c], help="a,b,c: features"
    )
    t.add_argument("--label-column", default="label")
    t.add_argument("--description")
    t.add_argument("--n-estimators", type=int)
    t.add_argument("--weak-learner", choices=list(WEAK_LEARNERS))
    t.add_argument("--max-depth", type=int)
    t.add_argument("--score", choices=["vote", "logistic"])
    t.add_argument("--calibration", choices=list(TRAINING_CALIBRATIONS))
    t.add_argument("--calibration-split", choices=["holdout", "kfold"])
    t.add_argument("--evaluation-fraction", type=float)
    t.add_argument("--random-state", type=int)
    t.add_argument(
        "--distributed",
        action="store_true",
        help="train on the Dask cluster of COSTWISE_DASK_SCHEDULER from a Parquet --dataset "
        "(the API's distributed field; without --n-estimators the rounds are chosen; "
        "docs/distributed.md)",
    )
    t.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
    add_train_remote_options(t)
    t.set_defaults(func=local_or_remote(cmd_train, lambda a: remote.train(a, _params(a))))

    add_predict_parser(sub, _sessions, add_remote_options)
    add_batch_parser(sub, _sessions, add_remote_options)
    add_recalibrate_parser(sub, _sessions, add_remote_options)
    add_priors_parser(sub, _sessions, add_remote_options)

    m = sub.add_parser("models", help="list registered models")
    add_remote_options(m, progress=False)
    m.set_defaults(func=local_or_remote(cmd_models, remote.models))
    add_jobs_parser(sub)

    add_monitoring_parsers(sub)
    add_challenger_parsers(sub)
    add_keys_parser(sub, _sessions)
    add_worker_parser(sub, _sessions)
    return p


def _stdout_closed() -> int:
    """The reader of stdout went away (``costwise ... | head``): stop quietly, as other
    commands in a pipe do, with the exit status of a process ended by SIGPIPE."""
    with contextlib.suppress(OSError):  # nothing more reaches the pipe, nor the flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return BROKEN_PIPE


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = get_settings()
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if args.command != "serve":  # the schema check of a command is not news
        logging.getLogger("alembic").setLevel(logging.WARNING)
    try:
        code = int(args.func(args, settings))
        sys.stdout.flush()  # a reader gone is seen here, not by the flush at exit
        return code
    except BrokenPipeError:
        return _stdout_closed()
    except CostwiseError as exc:
        return remote.report_error(exc)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return remote.INTERRUPTED
    except ServiceError as exc:
        print(f"error [{exc.code}]: {exc.detail}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        _dispose_engines()


if __name__ == "__main__":
    sys.exit(main())
