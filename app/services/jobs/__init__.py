"""Training jobs: submitted, queued, run by a worker, watched, cancelled.

- :mod:`~app.services.jobs.service`: ``JobService``, the use case the API calls
  (submit, get, page, cancel, counts) and ``make_queue``.
- :mod:`~app.services.jobs.payload`: the training data packed with a job.
- :mod:`~app.services.jobs.queues`: the queue interface and the in-process queue.
- :mod:`~app.services.jobs.redis_queue`: the Redis (arq) queue and its worker.
- :mod:`~app.services.jobs.runner`: runs one job to its end (``JobRunner``).
- :mod:`~app.services.jobs.progress`: progress reports written while a job runs.
"""
