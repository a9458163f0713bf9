"""Jobs on Redis through arq: the API enqueues, ``costwise worker`` runs them.

arq (asyncio, Redis) is the queue; the database stays the source of truth of a job's
state. Payloads are JSON (arq's default serializer is pickle, which this project never
uses). A job is delivered to one worker; if that worker dies, arq delivers it again
once its in-progress lock expires, and the worker's sweeper re-queues it sooner, as
soon as its heartbeat is older than ``COSTWISE_JOB_HEARTBEAT_TIMEOUT``. Deliveries of a
job that is already finished or running elsewhere are skipped (claiming a job is one
conditional UPDATE), so a job runs at most once at a time and registers at most once.

Why arq: asyncio-native like the API (enqueueing is an ``await`` in the request, no
thread hop), Redis only (no separate broker and result backend as with Celery), small,
with job ids and redelivery of jobs whose worker died; RQ forks per job and has no
asyncio client; a PostgreSQL queue would put the queue's polling on the registry.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.worker import Worker, func
from redis.exceptions import RedisError

from app.errors import Unavailable
from app.services.jobs.queues import sweep_period
from app.services.jobs.runner import JobRunner, recover_abandoned
from app.settings import Settings

log = logging.getLogger(__name__)

TASK = "run_training_job"
GRACE_SECONDS = 60.0  # arq's own timeout is the job limit plus this (ours fires first)


def _dumps(value: dict[str, Any]) -> bytes:
    return json.dumps(value, default=str).encode()


def _loads(raw: bytes) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(raw)
    return value


def redis_settings(settings: Settings, *, retries: int = 5) -> RedisSettings:
    redis = RedisSettings.from_dsn(settings.redis_url)
    redis.conn_retries = retries
    return redis


async def enqueue_job(redis: ArqRedis, queue_name: str, job_id: str) -> None:
    """One delivery of ``job_id`` (a fresh arq id each time: re-queues are new deliveries)."""
    await redis.enqueue_job(
        TASK, job_id, _job_id=f"{job_id}-{uuid.uuid4().hex[:8]}", _queue_name=queue_name
    )


class RedisQueue:
    """The API side: enqueue jobs for ``costwise worker`` processes."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._redis: ArqRedis | None = None

    async def _pool(self) -> ArqRedis:
        if self._redis is None:
            self._redis = await create_pool(
                redis_settings(self.settings, retries=0),
                job_serializer=_dumps,
                job_deserializer=_loads,
                default_queue_name=self.settings.queue_name,
            )
        return self._redis

    async def enqueue(self, job_id: str) -> None:
        """Enqueue, within COSTWISE_REDIS_TIMEOUT (a frozen Redis: 503, never a hang)."""
        try:
            async with asyncio.timeout(self.settings.redis_timeout):
                await enqueue_job(await self._pool(), self.settings.queue_name, job_id)
        except (OSError, RedisError, TimeoutError) as exc:
            await self._reset()
            raise Unavailable(
                f"the job queue (Redis, setting COSTWISE_REDIS_URL) is unreachable "
                f"({type(exc).__name__}); the job was not created, retry later"
            ) from exc

    async def ready(self) -> bool:
        """Redis answers a PING within COSTWISE_REDIS_TIMEOUT."""
        try:
            async with asyncio.timeout(self.settings.redis_timeout):
                await (await self._pool()).ping()
            return True
        except (OSError, RedisError, TimeoutError):
            await self._reset()
            return False

    async def _reset(self) -> None:
        """Drop the pool after a failure (a timed-out command leaves it in doubt)."""
        redis, self._redis = self._redis, None
        if redis is not None:
            try:
                async with asyncio.timeout(self.settings.redis_timeout):
                    await redis.aclose()
            except Exception:  # closing a dead connection: nothing more to do
                log.debug("closing the Redis pool failed", exc_info=True)

    def start(self) -> None:
        """Nothing runs here: workers are separate processes."""

    async def close(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()


# --------------------------------------------------------------------------- worker


async def run_training_job(ctx: dict[str, Any], job_id: str) -> str:
    """The arq task: run the job in a thread (training is CPU-bound, synchronous)."""
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(ctx["executor"], ctx["runner"].run, job_id)
    ctx["running"].add(future)
    future.add_done_callback(ctx["running"].discard)
    status: str = await asyncio.shield(future)  # a cancelled task leaves the thread to finish
    log.info("job %s: %s", job_id, status)
    return status


async def _sweep(ctx: dict[str, Any], settings: Settings) -> None:
    while True:
        try:
            ids = await asyncio.to_thread(
                recover_abandoned, ctx["sessions"], settings.job_heartbeat_timeout
            )
            for job_id in ids:
                await enqueue_job(ctx["redis"], settings.queue_name, job_id)
        except Exception:
            log.warning("job sweeper failed; retrying", exc_info=True)
        await asyncio.sleep(sweep_period(settings))


def build_worker(settings: Settings, runner: JobRunner, *, burst: bool = False) -> Worker:
    """An arq worker running ``settings.job_concurrency`` jobs at once."""

    async def startup(ctx: dict[str, Any]) -> None:
        ctx.update(
            runner=runner,
            sessions=runner.sessions,
            running=set(),
            executor=ThreadPoolExecutor(settings.job_concurrency, "costwise-job"),
        )
        ctx["sweeper"] = asyncio.create_task(_sweep(ctx, settings))

    async def shutdown(ctx: dict[str, Any]) -> None:
        ctx["sweeper"].cancel()
        runner.shutdown.set()  # running jobs stop at their next round and are re-queued
        if ctx["running"]:
            await asyncio.wait(set(ctx["running"]), timeout=30)
        for job_id in runner.interrupted:
            await enqueue_job(ctx["redis"], settings.queue_name, job_id)
        ctx["executor"].shutdown(wait=False)

    return Worker(
        functions=[
            func(  # type: ignore[list-item]
                run_training_job,
                name=TASK,
                timeout=settings.max_job_seconds + GRACE_SECONDS,
                max_tries=settings.job_max_attempts,
            )
        ],
        queue_name=settings.queue_name,
        redis_settings=redis_settings(settings),
        on_startup=startup,
        on_shutdown=shutdown,
        max_jobs=settings.job_concurrency,
        burst=burst,
        retry_jobs=False,
        keep_result=60,
        poll_delay=0.2,
        job_serializer=_dumps,
        job_deserializer=_loads,
    )
