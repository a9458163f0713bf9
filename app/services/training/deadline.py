"""The training time limit: a deadline enforced through the core's progress hook.

:func:`training_deadline` installs a :mod:`models.boosting.progress` callback that raises
:class:`models.exceptions.TrainingCancelled` at the first boosting round (or quantile
fit) that starts after the deadline, and turns it into
:class:`app.errors.TrainingTimeLimit` (422 ``TRAINING_TIME_LIMIT``). The check is
cooperative: a round that has started finishes first, so a training stops at most one
round (plus calibration and evaluation, checked once more before registering) after
the limit. Nothing is registered: the version and its artifact are only written after
training succeeded. The deadline is also published to the core
(:func:`models.boosting.progress.time_left`), so that optional work such as the automatic
capacity search skips what would not finish in time instead of failing the training.

A callback installed by the caller (e.g. a training job's progress reporter) keeps
receiving every report: the deadline's callback chains to it, and a
``TrainingCancelled`` it raises (a cancelled job) passes through unchanged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from app.errors import TrainingTimeLimit, Unavailable
from models.boosting.progress import (
    current_callback,
    progress_callback,
    report,
    training_deadline_at,
)
from models.exceptions import TrainingCancelled

LIMIT_SETTING = "COSTWISE_MAX_TRAINING_SECONDS"

Checkpoint = Callable[[str], None]


@contextmanager
def training_deadline(
    seconds: float | None,
    setting: str = LIMIT_SETTING,
    *,
    stop: threading.Event | None = None,
) -> Iterator[Checkpoint]:
    """Stop the training run inside the block once ``seconds`` have passed (None: no limit).

    Yields a ``checkpoint(phase)`` function for the caller's own phases (e.g. before
    registering). Raises :class:`TrainingTimeLimit` naming the limit and its value, or
    :class:`app.errors.Unavailable` when ``stop`` is set (the server is shutting down:
    the training stops at its next round, nothing registered).
    """
    if seconds is None and stop is None:
        yield lambda phase: report(0, 0, phase)
        return
    outer = current_callback()
    started = time.monotonic()
    deadline = float("inf") if seconds is None else started + seconds
    where: dict[str, str | int] = {"phase": "starting", "done": 0, "total": 0}
    timed_out = stopped = False

    def callback(phase: str, done: int, total: int) -> None:
        nonlocal timed_out, stopped
        if stop is not None and stop.is_set():
            stopped = True
            raise TrainingCancelled("the server is shutting down")
        if time.monotonic() > deadline:
            timed_out = True
            where.update(phase=phase, done=done, total=total)
            raise TrainingCancelled(f"time limit of {seconds:g} s reached during {phase}")
        if outer is not None:
            outer(phase, done, total)

    try:
        with progress_callback(callback), training_deadline_at(deadline):
            yield lambda phase: callback(phase, 0, 0)
    except TrainingCancelled:
        if stopped:
            raise Unavailable(
                "the server is shutting down: the training was stopped and nothing was "
                "registered; send it again (to another replica, or once this one is back)"
            ) from None
        if not timed_out:
            raise
        elapsed = time.monotonic() - started
        step = f" ({where['done']} of {where['total']} done)" if where["total"] else ""
        raise TrainingTimeLimit(
            f"training stopped after {elapsed:.2f} s during {where['phase']}{step}: it is over "
            f"the limit of {seconds:g} s (setting {setting}); nothing was registered. "
            "Train on fewer rows or rounds, or raise the limit.",
            limit=seconds,
        ) from None
