"""Service configuration: the only module that reads the environment.

Every setting is an environment variable with the prefix ``COSTWISE_`` (for example
``COSTWISE_DATABASE_URL``). Settings are built once by the entry point (CLI or app
factory) and injected; nothing instantiates them at import time.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_DATABASE_URL = "sqlite:///./costwise-data/costwise.db"


class Settings(BaseSettings):
    """Configuration of the costwise service (env prefix ``COSTWISE_``)."""

    model_config = SettingsConfigDict(env_prefix="COSTWISE_", extra="ignore")

    database_url: str = Field(
        DEFAULT_DATABASE_URL,
        description="SQLAlchemy URL of the registry: SQLite file (default) or PostgreSQL "
        "(postgresql://user@host:5432/db, driven by psycopg 3).",
    )
    db_timeout: float = Field(
        2.0,
        gt=0,
        le=300,
        description="Longest a database statement may take, in seconds (PostgreSQL "
        "statement_timeout, and a client-side deadline that closes a connection whose "
        "server stopped answering, e.g. behind a stalled network path). A request whose "
        "database work hits it gets 503 UNAVAILABLE.",
    )
    db_lock_timeout: float = Field(
        1.0,
        gt=0,
        le=300,
        description="Longest a PostgreSQL statement waits for a lock, in seconds "
        "(lock_timeout); e.g. a table locked by a migration or a manual session.",
    )
    db_connect_timeout: float = Field(
        2.0,
        ge=1,
        le=300,
        description="Longest a new database connection may take to open, in seconds "
        "(PostgreSQL connect_timeout, whole seconds at least 1), and longest a request "
        "waits for a free pooled connection.",
    )
    sqlite_busy_timeout: float = Field(
        5.0,
        ge=0,
        le=300,
        description="How long a SQLite writer waits for the write lock, in seconds "
        "(PRAGMA busy_timeout).",
    )
    registry_stale_seconds: float = Field(
        300.0,
        ge=0,
        description="Serve through registry outages: while the database is down or "
        "stalled, a model whose version (by alias, latest or number) was resolved at most "
        "this many seconds ago keeps being served from memory, with provenance saying the "
        "resolution is stale and since when. 0 disables (every predict then needs the "
        "database). Writes always fail fast with 503.",
    )
    redis_timeout: float = Field(
        2.0,
        gt=0,
        le=60,
        description="Longest a Redis command of the job queue (enqueue, readiness ping) "
        "may take, in seconds; a job submit then gets 503 UNAVAILABLE.",
    )
    host: str = Field("127.0.0.1", description="Interface `costwise serve` binds to.")
    port: int = Field(8000, ge=1, le=65535, description="Port `costwise serve` listens on.")
    workers: int = Field(1, ge=1, le=64, description="uvicorn worker processes.")
    log_level: str = Field("info", description="Python log level of the service.")
    max_body_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="Largest request body. Routes whose items are bounded refuse less: "
        "outcomes ~10 MB, batch 4 MiB, keys, aliases and model settings 64 KiB.",
    )
    max_predict_rows: int = Field(100_000, ge=1, description="Most rows in one predict request.")
    max_train_rows: int = Field(2_000_000, ge=10, description="Most rows in one training request.")
    max_features: int = Field(10_000, ge=1, description="Most features per row.")
    max_rounds: int = Field(
        5_000,
        ge=1,
        description="Largest n_estimators accepted; also caps the rounds the default "
        "algorithm (auto) searches.",
    )
    model_cache_size: int = Field(64, ge=1, description="Loaded models kept in memory (LRU).")
    auto_migrate: bool = Field(
        False,
        description="Upgrade the database schema at start-up instead of refusing to start "
        "(`costwise serve` turns this on for the embedded SQLite default).",
    )
    max_training_seconds: float = Field(
        600.0,
        gt=0,
        description="Longest training over the API; a training still running then is "
        "stopped (checked every boosting round) and registers nothing.",
    )
    queue: Literal["inprocess", "redis"] = Field(
        "inprocess",
        description="Where training jobs run: `inprocess` (a thread pool inside the API "
        "process) or `redis` (an arq queue on COSTWISE_REDIS_URL, run by `costwise worker`).",
    )
    redis_url: str = Field(
        "redis://127.0.0.1:6379/0", description="Redis of the job queue (COSTWISE_QUEUE=redis)."
    )
    queue_name: str = Field(
        "costwise:jobs", min_length=1, description="Name of the arq queue (Redis key)."
    )
    job_min_rows: int = Field(
        50_000, ge=1, description="`mode=auto` trains as a job from this many rows on."
    )
    job_concurrency: int = Field(
        1, ge=1, le=64, description="Jobs run at once per API process (inprocess) or worker."
    )
    max_job_seconds: float = Field(
        3600.0,
        gt=0,
        description="Longest run of a job (COSTWISE_MAX_TRAINING_SECONDS applies to "
        "synchronous trainings); a training job still running then fails with "
        "TRAINING_TIME_LIMIT, a batch decision job with BATCH_TIME_LIMIT.",
    )
    job_max_attempts: int = Field(
        2, ge=1, le=10, description="Tries of a job whose worker died before it is failed."
    )
    job_heartbeat_timeout: float = Field(
        60.0,
        gt=0,
        description="A running job whose heartbeat is older than this many seconds is "
        "abandoned (its worker died): it is re-queued, or failed after job_max_attempts.",
    )
    dask_scheduler: str | None = Field(
        None,
        description="Address of a Dask scheduler (tcp://host:8786): batch decisions run as "
        "Dask tasks over the input's partitions (needs the `dask` extra on the job's worker "
        "and the workers; they must reach the input and output paths). Unset: batches run "
        "in the job's worker.",
    )
    dask_train_min_rows: int | None = Field(
        None,
        ge=1,
        description="With dask_scheduler set: a training from a local Parquet reference of "
        'at least this many rows trains on the Dask cluster (as `"distributed": true`, '
        "as a job) when the cluster can train what it asks (the default `auto` in its reduced "
        "form, or `adaboost` of stumps, with `platt` or `isotonic` k-fold calibration); any "
        "other training, "
        'and `mode=sync`, stays on this machine. Unset: only `"distributed": true` does.',
    )
    batch_block_rows: int = Field(
        65_536,
        ge=1,
        le=10_000_000,
        description="Rows a batch decides at a time (memory: about this many rows of the "
        "input's columns, as float64, per running partition).",
    )
    job_progress_interval: float = Field(
        0.5, gt=0, description="Seconds between a running job's progress/heartbeat writes."
    )
    env: Literal["dev", "prod"] = Field(
        "dev",
        description="`prod` refuses to start unless auth is on and an admin key exists "
        "(or a bootstrap admin key is configured).",
    )
    auth: Literal["off", "on"] = Field(
        "off", description="API keys with roles (admin, predictor, reader) on every /v1 route."
    )
    bootstrap_admin_key: SecretStr | None = Field(
        None,
        description="An admin key accepted in addition to the stored ones (hashed at start, "
        "never stored or logged); at least 32 characters.",
    )
    metrics_public: bool = Field(
        True, description="With auth on, serve /metrics without a key (else any valid key)."
    )
    metrics_model_names_public: bool = Field(
        False,
        description="With auth on, show model names in /metrics to callers without a valid "
        "key (by default they see every series summed over models, label model=`_hidden`).",
    )
    known_models_refresh_seconds: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="How often the set of existing model names (the only values of the "
        "metrics' `model` label; any other name is counted as `_other`) is re-read.",
    )
    max_cells: int = Field(
        20_000_000,
        ge=1,
        description="Most decoded cells (rows x features) in one predict, evaluate, infer "
        "or training request.",
    )
    max_classes: int = Field(
        256, ge=2, le=100_000, description="Most distinct labels (classes) in a training."
    )
    large_request_bytes: int = Field(
        1024 * 1024,
        ge=1024,
        description="A request body at least this large counts as large: under "
        "COSTWISE_MAX_LARGE_REQUESTS.",
    )
    parse_offload_bytes: int = Field(
        1024 * 1024,
        ge=1024,
        description="A request body (every JSON body, and a training CSV) at least this large "
        "is parsed in a worker process (COSTWISE_PARSE_WORKERS), never on the event loop.",
    )
    parse_workers: int = Field(
        1,
        ge=0,
        le=64,
        description="Worker processes per server process that parse large bodies "
        "(started at the first one); 0 parses them in a thread of the server process.",
    )
    max_large_requests: int = Field(
        4,
        ge=1,
        le=1024,
        description="Large requests handled at once per process; more get 503 with Retry-After.",
    )
    max_sync_trainings: int = Field(
        2,
        ge=1,
        le=64,
        description="Synchronous trainings run at once per process; more get 503 with "
        "Retry-After (jobs are bounded by COSTWISE_JOB_CONCURRENCY).",
    )
    max_header_bytes: int = Field(
        64 * 1024,
        ge=1024,
        description="`costwise serve`: largest request head (request line + headers).",
    )
    header_timeout: float = Field(
        10.0,
        gt=0,
        le=300,
        description="`costwise serve`: a connection that has not sent a complete request "
        "head this many seconds after it opened (or after its previous response) is closed.",
    )
    keep_alive_timeout: float = Field(
        5.0, gt=0, le=300, description="`costwise serve`: idle keep-alive connections close."
    )
    max_connections: int = Field(
        2048,
        ge=16,
        description="`costwise serve`: open connections per process (uvicorn "
        "limit_concurrency). A new connection arriving at the limit closes the oldest "
        "connection still waiting for a request head (never-served ones first, then idle "
        "kept-alive ones), so silent connections cannot lock clients and probes out; when "
        "requests in flight fill it, new requests get 503. The soft open-file limit is "
        "raised to fit it plus 512 (up to the hard limit; past that the limit is lowered, "
        "with a message at start).",
    )
    key_cache_seconds: float = Field(
        5.0,
        ge=0,
        le=300,
        description="How long a verified API key is trusted without a database look-up "
        "(a revocation takes effect on every replica within this time).",
    )
    prediction_log: bool = Field(
        True,
        description="Record every /v1 predict and /v2 infer row (id, version, raw score, "
        "probabilities, decision, costs) for outcomes and monitoring; written in batches "
        "off the request path. Off per model with PATCH /v1/models/{name} "
        '{"prediction_log": false}.',
    )
    log_features: bool = Field(
        False, description="Also record each logged row's feature values (off: not stored)."
    )
    prediction_log_days: float = Field(
        30.0,
        ge=0,
        description="Logged predictions older than this many days are deleted (checked "
        "every COSTWISE_MONITORING_REFRESH_SECONDS); 0 keeps them forever.",
    )
    prediction_log_queue_rows: int = Field(
        200_000,
        ge=1,
        description="Most rows waiting to be written; a request whose rows do not fit "
        "waits for room (COSTWISE_PREDICTION_LOG_OVERFLOW=wait) or is answered without "
        "being logged (drop).",
    )
    shadow_queue_rows: int = Field(
        50_000,
        ge=0,
        description="Most predicted rows waiting for their model's shadow version to decide "
        "them (off the request path); rows beyond it are dropped and counted "
        '(costwise_shadow_rows_total{outcome="dropped"}); 0 turns shadow scoring off.',
    )
    shadow_refresh_seconds: float = Field(
        2.0,
        gt=0,
        le=3600,
        description="How often each process rereads which models have a shadow (a shadow "
        "set on another replica takes effect within this time).",
    )
    webhook_allow_hosts: Annotated[list[str], NoDecode] = Field(
        [],
        description="Host names and networks (CIDR, or single addresses) a webhook may be "
        "registered for although they are loopback, link-local, private, reserved or this "
        "machine's own addresses, separated by commas; every other such address is refused "
        "with 403 at registration and again before each delivery.",
    )
    webhook_timeout: float = Field(
        5.0,
        gt=0,
        le=120,
        description="Longest one delivery attempt may take (connection and answer), seconds.",
    )
    webhook_max_attempts: int = Field(
        8,
        ge=1,
        le=100,
        description="Attempts of one delivery before it is marked failed; a non-2xx answer "
        "or no answer is retried after COSTWISE_WEBHOOK_RETRY_SECONDS, doubling each time "
        "(at most an hour).",
    )
    webhook_retry_seconds: float = Field(
        5.0,
        gt=0,
        le=3600,
        description="Wait before the second attempt of a delivery (then doubled per attempt).",
    )
    webhook_poll_seconds: float = Field(
        1.0,
        gt=0,
        le=3600,
        description="How often each process looks for due deliveries (0 webhooks: one "
        "indexed query per period).",
    )
    events_watch_seconds: float = Field(
        300.0,
        ge=0,
        le=86400,
        description="How often each process evaluates the watched events (calibration."
        "alarm, cost.out_of_band, challenger.better) of every model, when a webhook receives "
        "one of them; each is raised once when its condition starts to hold. 0: never.",
    )
    events_min_labelled: int = Field(
        200,
        ge=2,
        description="Labelled predictions (or labelled shadow pairs) a version needs in the "
        "monitoring window before the event watch judges its calibration, cost ratio or "
        "comparison.",
    )
    cost_ratio_band: Annotated[list[float], NoDecode] = Field(
        [0.8, 1.25],
        description="Low and high end of the realised/expected cost ratio a version may "
        "show over the monitoring window, separated by a comma; outside it the event watch "
        "raises cost.out_of_band.",
    )
    prediction_log_overflow: Literal["wait", "drop"] = Field(
        "wait",
        description="What a predict does when its rows do not fit in the log queue: wait "
        "for room up to COSTWISE_PREDICTION_LOG_WAIT_SECONDS, then 503 with Retry-After "
        "and no decisions (every answered row is logged; counted in "
        'costwise_prediction_log_rows_total{outcome="refused"}), or drop: answer and not '
        'log them (counted as outcome="dropped").',
    )
    prediction_log_wait_seconds: float = Field(
        5.0,
        ge=0,
        le=60,
        description="Longest a predict waits for room in a full log queue "
        "(COSTWISE_PREDICTION_LOG_OVERFLOW=wait) before it is refused with 503.",
    )
    prediction_log_batch_rows: int = Field(
        10_000, ge=1, description="Most rows the log writer inserts in one statement."
    )
    prediction_log_flush_seconds: float = Field(
        0.2,
        gt=0,
        le=60,
        description="Longest a logged row waits before it is written (an outcome for it is "
        "accepted once written).",
    )
    pending_outcome_seconds: float = Field(
        86_400.0,
        gt=0,
        description="How long an outcome reported for a prediction id that is not logged "
        "(yet) is kept as pending, waiting for its log row, before it is deleted and counted "
        'in costwise_pending_outcomes_total{result="expired"} (checked every '
        "COSTWISE_MONITORING_REFRESH_SECONDS).",
    )
    pending_outcomes_max: int = Field(
        100_000,
        ge=0,
        description="Most pending outcomes kept per model; beyond it an outcome for an id "
        "that is not logged yet gets status refused (report it again later).",
    )
    monitoring_refresh_seconds: float = Field(
        60.0,
        gt=0,
        description="How often the monitoring gauges of /metrics are recomputed (in a worker "
        "thread) and the retention delete runs.",
    )
    monitoring_max_rows: int = Field(
        1_000_000,
        ge=1,
        description="Most logged predictions one monitoring request reads; a wider "
        "window is refused with 413 (narrow since/until).",
    )
    monitoring_max_concurrent: int = Field(
        2,
        ge=1,
        le=64,
        description="Monitoring reports (GET /v1/models/{name}/monitoring, the console's "
        "panel) computed at once per process; more get 503 UNAVAILABLE with Retry-After. "
        "Each reads up to COSTWISE_MONITORING_MAX_ROWS logged predictions: a few at once "
        "keep the database and this process free for predictions.",
    )
    monitoring_gauge_rows: int = Field(
        100_000,
        ge=1,
        description="The cost-ratio and ECE gauges of /metrics use at most this many latest "
        "labelled predictions of a model's window (coverage counts every row in the "
        "database; unlabelled rows are never read).",
    )
    monitoring_window_hours: float = Field(
        24.0,
        gt=0,
        description="The monitoring gauges of /metrics cover the predictions of this many "
        "last hours.",
    )

    data_roots: Annotated[list[str], NoDecode] = Field(
        [],
        description="Directories a dataset reference (`file://` URI) may read from, "
        "separated by commas (or a JSON list); a path outside them, with `..`, or a symlink "
        "out of them is refused with 403. Empty (default): every `file://` reference is "
        "refused.",
    )
    data_protocols: Annotated[list[str], NoDecode] = Field(
        ["file"],
        description="URI schemes a dataset reference may use, separated by commas. The "
        "default `file` fetches nothing: `http`/`https` references are refused with 403 "
        "until an operator adds them (e.g. `file,https`); the service then fetches the URLs "
        "its callers name, fenced (COSTWISE_DATA_ALLOW_HOSTS). `s3`, `gcs`, ... need their "
        "fsspec package installed.",
    )
    data_allow_hosts: Annotated[list[str], NoDecode] = Field(
        [],
        description="Host names and networks (CIDR, or single addresses) an `http(s)` "
        "reference may reach although they are loopback, link-local, private, reserved or "
        "this machine's own addresses, separated by commas. Every other such address is "
        "refused with 403 before connecting, for the URL and for every redirect.",
    )
    data_fetch_timeout: float = Field(
        10.0,
        gt=0,
        le=600,
        description="Longest wait, in seconds, for an `http(s)` data server to accept a "
        "connection and for each read of its answer.",
    )
    data_fetch_seconds: float = Field(
        120.0,
        gt=0,
        le=86_400,
        description="Longest one `http(s)` fetch of a dataset reference may take, in seconds, "
        "redirects included; a server still sending then (e.g. a byte every few seconds) is "
        "cut off and the request answered with 422 naming this setting.",
    )
    data_fetch_max_bytes: int = Field(
        1 << 30,
        ge=1024,
        description="Largest file an `http(s)` reference may fetch (it is copied to a "
        "temporary file, then read); a larger one is stopped there with 413.",
    )
    dataset_job_bytes: int = Field(
        64 * 1024 * 1024,
        ge=0,
        description="A training from a dataset reference whose files are at least this "
        "large (or whose row count is at least COSTWISE_JOB_MIN_ROWS) runs as a job under "
        "`mode=auto`.",
    )
    max_dataset_rows: int = Field(
        100_000_000,
        ge=10,
        description="Most rows one training from a dataset reference reads.",
    )

    @field_validator(
        "data_roots",
        "data_protocols",
        "data_allow_hosts",
        "webhook_allow_hosts",
        "cost_ratio_band",
        mode="before",
    )
    @classmethod
    def _split_list(cls, value: object) -> object:
        """Accept ``a,b`` (or a JSON list) from the environment."""
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                import json

                return json.loads(text)
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

    @field_validator("data_allow_hosts", "webhook_allow_hosts")
    @classmethod
    def _check_networks(cls, value: list[str]) -> list[str]:
        """Each entry is a network (CIDR or an address) or a host name (no port, no
        scheme): a typo must not silently allow nothing."""
        import ipaddress
        import re

        for entry in value:
            text = entry.strip().strip("[]")
            try:
                ipaddress.ip_network(text, strict=False)
                continue
            except ValueError:
                if "/" in text or not re.fullmatch(r"[A-Za-z0-9._-]+", text):
                    raise ValueError(
                        f"{entry!r} is neither a network (CIDR, address) nor a host name"
                    ) from None
        return value

    @field_validator("cost_ratio_band")
    @classmethod
    def _check_band(cls, value: list[float]) -> list[float]:
        """Two finite numbers, 0 <= low < high."""
        import math

        if len(value) != 2 or not all(math.isfinite(v) for v in value):
            raise ValueError(f"expected two numbers 'low,high', got {value!r}")
        if not 0 <= value[0] < value[1]:
            raise ValueError(f"expected 0 <= low < high, got low {value[0]}, high {value[1]}")
        return value


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings from the environment, read once per process."""
    return Settings()
