"""``costwise worker``: run training jobs from the Redis queue (arq) with the settings.

The API enqueues jobs when ``COSTWISE_QUEUE=redis``; start one or more workers on any
machine that reaches the same database (``COSTWISE_DATABASE_URL``) and Redis
(``COSTWISE_REDIS_URL``). Each runs ``COSTWISE_JOB_CONCURRENCY`` jobs at once. SIGTERM or
Ctrl-C stops it: running jobs stop at their next boosting round and are re-queued.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from typing import Any

from app.settings import Settings

SessionsFactory = Callable[[Settings], Any]
log = logging.getLogger(__name__)


def cmd_worker(args: argparse.Namespace, settings: Settings, sessions: SessionsFactory) -> int:
    from app.services.jobs.redis_queue import build_worker
    from app.services.jobs.runner import JobRunner

    runner = JobRunner(sessions(settings), settings)
    worker = build_worker(settings, runner, burst=args.burst)
    log.info(
        "costwise worker %s on queue %r (%d job(s) at once)",
        runner.worker,
        settings.queue_name,
        settings.job_concurrency,
    )
    worker.run()
    return 0


def add_worker_parser(sub: Any, sessions: SessionsFactory) -> None:
    w = sub.add_parser("worker", help="run training jobs from the Redis queue (arq)")
    w.add_argument(
        "--burst", action="store_true", help="exit once the queue is empty (batch use, tests)"
    )
    w.set_defaults(func=lambda args, settings: cmd_worker(args, settings, sessions))
