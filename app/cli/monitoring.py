"""``costwise outcomes send FILE.csv`` and ``costwise monitor MODEL`` (against a server).

``outcomes send`` reads a CSV with a header row and the columns ``id``, ``label`` and
optionally ``cost`` (empty: not reported; other names with ``--id-column``,
``--label-column``, ``--cost-column``): the ids are those ``costwise predict`` wrote, and sends it in batches of 10,000. A label
that reads as an integer is sent as one (``1``), ``true``/``false`` as booleans,
anything else as text: the classes of a model trained from a CSV are of these types.
It prints the counts per status and every item that was not recorded, unchanged or
pending (kept until its prediction is logged), and exits 1 when there was any
(conflict, invalid, refused), 0 otherwise.
``monitor`` prints per version one line per hour or day bucket (``--json``: the
server's document); when some rows were decided among actions, one line per action over
the window follows (``action``: taken, share, labelled, realised cost, mean).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from app.cli.remote import add_remote_options, connect
from app.settings import Settings
from costwise._monitoring import MAX_OUTCOMES


def _label(text: str) -> Any:
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    try:
        return int(t)
    except ValueError:
        return t


def read_outcomes(
    path: Path, id_column: str = "id", label_column: str = "label", cost_column: str = "cost"
) -> list[dict[str, Any]]:
    """The outcomes of a CSV file (header ``id,label[,cost]``, or the columns named);
    ValueError names the line. Other columns are not read."""
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = [c for c in (id_column, label_column) if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(
                f"{path}: missing column(s) {missing} (need {id_column},{label_column}"
                f"[,{cost_column}]; see --id-column, --label-column)"
            )
        out = []
        for line, row in enumerate(reader, start=2):
            label = _label(row[label_column] or "")
            item: dict[str, Any] = {"id": row[id_column], "label": label}
            cost = (row.get(cost_column) or "").strip()
            if cost:
                try:
                    item["cost"] = float(cost)
                except ValueError:
                    raise ValueError(f"{path}:{line}: cost {cost!r} is not a number") from None
            out.append(item)
    return out


def cmd_outcomes(args: argparse.Namespace, settings: Settings) -> int:
    items = read_outcomes(Path(args.csv), args.id_column, args.label_column, args.cost_column)
    counts: Counter[str] = Counter()
    problems = 0
    with connect(args) as client:
        for start in range(0, len(items), MAX_OUTCOMES):
            report = client.send_outcomes(args.model, items[start : start + MAX_OUTCOMES])
            counts.update(report.counts)
            for r in report.results:
                if r.status not in ("recorded", "unchanged", "pending"):
                    problems += 1
                    print(f"{r.id}\t{r.status}\t{r.detail or ''}", file=sys.stderr)
    print("\t".join(f"{k}={counts.get(k, 0)}" for k in sorted(counts)))
    return 1 if problems else 0


def _num(value: Any, fmt: str = ".4g") -> str:
    return "-" if value is None else format(value, fmt)


def _line(start: str, f: dict[str, Any]) -> str:
    cal = f.get("calibration") or {}
    z = cal.get("spiegelhalter") or {}
    return "\t".join(
        [
            start,
            str(f["predictions"]),
            str(f["labelled"]),
            _num(f["coverage"], ".3f"),
            _num(f["realised_cost"]),
            _num(f["expected_cost"]),
            _num(f["cost_ratio"], ".3f"),
            _num(cal.get("brier")),
            _num(cal.get("ece")),
            _num(z.get("p_value"), ".3g"),
            "ALARM" if f.get("calibration_alarm") else "",
        ]
    )


def cmd_monitor(args: argparse.Namespace, settings: Settings) -> int:
    with connect(args) as client:
        doc = client.monitoring(
            args.model, version=args.version, since=args.since, until=args.until, bucket=args.bucket
        )
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    header = "start\tpredictions\tlabelled\tcoverage\trealised\texpected\tratio\tbrier\tece\tp\t"
    for v in doc["versions"]:
        print(f"# {doc['model']} version {v['version']}")
        print(header)
        for b in v["buckets"]:
            print(_line(b["start"], b))
        print(_line("total", v["total"]))
        for a in v["total"].get("actions") or []:
            cells = [a["action"], str(a["taken"]), _num(a["share"], ".3f"), str(a["labelled"])]
            cells += [_num(a["realised_cost"]), _num(a["mean_realised_cost"])]
            print("action\t" + "\t".join(cells))
    if not doc["versions"]:
        print("# no logged predictions in this window", file=sys.stderr)
    return 0


def add_window_options(parser: Any) -> None:
    """``--since`` / ``--until``: the window of logged predictions a server reads."""
    parser.add_argument("--since", help="ISO 8601 time (UTC without a zone)")
    parser.add_argument("--until", help="ISO 8601 time (UTC without a zone)")


def add_monitoring_parsers(sub: Any) -> None:
    o = sub.add_parser("outcomes", help="report outcomes of logged predictions to a server")
    osub = o.add_subparsers(dest="action", required=True)
    send = osub.add_parser(
        "send",
        help="send a CSV of id,label[,cost]: the ids are those `costwise predict` wrote "
        "(its id column)",
    )
    send.add_argument("csv", help="CSV with a header row: id,label[,cost] (other columns unread)")
    send.add_argument("--model", required=True, help="registered model name")
    send.add_argument(
        "--id-column", default="id", help="the column of the prediction ids (default: id)"
    )
    send.add_argument(
        "--label-column", default="label", help="the column of the outcomes (default: label)"
    )
    send.add_argument(
        "--cost-column",
        default="cost",
        help="the column of realised costs, if any (default: cost; empty: not reported)",
    )
    add_remote_options(send, progress=False, server_only=True)
    send.set_defaults(func=cmd_outcomes)

    m = sub.add_parser(
        "monitor",
        help="realised cost and calibration per version and day, read from a server "
        "(the prediction log and the outcomes it received)",
    )
    m.add_argument("model", help="registered model name")
    m.add_argument("--version", type=int)
    add_window_options(m)
    m.add_argument("--bucket", choices=["hour", "day"], default="day")
    m.add_argument("--json", action="store_true", help="print the server's JSON document")
    add_remote_options(m, progress=False, server_only=True)
    m.set_defaults(func=cmd_monitor)
