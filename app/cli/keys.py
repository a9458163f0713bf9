"""``costwise keys``: create (prints the key once), list and revoke API keys."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from app.registry.orm import API_KEY_ROLES
from app.settings import Settings

SessionsFactory = Callable[[Settings], Any]


def _when(value: Any) -> str:
    return "-" if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def cmd_keys(args: argparse.Namespace, settings: Settings, sessions: SessionsFactory) -> int:
    """Run ``costwise keys create|list|revoke`` against the configured database."""
    from app.services.access.keys import create_key, list_keys, revoke_key

    if args.action == "create":
        view, plaintext = create_key(sessions(settings), args.name, args.role)
        print(plaintext)
        print(
            f"# API key {view.id} ({view.role}, {view.name!r}) created. This is the only time "
            "the key is shown: store it now (send it as 'Authorization: Bearer <key>').",
            file=sys.stderr,
        )
        return 0
    if args.action == "list":
        views = list_keys(sessions(settings))
        print("id\tname\trole\tprefix\tstatus\tcreated_at\tlast_used_at")
        for v in views:
            status = "active" if v.active else f"revoked {_when(v.revoked_at)}"
            print(
                f"{v.id}\t{v.name}\t{v.role}\t{v.prefix}...\t{status}\t"
                f"{_when(v.created_at)}\t{_when(v.last_used_at)}"
            )
        print(f"# {len(views)} key(s)", file=sys.stderr)
        return 0
    view = revoke_key(sessions(settings), args.id, force=args.force)
    print(f"API key {view.id} ({view.role}, {view.name!r}) revoked")
    return 0


def add_keys_parser(sub: Any, sessions: SessionsFactory) -> None:
    """Register the ``keys`` sub-command on the CLI's sub-parsers."""
    k = sub.add_parser("keys", help="API keys: create (shown once), list, revoke")
    ks = k.add_subparsers(dest="action", required=True)
    c = ks.add_parser("create", help="create a key and print it once")
    c.add_argument("--role", required=True, choices=API_KEY_ROLES)
    c.add_argument("--name", required=True, help="label, e.g. the team or service using it")
    ks.add_parser("list", help="list keys (no secrets)")
    r = ks.add_parser("revoke", help="revoke a key by id")
    r.add_argument("id", type=int)
    r.add_argument("--force", action="store_true", help="allow revoking the last admin key")

    def run(args: argparse.Namespace, settings: Settings) -> int:
        return cmd_keys(args, settings, sessions)

    k.set_defaults(func=run)
