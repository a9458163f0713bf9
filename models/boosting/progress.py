"""Progress reporting and cooperative cancellation of long trainings.

Every boosting loop calls :func:`report` before each round with the rounds done so far
(``report(t, total)``).
By default nothing is installed and a call costs one context-variable lookup. A
caller that wants progress or a time limit installs a callback for the duration of a
fit with :func:`progress_callback`; the callback receives ``(phase, done, total)`` and
may raise :class:`models.exceptions.TrainingCancelled` to stop the training (the
service does so when its training deadline has passed). The callback is stored in a
:class:`contextvars.ContextVar`, so concurrent fits in other threads or tasks never
see each other's callbacks.

Phases reported by the core: ``"boosting"`` (rounds of a boosting loop; a fit made of
several loops, such as cross-fitted calibration, JOUS-Boost's q-classifiers or
one-vs-rest members, counts them as one run with :func:`fit_part`, or with
:func:`fit_parts` when the loops run concurrently on several threads, and its estimator's
``progress_total(n_classes)`` gives that run's total in advance) and ``"calibrating"``;
callers may report their own phases (``"binning"``, ``"evaluating"``, ``"registering"``).

Examples
--------
>>> from models.boosting.progress import progress_callback, report
>>> seen = []
>>> with progress_callback(lambda phase, done, total: seen.append((phase, done, total))):
...     report(1, 10)
>>> seen
[('boosting', 1, 10)]
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

__all__ = [
    "ProgressCallback",
    "current_callback",
    "fit_part",
    "fit_parts",
    "progress_callback",
    "report",
    "time_left",
    "training_deadline_at",
]

ProgressCallback = Callable[[str, int, int], None]
"""``callback(phase, done, total)``; may raise ``TrainingCancelled``."""

_CALLBACK: ContextVar[ProgressCallback | None] = ContextVar("costwise_progress", default=None)
_DEADLINE: ContextVar[float | None] = ContextVar("costwise_deadline", default=None)


def report(done: int, total: int, phase: str = "boosting") -> None:
    """Tell the installed callback (if any) that ``done`` of ``total`` steps of ``phase`` ran.

    Parameters
    ----------
    done : int
        Steps completed so far (a boosting loop passes ``t + 1`` after round ``t``).
    total : int
        Planned number of steps (an upper bound: loops may stop early).
    phase : str, default="boosting"
        What is being done.

    Raises
    ------
    TrainingCancelled
        When the installed callback raises it (e.g. a time limit passed).
    """
    callback = _CALLBACK.get()
    if callback is not None:
        callback(phase, done, total)


def current_callback() -> ProgressCallback | None:
    """The callback installed in this context (None: none), e.g. to chain to it."""
    return _CALLBACK.get()


@contextmanager
def progress_callback(callback: ProgressCallback | None) -> Iterator[None]:
    """Install ``callback`` for the code run inside the ``with`` block (this context only).

    Parameters
    ----------
    callback : callable or None
        ``callback(phase, done, total)``; ``None`` installs nothing (reports are ignored).
    """
    token = _CALLBACK.set(callback)
    try:
        yield
    finally:
        _CALLBACK.reset(token)


@contextmanager
def fit_part(part: int, parts: int) -> Iterator[None]:
    """Count the boosting rounds inside the block as fit ``part`` of ``parts`` equal fits.

    Cross-fitting runs the same boosting loop once per fold and once more on all rows.
    Inside this block a loop's ``report(t, M)`` reaches the installed callback as
    ``report(part * M + t, parts * M)``, so a caller sees one steady count over every
    fit instead of ``parts`` restarts at zero. Other phases pass through unchanged.

    Examples
    --------
    >>> seen = []
    >>> with progress_callback(lambda phase, done, total: seen.append((done, total))):
    ...     with fit_part(2, 3):
    ...         report(4, 10)
    >>> seen
    [(24, 30)]
    """
    parent = _CALLBACK.get()
    if parent is None:
        yield
        return

    def scaled(phase: str, done: int, total: int) -> None:
        if phase == "boosting":
            parent(phase, part * total + done, parts * total)
        else:
            parent(phase, done, total)

    with progress_callback(scaled):
        yield


T = TypeVar("T")


@contextmanager
def fit_parts(
    parts: int,
    *,
    sizes: Sequence[int] | None = None,
    offset: int = 0,
    total: int | None = None,
) -> Iterator[Callable[[int, Callable[[], T]], Callable[[], T]]]:
    """Count concurrent fits as one steady run; yields ``part(i, fn)`` wrapping fit ``i``.

    Fits that run at the same time on several threads cannot each be given a fixed
    slice of the count (the count would jump back and forth between slices). Inside the
    block, ``part(i, fn)`` returns a function running ``fn`` whose boosting reports
    ``report(t, M)`` are summed over the parts and reach the installed callback
    (serialised by a lock) as one count that only grows:

    * without ``sizes``: ``report(rounds started over all parts before this one,
      parts * M)``: every report is one more than the previous, and fits run one after
      another give the same count as :func:`fit_part` (a finished part counts ``M``);
    * with ``sizes`` (units per part) and ``total``: part ``i`` contributes
      ``t * sizes[i] // M`` units, reported as ``report(offset + sum, total)``, for a run
      whose parts have different round counts (the automatic capacity search).

    Other phases pass through unchanged. The returned function must be run in a copy of
    this context (:func:`models.boosting.crossfit.run_parallel` does so).

    Examples
    --------
    >>> seen = []
    >>> with progress_callback(lambda phase, done, total: seen.append((done, total))):
    ...     with fit_parts(2) as part:
    ...         part(0, lambda: report(3, 10))()
    ...         part(1, lambda: report(4, 10))()
    >>> seen  # part 0 returned after 3 rounds: a finished part counts its M = 10
    [(3, 20), (14, 20)]
    """
    parent = _CALLBACK.get()
    if sizes is not None and (len(sizes) != parts or total is None):
        raise ValueError("fit_parts: sizes needs one size per part and a total")
    done = [0] * parts
    full = [0] * parts  # a part's units once it finished (its loop stops before t = M)
    lock = threading.Lock()

    def part(i: int, fn: Callable[[], T]) -> Callable[[], T]:
        if parent is None:
            return fn

        def scaled(phase: str, t: int, m: int) -> None:
            if phase != "boosting":
                with lock:
                    parent(phase, t, m)
                return
            with lock:
                if sizes is None:  # rounds started so far over every part, this one last
                    done[i], full[i] = t + 1, m
                    parent(phase, sum(done) - 1, parts * m)
                else:
                    done[i] = (t * int(sizes[i])) // max(m, 1)
                    full[i] = int(sizes[i])
                    parent(phase, offset + sum(done), int(total))  # type: ignore[arg-type]

        def run() -> T:
            with progress_callback(scaled):
                out = fn()
            with lock:
                done[i] = full[i]  # counted as complete by the next report of another part
            return out

        return run

    yield part


@contextmanager
def training_deadline_at(deadline: float | None) -> Iterator[None]:
    """Tell the fits inside the block when the caller will stop them (``time.monotonic()``).

    The caller still enforces its limit through the progress callback; estimators that
    plan optional work (the automatic capacity search of :mod:`models.auto`) read
    :func:`time_left` to skip what would not finish in time. None: no deadline.
    """
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def time_left() -> float | None:
    """Seconds until the deadline installed by :func:`training_deadline_at` (None: none)."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()
