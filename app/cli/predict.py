"""``costwise predict``: decide the rows of a CSV in chunks, locally or on a server.

Rows are read and decided ``--chunk-size`` at a time (memory stays flat on large
files) with a progress bar on stderr (``rows n/N``; only on a terminal or with
``--progress``). The first chunk fixes the version (an alias that moves during the run
does not mix two versions in one output). Local and remote runs write the same CSV:
``row, decision, p_<class>..., threshold, expected_cost``.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import itertools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from app.cli.progress import new_bar
from app.settings import Settings

Record = dict[str, float | None]
Row = tuple[Any, list[float] | None, float | None, float | None]  # decision, p, th, cost


@dataclass(frozen=True)
class Decided:
    """One chunk's decisions: the version that made them, its classes, one Row per row."""

    version: int
    classes: list[Any]
    rows: list[Row]


Decide = Callable[[list[Record], int | None], Decided]  # (records, pinned version)


def _records(fh: TextIO, ignore: list[str]) -> Iterator[Record]:
    for row in csv.DictReader(fh):
        yield {
            k: (None if v.strip() == "" else float(v)) for k, v in row.items() if k not in ignore
        }


def _count_rows(path: str) -> int:
    with open(path, "rb") as fh:
        return max(0, sum(1 for line in fh if line.strip()) - 1)


def _fmt(value: float | None) -> str:
    return "nan" if value is None else f"{value:.6g}"


def _write(writer: Any, start: int, classes: list[Any], rows: list[Row]) -> None:
    for i, (decision, proba, threshold, cost) in enumerate(rows, start):
        probs = ["" for _ in classes] if proba is None else [f"{v:.6g}" for v in proba]
        writer.writerow(
            [i, decision, *probs, "" if threshold is None else _fmt(threshold), _fmt(cost)]
        )


def decide_csv(args: argparse.Namespace, decide: Decide) -> int:
    """Read ``args.csv`` in chunks, ``decide`` each, write the CSV; the summary on stderr."""
    bar = new_bar(args.progress, unit="rows")
    total = _count_rows(args.csv) if bar is not None else 0
    done, version = 0, None
    with contextlib.ExitStack() as stack:
        fh = stack.enter_context(open(args.csv, newline="", encoding="utf-8-sig"))
        out = stack.enter_context(open(args.output, "w", newline="")) if args.output else sys.stdout
        writer = csv.writer(out)
        records = _records(fh, args.ignore)
        while chunk := list(itertools.islice(records, args.chunk_size)):
            decided = decide(chunk, version)
            if version is None:
                version = decided.version
                writer.writerow(
                    [
                        "row",
                        "decision",
                        *[f"p_{c}" for c in decided.classes],
                        "threshold",
                        "expected_cost",
                    ]
                )
            _write(writer, done, decided.classes, decided.rows)
            done += len(chunk)
            if bar is not None:
                bar("predicting", done, max(total, done))
    if bar is not None:
        bar.close()
    where = f" v{version}" if version is not None else ""
    print(f"# {args.model}{where}: {done} rows", file=sys.stderr)
    return 0


def _costs(args: argparse.Namespace) -> dict[str, float]:
    return {"c_fp": args.c_fp, "c_fn": args.c_fn, "c_tp": args.c_tp, "c_tn": args.c_tn}


def local_decider(args: argparse.Namespace, settings: Settings, sessions: Any) -> Decide:
    """Decide chunks with the registry of ``settings`` (no server)."""
    from app.services.prediction.predictor import Predictor
    from app.services.prediction.request import CostRequest, DecisionRequest, Rows

    predictor = Predictor(sessions(settings), max_rows=10**9)
    costs = CostRequest(costs=_costs(args))

    def decide(chunk: list[Record], pinned: int | None) -> Decided:
        req = DecisionRequest(
            Rows(records=chunk),
            costs,
            version=pinned if pinned is not None else args.version,
            alias=None if pinned is not None else args.alias,
        )
        p = predictor.predict(args.model, req)
        d = p.decisions
        classes = list(p.classes)
        th = d.threshold
        rows: list[Row] = [
            (
                classes[k],
                None if p.proba is None else p.proba[i].tolist(),
                None if th is None else float(th[i]),
                float(d.expected_cost[i]),
            )
            for i, k in enumerate(d.labels_index.tolist())
        ]
        return Decided(p.resolved.version, classes, rows)

    return decide


def remote_decider(args: argparse.Namespace, client: Any) -> Decide:
    """Decide chunks with ``POST /v1/models/{model}/predict`` on ``client``'s server."""

    def decide(chunk: list[Record], pinned: int | None) -> Decided:
        choice: dict[str, Any] = (
            {"version": pinned}
            if pinned is not None
            else {k: v for k, v in (("version", args.version), ("alias", args.alias)) if v}
        )
        r = client.predict(args.model, records=chunk, costs=_costs(args), **choice)
        rows: list[Row] = [
            (p.decision, p.probabilities, p.threshold, p.expected_cost) for p in r.predictions
        ]
        return Decided(r.version, list(r.classes), rows)

    return decide


def cmd_predict(args: argparse.Namespace, settings: Settings, sessions: Any) -> int:
    """``costwise predict``: on the server at ``--url`` if given, else locally."""
    if args.url:
        from app.cli.remote import connect

        with connect(args) as client:
            return decide_csv(args, remote_decider(args, client))
    return decide_csv(args, local_decider(args, settings, sessions))


def add_predict_parser(sub: Any, sessions: Any, add_remote_options: Callable[[Any], None]) -> None:
    """Register ``costwise predict``."""
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
    q.add_argument("--chunk-size", type=int, default=5000, help="rows per request (default 5000)")
    add_remote_options(q)

    def run(args: argparse.Namespace, settings: Settings) -> int:
        if args.chunk_size < 1:
            raise ValueError("--chunk-size must be >= 1")
        return cmd_predict(args, settings, sessions)

    q.set_defaults(func=run)
