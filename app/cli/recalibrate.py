"""``costwise recalibrate`` and ``costwise priors``, locally or on a server.

``recalibrate``: a new calibration map for a version.

Labelled rows come from a CSV (header = the model's feature names, plus the label
column), or with ``--from-outcomes`` from the version's logged predictions whose
outcomes were reported (``--since`` / ``--until``, ISO 8601). The new version is
registered as the next version of the model, sharing the parent's booster; the command
prints it with the calibration before and after on the held-out rows.

``priors``: the class priors of a version's recent traffic, estimated by EM from its
logged probabilities and recorded (``"priors": "estimated"`` in predict applies it).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from app.errors import InvalidArgument
from app.settings import Settings


def _when(text: str | None, field: str) -> datetime | None:
    """An ISO 8601 time given on the command line, in UTC (no zone: UTC), checked as the
    API checks it (:func:`app.api.time_window.utc_instant`)."""
    from app.api.time_window import utc_instant

    if text is None:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgument(
            f"{field}: expected an ISO 8601 time, got {text!r}", field=field
        ) from None
    return utc_instant(t, field)


def _labelled_csv(path: str, label_column: str) -> tuple[list[dict[str, float | None]], list[Any]]:
    """Records keyed by feature name (NaN as None) and their labels."""
    from app.services.common.inputs import parse_csv

    X, y, names = parse_csv(Path(path).read_bytes(), label_column)
    records = [
        {n: (None if v != v else float(v)) for n, v in zip(names, row, strict=True)}
        for row in X.tolist()
    ]
    return records, y.tolist()


def _summary(view: Any) -> dict[str, Any]:
    rec = view.metrics.get("recalibration", {})
    keys = ("brier", "log_loss", "ece")
    return {
        "model": view.model,
        "version": view.version,
        "parent_version": view.parent_version,
        "calibration": view.calibration,
        "data": {k: view.data.get(k) for k in ("source", "n_rows", "class_counts")},
        "before": {k: rec.get("before", {}).get(k) for k in keys},
        "after": {k: rec.get("after", {}).get(k) for k in keys},
    }


def _check(args: argparse.Namespace) -> None:
    if args.from_outcomes == (args.csv is not None):
        raise ValueError("give a CSV of labelled rows or --from-outcomes (one of the two)")
    if not args.from_outcomes and (args.since or args.until):
        raise ValueError("--since and --until go with --from-outcomes")


def cmd_recalibrate(args: argparse.Namespace, settings: Settings, sessions: Any) -> int:
    """Recalibrate on the server at ``--url`` if given, else in the local registry."""
    _check(args)
    records, labels = (
        (None, None) if args.csv is None else _labelled_csv(args.csv, args.label_column)
    )
    view: Any
    if args.url:
        from app.cli.remote import connect

        with connect(args) as client:
            view = client.recalibrate(
                args.model,
                args.version,
                records=records,
                labels=labels,
                from_outcomes=args.from_outcomes,
                since=args.since,
                until=args.until,
                method=args.method,
                holdout_fraction=args.holdout_fraction,
            )
    else:
        from app.registry.log_window import LogWindow
        from app.services.feedback.recalibration import LabelledInput, Recalibrator

        recalibrator = Recalibrator(
            sessions(settings),
            max_rows=settings.max_train_rows,
            max_features=settings.max_features,
            max_cells=settings.max_cells,
        )
        view = recalibrator.recalibrate(
            args.model,
            args.version,
            method=args.method,
            rows=None if records is None else LabelledInput(labels or [], records=records),
            outcomes=(
                LogWindow(_when(args.since, "since"), _when(args.until, "until"))
                if args.from_outcomes
                else None
            ),
            holdout_fraction=args.holdout_fraction,
        )
    print(json.dumps(_summary(view), indent=2, default=str))
    print(
        f"# {args.model} v{view.version}: recalibrated from v{args.version} ({args.method})",
        file=sys.stderr,
    )
    return 0


def add_recalibrate_parser(
    sub: Any, sessions: Any, add_remote_options: Callable[..., None]
) -> None:
    """Register ``costwise recalibrate MODEL VERSION [CSV]``."""
    r = sub.add_parser(
        "recalibrate",
        help="refit a version's calibration map on labelled rows (no retraining)",
    )
    r.add_argument("model", help="registered model name")
    r.add_argument("version", type=int, help="the version to recalibrate")
    r.add_argument("csv", nargs="?", help="CSV of labelled rows (header: feature names, label)")
    r.add_argument("--label-column", default="label")
    r.add_argument("--method", choices=["platt", "isotonic"], default="platt")
    r.add_argument("--holdout-fraction", type=float, default=0.3)
    r.add_argument(
        "--from-outcomes",
        action="store_true",
        help="use the version's logged predictions with reported outcomes instead of a CSV",
    )
    r.add_argument("--since", help="with --from-outcomes: predictions made at or after (ISO 8601)")
    r.add_argument("--until", help="with --from-outcomes: predictions made before (ISO 8601)")
    add_remote_options(r, progress=False)
    r.set_defaults(func=lambda args, settings: cmd_recalibrate(args, settings, sessions))


def cmd_priors(args: argparse.Namespace, settings: Settings, sessions: Any) -> int:
    """Estimate the priors on the server at ``--url`` if given, else locally; recorded
    (what ``"priors": "estimated"`` applies) only with ``--record``."""
    since, until = _when(args.since, "since"), _when(args.until, "until")
    if args.url:
        import dataclasses

        from app.cli.remote import connect

        with connect(args) as client:
            est = client.estimate_priors(
                args.model, version=args.version, since=args.since, until=args.until,
                record=args.record,
            )  # fmt: skip
        out = {k: v for k, v in dataclasses.asdict(est).items() if k != "extra"}
    else:
        from app.registry.log_window import LogWindow
        from app.services.feedback.priors import PriorEstimates

        factory = sessions(settings)
        estimates = PriorEstimates(factory, factory, max_rows=settings.monitoring_max_rows)
        out = estimates.estimate(
            args.model, version=args.version, window=LogWindow(since, until), record=args.record
        )
    print(json.dumps(out, indent=2, default=str))
    return 0


def add_priors_parser(sub: Any, sessions: Any, add_remote_options: Callable[..., None]) -> None:
    """Register ``costwise priors MODEL``."""
    q = sub.add_parser(
        "priors", help="estimate the class priors of a version's recent traffic (EM, no labels)"
    )
    q.add_argument("model", help="registered model name")
    q.add_argument("--version", type=int, help="default: the version served now")
    q.add_argument("--since", help="predictions made at or after (ISO 8601)")
    q.add_argument("--until", help="predictions made before (ISO 8601)")
    q.add_argument(
        "--record",
        action="store_true",
        help='record the estimate: predict\'s "priors": "estimated" applies it from then on '
        "(over HTTP: POST, role admin); without it nothing is recorded",
    )
    add_remote_options(q, progress=False)
    q.set_defaults(func=lambda args, settings: cmd_priors(args, settings, sessions))
