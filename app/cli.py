"""The ``costwise`` command line: serve, migrate, train, predict, list models."""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import logging
import sys
from pathlib import Path
from typing import Any

from app.cli_keys import add_keys_parser
from app.cli_progress import progress_bar
from app.cli_worker import add_worker_parser
from app.errors import ServiceError
from app.settings import Settings, get_settings


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


def _sessions(settings: Settings) -> Any:
    from app.db import ensure_schema_at_head, make_engine, make_session_factory

    _prepare_database(settings, migrate=_sqlite_path(settings.database_url) is not None)
    engine = make_engine(settings.database_url)
    ensure_schema_at_head(engine)
    return make_session_factory(engine)


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    migrate = (
        args.migrate
        if args.migrate is not None
        else (_sqlite_path(settings.database_url) is not None)
    )
    _prepare_database(settings, migrate)
    from app.db import ensure_schema_at_head, make_engine

    engine = make_engine(settings.database_url)
    try:
        ensure_schema_at_head(engine)  # refuse to start with a clear message, before uvicorn
        from app.db import make_session_factory
        from app.services.keys import check_auth_configuration

        check_auth_configuration(settings, make_session_factory(engine))  # e.g. prod, no auth
    finally:
        engine.dispose()
    uvicorn.run(
        "app.api.main:create_app",
        factory=True,
        host=args.host or settings.host,
        port=args.port or settings.port,
        workers=args.workers or settings.workers,
        log_level=settings.log_level.lower(),
        access_log=args.access_log,
    )
    return 0


def cmd_db(args: argparse.Namespace, settings: Settings) -> int:
    from app.db import make_engine, schema_revision

    if args.action == "upgrade":
        _prepare_database(settings, migrate=True)
        print("database schema is at head")
        return 0
    current, head = schema_revision(make_engine(settings.database_url))
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
    return {k: getattr(args, k) for k in keys if getattr(args, k) is not None}


def cmd_train(args: argparse.Namespace, settings: Settings) -> int:
    from app.services.data import parse_csv
    from app.services.training import TrainingData, TrainingSpec, train_and_register

    X, y, names = parse_csv(Path(args.csv).read_bytes(), args.label_column)
    sessions = _sessions(settings)
    with progress_bar(args.progress):
        view = train_and_register(
            sessions,
            args.model,
            TrainingData(X, y, names),
            TrainingSpec(**_params(args)),
            description=args.description,
            max_seconds=settings.max_training_seconds,  # COSTWISE_MAX_TRAINING_SECONDS
        )
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


def cmd_predict(args: argparse.Namespace, settings: Settings) -> int:
    from app.services.predictor import CostRequest, Predictor, Rows

    with open(args.csv, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        records = [
            {
                k: (None if v.strip() == "" else float(v))
                for k, v in row.items()
                if k not in args.ignore
            }
            for row in reader
        ]
    predictor = Predictor(_sessions(settings), max_rows=10**9)
    costs = {"c_fp": args.c_fp, "c_fn": args.c_fn, "c_tp": args.c_tp, "c_tn": args.c_tn}
    p = predictor.predict(
        args.model,
        Rows(records=records),
        CostRequest(costs=costs),
        version=args.version,
        alias=args.alias,
    )
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(args.output, "w", newline="")) if args.output else sys.stdout
        writer = csv.writer(out)
        classes = list(p.classes)
        writer.writerow(
            ["row", "decision", *[f"p_{c}" for c in classes], "threshold", "expected_cost"]
        )
        th = p.decisions.threshold
        for i, k in enumerate(p.decisions.labels_index.tolist()):
            writer.writerow(
                [
                    i,
                    classes[k],
                    *(
                        ["" for _ in classes]
                        if p.proba is None
                        else [f"{v:.6g}" for v in p.proba[i]]
                    ),
                    "" if th is None else f"{th[i]:.6g}",
                    f"{p.decisions.expected_cost[i]:.6g}",
                ]
            )
    print(f"# {args.model} v{p.resolved.version}: {len(records)} rows", file=sys.stderr)
    return 0


def cmd_models(args: argparse.Namespace, settings: Settings) -> int:
    from app.services.catalog import Catalog

    models, total = Catalog(_sessions(settings)).list_models(limit=1000)
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

    t = sub.add_parser("train", help="train and register a version from a CSV file")
    t.add_argument("csv", help="CSV with a header row")
    t.add_argument("--model", required=True, help="registered model name")
    t.add_argument("--label-column", default="label")
    t.add_argument("--description")
    t.add_argument("--n-estimators", type=int)
    t.add_argument("--weak-learner", choices=["stump", "tree", "logistic"])
    t.add_argument("--max-depth", type=int)
    t.add_argument("--score", choices=["vote", "logistic"])
    t.add_argument("--calibration", choices=["platt", "isotonic", "none"])
    t.add_argument("--calibration-split", choices=["holdout", "kfold"])
    t.add_argument("--evaluation-fraction", type=float)
    t.add_argument("--random-state", type=int)
    t.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
    t.set_defaults(func=cmd_train)

    q = sub.add_parser("predict", help="decide rows of a CSV under given costs (CSV out)")
    q.add_argument("csv", help="CSV whose header names the model's features")
    q.add_argument("--model", required=True)
    q.add_argument("--version", type=int)
    q.add_argument("--alias")
    q.add_argument("--c-fp", type=float, required=True, help="cost of a false positive")
    q.add_argument("--c-fn", type=float, required=True, help="cost of a false negative")
    q.add_argument("--c-tp", type=float, default=0.0)
    q.add_argument("--c-tn", type=float, default=0.0)
    q.add_argument(
        "--ignore",
        action="append",
        default=["label"],
        help="column to leave out (repeatable; default: label)",
    )
    q.add_argument("--output", "-o", help="output CSV (default: stdout)")
    q.set_defaults(func=cmd_predict)

    m = sub.add_parser("models", help="list registered models")
    m.set_defaults(func=cmd_models)

    add_keys_parser(sub, _sessions)
    add_worker_parser(sub, _sessions)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = get_settings()
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        return int(args.func(args, settings))
    except ServiceError as exc:
        print(f"error [{exc.code}]: {exc.detail}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
