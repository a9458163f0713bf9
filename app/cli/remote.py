"""The CLI against a running server: ``--url`` / ``--api-key`` and ``costwise jobs``.

With ``--url`` (or ``COSTWISE_URL``), ``models``, ``train`` and ``predict`` call the
server through :mod:`costwise.client` instead of opening the registry; ``jobs`` always
does. ``--api-key`` defaults to ``COSTWISE_API_KEY``. A remote training that runs as a
job is polled with a progress bar (phase, round t of M); Ctrl-C cancels the job through
the API and exits 130.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any

from app.cli.progress import new_bar
from app.settings import Settings
from costwise import Client, CostwiseError, Retry
from costwise.types import Job, Version

Command = Callable[[argparse.Namespace, Settings], int]
INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C


def add_remote_options(
    parser: argparse.ArgumentParser, progress: bool = True, server_only: bool = False
) -> None:
    """``--url``, ``--api-key`` (and ``--progress``) on a command that can go remote;
    ``server_only``: a command that always talks to a server (its help says so)."""
    parser.add_argument(
        "--url",
        default=os.environ.get("COSTWISE_URL") or None,
        help=(
            "the costwise server to talk to (required: give it or set $COSTWISE_URL)"
            if server_only
            else "call the costwise server at this URL instead of the local registry "
            "(default: $COSTWISE_URL)"
        ),
    )
    parser.add_argument("--api-key", help="API key for --url (default: $COSTWISE_API_KEY)")
    if progress:
        parser.add_argument(
            "--progress",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="progress bar on stderr (default: when stderr is a terminal)",
        )


def connect(args: argparse.Namespace) -> Client:
    """A client for ``--url`` / ``--api-key`` (httpx's per-request log lines silenced)."""
    logging.getLogger("httpx").setLevel(logging.WARNING)
    if not args.url:
        raise ValueError(f"costwise {args.command} needs a server: give --url or set COSTWISE_URL")
    return Client(args.url, api_key=args.api_key, retry=Retry(attempts=5))


def local_or_remote(local: Command, remote: Callable[[argparse.Namespace], int]) -> Command:
    """The command: ``remote(args)`` when ``--url`` is given, else ``local(args, settings)``."""

    def run(args: argparse.Namespace, settings: Settings) -> int:
        return remote(args) if args.url else local(args, settings)

    return run


def report_error(exc: CostwiseError) -> int:
    where = f" (field {exc.field})" if exc.field else ""
    print(f"error [{exc.code}]: {exc.detail}{where}", file=sys.stderr)
    return 2


def models(args: argparse.Namespace) -> int:
    with connect(args) as client:
        page = client.list_models(limit=1000)
    for m in page.models:
        aliases = ", ".join(f"{a}->v{v}" for a, v in m.aliases.items())
        print(f"{m.name}\tlatest=v{m.latest_version}\t{aliases}")
    print(f"# {page.total} model(s)", file=sys.stderr)
    return 0


def _watch(client: Client, job: Job, progress: bool | None, poll: float) -> Job:
    bar = new_bar(progress)

    def show(j: Job) -> None:
        if bar is not None:
            bar(j.phase, j.done, j.total)

    try:
        return client.wait_for_job(job.id, on_progress=show, poll_interval=poll)
    finally:
        if bar is not None:
            bar.close()


def train(args: argparse.Namespace, params: dict[str, Any]) -> int:
    """Upload the CSV; a job is followed to its end (Ctrl-C cancels it, exit 130)."""
    if bool(args.csv) == bool(getattr(args, "dataset", None)):
        raise ValueError("give a CSV file or --dataset URI (one of the two)")
    source: dict[str, Any] = (
        {"dataset": args.dataset, "dataset_format": args.format, "columns": args.columns}
        if getattr(args, "dataset", None)
        else {"csv": args.csv}
    )
    with connect(args) as client:
        result = client.train(
            args.model,
            label_column=args.label_column,
            description=args.description,
            mode=args.mode,
            **source,
            **params,
        )
        if isinstance(result, Job):
            print(
                f"# job {result.id}: {result.status} (costwise jobs {result.id})", file=sys.stderr
            )
            if not args.wait:
                print(json.dumps(_plain(result), indent=2))
                return 0
            try:
                job = _watch(client, result, args.progress, args.poll_interval)
            except KeyboardInterrupt:
                client.cancel_job(result.id)
                print(f"# interrupted: job {result.id} cancelled", file=sys.stderr)
                return INTERRUPTED
            if job.status != "succeeded" or job.version is None:
                err = job.error
                detail = f"[{err.code}]: {err.detail}" if err else ""
                print(f"error: job {job.id} {job.status} {detail}".rstrip(), file=sys.stderr)
                return 1
            result = client.get_version(args.model, job.version)
    _print_version(result)
    return 0


def _print_version(v: Version) -> None:
    summary = {
        "model": v.model,
        "version": v.version,
        "metrics": v.metrics,
        "training_seconds": round(v.training_seconds, 3),
    }
    print(json.dumps(summary, indent=2))


def _plain(value: Any) -> Any:
    data = dataclasses.asdict(value)
    data.pop("extra", None)
    return json.loads(
        json.dumps(data, default=lambda o: o.isoformat() if isinstance(o, datetime) else str(o))
    )


def jobs(args: argparse.Namespace, settings: Settings) -> int:
    """``costwise jobs``: list jobs, or show / cancel / follow one."""
    with connect(args) as client:
        if args.id is None:
            page = client.list_jobs(model=args.model, status=args.status, limit=args.limit)
            print("id\tmodel\tstatus\tphase\tround\tversion\tcreated_at")
            for j in page.jobs:
                print(
                    f"{j.id}\t{j.model}\t{j.status}\t{j.phase}\t{j.done}/{j.total}\t"
                    f"{'-' if j.version is None else j.version}\t{j.created_at.isoformat()}"
                )
            print(f"# {len(page.jobs)} of {page.total} job(s)", file=sys.stderr)
            return 0
        if args.cancel:
            job = client.cancel_job(args.id)
        elif args.wait:
            try:
                job = _watch(client, client.get_job(args.id), args.progress, args.poll_interval)
            except KeyboardInterrupt:  # stop watching; the job goes on
                return INTERRUPTED
        else:
            job = client.get_job(args.id)
    print(json.dumps(_plain(job), indent=2))
    return 0


def add_jobs_parser(sub: Any) -> None:
    """Register ``costwise jobs [ID] [--cancel | --wait]``."""
    j = sub.add_parser("jobs", help="training jobs on a server: list, show, cancel, follow")
    j.add_argument("id", nargs="?", help="a job id (default: list jobs)")
    action = j.add_mutually_exclusive_group()
    action.add_argument("--cancel", action="store_true", help="cancel the job")
    action.add_argument("--wait", action="store_true", help="follow the job until it ends")
    j.add_argument("--model", help="list only this model's jobs")
    j.add_argument("--status", choices=["queued", "running", "succeeded", "failed", "cancelled"])
    j.add_argument("--limit", type=int, default=100)
    j.add_argument("--poll-interval", type=float, default=0.5, help="seconds between polls")
    add_remote_options(j, server_only=True)
    j.set_defaults(func=jobs)


def add_train_remote_options(t: argparse.ArgumentParser) -> None:
    """Options of ``costwise train --url`` (``--progress`` is the local train's)."""
    add_remote_options(t, progress=False)
    t.add_argument(
        "--mode",
        choices=["auto", "job", "sync"],
        default="auto",
        help="with --url: job (queued, polled), sync (in the request), auto (server decides)",
    )
    t.add_argument(
        "--wait",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --url: follow a job to its end (default) or print it and return",
    )
    t.add_argument("--poll-interval", type=float, default=0.5, help="seconds between polls")
