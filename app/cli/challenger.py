"""``costwise compare``, ``costwise promote``, ``costwise aliases history`` and
``costwise shadow`` (against a server): champion and challenger from the command line.

``compare`` prints the server's comparison of two versions by realised cost as JSON.
``promote`` moves an alias to a candidate only if the promotion gate's rule holds: it
prints the move and its evidence as JSON and exits 0; a refusal prints the evidence (the
rule, each check and the comparison) as JSON on stdout, the reason on stderr, and exits 1.
``shadow set|show|clear`` names, reads or removes the model's shadow version.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from app.cli.monitoring import add_window_options
from app.cli.remote import add_remote_options, connect
from app.settings import Settings
from costwise.errors import Conflict

REFUSED = 1  # the gate said no: not a usage error (2), a decision
ALIAS_A = ("alias", "the alias to move (its version is the champion, a)")


def _print(doc: Any) -> int:
    print(json.dumps(doc, indent=2))
    return 0


def cmd_compare(args: argparse.Namespace, settings: Settings) -> int:
    with connect(args) as client:
        doc = client.compare(
            args.model, args.a, args.b, since=args.since, until=args.until, mode=args.mode,
            confidence=args.confidence, bucket=args.bucket,
        )  # fmt: skip
    return _print(doc)


def cmd_promote(args: argparse.Namespace, settings: Settings) -> int:
    with connect(args) as client:
        try:
            moved = client.promote(
                args.model, args.alias, args.candidate,
                min_labelled_pairs=args.min_pairs, max_cost_difference=args.max_cost_difference,
                max_ece_increase=args.max_ece_increase, confidence=args.confidence,
                mode=args.mode, since=args.since, until=args.until, note=args.note,
            )  # fmt: skip
        except Conflict as exc:
            if exc.code != "PROMOTION_REFUSED":
                raise
            _print(exc.evidence)
            print(f"refused [{exc.code}]: {exc.detail}", file=sys.stderr)
            return REFUSED
    return _print(moved)


def cmd_history(args: argparse.Namespace, settings: Settings) -> int:
    with connect(args) as client:
        return _print(client.alias_history(args.model, args.alias, limit=args.limit))


def cmd_shadow(args: argparse.Namespace, settings: Settings) -> int:
    with connect(args) as client:
        if args.action == "set":
            version = int(args.target) if args.target.isdigit() else None
            alias = None if version is not None else args.target
            return _print(client.set_shadow(args.model, version=version, alias=alias))
        if args.action == "clear":
            client.clear_shadow(args.model)
            print(f"# {args.model}: shadow scoring stopped", file=sys.stderr)
            return 0
        return _print(client.get_shadow(args.model))


def _rule_options(p: Any) -> None:
    """The promotion rule; an option left out takes the server's default."""
    p.add_argument(
        "--min-pairs", type=int, help="at least this many labelled rows (server default 200)"
    )
    p.add_argument(
        "--max-cost-difference",
        type=float,
        help="the interval's upper end of mean(cost_b - cost_a) must be below this (default 0)",
    )
    p.add_argument(
        "--max-ece-increase", type=float, help="ECE of b minus a, at most (default 0.02)"
    )


def _server_command(
    sub: Any, name: str, text: str, func: Any, *positionals: tuple[str, str]
) -> Any:
    """A command that talks to a server about one model: ``model`` and ``positionals``
    first, ``--url`` / ``--api-key`` added, ``func`` run (options go in between)."""
    p = sub.add_parser(name, help=text)
    p.add_argument("model", help="registered model name")
    for positional, what in positionals:
        p.add_argument(positional, help=what)
    add_remote_options(p, progress=False, server_only=True)
    p.set_defaults(func=func)
    return p


def add_challenger_parsers(sub: Any) -> None:
    c = _server_command(
        sub, "compare", "would version b have decided more cheaply than a? realised cost on "
        "the labelled predictions, paired (shadow) or not, with its interval; read from a "
        "server", cmd_compare,
    )  # fmt: skip
    c.add_argument("--a", required=True, help="the champion: a version, an alias or model:version")
    c.add_argument(
        "--b", required=True, help="the challenger: a version, an alias or model:version"
    )
    add_window_options(c)
    c.add_argument("--mode", choices=["auto", "paired", "unpaired"], default="auto")
    c.add_argument("--confidence", type=float, default=0.95, help="of the interval (default 0.95)")
    c.add_argument(
        "--bucket", choices=["day", "hour"], default="day", help="of the cost series (default day)"
    )

    p = _server_command(
        sub, "promote", "move an alias to a candidate only if its realised cost is proven "
        "lower (the promotion gate; exit 1 and the evidence when refused)", cmd_promote, ALIAS_A,
    )  # fmt: skip
    p.add_argument(
        "--candidate",
        required=True,
        help="the challenger (b): a version, an alias or model:version",
    )
    _rule_options(p)
    add_window_options(p)
    p.add_argument("--mode", choices=["auto", "paired", "unpaired"])
    p.add_argument("--confidence", type=float, help="of the interval (server default 0.95)")
    p.add_argument("--note", default="", help="why (kept in the alias's history)")

    aliases = sub.add_parser("aliases", help="an alias's audit trail, read from a server")
    asub = aliases.add_subparsers(dest="action", required=True)
    h = _server_command(
        asub,
        "history",
        "every move of an alias, newest first (JSON)",
        cmd_history,
        ("alias", "the alias"),
    )
    h.add_argument("--limit", type=int, default=100)

    s = sub.add_parser(
        "shadow",
        help="the model's shadow: a version that also decides every logged prediction",
    )
    ssub = s.add_subparsers(dest="action", required=True)
    _server_command(ssub, "set", "name the shadow: a version number or an alias (followed "
                    "when it moves)", cmd_shadow, ("target", "a version number or an alias"))  # fmt: skip
    _server_command(ssub, "show", "the shadow, the version it resolves to and this server's "
                    "counts", cmd_shadow)  # fmt: skip
    _server_command(ssub, "clear", "stop shadow scoring (logged shadow decisions stay)", cmd_shadow)
