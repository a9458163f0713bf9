"""A progress bar on stderr for long CLI commands, fed by :mod:`models.boosting.progress`.

``costwise train`` draws ``phase [#####.....] round t/M`` on one line (``costwise
predict``: ``rows n/N``; a remote job: its phase and round), redrawn at most 10 times a
second; only when stderr is a terminal or ``--progress`` is given, so logs and
pipes stay clean. No dependency: a carriage return and a padded line.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from models.boosting.progress import progress_callback

WIDTH = 30


class ProgressBar:
    """``callback(phase, done, total)`` for :func:`models.boosting.progress.progress_callback`."""

    def __init__(self, stream: TextIO, min_interval: float = 0.1, unit: str = "round") -> None:
        self.stream = stream
        self.unit = unit
        self.min_interval = min_interval
        self._last = 0.0
        self._phase = ""
        self._shown = False

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if phase == self._phase and now - self._last < self.min_interval:
            return
        self._last, self._phase = now, phase
        if total > 0:
            filled = int(WIDTH * min(done, total) / total)
            bar = "#" * filled + "." * (WIDTH - filled)
            unit = "rows" if phase == "reading" else self.unit  # a dataset being read
            line = f"{phase:<11} [{bar}] {unit} {done}/{total}"
        elif done and (phase == "reading" or self.unit == "rows"):  # no total known (CSV)
            line = f"{phase:<11} rows {done}"
        else:
            line = f"{phase:<11}"
        self.stream.write("\r" + line.ljust(WIDTH + 36))
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\r" + "done".ljust(WIDTH + 36) + "\n")
            self.stream.flush()


def new_bar(
    enabled: bool | None, unit: str = "round", stream: TextIO | None = None
) -> ProgressBar | None:
    """A bar on ``stream`` (stderr), or None (``enabled`` None: only if it is a TTY)."""
    out = stream if stream is not None else sys.stderr
    if enabled is None:
        enabled = out.isatty()
    return ProgressBar(out, unit=unit) if enabled else None


@contextmanager
def progress_bar(enabled: bool | None, stream: TextIO | None = None) -> Iterator[None]:
    """Show a bar while the block runs (``enabled`` None: only if ``stream`` is a TTY)."""
    bar = new_bar(enabled, stream=stream)
    if bar is None:
        yield
        return
    with progress_callback(bar):
        yield
    bar.close()
