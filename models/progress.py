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
one-vs-rest members, counts them as one run with :func:`fit_part`, and its estimator's
``progress_total(n_classes)`` gives that run's total in advance) and ``"calibrating"``;
callers may report their own phases (``"binning"``, ``"evaluating"``, ``"registering"``).

Examples
--------
>>> from models.progress import progress_callback, report
>>> seen = []
>>> with progress_callback(lambda phase, done, total: seen.append((phase, done, total))):
...     report(1, 10)
>>> seen
[('boosting', 1, 10)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = [
    "ProgressCallback",
    "current_callback",
    "fit_part",
    "progress_callback",
    "report",
]

ProgressCallback = Callable[[str, int, int], None]
"""``callback(phase, done, total)``; may raise ``TrainingCancelled``."""

_CALLBACK: ContextVar[ProgressCallback | None] = ContextVar("costwise_progress", default=None)


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
