"""A batch's partitions as Dask tasks (``COSTWISE_DASK_SCHEDULER``).

The job's worker connects to the scheduler as a client, sends the numpy-only
:class:`models.inference.model.InferenceModel` once to every Dask worker (``scatter`` with
``broadcast``; what travels is that object, never an estimator from the registry) and
submits one task per input partition: :func:`app.services.batch.parts.decide_part`, the
same function the in-process path runs, writing its part file into the batch's temporary
directory. Dask workers therefore need costwise installed and must reach the input and
output paths (the same mount, or a URL for the input). A cancelled job cancels the tasks
that have not finished.

Errors: a service error raised in a task (a bad cost in row 1,234,567, say) is sent back
as its code, detail and field (not as a pickled exception) and raised here again as the
same kind of error, so the job fails with the message that names the row.

Progress: ``progress(rows)`` once per partition as it finishes (the rows of every
finished partition so far: the job's ``done``, the CLI's bar), as the in-process path
reports once per block; while no partition finishes it is called again every
``POLL_SECONDS`` with the same count, so that a cancelled job or the time limit stops the
batch between partitions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import distributed

from app import errors
from app.errors import ServiceError, Unavailable
from app.services.batch.parts import Part, PartPlan, decide_part
from app.services.batch.scoring import BatchShadow, BlockSummary
from app.services.batch.sources import part_file
from models.inference.model import InferenceModel

__all__ = ["decide_on_dask"]

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = "10s"
POLL_SECONDS = 0.2


def _task(
    model: InferenceModel,
    plan: PartPlan,
    part: Part,
    target: str,
    shadow: BatchShadow | None = None,
) -> dict[str, Any]:
    """Runs on a Dask worker: decide one partition; its summary or its service error."""
    try:
        summary = decide_part(model, plan, part, target, shadow=shadow)
    except ServiceError as exc:
        return {"error": [type(exc).__name__, exc.detail, exc.field]}
    return {"summary": summary}


def _raise(error: list[Any]) -> None:
    kind, detail, field = error
    cls = getattr(errors, kind, None)
    if not (isinstance(cls, type) and issubclass(cls, ServiceError)):
        cls = ServiceError
    raise cls(detail, field=field)


def decide_on_dask(
    address: str,
    model: InferenceModel,
    plan: PartPlan,
    parts: list[Part],
    directory: Path,
    progress: Callable[[int], None],
    shadow: BatchShadow | None = None,
) -> BlockSummary:
    """Decide ``parts`` on the cluster at ``address`` into ``directory`` (part files).

    ``progress(rows done)`` is called once for each partition as it finishes, and every
    ``POLL_SECONDS`` while waiting; it may raise (a cancelled job) to stop the batch.
    """
    try:
        client = distributed.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise Unavailable(
            f"the Dask scheduler at {address} (setting COSTWISE_DASK_SCHEDULER) cannot be "
            f"reached: {exc}"
        ) from None
    total = BlockSummary()
    futures: list[distributed.Future] = []
    with client:
        try:
            objects: list[Any] = [model] if shadow is None else [model, shadow]
            scattered = client.scatter(objects, broadcast=True, hash=False)
            shared, shared_shadow = scattered[0], (scattered[1] if shadow is not None else None)
            futures = [
                client.submit(
                    _task,
                    shared,
                    plan,
                    part,
                    str(part_file(directory, i)),
                    shared_shadow,
                    pure=False,
                )
                for i, part in enumerate(parts)
            ]
            index = {future: i for i, future in enumerate(futures)}
            summaries: dict[int, BlockSummary] = {}
            pending = set(futures)
            rows = 0
            progress(rows)
            while pending:
                done = [f for f in futures if f in pending and f.done()]
                pending.difference_update(done)
                for future in done:  # one report per finished partition
                    out = future.result()  # an unexpected error in the task is raised here
                    if "error" in out:
                        _raise(out["error"])
                    summaries[index[future]] = out["summary"]
                    rows += out["summary"].rows
                    progress(rows)
                if pending and not done:
                    progress(rows)  # a cancelled job or the time limit stops it here
                    time.sleep(POLL_SECONDS)
            for i in range(len(futures)):  # in partition order: the same float sums as in
                total.add(summaries[i])  # the worker, whatever order the tasks ended in
        except BaseException:
            if futures:
                client.cancel(futures)
            raise
    return total
