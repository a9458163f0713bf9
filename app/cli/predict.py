"""``costwise predict``: decide the rows of a CSV in chunks, locally or on a server.

Rows are read and decided ``--chunk-size`` at a time (memory stays flat on large
files) with a progress bar on stderr (``rows n/N``; only on a terminal or with
``--progress``). The version is resolved once before the first chunk (an alias that
moves during the run does not mix two versions in one output). Local and remote runs
write the same CSV: ``row, id, decision, p_<class>..., threshold, expected_cost``; with
``--c-review`` (the cost of sending a row to review) each row takes the action of least
expected cost among ``negative``, ``positive`` and ``review``, and an ``action`` column
follows ``decision`` (empty for a row sent to review).

``id`` is each row's id in the prediction log, to report its outcome with
``costwise outcomes send``: the value of the ``--id-column`` column (sent as the rows'
``ids``), else the id the log made (empty when the model's log is off). Columns that
are not features of the version (its label, an id) are left out and named on stderr.
The output file is written under a temporary name and renamed when the run succeeds:
a failed run leaves no empty or partial file.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import itertools
import os
import secrets
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from app.cli.progress import new_bar
from app.settings import Settings

Record = dict[str, float | None]
# id, decision, probabilities, threshold, expected cost, action (None: a class decision)
Row = tuple[str | None, Any, list[float] | None, float | None, float | None, str | None]


@dataclass(frozen=True)
class Decided:
    """One chunk's decisions: the version that made them, its classes, one Row per row."""

    version: int
    classes: list[Any]
    rows: list[Row]


@dataclass(frozen=True)
class Target:
    """The version a run decides with and its feature names (None: recorded without)."""

    version: int
    features: list[str] | None


# (records, the caller's ids or None, the version) -> decisions
Decide = Callable[[list[Record], list[str] | None, int], Decided]
Resolve = Callable[[], Target]


def _number(value: str, line: int, column: str) -> float | None:
    if value.strip() == "":
        return None
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"CSV line {line}, column {column!r}: {value!r} is not a number") from None


def _rows(
    reader: csv.DictReader[str], features: list[str], id_column: str | None
) -> Iterator[tuple[str | None, Record]]:
    for line, row in enumerate(reader, start=2):
        rid = None if id_column is None else (row.get(id_column) or "")
        yield rid, {k: _number(row.get(k) or "", line, k) for k in features}


def _count_rows(path: str) -> int:
    with open(path, "rb") as fh:
        return max(0, sum(1 for line in fh if line.strip()) - 1)


def _fmt(value: float | None) -> str:
    return "nan" if value is None else f"{value:.6g}"


def _write(writer: Any, start: int, classes: list[Any], rows: list[Row], actions: bool) -> None:
    for i, (rid, decision, proba, threshold, cost, action) in enumerate(rows, start):
        probs = ["" for _ in classes] if proba is None else [f"{v:.6g}" for v in proba]
        taken = ["" if action is None else action] if actions else []
        writer.writerow(
            [
                i,
                "" if rid is None else rid,
                "" if decision is None else decision,
                *taken,
                *probs,
                "" if threshold is None else _fmt(threshold),
                _fmt(cost),
            ]
        )


def _columns(args: argparse.Namespace, header: list[str], target: Target) -> list[str]:
    """The columns sent as features; the others are named on stderr."""
    if args.id_column is not None and args.id_column not in header:
        raise ValueError(
            f"--id-column {args.id_column!r}: {args.csv} has no such column (columns: "
            f"{', '.join(header)})"
        )
    dropped = set(args.ignore) | ({args.id_column} if args.id_column else set())
    sent = [c for c in header if c not in dropped]
    if target.features is not None:
        unknown = [c for c in sent if c not in target.features]
        if unknown:
            print(
                f"# left out column(s) that are not features of {args.model} "
                f"v{target.version}: {', '.join(unknown)}",
                file=sys.stderr,
            )
        sent = [c for c in sent if c in target.features]
    return sent


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    """stdout, or ``path`` written under a temporary name and renamed on success (a
    failed run leaves no empty or partial file, and keeps an existing one)."""
    if path is None:
        yield sys.stdout
        return
    final = Path(path)
    tmp = final.with_name(f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}.part")
    try:
        with open(tmp, "x", newline="") as out:  # created with the umask's mode, as -o was
            yield out
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def decide_csv(args: argparse.Namespace, resolve: Resolve, decide: Decide) -> int:
    """Read ``args.csv`` in chunks, ``decide`` each, write the CSV; the summary on stderr."""
    bar = new_bar(args.progress, unit="rows")
    total = _count_rows(args.csv) if bar is not None else 0
    done = 0
    with open(args.csv, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        if not header:
            raise ValueError(f"{args.csv}: a header row naming the features is required")
        target = resolve()
        actions = args.c_review is not None
        rows = _rows(reader, _columns(args, header, target), args.id_column)
        with _output(args.output) as out:
            writer = csv.writer(out)
            while chunk := list(itertools.islice(rows, args.chunk_size)):
                ids = None if args.id_column is None else [rid or "" for rid, _ in chunk]
                decided = decide([r for _, r in chunk], ids, target.version)
                if done == 0:
                    writer.writerow(
                        [
                            "row",
                            "id",
                            "decision",
                            *(["action"] if actions else []),
                            *[f"p_{c}" for c in decided.classes],
                            "threshold",
                            "expected_cost",
                        ]
                    )
                _write(writer, done, decided.classes, decided.rows, actions)
                done += len(chunk)
                if bar is not None:
                    bar("predicting", done, max(total, done))
    if bar is not None:
        bar.close()
    print(f"# {args.model} v{target.version}: {done} rows", file=sys.stderr)
    return 0


def _costs(args: argparse.Namespace) -> dict[str, float]:
    costs = {"c_fp": args.c_fp, "c_fn": args.c_fn, "c_tp": args.c_tp, "c_tn": args.c_tn}
    if args.c_review is not None:
        costs["c_review"] = args.c_review
    return costs


def _local_log(settings: Settings, sessions: Any) -> Any:
    """The prediction log writer of a local run (None when COSTWISE_PREDICTION_LOG is
    off): the rows are logged in the local registry as the server logs them."""
    if not settings.prediction_log:
        return None
    from app.services.feedback.prediction_log import PredictionLogWriter

    return PredictionLogWriter(
        sessions.kw["bind"],
        max_rows=settings.prediction_log_queue_rows,
        batch_rows=settings.prediction_log_batch_rows,
        flush_seconds=settings.prediction_log_flush_seconds,
        wait_seconds=settings.prediction_log_wait_seconds,
    )


def local_run(args: argparse.Namespace, factory: Any, log: Any) -> tuple[Resolve, Decide]:
    """Resolve and decide with the registry of ``factory`` (no server); rows go to ``log``."""
    from app.services.model_registry.service import ModelRegistry
    from app.services.prediction.predictor import Predictor
    from app.services.prediction.request import CostRequest, DecisionRequest, Rows

    predictor = Predictor(factory, max_rows=10**9, log=log)
    costs = CostRequest(costs=_costs(args))

    def resolve() -> Target:
        version = predictor.resolve(args.model, args.version, args.alias).version
        view = ModelRegistry(factory).get_version(args.model, version)
        return Target(version, view.data.get("feature_names"))

    def decide(chunk: list[Record], ids: list[str] | None, version: int) -> Decided:
        req = DecisionRequest(Rows(records=chunk), costs, version=version, ids=ids)
        p = predictor.predict(args.model, req)
        d = p.decisions
        classes = list(p.classes)
        th = d.threshold
        row_ids: list[str | None] = list(p.ids) if p.ids is not None else [None] * len(chunk)
        names = p.provenance.actions
        taken: list[str | None] = (
            [None] * len(chunk)
            if d.action_index is None or names is None
            else [names[a] for a in d.action_index.tolist()]
        )
        rows: list[Row] = [
            (
                row_ids[i],
                None if k < 0 else classes[k],
                None if p.proba is None else p.proba[i].tolist(),
                None if th is None else float(th[i]),
                float(d.expected_cost[i]),
                taken[i],
            )
            for i, k in enumerate(d.labels_index.tolist())
        ]
        return Decided(p.resolved.version, classes, rows)

    return resolve, decide


def remote_run(args: argparse.Namespace, client: Any) -> tuple[Resolve, Decide]:
    """Resolve with ``GET /v1/models/{model}`` and decide with ``POST .../predict``."""
    from app.registry.repository import DEFAULT_ALIAS

    def resolve() -> Target:
        version = args.version
        if version is None:
            model = client.get_model(args.model)
            if args.alias is not None:
                if args.alias not in model.aliases:
                    names = ", ".join(model.aliases) or "none"
                    raise ValueError(
                        f"model {args.model!r} has no alias {args.alias!r} (aliases: {names})"
                    )
                version = model.aliases[args.alias]
            else:
                version = model.aliases.get(DEFAULT_ALIAS, model.latest_version)
            if version is None:
                raise ValueError(f"model {args.model!r} has no versions yet")
        data = client.get_version(args.model, version).data
        return Target(version, data.get("feature_names"))

    def decide(chunk: list[Record], ids: list[str] | None, version: int) -> Decided:
        r = client.predict(args.model, records=chunk, costs=_costs(args), version=version, ids=ids)
        rows: list[Row] = [
            (p.id, p.decision, p.probabilities, p.threshold, p.expected_cost, p.action)
            for p in r.predictions
        ]
        return Decided(r.version, list(r.classes), rows)

    return resolve, decide


def cmd_predict(args: argparse.Namespace, settings: Settings, sessions: Any) -> int:
    """``costwise predict``: on the server at ``--url`` if given, else locally."""
    if args.url:
        from app.cli.remote import connect

        with connect(args) as client:
            return decide_csv(args, *remote_run(args, client))
    factory = sessions(settings)
    log = _local_log(settings, factory)
    if log is not None:
        log.start()
    try:
        return decide_csv(args, *local_run(args, factory, log))
    finally:
        if log is not None:
            log.close()  # writes what is queued


def add_predict_parser(sub: Any, sessions: Any, add_remote_options: Callable[[Any], None]) -> None:
    """Register ``costwise predict``."""
    q = sub.add_parser(
        "predict",
        help="decide rows of a CSV under given costs (CSV out, with each row's prediction id)",
    )
    q.add_argument("csv", help="CSV whose header names the model's features")
    q.add_argument("--model", required=True)
    q.add_argument("--version", type=int)
    q.add_argument("--alias")
    q.add_argument("--c-fp", type=float, required=True, help="cost of a false positive")
    q.add_argument("--c-fn", type=float, required=True, help="cost of a false negative")
    q.add_argument("--c-tp", type=float, default=0.0)
    q.add_argument("--c-tn", type=float, default=0.0)
    q.add_argument(
        "--c-review",
        type=float,
        help="cost of sending a row to review, whatever the truth: each row takes the "
        "action of least expected cost among negative, positive and review (an action "
        "column in the output; decision empty for review)",
    )
    q.add_argument(
        "--id-column",
        metavar="COLUMN",
        help="the column of each row's own id (e.g. a transaction id): sent as the rows' "
        "ids, so the prediction log stores them and `costwise outcomes send` reports "
        "outcomes against them (default: the log makes an id per row); written in the "
        "output's id column",
    )
    q.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="COLUMN",
        help="a column to leave out (repeatable); columns that are not features of the "
        "version (its label, say) are always left out and named on stderr",
    )
    q.add_argument(
        "--output",
        "-o",
        help="output CSV (default: stdout); written only when the run succeeds",
    )
    q.add_argument("--chunk-size", type=int, default=5000, help="rows per request (default 5000)")
    add_remote_options(q)

    def run(args: argparse.Namespace, settings: Settings) -> int:
        if args.chunk_size < 1:
            raise ValueError("--chunk-size must be >= 1")
        return cmd_predict(args, settings, sessions)

    q.set_defaults(func=run)
