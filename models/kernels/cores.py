"""Which cores are spare: how many fits run at once in this process.

The fold fits of cross-fitting run on threads (:func:`models.boosting.crossfit.run_parallel`),
and the tree kernel (:mod:`models.kernels.histogram`) can itself spread a node's histogram
and split search over numba's threads. Both at once oversubscribe the cores (two fold
threads each starting a parallel region of every core); neither leaves cores idle when
the folds are fewer than the cores, e.g. the last of 5 folds on 2 cores. So every fit
thread is counted while it runs (:func:`fitting`; a thread waiting for the fits it
started lends its count to them, :func:`waiting`), and a kernel goes parallel only while
the running fits are fewer than the cores (:func:`spare_cores`). The kernels give the
same bits on one thread as on many, so this decides speed only, never a model.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cpus", "fitting", "running_fits", "spare_cores", "waiting"]

_lock = threading.Lock()
_local = threading.local()
_running = 0


def cpus() -> int:
    """The CPUs this process may use (``os.sched_getaffinity``; at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _add(delta: int) -> None:
    global _running
    with _lock:
        _running += delta


def running_fits() -> int:
    """Fit threads counted now (:func:`fitting`)."""
    return _running


@contextmanager
def fitting() -> Iterator[None]:
    """Count the calling thread as running a fit (once, however deeply nested)."""
    if getattr(_local, "counted", False):
        yield
        return
    _local.counted = True
    _add(1)
    try:
        yield
    finally:
        _add(-1)
        _local.counted = False


@contextmanager
def waiting() -> Iterator[None]:
    """The calling thread waits for fits it started: its count is lent to them."""
    counted = getattr(_local, "counted", False)
    if counted:
        _add(-1)
        _local.counted = False
    try:
        yield
    finally:
        if counted:
            _add(1)
            _local.counted = True


def spare_cores() -> bool:
    """Whether fewer fits run than this process has CPUs (a kernel may go parallel)."""
    return _running < cpus()
